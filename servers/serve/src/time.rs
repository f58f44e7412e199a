//! RFC 3339 timestamps in UTC, without a date-time crate: both servers format instants
//! (trajectory records, E2B's sandbox and execution times) and read back only their own.

use std::time::{SystemTime, UNIX_EPOCH};

/// How many digits of the second's fraction a timestamp carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fraction {
    /// Milliseconds: `2026-11-29T10:21:34.978Z`.
    Millis,
    /// Microseconds: `2026-11-29T10:21:34.978123Z` (E2B's timestamps).
    Micros,
}

/// `time` as RFC 3339 in UTC, with the fraction of a second to `fraction`.
pub fn rfc3339(time: SystemTime, fraction: Fraction) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    let fraction = match fraction {
        Fraction::Millis => (since.subsec_millis(), 3),
        Fraction::Micros => (since.subsec_micros(), 6),
    };
    // Written digit by digit: `format!` costs more than the rest of a tool call's record.
    let fields: [(u32, u32); 7] = [
        (year.clamp(0, 9999) as u32, 4),
        (month, 2),
        (day, 2),
        ((rem / 3600) as u32, 2),
        (((rem / 60) % 60) as u32, 2),
        ((rem % 60) as u32, 2),
        fraction,
    ];
    let separators = ['-', '-', 'T', ':', ':', '.', 'Z'];
    let mut text = String::with_capacity(27);
    for ((value, width), separator) in fields.into_iter().zip(separators) {
        for position in (0..width).rev() {
            let digit = (value / 10u32.pow(position)) % 10;
            text.push(char::from(b'0' + digit as u8));
        }
        text.push(separator);
    }
    text
}

/// An instant [`rfc3339`] wrote (`2026-11-29T10:21:34.978Z`, any fraction or none), read
/// back; `None` for any other text.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let number = |part: &str| -> Option<i64> {
        (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse().ok())
            .flatten()
    };
    let mut date = date.splitn(3, '-').map(number);
    let (year, month, day) = (date.next()??, date.next()??, date.next()??);
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut clock = clock.splitn(3, ':').map(number);
    let (hour, minute, second) = (clock.next()??, clock.next()??, clock.next()??);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let nanos = if fraction.is_empty() {
        0
    } else {
        let digits = &fraction[..fraction.len().min(9)];
        number(digits)? * 10i64.pow(9 - digits.len() as u32)
    };
    let secs = days_from_civil(year, month as u32, day as u32) * 86_400
        + hour * 3600
        + minute * 60
        + second;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + std::time::Duration::new(secs, nanos as u32))
}

/// A proleptic Gregorian date to days since 1970-01-01 (the inverse of [`civil_from_days`]).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = year - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn timestamps_read_back_as_written() {
        for millis in [0u64, 1, 86_399_999, 1_764_000_000_123, 4_102_444_800_000] {
            let time = UNIX_EPOCH + Duration::from_millis(millis);
            for fraction in [Fraction::Millis, Fraction::Micros] {
                assert_eq!(parse_rfc3339(&rfc3339(time, fraction)), Some(time));
            }
        }
        assert_eq!(
            parse_rfc3339("1970-01-02T00:00:00Z"),
            Some(UNIX_EPOCH + Duration::from_secs(86_400))
        );
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-01-01 00:00:00Z",
            "2026-01-01T00:00:00",
            "x-1-1T0:0:0Z",
            "2026-01-01T00:00:00.-1Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_are_correct() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_423), (2025, 12, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(
            rfc3339(UNIX_EPOCH, Fraction::Millis),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH, Fraction::Micros),
            "1970-01-01T00:00:00.000000Z"
        );
        let leap_day = UNIX_EPOCH + Duration::from_micros(1_709_210_096_500_001);
        assert_eq!(
            rfc3339(leap_day, Fraction::Micros),
            "2024-02-29T12:34:56.500001Z"
        );
        assert_eq!(
            rfc3339(leap_day, Fraction::Millis),
            "2024-02-29T12:34:56.500Z"
        );
        let end_of_year = UNIX_EPOCH + Duration::from_secs(1_798_761_599);
        assert_eq!(
            rfc3339(end_of_year, Fraction::Millis),
            "2026-12-31T23:59:59.000Z"
        );
    }
}
