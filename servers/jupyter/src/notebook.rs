//! An episode as a Jupyter notebook: nbformat 4.5 `.ipynb` JSON built from the cells the agent
//! ran, and a structural validator for it.
//!
//! The builder writes what nbformat 4.5 requires: top-level `nbformat`, `nbformat_minor`,
//! `metadata` (with `kernelspec` and `language_info`) and `cells`; every cell an `id` (unique,
//! 1–64 characters of letters, digits, `-` and `_`), `cell_type`, `metadata` and `source`;
//! code cells `execution_count` and `outputs`. Text is stored as lists of lines (each keeping
//! its newline), as Jupyter itself writes it. Ids are derived from the cell's position, so the
//! same episode gives the same file byte for byte.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The nbformat major version written.
pub const NBFORMAT: u64 = 4;
/// The nbformat minor version written (4.5 is the first with cell ids).
pub const NBFORMAT_MINOR: u64 = 5;

/// Which stream a piece of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamName {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl StreamName {
    fn as_str(self) -> &'static str {
        match self {
            StreamName::Stdout => "stdout",
            StreamName::Stderr => "stderr",
        }
    }
}

/// One output of a code cell.
#[derive(Debug, Clone, PartialEq)]
pub enum CellOutput {
    /// Text written to stdout or stderr. Consecutive pieces of the same stream are merged into
    /// one output, as Jupyter does.
    Stream {
        /// The stream.
        name: StreamName,
        /// The text.
        text: String,
    },
    /// A rich result: the cell's value (`is_main`, an `execute_result`) or something displayed
    /// along the way, such as a plot (a `display_data`).
    Result {
        /// Whether this is the cell's own value (E2B's `is_main_result`).
        is_main: bool,
        /// The representations by MIME type: `text/plain`, `text/html`, `image/png` (base64),
        /// `application/json` (any JSON), ...
        data: BTreeMap<String, Value>,
    },
    /// The exception the cell raised.
    Error {
        /// The exception's class name.
        ename: String,
        /// Its message.
        evalue: String,
        /// The traceback, one entry per line (E2B sends it joined by newlines).
        traceback: Vec<String>,
    },
}

impl CellOutput {
    /// Text on stdout.
    pub fn stdout(text: impl Into<String>) -> Self {
        CellOutput::Stream {
            name: StreamName::Stdout,
            text: text.into(),
        }
    }

    /// Text on stderr.
    pub fn stderr(text: impl Into<String>) -> Self {
        CellOutput::Stream {
            name: StreamName::Stderr,
            text: text.into(),
        }
    }

    /// The cell's value as plain text (an `execute_result`).
    pub fn text_result(text: impl Into<String>) -> Self {
        let mut data = BTreeMap::new();
        data.insert("text/plain".to_owned(), Value::String(text.into()));
        CellOutput::Result {
            is_main: true,
            data,
        }
    }

    /// A PNG image displayed by the cell (a `display_data`), from its base64 text.
    pub fn png(base64: impl Into<String>) -> Self {
        let mut data = BTreeMap::new();
        data.insert("image/png".to_owned(), Value::String(base64.into()));
        data.insert(
            "text/plain".to_owned(),
            Value::String("<Figure>".to_owned()),
        );
        CellOutput::Result {
            is_main: false,
            data,
        }
    }

    /// An error, with the traceback as E2B sends it (frames joined by newlines).
    pub fn error(
        ename: impl Into<String>,
        evalue: impl Into<String>,
        traceback: impl AsRef<str>,
    ) -> Self {
        CellOutput::Error {
            ename: ename.into(),
            evalue: evalue.into(),
            traceback: traceback.as_ref().lines().map(str::to_owned).collect(),
        }
    }
}

/// The kind of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellKind {
    /// Code the kernel ran (a shell command is a code cell whose source starts with `!`).
    Code,
    /// Text, such as the task's prompt at the top of the notebook.
    Markdown,
}

/// One cell as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutedCell {
    /// Code or markdown.
    pub kind: CellKind,
    /// The cell's source.
    pub source: String,
    /// The kernel's execution count (`None` for markdown, or a cell that never ran).
    pub execution_count: Option<u32>,
    /// The outputs, in the order they came (ignored for markdown).
    pub outputs: Vec<CellOutput>,
}

