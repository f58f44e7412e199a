//! Translations from each computer-use action format into [`crate::action::Action`].
//!
//! Each space reads the JSON its models write ([`anthropic`]: `computer_20251124` input,
//! [`qwen3vl`]: Qwen3-VL's `computer_use` arguments, [`openai`]: a `computer-use-preview`
//! action), checks every value, and answers a mistake with an [`ActionError`] whose text tells
//! the model what was wrong and shows a valid call in its own format.

pub mod anthropic;
pub mod openai;
pub mod qwen3vl;

use std::time::Duration;

use serde_json::{Map, Value};

use crate::action::MAX_DURATION;
use crate::keys::{self, Chord, Key, KeyError};
use crate::scale::CoordinateError;

/// The longest text a `type` action may carry, in characters: enough for any form field or
/// paragraph, and a bound on how long one action can keep the keyboard busy.
pub const MAX_TYPE_CHARS: usize = 10_000;

/// The most wheel clicks one scroll may turn (Anthropic's `scroll_amount` limit; pixel deltas
/// from Qwen3-VL and OpenAI are clamped to it).
pub const MAX_SCROLL_AMOUNT: u32 = 100;

/// Pixels counted as one wheel click when a space gives scroll distances in pixels (Qwen3-VL's
/// `pixels`, OpenAI's `scroll_x`/`scroll_y`). X wheel clicks scroll about three lines, roughly
/// 50–120 px depending on the application; 100 is the round middle, and it is what harnesses
/// converting OpenAI and Qwen scrolls to clicks commonly use (`-500` → 5 clicks).
pub const PIXELS_PER_WHEEL_CLICK: f64 = 100.0;

/// Wheel clicks for a scroll of `pixels` (sign ignored): `round(|pixels| / 100)`, at least 1
/// (any non-zero scroll moves something) and at most [`MAX_SCROLL_AMOUNT`].
pub fn pixels_to_clicks(pixels: f64) -> u32 {
    let clicks = (pixels.abs() / PIXELS_PER_WHEEL_CLICK).round();
    if clicks.is_nan() {
        return 1;
    }
    (clicks as u32).clamp(1, MAX_SCROLL_AMOUNT)
}

/// Pixels written back for `clicks` wheel clicks (the inverse of [`pixels_to_clicks`]).
pub fn clicks_to_pixels(clicks: u32) -> i64 {
    i64::from(clicks) * PIXELS_PER_WHEEL_CLICK as i64
}

/// A call the model made that cannot be carried out as written. Its text is a full sentence for
/// the model: what was wrong, then a valid call in the same format.
///
/// The wrapped coordinate and key errors are already part of the text, so they are not also
/// exposed as `source()` (error chains would print them twice).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    /// A missing field, a value of the wrong type or out of range, an unknown action.
    #[error("{}. A valid call looks like this: {example}", capitalized(problem))]
    Invalid {
        /// What was wrong, as a sentence without its final full stop.
        problem: String,
        /// A valid call, in the space's own JSON.
        example: String,
    },
    /// A coordinate or region outside the screen.
    #[error("{}. A valid call looks like this: {example}", capitalized(&error.to_string()))]
    Coordinate {
        /// What was wrong with it.
        error: CoordinateError,
        /// A valid call, in the space's own JSON.
        example: String,
    },
    /// A key name that was not understood.
    #[error("{}. A valid call looks like this: {example}", capitalized(&error.to_string()))]
    Key {
        /// What was wrong with it.
        error: KeyError,
        /// A valid call, in the space's own JSON.
        example: String,
    },
}

impl ActionError {
    /// An [`ActionError::Invalid`].
    pub fn invalid(problem: impl Into<String>, example: impl Into<String>) -> Self {
        Self::Invalid {
            problem: problem.into(),
            example: example.into(),
        }
    }
}

/// `s` with its first letter upper-case: the parts are written to be embedded mid-sentence,
/// the model gets them as a sentence of their own.
fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The fields of one call, with the example its errors show. Shared by the three spaces so
/// every field is read and reported the same way.
pub(crate) struct Fields<'a> {
    map: &'a Map<String, Value>,
    /// A valid call of the action being read.
    pub(crate) example: String,
}

