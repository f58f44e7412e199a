//! Reference solutions: how `mcpgym eval --policy oracle` solves a task through the episode's
//! own tools, so an evaluation table has a ceiling for every family.
//!
//! An oracle is server-side code: it may know the task's secrets (the answer word, the
//! family's solver), which is why only the evaluator on the server's side of the wire ever
//! runs one. It decides each call from what the previous call answered, the way a scripted
//! agent would, and everything it does is recorded in the trajectory like any other policy.

use rmcp::model::JsonObject;
use serde_json::Value;

/// What the previous call answered, as an oracle reads it.
#[derive(Debug, Clone, Copy)]
pub struct Answered<'a> {
    /// The observation's text.
    pub text: &'a str,
    /// The observation's structure, when the tool has one.
    pub structured: Option<&'a Value>,
    /// Whether the call was refused.
    pub is_error: bool,
}

/// What an oracle does next.
#[derive(Debug, Clone, PartialEq)]
pub enum OracleMove {
    /// Call this tool with these arguments.
    Call {
        /// The tool's name.
        tool: String,
        /// Its arguments.
        arguments: JsonObject,
    },
    /// Nothing more: the solution has been played (the episode is normally over by now).
    Done,
}

impl OracleMove {
    /// A call of `tool` with `arguments` (a JSON object; anything else calls with none).
    pub fn call(tool: &str, arguments: Value) -> Self {
        Self::Call {
            tool: tool.to_owned(),
            arguments: match arguments {
                Value::Object(map) => map,
                _ => JsonObject::new(),
            },
        }
    }
}

/// One task's reference solution, played one call at a time.
pub trait Oracle: Send {
    /// The next call, given what the last one answered (`None` before the first).
    fn next(&mut self, last: Option<Answered<'_>>) -> OracleMove;
}

/// An oracle that plays a fixed list of calls, whatever they answer.
#[derive(Debug, Clone)]
pub struct Script {
    calls: std::vec::IntoIter<OracleMove>,
}

impl Script {
    /// Plays `calls` in order, then is done.
    pub fn new(calls: Vec<OracleMove>) -> Self {
        Self {
            calls: calls.into_iter(),
        }
    }
}

impl Oracle for Script {
    fn next(&mut self, _last: Option<Answered<'_>>) -> OracleMove {
        self.calls.next().unwrap_or(OracleMove::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_plays_its_calls_then_is_done() {
        let mut script = Script::new(vec![OracleMove::call(
            "guess",
            serde_json::json!({"word": "crane"}),
        )]);
        let first = script.next(None);
        assert_eq!(
            first,
            OracleMove::Call {
                tool: "guess".into(),
                arguments: serde_json::json!({"word": "crane"})
                    .as_object()
                    .unwrap()
                    .clone()
            }
        );
        assert_eq!(script.next(None), OracleMove::Done);
    }
}
