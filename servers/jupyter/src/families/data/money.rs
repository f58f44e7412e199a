//! Amounts as an untidy export writes them: with thousands separators, and with a dollar sign.

/// `value` with two decimals and thousands separators: `12,345.60`.
pub(super) fn thousands(value: f64) -> String {
    let text = format!("{value:.2}");
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, "00"));
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{grouped}.{fraction}")
}

/// `amount` (not negative) as text such as `$1,234.50`.
pub(super) fn dollars(amount: f64) -> String {
    format!("${}", thousands(amount))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_group_by_three() {
        assert_eq!(thousands(1234.5), "1,234.50");
        assert_eq!(thousands(999.0), "999.00");
        assert_eq!(thousands(1_234_567.891), "1,234,567.89");
        assert_eq!(dollars(12.0), "$12.00");
    }
}
