//! Bearer tokens, read and compared the same way by every server.

use http::HeaderMap;
use http::header::AUTHORIZATION;

/// The token of an `Authorization: Bearer <token>` header. The scheme is matched in any case
/// (`bearer`, `BEARER`), as RFC 9110 says auth schemes are case-insensitive.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

/// Compares in time independent of where the first difference is (only the lengths leak).
pub fn constant_time_eq(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_authorization(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, value.parse().unwrap());
        headers
    }

    #[test]
    fn the_scheme_is_case_insensitive() {
        for value in [
            "Bearer s3cret",
            "bearer s3cret",
            "BEARER s3cret",
            "bEaReR  s3cret",
        ] {
            assert_eq!(
                bearer_token(&with_authorization(value)),
                Some("s3cret"),
                "{value}"
            );
        }
        for value in ["Basic s3cret", "Bearers3cret", "s3cret", "Bearer"] {
            assert_eq!(bearer_token(&with_authorization(value)), None, "{value}");
        }
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq("s3cret", "s3cret"));
        assert!(!constant_time_eq("s3cre", "s3cret"));
        assert!(!constant_time_eq("s3creT", "s3cret"));
        assert!(!constant_time_eq("", "s3cret"));
    }
}