impl ExecutedCell {
    /// A code cell.
    pub fn code(
        source: impl Into<String>,
        execution_count: Option<u32>,
        outputs: Vec<CellOutput>,
    ) -> Self {
        Self {
            kind: CellKind::Code,
            source: source.into(),
            execution_count,
            outputs,
        }
    }

    /// A shell command as a code cell (`!command`, the IPython form that runs it).
    pub fn shell(command: &str, execution_count: Option<u32>, outputs: Vec<CellOutput>) -> Self {
        let source = command
            .lines()
            .map(|line| format!("!{line}"))
            .collect::<Vec<_>>()
            .join("\n");
        Self::code(source, execution_count, outputs)
    }

    /// A markdown cell.
    pub fn markdown(source: impl Into<String>) -> Self {
        Self {
            kind: CellKind::Markdown,
            source: source.into(),
            execution_count: None,
            outputs: Vec::new(),
        }
    }
}

/// Splits text into nbformat's list-of-lines form: every line keeps its `\n`, the last one
/// only if the text ends with one.
fn lines(text: &str) -> Value {
    Value::Array(
        text.split_inclusive('\n')
            .map(|l| Value::String(l.to_owned()))
            .collect(),
    )
}

/// A MIME bundle for nbformat: text types as lists of lines, JSON types as they are, anything
/// else (base64 images) as one string.
fn mime_bundle(data: &BTreeMap<String, Value>) -> Value {
    let mut bundle = Map::new();
    for (mime, value) in data {
        let is_json = mime == "application/json" || mime.ends_with("+json");
        let value = match value {
            Value::String(text) if !is_json && mime.starts_with("text/") => lines(text),
            Value::String(text) if !is_json => Value::String(text.clone()),
            other => other.clone(),
        };
        bundle.insert(mime.clone(), value);
    }
    Value::Object(bundle)
}

fn outputs_json(outputs: &[CellOutput], execution_count: Option<u32>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    // Merges a stream piece into the previous output when it is the same stream.
    let mut last_stream: Option<(StreamName, String)> = None;
    let flush = |out: &mut Vec<Value>, pending: &mut Option<(StreamName, String)>| {
        if let Some((name, text)) = pending.take() {
            out.push(json!({"output_type": "stream", "name": name.as_str(), "text": lines(&text)}));
        }
    };
    for output in outputs {
        match output {
            CellOutput::Stream { name, text } => match &mut last_stream {
                Some((last, pending)) if *last == *name => pending.push_str(text),
                _ => {
                    flush(&mut out, &mut last_stream);
                    last_stream = Some((*name, text.clone()));
                }
            },
            CellOutput::Result { is_main, data } => {
                flush(&mut out, &mut last_stream);
                let data = mime_bundle(data);
                out.push(if *is_main {
                    json!({"output_type": "execute_result", "execution_count": execution_count,
                           "data": data, "metadata": {}})
                } else {
                    json!({"output_type": "display_data", "data": data, "metadata": {}})
                });
            }
            CellOutput::Error {
                ename,
                evalue,
                traceback,
            } => {
                flush(&mut out, &mut last_stream);
                out.push(
                    json!({"output_type": "error", "ename": ename, "evalue": evalue,
                                "traceback": traceback}),
                );
            }
        }
    }
    flush(&mut out, &mut last_stream);
    out
}

