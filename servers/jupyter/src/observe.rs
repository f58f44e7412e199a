//! What the model sees of a cell or a command: readable text, images as image content, long
//! output cut with a marker.
//!
//! A cell's text is, in order: stdout; stderr under a `[stderr]` line; the text of its results
//! (a value, or what was displayed); a line `[N image(s) attached below]` when it drew any; the
//! error as `ExceptionName: message` followed by the traceback with terminal colour codes
//! removed, then any later error as one line (how the sandbox ended the cell: a deadline, a
//! kernel that died). `(no output)` when there is nothing at all. Text longer than
//! [`MAX_OUTPUT_CHARS`] keeps its beginning and its end around a line
//! `[... N characters cut ...]`, where N also counts what was cut before the text reached here
//! (by the sandbox, or by the client's [cap](crate::cap)).

use rmcp::model::ContentBlock;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::notebook::{CellOutput, StreamName};

/// The most characters of one observation's text shown to the model; longer text is cut in
/// the middle with a marker saying how much.
pub const MAX_OUTPUT_CHARS: usize = 8_000;
/// Of a cut text, how many characters of the end are kept (the rest of the budget goes to the
/// beginning).
const TAIL_CHARS: usize = 2_000;

/// Removes ANSI escape sequences (colours in IPython tracebacks).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('[') => {
                chars.next();
                // CSI: parameters and intermediates, then one final byte in @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                chars.next();
                // OSC: up to BEL or ESC \.
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' {
                        chars.next();
                        break;
                    }
                }
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    out
}

/// Cuts `text` to at most [`MAX_OUTPUT_CHARS`] characters (plus the marker line).
pub fn truncate(text: &str) -> String {
    truncate_to(text, MAX_OUTPUT_CHARS)
}

fn truncate_to(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let tail = TAIL_CHARS.min(max / 2);
    let head = max - tail;
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - tail)
        .map_or(text.len(), |(i, _)| i);
    // A marker already in the cut part counts for what it stood for.
    let cut = crate::cap::cut_size(&text[head_end..tail_start]);
    format!(
        "{}\n{}\n{}",
        &text[..head_end],
        crate::cap::cut_marker(cut),
        &text[tail_start..]
    )
}

/// The error of a cell, as structured content.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorObservation {
    /// The exception's class name.
    pub name: String,
    /// Its message.
    pub value: String,
    /// The traceback, without colour codes.
    pub traceback: String,
}

/// What a cell did, as structured content.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CellObservation {
    /// The kernel's execution count.
    pub execution_count: Option<u32>,
    /// Standard output (possibly cut).
    pub stdout: String,
    /// Standard error (possibly cut).
    pub stderr: String,
    /// The plain-text form of each result, in order.
    pub results: Vec<String>,
    /// How many images the cell produced (sent as image content).
    pub images: usize,
    /// The error the cell raised, if any.
    pub error: Option<ErrorObservation>,
}

/// The observation of one cell: content blocks and structured content.
pub fn cell_observation(
    execution_count: Option<u32>,
    outputs: &[CellOutput],
    include_images: bool,
) -> (Vec<ContentBlock>, CellObservation) {
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut results = Vec::new();
    let mut images: Vec<(String, &'static str)> = Vec::new();
    let mut error = None;
    let mut later_errors: Vec<String> = Vec::new();
    for output in outputs {
        match output {
            CellOutput::Stream { name, text } => match name {
                StreamName::Stdout => stdout.push_str(text),
                StreamName::Stderr => stderr.push_str(text),
            },
            CellOutput::Result { data, .. } => {
                let mut has_image = false;
                for (mime, kind) in [("image/png", "image/png"), ("image/jpeg", "image/jpeg")] {
                    if let Some(Value::String(b64)) = data.get(mime) {
                        images.push((b64.replace('\n', ""), kind));
                        has_image = true;
                        break;
                    }
                }
                let text = data.get("text/plain").and_then(Value::as_str);
                match text {
                    // A figure's repr says nothing the image does not.
                    Some(text) if !(has_image && text.starts_with("<Figure")) => {
                        results.push(strip_ansi(text));
                    }
                    None if !has_image => {
                        if let Some(other) = data.keys().next() {
                            results.push(format!("[{other} output]"));
                        }
                    }
                    _ => {}
                }
            }
            CellOutput::Error {
                ename,
                evalue,
                traceback,
            } => {
                if error.is_none() {
                    error = Some(ErrorObservation {
                        name: ename.clone(),
                        value: evalue.clone(),
                        traceback: strip_ansi(&traceback.join("\n")),
                    });
                } else {
                    // The sandbox's own word on how the cell ended (a deadline, a kernel
                    // that died) follows the exception the interrupt raised.
                    later_errors.push(format!("{ename}: {}", strip_ansi(evalue)));
                }
            }
        }
    }
    let stdout = truncate(&strip_ansi(&stdout));
    let stderr = truncate(&strip_ansi(&stderr));
    let mut sections: Vec<String> = Vec::new();
    if !stdout.is_empty() {
        sections.push(stdout.trim_end_matches('\n').to_owned());
    }
    if !stderr.is_empty() {
        sections.push(format!("[stderr]\n{}", stderr.trim_end_matches('\n')));
    }
    for result in &results {
        sections.push(result.clone());
    }
    if !images.is_empty() {
        sections.push(if include_images {
            format!("[{} image(s) attached below]", images.len())
        } else {
            format!("[{} image(s) not shown]", images.len())
        });
    }
    if let Some(error) = &error {
        let mut text = format!("{}: {}", error.name, error.value);
        let traceback = error.traceback.trim();
        if !traceback.is_empty() {
            text.push('\n');
            text.push_str(traceback);
        }
        sections.push(text);
    }
    sections.extend(later_errors);
    let mut text = truncate(&sections.join("\n"));
    if text.is_empty() {
        text = "(no output)".to_owned();
    }
    let mut content = vec![ContentBlock::text(text)];
    if include_images {
        for (b64, mime) in &images {
            content.push(ContentBlock::image(b64.clone(), *mime));
        }
    }
    let structured = CellObservation {
        execution_count,
        stdout,
        stderr,
        results: results.iter().map(|r| truncate(r)).collect(),
        images: images.len(),
        error,
    };
    (content, structured)
}

/// What a shell command did, as structured content.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShellObservation {
    /// Standard output (possibly cut).
    pub stdout: String,
    /// Standard error (possibly cut).
    pub stderr: String,
    /// The exit code; `null` when the command was killed.
    pub exit_code: Option<i32>,
    /// Why the command did not exit normally, if it did not.
    pub error: Option<String>,
}

