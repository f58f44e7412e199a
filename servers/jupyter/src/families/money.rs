//! Amounts as an untidy export writes them: with thousands separators, and with a dollar sign.

/// `value` with `decimals` places and commas between thousands: `12,345.60`, `-1,000`.
pub(super) fn thousands(value: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, value.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    // The sign of what rounds to a non-zero number only, as the amount is written.
    let sign = if value < 0.0 && text.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        "-"
    } else {
        ""
    };
    if fraction.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{fraction}")
    }
}

/// `amount` (not negative) as text such as `$1,234.50`.
pub(super) fn dollars(amount: f64) -> String {
    format!("${}", thousands(amount, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_group_by_three() {
        assert_eq!(thousands(1234.5, 2), "1,234.50");
        assert_eq!(thousands(999.0, 2), "999.00");
        assert_eq!(thousands(1_234_567.891, 2), "1,234,567.89");
        assert_eq!(thousands(-123.0, 0), "-123");
        assert_eq!(thousands(-1000.0, 0), "-1,000");
        assert_eq!(thousands(1_234_567.0, 0), "1,234,567");
        assert_eq!(thousands(0.0, 0), "0");
        assert_eq!(thousands(12_345_678.0, 0), "12,345,678");
        assert_eq!(dollars(12.0), "$12.00");
    }
}