/// Builds the notebook. `metadata` is stored under the notebook metadata's `mcpgym` key (the
/// episode id, the task id, the reward: whatever the caller wants kept with the file).
pub fn build_notebook(cells: &[ExecutedCell], metadata: Map<String, Value>) -> Value {
    let cells: Vec<Value> = cells
        .iter()
        .enumerate()
        .map(|(index, cell)| {
            let id = format!("cell-{index:04}");
            match cell.kind {
                CellKind::Markdown => json!({
                    "id": id, "cell_type": "markdown", "metadata": {}, "source": lines(&cell.source),
                }),
                CellKind::Code => json!({
                    "id": id, "cell_type": "code", "metadata": {},
                    "execution_count": cell.execution_count,
                    "source": lines(&cell.source),
                    "outputs": outputs_json(&cell.outputs, cell.execution_count),
                }),
            }
        })
        .collect();
    let mut notebook_metadata = Map::new();
    notebook_metadata.insert(
        "kernelspec".into(),
        json!({"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}),
    );
    notebook_metadata.insert(
        "language_info".into(),
        json!({"name": "python", "file_extension": ".py", "mimetype": "text/x-python"}),
    );
    if !metadata.is_empty() {
        notebook_metadata.insert("mcpgym".into(), Value::Object(metadata));
    }
    json!({
        "nbformat": NBFORMAT,
        "nbformat_minor": NBFORMAT_MINOR,
        "metadata": notebook_metadata,
        "cells": cells,
    })
}

/// Why a notebook is not valid nbformat 4.5.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid notebook at {path}: {message}")]
pub struct NotebookError {
    /// Where, as a JSON path (`cells[2].outputs[0]`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn invalid(path: impl Into<String>, message: impl Into<String>) -> NotebookError {
    NotebookError {
        path: path.into(),
        message: message.into(),
    }
}

type Checked = Result<(), NotebookError>;

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, NotebookError> {
    value
        .as_object()
        .ok_or_else(|| invalid(path, "expected an object"))
}

/// Checks that exactly the `required` keys are present, and no keys outside `allowed`.
fn keys(map: &Map<String, Value>, path: &str, required: &[&str], optional: &[&str]) -> Checked {
    for key in required {
        if !map.contains_key(*key) {
            return Err(invalid(path, format!("missing required key {key:?}")));
        }
    }
    for key in map.keys() {
        if !required.contains(&key.as_str()) && !optional.contains(&key.as_str()) {
            return Err(invalid(path, format!("unexpected key {key:?}")));
        }
    }
    Ok(())
}

/// nbformat's multiline string: a string, or an array of strings.
fn multiline(value: &Value, path: &str) -> Checked {
    match value {
        Value::String(_) => Ok(()),
        Value::Array(items) if items.iter().all(Value::is_string) => Ok(()),
        _ => Err(invalid(path, "expected a string or an array of strings")),
    }
}

fn mime_data(value: &Value, path: &str) -> Checked {
    for (mime, item) in object(value, path)? {
        if !mime.contains('/') {
            return Err(invalid(path, format!("{mime:?} is not a MIME type")));
        }
        let is_json = mime == "application/json" || mime.ends_with("+json");
        if !is_json {
            multiline(item, &format!("{path}.{mime}"))?;
        }
    }
    Ok(())
}

fn output(value: &Value, path: &str) -> Checked {
    let map = object(value, path)?;
    let kind = map
        .get("output_type")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(path, "missing output_type"))?;
    match kind {
        "stream" => {
            keys(map, path, &["output_type", "name", "text"], &[])?;
            if !matches!(map["name"].as_str(), Some("stdout" | "stderr")) {
                return Err(invalid(path, "stream name must be stdout or stderr"));
            }
            multiline(&map["text"], &format!("{path}.text"))
        }
        "execute_result" => {
            keys(
                map,
                path,
                &["output_type", "execution_count", "data", "metadata"],
                &[],
            )?;
            count(&map["execution_count"], path)?;
            object(&map["metadata"], path)?;
            mime_data(&map["data"], &format!("{path}.data"))
        }
        "display_data" => {
            keys(
                map,
                path,
                &["output_type", "data", "metadata"],
                &["transient"],
            )?;
            object(&map["metadata"], path)?;
            mime_data(&map["data"], &format!("{path}.data"))
        }
        "error" => {
            keys(
                map,
                path,
                &["output_type", "ename", "evalue", "traceback"],
                &[],
            )?;
            if !map["ename"].is_string() || !map["evalue"].is_string() {
                return Err(invalid(path, "ename and evalue must be strings"));
            }
            match &map["traceback"] {
                Value::Array(items) if items.iter().all(Value::is_string) => Ok(()),
                _ => Err(invalid(path, "traceback must be an array of strings")),
            }
        }
        other => Err(invalid(path, format!("unknown output_type {other:?}"))),
    }
}

fn count(value: &Value, path: &str) -> Checked {
    match value {
        Value::Null => Ok(()),
        Value::Number(n) if n.as_u64().is_some() => Ok(()),
        _ => Err(invalid(
            path,
            "execution_count must be null or a non-negative integer",
        )),
    }
}

fn cell_id(value: Option<&Value>, path: &str) -> Result<String, NotebookError> {
    let id = value
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(path, "missing cell id (required since nbformat 4.5)"))?;
    let valid = (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(id.to_owned())
    } else {
        Err(invalid(path, format!("invalid cell id {id:?}")))
    }
}

