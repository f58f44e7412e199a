//! Output kept of a cell or a command, capped while it arrives: the client reads the sandbox's
//! responses piece by piece and keeps at most a fixed amount, however much the code prints.
//!
//! Stream text keeps its beginning and its end; in between, a line `[... N characters cut
//! ...]` says how much went. Such markers compose: when text holding a marker is cut again
//! (here, or by the observation's shorter cut), the new marker counts what the old one stood
//! for, so the number shown is what the program really printed beyond what is shown. A rich
//! result keeps each text representation to [`MAX_TEXT_VALUE`] bytes (head and tail); the
//! results of one cell share [`MAX_RICH_BYTES`]: one that no longer fits keeps only its cut
//! `text/plain`, and after [`MAX_RICH_OUTPUTS`] the rest are counted and dropped.

use std::collections::{BTreeMap, VecDeque};

use mcpgym_e2b::cut::{ceil_boundary, past_marker};
use serde_json::Value;

use crate::notebook::{CellOutput, StreamName};

/// Bytes kept of the beginning of each stream of a cell or command.
pub const STREAM_HEAD_BYTES: usize = 24 * 1024;
/// Bytes kept of the end of each stream of a cell or command.
pub const STREAM_TAIL_BYTES: usize = 8 * 1024;
/// Most bytes of one text representation of a result (`text/plain`, `text/html`, JSON as
/// text), and of an error's traceback.
pub const MAX_TEXT_VALUE: usize = 32 * 1024;
/// Most bytes of rich results (images included) kept per cell.
pub const MAX_RICH_BYTES: usize = 512 * 1024;
/// Most rich results kept per cell.
pub const MAX_RICH_OUTPUTS: usize = 64;

/// The cut marker and its arithmetic, shared with the sandbox service (which writes the same
/// marker into output it cuts, so cuts of its cuts add up).
pub use mcpgym_e2b::cut::{cut_marker, cut_size, head_and_tail};

/// The head and tail of one byte stream, kept while it arrives.
#[derive(Debug, Default)]
pub struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<Vec<u8>>,
    tail_bytes: usize,
    cutting: bool,
    cut: u64,
}

impl HeadTail {
    /// Takes the next piece; returns the part that went to the head (what a caller showing
    /// output as it comes may show now).
    pub fn push<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        if !self.cutting {
            let room = STREAM_HEAD_BYTES - self.head.len();
            if bytes.len() <= room {
                self.head.extend_from_slice(bytes);
                return bytes;
            }
            self.head.extend_from_slice(&bytes[..room]);
            self.cutting = true;
            self.push_tail(&bytes[room..]);
            return &bytes[..room];
        }
        self.push_tail(bytes);
        &[]
    }

    fn push_tail(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if bytes.len() >= STREAM_TAIL_BYTES {
            for old in self.tail.drain(..) {
                self.cut += cut_size(&String::from_utf8_lossy(&old));
            }
            let mut start = bytes.len() - STREAM_TAIL_BYTES;
            if let Ok(text) = std::str::from_utf8(bytes) {
                start = past_marker(text, ceil_boundary(text, start));
            }
            self.cut += cut_size(&String::from_utf8_lossy(&bytes[..start]));
            self.tail.push_back(bytes[start..].to_vec());
            self.tail_bytes = bytes.len() - start;
            return;
        }
        self.tail.push_back(bytes.to_vec());
        self.tail_bytes += bytes.len();
        while self.tail_bytes > STREAM_TAIL_BYTES {
            let excess = self.tail_bytes - STREAM_TAIL_BYTES;
            let Some(front) = self.tail.front_mut() else {
                break;
            };
            if front.len() <= excess {
                self.cut += cut_size(&String::from_utf8_lossy(front));
                self.tail_bytes -= front.len();
                self.tail.pop_front();
            } else {
                let text = String::from_utf8_lossy(front);
                let start = match &text {
                    // Valid UTF-8: the same offsets, so a marker is never split.
                    std::borrow::Cow::Borrowed(text) => {
                        past_marker(text, ceil_boundary(text, excess))
                    }
                    std::borrow::Cow::Owned(_) => excess,
                };
                self.cut += cut_size(&String::from_utf8_lossy(&front[..start]));
                front.drain(..start);
                self.tail_bytes -= start;
            }
        }
    }

    /// Whether anything did not fit the head.
    pub fn was_cut(&self) -> bool {
        self.cutting
    }

    /// What comes after the head: the marker line and the tail, when anything was cut.
    pub fn rest(&self) -> Option<String> {
        if !self.cutting {
            return None;
        }
        let tail: Vec<u8> = self.tail.iter().flatten().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        // Markers in the kept tail stand for themselves; one in the head is shown as is.
        Some(format!("\n{}\n{tail}", cut_marker(self.cut)))
    }

    /// Everything kept, as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if let Some(rest) = self.rest() {
            text.push_str(&rest);
        }
        text
    }
}

/// The outputs of one cell, capped while its lines arrive.
#[derive(Debug, Default)]
pub struct CellCapture {
    outputs: Vec<CellOutput>,
    stdout: HeadTail,
    stderr: HeadTail,
    rich_bytes: usize,
    rich_outputs: usize,
    dropped: usize,
}