impl<'a> Fields<'a> {
    /// Reads `map`; errors show `example`.
    pub(crate) fn new(map: &'a Map<String, Value>, example: impl Into<String>) -> Self {
        Self {
            map,
            example: example.into(),
        }
    }

    /// An [`ActionError::Invalid`] with this call's example.
    pub(crate) fn error(&self, problem: impl Into<String>) -> ActionError {
        ActionError::invalid(problem, self.example.clone())
    }

    /// An [`ActionError::Coordinate`] with this call's example.
    pub(crate) fn coordinate_error(&self, error: CoordinateError) -> ActionError {
        ActionError::Coordinate {
            error,
            example: self.example.clone(),
        }
    }

    /// An [`ActionError::Key`] with this call's example.
    pub(crate) fn key_error(&self, error: KeyError) -> ActionError {
        ActionError::Key {
            error,
            example: self.example.clone(),
        }
    }

    /// The field, treating `null` as absent (some clients send every optional field as null).
    pub(crate) fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// A required field's presence, with the error naming the action that needs it.
    pub(crate) fn require<T>(
        &self,
        action: &str,
        name: &str,
        value: Option<T>,
    ) -> Result<T, ActionError> {
        value.ok_or_else(|| self.error(format!("the `{action}` action needs `{name}`")))
    }

    /// An optional string field.
    pub(crate) fn str(&self, name: &str) -> Result<Option<&'a str>, ActionError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(self.error(format!(
                "`{name}` must be a string, but {} was given",
                describe(other)
            ))),
        }
    }

    /// An optional number field (a numeric string is accepted too: some harnesses stringify).
    pub(crate) fn number(&self, name: &str) -> Result<Option<f64>, ActionError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let n = match value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match n {
            Some(n) if n.is_finite() => Ok(Some(n)),
            _ => Err(self.error(format!(
                "`{name}` must be a number, but {} was given",
                describe(value)
            ))),
        }
    }

    /// An optional `[x, y]` pair of numbers.
    pub(crate) fn pair(&self, name: &str) -> Result<Option<(f64, f64)>, ActionError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        match numbers(value).as_deref() {
            Some(&[x, y]) => Ok(Some((x, y))),
            _ => Err(self.error(format!(
                "`{name}` must be a list of two numbers [x, y], but {} was given",
                describe(value)
            ))),
        }
    }

    /// An optional `[x1, y1, x2, y2]` list of numbers.
    pub(crate) fn quad(&self, name: &str) -> Result<Option<[f64; 4]>, ActionError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        match numbers(value).as_deref() {
            Some(&[a, b, c, d]) => Ok(Some([a, b, c, d])),
            _ => Err(self.error(format!(
                "`{name}` must be a list of four numbers [x1, y1, x2, y2], but {} was given",
                describe(value)
            ))),
        }
    }

    /// A required text to type: non-empty and at most [`MAX_TYPE_CHARS`] characters.
    pub(crate) fn text_to_type(&self, action: &str, name: &str) -> Result<String, ActionError> {
        let text = self.require(action, name, self.str(name)?)?;
        if text.is_empty() {
            return Err(self.error(format!("`{name}` must not be empty")));
        }
        let count = text.chars().count();
        if count > MAX_TYPE_CHARS {
            return Err(self.error(format!(
                "`{name}` is {count} characters long; at most {MAX_TYPE_CHARS} can be typed in one action, so split it"
            )));
        }
        Ok(text.to_string())
    }

    /// An optional duration in seconds, 0 to [`MAX_DURATION`].
    pub(crate) fn seconds(&self, name: &str) -> Result<Option<Duration>, ActionError> {
        let Some(secs) = self.number(name)? else {
            return Ok(None);
        };
        duration(secs, name, "seconds")
            .map(Some)
            .map_err(|p| self.error(p))
    }

    /// Modifier keys written as text (`shift`, `ctrl+shift`); absent or empty means none.
    pub(crate) fn modifiers(&self, name: &str) -> Result<Vec<Key>, ActionError> {
        match self.str(name)? {
            None => Ok(Vec::new()),
            Some(text) => keys::parse_modifiers(text).map_err(|e| self.key_error(e)),
        }
    }

    /// The `status` of a `terminate`: `success` or `failure`.
    pub(crate) fn status(
        &self,
        action: &str,
    ) -> Result<crate::action::TerminateStatus, ActionError> {
        use crate::action::TerminateStatus;
        let status = self.require(action, "status", self.str("status")?)?;
        match status.trim().to_ascii_lowercase().as_str() {
            "success" => Ok(TerminateStatus::Success),
            "failure" | "fail" => Ok(TerminateStatus::Failure),
            _ => Err(self.error(format!(
                "`status` must be \"success\" or \"failure\", but \"{status}\" was given"
            ))),
        }
    }
}