/// Checks a notebook against nbformat 4.5's structure: the required keys of the notebook, its
/// metadata, every cell and every output; no keys the schema does not allow on cells and
/// outputs; cell ids present, well-formed and unique. (A structural check written from the
/// nbformat 4 schema, not the full JSON Schema.)
pub fn validate(notebook: &Value) -> Checked {
    let top = object(notebook, "$")?;
    keys(
        top,
        "$",
        &["nbformat", "nbformat_minor", "metadata", "cells"],
        &[],
    )?;
    if top["nbformat"].as_u64() != Some(NBFORMAT) {
        return Err(invalid("$.nbformat", "must be 4"));
    }
    if top["nbformat_minor"].as_u64().is_none_or(|m| m < 5) {
        return Err(invalid("$.nbformat_minor", "must be at least 5 (cell ids)"));
    }
    let metadata = object(&top["metadata"], "$.metadata")?;
    if let Some(kernelspec) = metadata.get("kernelspec") {
        let spec = object(kernelspec, "$.metadata.kernelspec")?;
        for key in ["name", "display_name"] {
            if !spec.get(key).is_some_and(Value::is_string) {
                return Err(invalid("$.metadata.kernelspec", format!("missing {key}")));
            }
        }
    }
    if let Some(info) = metadata.get("language_info") {
        let info = object(info, "$.metadata.language_info")?;
        if !info.get("name").is_some_and(Value::is_string) {
            return Err(invalid("$.metadata.language_info", "missing name"));
        }
    }
    let cells = top["cells"]
        .as_array()
        .ok_or_else(|| invalid("$.cells", "expected an array"))?;
    let mut ids = std::collections::HashSet::new();
    for (index, cell) in cells.iter().enumerate() {
        let path = format!("$.cells[{index}]");
        let map = object(cell, &path)?;
        let id = cell_id(map.get("id"), &path)?;
        if !ids.insert(id.clone()) {
            return Err(invalid(&path, format!("duplicate cell id {id:?}")));
        }
        match map.get("cell_type").and_then(Value::as_str) {
            Some("code") => {
                keys(
                    map,
                    &path,
                    &[
                        "id",
                        "cell_type",
                        "metadata",
                        "source",
                        "outputs",
                        "execution_count",
                    ],
                    &[],
                )?;
                count(&map["execution_count"], &path)?;
                let outputs = map["outputs"]
                    .as_array()
                    .ok_or_else(|| invalid(&path, "outputs must be an array"))?;
                for (n, item) in outputs.iter().enumerate() {
                    output(item, &format!("{path}.outputs[{n}]"))?;
                }
            }
            Some("markdown" | "raw") => {
                keys(
                    map,
                    &path,
                    &["id", "cell_type", "metadata", "source"],
                    &["attachments"],
                )?;
            }
            _ => return Err(invalid(&path, "cell_type must be code, markdown or raw")),
        }
        object(&map["metadata"], &path)?;
        multiline(&map["source"], &format!("{path}.source"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        let cells = vec![
            ExecutedCell::markdown("Compute the answer.\nThen call final_answer."),
            ExecutedCell::code(
                "print('a')\nprint('b')\n1 + 1",
                Some(1),
                vec![
                    CellOutput::stdout("a\n"),
                    CellOutput::stdout("b\n"),
                    CellOutput::stderr("warning\n"),
                    CellOutput::text_result("2"),
                ],
            ),
            ExecutedCell::code(
                "plt.plot([1, 2])",
                Some(2),
                vec![CellOutput::png("iVBORw0KGgo=")],
            ),
            ExecutedCell::code(
                "1 / 0",
                Some(3),
                vec![CellOutput::error(
                    "ZeroDivisionError",
                    "division by zero",
                    "Traceback (most recent call last):\n  Cell In[3], line 1\nZeroDivisionError: division by zero",
                )],
            ),
            ExecutedCell::shell("ls", Some(4), vec![CellOutput::stdout("data.csv\n")]),
            ExecutedCell::code("while True: pass", None, vec![]),
        ];
        let mut meta = Map::new();
        meta.insert("task".into(), "classic/0".into());
        build_notebook(&cells, meta)
    }

    #[test]
    fn built_notebook_is_valid_nbformat_4_5() {
        let notebook = sample();
        validate(&notebook).unwrap();
        assert_eq!(notebook["nbformat"], 4);
        assert_eq!(notebook["nbformat_minor"], 5);
        assert_eq!(notebook["metadata"]["kernelspec"]["name"], "python3");
        assert_eq!(notebook["metadata"]["mcpgym"]["task"], "classic/0");
        let cells = notebook["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 6);
        assert_eq!(cells[0]["cell_type"], "markdown");
        assert!(cells[0].get("outputs").is_none());
        assert_eq!(cells[5]["execution_count"], Value::Null);
    }

    #[test]
    fn outputs_have_their_nbformat_shapes() {
        let notebook = sample();
        let cells = &notebook["cells"];
        assert_eq!(
            cells[1]["source"],
            json!(["print('a')\n", "print('b')\n", "1 + 1"])
        );
        let outputs = cells[1]["outputs"].as_array().unwrap();
        // stdout pieces merged; stderr separate; then the result.
        assert_eq!(outputs.len(), 3);
        assert_eq!(
            outputs[0],
            json!({"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]})
        );
        assert_eq!(outputs[1]["name"], "stderr");
        assert_eq!(outputs[2]["output_type"], "execute_result");
        assert_eq!(outputs[2]["execution_count"], 1);
        assert_eq!(outputs[2]["data"]["text/plain"], json!(["2"]));
        let image = &cells[2]["outputs"][0];
        assert_eq!(image["output_type"], "display_data");
        assert_eq!(image["data"]["image/png"], "iVBORw0KGgo=");
        assert!(image.get("execution_count").is_none());
        let error = &cells[3]["outputs"][0];
        assert_eq!(error["output_type"], "error");
        assert_eq!(error["traceback"].as_array().unwrap().len(), 3);
        assert_eq!(cells[4]["source"], json!(["!ls"]));
    }

    #[test]
    fn ids_are_unique_and_stable() {
        let a = serde_json::to_string(&sample()).unwrap();
        let b = serde_json::to_string(&sample()).unwrap();
        assert_eq!(a, b);
        let notebook = sample();
        let ids: std::collections::HashSet<&str> = notebook["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 6);
    }

    #[test]
    fn validator_rejects_broken_notebooks() {
        // (what, the JSON pointer of a key, its new value or None to remove it)
        let breakages: Vec<(&str, &str, Option<Value>)> = vec![
            ("no id", "/cells/1/id", None),
            ("dup id", "/cells/1/id", Some("cell-0000".into())),
            ("bad id", "/cells/1/id", Some("has space".into())),
            ("long id", "/cells/1/id", Some("x".repeat(65).into())),
            ("minor 4", "/nbformat_minor", Some(4.into())),
            ("no outputs", "/cells/1/outputs", None),
            ("no execution_count", "/cells/1/execution_count", None),
            ("no source", "/cells/1/source", None),
            (
                "display with count",
                "/cells/2/outputs/0/execution_count",
                Some(1.into()),
            ),
            (
                "result without count",
                "/cells/1/outputs/2/execution_count",
                None,
            ),
            (
                "stream name",
                "/cells/1/outputs/0/name",
                Some("stdin".into()),
            ),
            (
                "traceback string",
                "/cells/3/outputs/0/traceback",
                Some("x".into()),
            ),
            (
                "kernelspec",
                "/metadata/kernelspec",
                Some(json!({"name": "python3"})),
            ),
            ("markdown outputs", "/cells/0/outputs", Some(json!([]))),
            (
                "unknown output",
                "/cells/1/outputs/0/output_type",
                Some("pager".into()),
            ),
            ("no metadata", "/metadata", None),
        ];
        for (name, pointer, value) in breakages {
            let mut notebook = sample();
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            let parent = notebook
                .pointer_mut(parent)
                .unwrap()
                .as_object_mut()
                .unwrap();
            match value {
                Some(value) => parent.insert(key.to_owned(), value),
                None => parent.remove(key),
            };
            assert!(validate(&notebook).is_err(), "{name} should be invalid");
        }
    }
}