impl CellCapture {
    /// Stream text.
    pub fn stream(&mut self, name: StreamName, text: &str) {
        let capture = match name {
            StreamName::Stdout => &mut self.stdout,
            StreamName::Stderr => &mut self.stderr,
        };
        let now = capture.push(text.as_bytes());
        if now.is_empty() {
            return;
        }
        let now = String::from_utf8_lossy(now).into_owned();
        self.outputs.push(CellOutput::Stream { name, text: now });
    }

    /// A rich result.
    pub fn result(&mut self, is_main: bool, data: BTreeMap<String, Value>) {
        if self.rich_outputs >= MAX_RICH_OUTPUTS && !is_main {
            self.dropped += 1;
            return;
        }
        let mut kept = BTreeMap::new();
        let mut left_out = Vec::new();
        for (mime, value) in data {
            let value = match value {
                Value::String(text) if is_text(&mime) => Value::String(head_and_tail(
                    &text,
                    MAX_TEXT_VALUE * 3 / 4,
                    MAX_TEXT_VALUE / 4,
                )),
                Value::String(text) => Value::String(text),
                other => {
                    let size = other.to_string().len();
                    if size > MAX_TEXT_VALUE {
                        left_out.push(mime);
                        continue;
                    }
                    other
                }
            };
            kept.insert(mime, value);
        }
        let size: usize = kept
            .iter()
            .map(|(mime, value)| mime.len() + value.as_str().map_or(64, str::len))
            .sum();
        if self.rich_bytes + size > MAX_RICH_BYTES {
            // Only the text stays.
            let text = kept.remove("text/plain");
            left_out.extend(kept.into_keys());
            kept = BTreeMap::new();
            if let Some(text) = text {
                kept.insert("text/plain".to_owned(), text);
            }
        }
        if !left_out.is_empty() {
            let note = format!(
                "[{} not kept: the cell's output was too large]",
                left_out.join(", ")
            );
            let text = match kept.remove("text/plain") {
                Some(Value::String(text)) => format!("{text}\n{note}"),
                _ => note,
            };
            kept.insert("text/plain".to_owned(), Value::String(text));
        }
        self.rich_bytes += kept
            .iter()
            .map(|(mime, value)| mime.len() + value.as_str().map_or(64, str::len))
            .sum::<usize>();
        self.rich_outputs += 1;
        self.outputs.push(CellOutput::Result {
            is_main,
            data: kept,
        });
    }

    /// The error the cell raised (name, message and traceback each cut).
    pub fn error(&mut self, ename: &str, evalue: &str, traceback: &str) {
        let cut = |text: &str| head_and_tail(text, MAX_TEXT_VALUE * 3 / 4, MAX_TEXT_VALUE / 4);
        self.outputs
            .push(CellOutput::error(cut(ename), cut(evalue), cut(traceback)));
    }

    /// Whether any output was cut or dropped.
    pub fn was_cut(&self) -> bool {
        self.stdout.was_cut() || self.stderr.was_cut() || self.dropped > 0
    }

    /// The outputs, with the cut streams' markers and tails at the end.
    pub fn finish(mut self) -> Vec<CellOutput> {
        for (name, capture) in [
            (StreamName::Stdout, &self.stdout),
            (StreamName::Stderr, &self.stderr),
        ] {
            if let Some(rest) = capture.rest() {
                self.outputs.push(CellOutput::Stream { name, text: rest });
            }
        }
        if self.dropped > 0 {
            self.outputs.push(CellOutput::stderr(format!(
                "\n[... {} more results not kept ...]\n",
                self.dropped
            )));
        }
        self.outputs
    }
}

/// Whether a MIME type's value is text to cut (not base64 to keep whole or drop).
fn is_text(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime == "image/svg+xml"
        || mime == "application/javascript"
        || mime == "application/json"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_keeps_head_and_tail() {
        let mut capture = HeadTail::default();
        let piece = vec![b'a'; 1000];
        let mut shown = 0;
        for _ in 0..1000 {
            shown += capture.push(&piece).len();
        }
        capture.push(b"END");
        assert_eq!(shown, STREAM_HEAD_BYTES);
        let text = capture.text();
        assert!(text.ends_with("aEND"));
        let cut = 1_000_003 - (STREAM_HEAD_BYTES + STREAM_TAIL_BYTES) as u64;
        assert!(
            text.contains(&cut_marker(cut)),
            "{}",
            &text[STREAM_HEAD_BYTES..][..60]
        );
        assert!(text.len() < STREAM_HEAD_BYTES + STREAM_TAIL_BYTES + 100);
    }

    #[test]
    fn a_huge_result_keeps_a_cut_text() {
        let mut capture = CellCapture::default();
        let mut data = BTreeMap::new();
        data.insert(
            "text/plain".to_owned(),
            Value::String("y".repeat(10_000_000)),
        );
        data.insert(
            "image/png".to_owned(),
            Value::String("A".repeat(MAX_RICH_BYTES)),
        );
        capture.result(true, data);
        let outputs = capture.finish();
        let CellOutput::Result { data, .. } = &outputs[0] else {
            panic!()
        };
        let text = data["text/plain"].as_str().unwrap();
        assert!(text.len() < MAX_TEXT_VALUE + 200);
        assert!(text.contains("characters cut") && text.contains("image/png not kept"));
        assert!(!data.contains_key("image/png"));
    }
}