/// `secs` seconds as a duration, checked against 0..=[`MAX_DURATION`]. `name` and `unit` (the
/// unit the model wrote the field in) only shape the error, which is a problem sentence.
pub(crate) fn duration(secs: f64, name: &str, unit: &str) -> Result<Duration, String> {
    let max = MAX_DURATION.as_secs_f64();
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!(
            "`{name}` must be a number of {unit} from 0 to {max}, not negative"
        ));
    }
    if secs > max {
        return Err(format!(
            "`{name}` is {secs} seconds; the longest allowed is {max} seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// One chord from several names pressed together: each name may itself be a chord
/// (`["ctrl+shift", "t"]`); the last key is pressed while all the others are held.
pub(crate) fn chord_of(
    names: &[&str],
    parse: impl Fn(&str) -> Result<Chord, keys::KeyError>,
) -> Result<Chord, keys::KeyError> {
    let mut all: Vec<Key> = Vec::new();
    for name in names {
        let chord = parse(name)?;
        all.extend(chord.modifiers);
        all.push(chord.key);
    }
    let key = all.pop().ok_or(keys::KeyError::Empty)?;
    Ok(Chord {
        modifiers: all,
        key,
    })
}

/// The numbers in a JSON array (numeric strings accepted), or `None` if any is not one.
fn numbers(value: &Value) -> Option<Vec<f64>> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            })
            .map(|n| n.filter(|n| n.is_finite()))
            .collect(),
        // A stringified list ("[100, 200]"), as some harnesses send.
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_array)
            .and_then(|v| numbers(&v)),
        _ => None,
    }
}

/// A short description of a JSON value for error messages: its type and, if short, the value.
pub(crate) fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_string(),
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    let text = value.to_string();
    if text.chars().count() <= 40 {
        format!("{kind} ({text})")
    } else {
        kind.to_string()
    }
}

/// Rounds a model's coordinate to a whole pixel; values far beyond any screen saturate and are
/// then rejected by the bounds check.
pub(crate) fn whole(v: f64) -> i64 {
    v.round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_clicks() {
        assert_eq!(pixels_to_clicks(300.0), 3);
        assert_eq!(pixels_to_clicks(-300.0), 3);
        assert_eq!(pixels_to_clicks(5.0), 1);
        assert_eq!(pixels_to_clicks(149.0), 1);
        assert_eq!(pixels_to_clicks(150.0), 2);
        assert_eq!(pixels_to_clicks(1e9), MAX_SCROLL_AMOUNT);
        assert_eq!(clicks_to_pixels(3), 300);
    }

    #[test]
    fn errors_are_capitalized_sentences() {
        let err = ActionError::invalid("the `type` action needs `text`", "{\"action\": \"type\"}");
        assert_eq!(
            err.to_string(),
            "The `type` action needs `text`. A valid call looks like this: {\"action\": \"type\"}"
        );
    }

    #[test]
    fn durations() {
        assert!(duration(-1.0, "duration", "seconds").is_err());
        assert!(duration(f64::NAN, "duration", "seconds").is_err());
        assert!(duration(100.5, "duration", "seconds").is_err());
        assert_eq!(
            duration(1.5, "duration", "seconds"),
            Ok(Duration::from_millis(1500))
        );
    }
}
