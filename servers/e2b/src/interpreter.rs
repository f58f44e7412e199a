//! The code interpreter (port [`INTERPRETER_PORT`](crate::INTERPRETER_PORT)): the `/execute`
//! request, the JSON lines it streams back, and kernel contexts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `POST /execute`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecuteRequest {
    /// The Python source to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The context to run it in (the default context if none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The language of the default context to use (only Python is served locally).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Environment variables for this cell only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_vars: Option<Map<String, Value>>,
    /// An mcpgym extension: the cell's deadline in seconds (at most the service's own). A
    /// client that waits a little longer than this learns from the closing error line whether
    /// the kernel kept its variables (interrupted) or lost them (restarted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
}

/// One line of the `/execute` stream, tagged by its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputLine {
    /// The cell started: the kernel's execution count.
    NumberOfExecutions {
        /// The count, when the kernel reported one.
        #[serde(default)]
        execution_count: Option<u32>,
    },
    /// Standard output text.
    Stdout(StreamLine),
    /// Standard error text.
    Stderr(StreamLine),
    /// A rich result or display (boxed: it is much larger than the other lines).
    Result(Box<ResultLine>),
    /// The error the cell raised, or why the service stopped it.
    Error(ErrorLine),
    /// Nothing to say yet: sent after a quiet while so connections stay open.
    Keepalive,
    /// The last line of an execution.
    EndOfExecution,
    /// A line kind this crate does not know (read only; a reader skips it).
    #[serde(other)]
    Unknown,
}

impl OutputLine {
    /// The line as sent: its JSON and a newline.
    pub fn to_line(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut line = serde_json::to_vec(self)?;
        line.push(b'\n');
        Ok(line)
    }
}

/// Stream text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamLine {
    /// The text.
    #[serde(default)]
    pub text: String,
    /// When it was printed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// An error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorLine {
    /// The exception's class (`ValueError`; `TimeoutError` when the deadline passed).
    #[serde(default)]
    pub name: String,
    /// Its message.
    #[serde(default)]
    pub value: String,
    /// The traceback's lines joined with newlines.
    #[serde(default)]
    pub traceback: String,
}

/// The well-known MIME types of a result and the line's field for each; other types go to
/// [`ResultLine::extra`]. `e2b/chart` and `e2b/data` are the code interpreter's own: the
/// structured chart of a matplotlib figure and the columns of a pandas DataFrame.
pub const RESULT_FIELDS: [(&str, &str); 12] = [
    ("text", "text/plain"),
    ("html", "text/html"),
    ("markdown", "text/markdown"),
    ("svg", "image/svg+xml"),
    ("png", "image/png"),
    ("jpeg", "image/jpeg"),
    ("pdf", "application/pdf"),
    ("latex", "text/latex"),
    ("json", "application/json"),
    ("javascript", "application/javascript"),
    ("chart", "e2b/chart"),
    ("data", "e2b/data"),
];

/// A rich result: its MIME bundle spread over one field per well-known type
/// ([`RESULT_FIELDS`]) and `extra` for the rest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    /// `text/plain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<Value>,
    /// `text/html`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<Value>,
    /// `text/markdown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<Value>,
    /// `image/svg+xml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub svg: Option<Value>,
    /// `image/png` (base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub png: Option<Value>,
    /// `image/jpeg` (base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jpeg: Option<Value>,
    /// `application/pdf` (base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdf: Option<Value>,
    /// `text/latex`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latex: Option<Value>,
    /// `application/json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    /// `application/javascript`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub javascript: Option<Value>,
    /// `e2b/chart`: the chart extracted from a matplotlib figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<Value>,
    /// `e2b/data`: a DataFrame's columns, by column name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Other MIME types, by type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
    /// Whether this is the cell's own result (its last expression) rather than a display.
    #[serde(default)]
    pub is_main_result: bool,
}

impl ResultLine {
    /// The field holding a well-known type.
    fn field_mut(&mut self, field: &str) -> Option<&mut Option<Value>> {
        Some(match field {
            "text" => &mut self.text,
            "html" => &mut self.html,
            "markdown" => &mut self.markdown,
            "svg" => &mut self.svg,
            "png" => &mut self.png,
            "jpeg" => &mut self.jpeg,
            "pdf" => &mut self.pdf,
            "latex" => &mut self.latex,
            "json" => &mut self.json,
            "javascript" => &mut self.javascript,
            "chart" => &mut self.chart,
            "data" => &mut self.data,
            _ => return None,
        })
    }

    /// The line of a MIME bundle.
    pub fn from_bundle(data: impl IntoIterator<Item = (String, Value)>, is_main: bool) -> Self {
        let mut line = ResultLine {
            is_main_result: is_main,
            ..ResultLine::default()
        };
        let mut extra = Map::new();
        for (mime, value) in data {
            let field = RESULT_FIELDS
                .iter()
                .find(|(_, known)| *known == mime)
                .and_then(|(field, _)| line.field_mut(field));
            match field {
                Some(slot) => *slot = Some(value),
                None => {
                    extra.insert(mime, value);
                }
            }
        }
        if !extra.is_empty() {
            line.extra = Some(extra);
        }
        line
    }

