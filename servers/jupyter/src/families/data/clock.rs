//! Instants as seconds since 2020-01-01T00:00:00Z, and the ways the families write them: UTC
//! ISO 8601, ISO 8601 with an offset, and a local wall clock.

use crate::families::date_of;

/// Seconds in a day.
pub(super) const DAY: i64 = 86_400;

/// The first second of 2024-01-01 (UTC): 1,461 days after 2020-01-01.
pub(super) const YEAR_2024: i64 = 1461 * DAY;

/// Time zones whose offset from UTC was the same all through 2024 (no daylight saving), so the
/// zone's name alone fixes a local time's instant: the IANA name and the offset in minutes.
pub(super) const FIXED_ZONES: &[(&str, i64)] = &[
    ("Asia/Tokyo", 540),
    ("Asia/Kolkata", 330),
    ("Asia/Dubai", 240),
    ("America/Phoenix", -420),
    ("America/Bogota", -300),
    ("Africa/Johannesburg", 120),
    ("Asia/Singapore", 480),
    ("Pacific/Honolulu", -600),
    ("Australia/Brisbane", 600),
    ("Asia/Kathmandu", 345),
    ("America/Sao_Paulo", -180),
    ("Asia/Karachi", 300),
];

/// The date (`YYYY-MM-DD`) and the hour, minute and second of the instant `t`.
fn parts(t: i64) -> (String, i64, i64, i64) {
    let day = t.div_euclid(DAY);
    let second = t.rem_euclid(DAY);
    (date_of(day), second / 3600, second / 60 % 60, second % 60)
}

/// `t` in UTC as `YYYY-MM-DDTHH:MM:SSZ`.
pub(super) fn utc_iso(t: i64) -> String {
    let (date, h, m, s) = parts(t);
    format!("{date}T{h:02}:{m:02}:{s:02}Z")
}

/// `t` on the wall clock `offset` minutes ahead of UTC, as `YYYY-MM-DDTHH:MM:SS±HH:MM`.
pub(super) fn offset_iso(t: i64, offset: i64) -> String {
    let (date, h, m, s) = parts(t + offset * 60);
    let sign = if offset < 0 { '-' } else { '+' };
    let (oh, om) = (offset.abs() / 60, offset.abs() % 60);
    format!("{date}T{h:02}:{m:02}:{s:02}{sign}{oh:02}:{om:02}")
}

/// `t` on the wall clock `offset` minutes ahead of UTC, as `YYYY-MM-DD HH:MM`.
pub(super) fn local_minute(t: i64, offset: i64) -> String {
    let (date, h, m, _) = parts(t + offset * 60);
    format!("{date} {h:02}:{m:02}")
}

/// `t` on the wall clock `offset` minutes ahead of UTC, day first: `DD/MM/YYYY HH:MM`.
pub(super) fn local_minute_day_first(t: i64, offset: i64) -> String {
    let (date, h, m, _) = parts(t + offset * 60);
    format!(
        "{}/{}/{} {h:02}:{m:02}",
        &date[8..10],
        &date[5..7],
        &date[..4]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_written_in_each_form() {
        let t = YEAR_2024 + 59 * DAY + 13 * 3600 + 5 * 60 + 7;
        assert_eq!(utc_iso(t), "2024-02-29T13:05:07Z");
        assert_eq!(offset_iso(t, 345), "2024-02-29T18:50:07+05:45");
        assert_eq!(offset_iso(t, -600), "2024-02-29T03:05:07-10:00");
        assert_eq!(offset_iso(t, 0), "2024-02-29T13:05:07+00:00");
        assert_eq!(local_minute(t, 660), "2024-03-01 00:05");
        assert_eq!(local_minute_day_first(t, -840), "28/02/2024 23:05");
    }
}
