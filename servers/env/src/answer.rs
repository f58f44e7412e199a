//! The one answer rule every grader of a typed answer follows: how the text is normalised, what
//! counts as a number, and how close a number must be.
//!
//! - **Text**: [`normalize`] trims surrounding whitespace, removes one pair of matching
//!   surrounding quotes (`"…"`, `'…'`) or backticks, trims again, then removes one trailing
//!   period. Graders normalise the expected text the same way, so `"meadow."` and `meadow`
//!   are one answer, and an expected sentence ending in a period still matches.
//! - **Numbers**: [`parse_number`] reads an answer that is one number and nothing else, after
//!   the same normalisation; thousands separators are commas in groups of three.
//! - **Precision**: a task asking for `d` decimal places accepts a number within half a unit of
//!   the last place of the expected value ([`half_unit`]`(d)`), so the correctly rounded
//!   answer and the unrounded one both pass and a number one unit off does not. [`close`]
//!   compares with that tolerance plus a sliver for binary floating point.

/// Trims whitespace, one pair of matching surrounding quotes or backticks, whitespace again,
/// then one trailing period.
pub fn normalize(answer: &str) -> &str {
    let mut text = answer.trim();
    for quote in ['"', '\'', '`'] {
        if text.len() >= 2
            && let Some(inner) = text.strip_prefix(quote).and_then(|s| s.strip_suffix(quote))
        {
            text = inner.trim();
            break;
        }
    }
    text.strip_suffix('.').unwrap_or(text)
}

/// Half a unit of the `decimals`-th decimal place: the tolerance of an answer asked for to
/// that precision (`0.005` for 2 places, `0.5` for whole numbers).
pub fn half_unit(decimals: u32) -> f64 {
    0.5 / 10f64.powi(decimals as i32)
}

/// Whether `number` is within `tolerance` of `value`, allowing for the rounding error of
/// binary floating point (so a value exactly half a unit away is inside): the slack is a few
/// units in the last place of the larger of the two. A tolerance of 0 asks for the exact
/// value: an integer answer is compared exactly however large (up to 2^53, where doubles
/// still hold every integer), so off by one never passes.
pub fn close(number: f64, value: f64, tolerance: f64) -> bool {
    if tolerance == 0.0 {
        return number == value;
    }
    let slack = 8.0 * f64::EPSILON * number.abs().max(value.abs()).max(1.0);
    (number - value).abs() <= tolerance + slack
}

/// Parses an answer that is one number and nothing else.
///
/// The rule, exactly: [`normalize`] it (whitespace, one pair of quotes, one trailing `.`); what
/// remains must be
/// an optional sign (`+` or `-`), a mantissa, and an optional exponent (`e` or `E`, an optional
/// sign, one or more digits). The mantissa is digits, optionally followed by `.` and one or
/// more fractional digits (`42`, `42.5`, `.5`), where the integer digits may instead
/// be grouped by commas in threes (`1,234`, `12,345,678.9`; not `1,23` or `12,34,567`). The
/// value must be finite. So `42`, `42.0`, `4.2e1`, `1,234.5`, ` 42 `, `"42"` and `42.` are numbers;
/// `the answer is 42`, `42 or 43`, `42%`, `$42`, `0x2a`, `1/2`, `inf` and `nan` are not.
pub fn parse_number(answer: &str) -> Option<f64> {
    let text = normalize(answer);
    let bytes = text.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    // Integer part: plain digits, or comma-grouped digits.
    let int_start = i;
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b',') {
        i += 1;
    }
    let integer = &text[int_start..i];
    if integer.contains(',') && !well_grouped(integer) {
        return None;
    }
    let mut digits = integer.len();
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        // `42.` has had its one trailing period removed already; a second (`42..`) is prose.
        if i == frac_start {
            return None;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return None;
    }
    if i < bytes.len() && matches!(bytes[i], b'e' | b'E') {
        i += 1;
        if i < bytes.len() && matches!(bytes[i], b'+' | b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return None;
        }
    }
    if i != bytes.len() {
        return None;
    }
    let plain: String = text.chars().filter(|c| *c != ',').collect();
    plain.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// `1,234` and `12,345,678`: a first group of one to three digits, then groups of exactly three.
fn well_grouped(integer: &str) -> bool {
    let mut groups = integer.split(',');
    let first_ok = groups
        .next()
        .is_some_and(|g| (1..=3).contains(&g.len()) && g.bytes().all(|b| b.is_ascii_digit()));
    first_ok && groups.all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_every_accepted_form() {
        for text in [
            "42", "42.0", "4.2e1", "4.2E+1", "420e-1", " 42 ", "42.", "+42", "\n42\t", "42.0.",
            "\"42\"", "`42.`", "'42'",
        ] {
            assert_eq!(parse_number(text), Some(42.0), "{text:?}");
        }
        assert_eq!(parse_number("1,234.5"), Some(1234.5));
        assert_eq!(parse_number("-12,345,678"), Some(-12_345_678.0));
        assert_eq!(parse_number(".5"), Some(0.5));
        assert_eq!(parse_number("-0.669"), Some(-0.669));
    }

    #[test]
    fn text_around_a_number_is_not_a_number() {
        for text in [
            "the answer is 42",
            "42 or 43",
            "42 43",
            "about 42",
            "42%",
            "$42",
            "0x2a",
            "1/2",
            "inf",
            "NaN",
            "1e999",
            "",
            ".",
            "-",
            "1e",
            "e5",
            "1,23",
            "12,34,567",
            ",123",
            "123,",
            "1,234,",
            "42..",
            "4 2",
            "42 .",
            "١٢",
            "x = 42",
            "42\n43",
        ] {
            assert_eq!(parse_number(text), None, "{text:?}");
        }
    }

    #[test]
    fn text_is_normalised_once() {
        assert_eq!(normalize("  \"meadow.\" "), "meadow");
        assert_eq!(normalize("meadow."), "meadow");
        assert_eq!(normalize("meadow.."), "meadow.");
        assert_eq!(normalize("'a b'"), "a b");
        assert_eq!(normalize("\"a'"), "\"a'");
        assert_eq!(normalize("."), "");
    }

    #[test]
    fn precision_is_half_a_unit() {
        assert!(close(12.345, 12.34, half_unit(2)));
        assert!(close(12.3449, 12.34, half_unit(2)));
        assert!(!close(12.35, 12.34, half_unit(2)));
        assert!(!close(12.3451, 12.34, half_unit(2)));
        assert!(close(0.1234565, 0.123456, half_unit(6)));
        assert!(!close(0.123457, 0.123456 - 1e-9, half_unit(6)));
        assert!(close(42.0, 42.0, 0.0));
        assert!(!close(42.0001, 42.0, 0.0));
        // A large exact integer (a sum of primes) off by one is wrong.
        assert!(!close(62_564_041_738.0, 62_564_041_737.0, 0.0));
        // Sums of primes near 10^12 run to 10^15 and more: still exact.
        assert!(!close(
            2_348_193_605_538_197.0,
            2_348_193_605_538_196.0,
            0.0
        ));
        assert!(close(2_348_193_605_538_196.0, 2_348_193_605_538_196.0, 0.0));
        // Half a unit of 2 places away from a large value is still inside.
        assert!(close(17_758_555.555, 17_758_555.56, half_unit(2)));
    }
}