    /// The MIME bundle of the line (fields that are absent or `null` left out).
    pub fn into_bundle(mut self) -> BTreeMap<String, Value> {
        let mut data = BTreeMap::new();
        for (field, mime) in RESULT_FIELDS {
            if let Some(value) = self.field_mut(field).and_then(Option::take)
                && !value.is_null()
            {
                data.insert(mime.to_owned(), value);
            }
        }
        data.extend(self.extra.unwrap_or_default());
        data
    }
}

/// A kernel context, as `/contexts` lists and creates them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextInfo {
    /// The context's id.
    pub id: String,
    /// Its language.
    #[serde(default)]
    pub language: String,
    /// Its working directory.
    #[serde(default)]
    pub cwd: String,
}

/// `POST /contexts`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextRequest {
    /// The kernel's language (only Python is served locally).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Its working directory (the home directory if none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(line: &str) -> OutputLine {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn lines_parse_by_type() {
        assert_eq!(
            parse(r#"{"type":"number_of_executions","execution_count":3}"#),
            OutputLine::NumberOfExecutions {
                execution_count: Some(3)
            }
        );
        let OutputLine::Stdout(out) = parse(r#"{"type":"stdout","text":"hi\n","timestamp":"x"}"#)
        else {
            panic!()
        };
        assert_eq!(out.text, "hi\n");
        let OutputLine::Error(error) = parse(r#"{"type":"error","name":"E","value":"v"}"#) else {
            panic!()
        };
        assert_eq!((error.name.as_str(), error.traceback.as_str()), ("E", ""));
        assert_eq!(parse(r#"{"type":"keepalive"}"#), OutputLine::Keepalive);
        assert_eq!(
            parse(r#"{"type":"end_of_execution"}"#),
            OutputLine::EndOfExecution
        );
        assert_eq!(parse(r#"{"type":"chart","x":1}"#), OutputLine::Unknown);
        assert!(serde_json::from_str::<OutputLine>(r#"{"text":"no type"}"#).is_err());
        assert!(serde_json::from_str::<OutputLine>("[1]").is_err());
    }

    #[test]
    fn lines_serialize_as_the_service_sends_them() {
        let line = |l: OutputLine| serde_json::to_value(l).unwrap();
        assert_eq!(
            line(OutputLine::NumberOfExecutions {
                execution_count: Some(1)
            }),
            json!({"type": "number_of_executions", "execution_count": 1})
        );
        assert_eq!(
            line(OutputLine::Stderr(StreamLine {
                text: "x".into(),
                timestamp: Some("t".into())
            })),
            json!({"type": "stderr", "text": "x", "timestamp": "t"})
        );
        assert_eq!(
            line(OutputLine::Error(ErrorLine::default())),
            json!({"type": "error", "name": "", "value": "", "traceback": ""})
        );
        assert_eq!(
            OutputLine::Keepalive.to_line().unwrap(),
            b"{\"type\":\"keepalive\"}\n"
        );
    }

    #[test]
    fn results_map_mime_types_both_ways() {
        let bundle = [
            ("text/plain".to_owned(), json!("2")),
            ("image/png".to_owned(), json!("AAAA")),
            ("e2b/chart".to_owned(), json!({"type": "line"})),
            ("e2b/data".to_owned(), json!({"a": [1]})),
            ("application/vnd.custom".to_owned(), json!({"a": 1})),
        ];
        let line = ResultLine::from_bundle(bundle.clone(), true);
        assert_eq!(
            serde_json::to_value(OutputLine::Result(Box::new(line.clone()))).unwrap(),
            json!({
                "type": "result", "text": "2", "png": "AAAA",
                "chart": {"type": "line"}, "data": {"a": [1]},
                "extra": {"application/vnd.custom": {"a": 1}}, "is_main_result": true,
            })
        );
        assert_eq!(line.into_bundle(), BTreeMap::from(bundle));
        let OutputLine::Result(read) =
            parse(r#"{"type":"result","text":"t","html":null,"future":{}}"#)
        else {
            panic!()
        };
        assert!(!read.is_main_result);
        assert_eq!(
            read.into_bundle(),
            BTreeMap::from([("text/plain".to_owned(), json!("t"))])
        );
        assert_eq!(
            serde_json::to_value(ResultLine::from_bundle([], false)).unwrap(),
            json!({"is_main_result": false})
        );
    }

    #[test]
    fn requests_send_only_what_is_set() {
        let request = ExecuteRequest {
            code: Some("1".into()),
            timeout: Some(30.0),
            ..ExecuteRequest::default()
        };
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"code":"1","timeout":30.0}"#
        );
        let read: ContextInfo = serde_json::from_str(r#"{"id":"c"}"#).unwrap();
        assert_eq!(read.cwd, "");
    }
}