/// The text of a shell command's observation.
pub fn shell_text(observation: &ShellObservation) -> String {
    let mut sections = Vec::new();
    if !observation.stdout.is_empty() {
        sections.push(observation.stdout.trim_end_matches('\n').to_owned());
    }
    if !observation.stderr.is_empty() {
        sections.push(format!(
            "[stderr]\n{}",
            observation.stderr.trim_end_matches('\n')
        ));
    }
    if sections.is_empty() {
        sections.push("(no output)".to_owned());
    }
    sections.push(match (&observation.exit_code, &observation.error) {
        (Some(code), _) => format!("[exit code {code}]"),
        (None, Some(error)) => format!("[no exit code: {error}]"),
        (None, None) => "[no exit code]".to_owned(),
    });
    sections.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_codes_go() {
        assert_eq!(
            strip_ansi("\u{1b}[0;31mValueError\u{1b}[0m: x\u{1b}]8;;u\u{7}y"),
            "ValueError: xy"
        );
    }

    #[test]
    fn long_text_is_cut_with_a_marker() {
        let text = "é".repeat(10_000);
        let cut = truncate(&text);
        assert!(
            cut.contains("[... 2000 characters cut ...]"),
            "{}",
            &cut[..50]
        );
        assert!(cut.chars().count() < MAX_OUTPUT_CHARS + 50);
        assert_eq!(truncate("short"), "short");
        // A cut of a cut says how much the program printed beyond what is shown.
        let twice = format!(
            "{}\n{}\n{}",
            "a".repeat(9_000),
            crate::cap::cut_marker(1_000_000),
            "b".repeat(9_000)
        );
        let cut = truncate(&twice);
        let expected = 1_000_000 + 3_000 + 7_000 + 2;
        assert!(
            cut.contains(&format!("[... {expected} characters cut ...]")),
            "{cut}"
        );
    }

    #[test]
    fn empty_cell_says_so() {
        let (content, structured) = cell_observation(Some(1), &[], true);
        assert_eq!(content.len(), 1);
        assert!(format!("{content:?}").contains("(no output)"));
        assert!(structured.error.is_none());
    }

    #[test]
    fn sections_in_order() {
        let outputs = vec![
            CellOutput::stdout("out\n"),
            CellOutput::stderr("warn\n"),
            CellOutput::text_result("42"),
            CellOutput::png("iVBORw0KGgo="),
            CellOutput::error(
                "ZeroDivisionError",
                "division by zero",
                "\u{1b}[31mTraceback\u{1b}[0m",
            ),
        ];
        let (content, structured) = cell_observation(Some(2), &outputs, true);
        assert_eq!(content.len(), 2);
        let text = format!("{:?}", content[0]);
        let order = [
            "out",
            "[stderr]",
            "42",
            "1 image(s)",
            "ZeroDivisionError: division by zero",
        ];
        let positions: Vec<usize> = order.iter().map(|s| text.find(s).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert_eq!(structured.images, 1);
        assert_eq!(structured.error.unwrap().traceback, "Traceback");
    }

    #[test]
    fn shell_shows_exit_code() {
        let text = shell_text(&ShellObservation {
            stdout: String::new(),
            stderr: "nope\n".into(),
            exit_code: Some(2),
            error: None,
        });
        assert_eq!(text, "[stderr]\nnope\n[exit code 2]");
    }
}
