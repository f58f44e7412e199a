//! The output budget of one execution: how much of what a cell prints and displays is kept,
//! whatever it prints.
//!
//! Of stream text (stdout and stderr together) the first part is kept as it arrives and the
//! last part in a ring that forgets its oldest bytes; in between, a line
//! `[... N characters cut ...]` says how much went. Rich outputs (results, displays) share a
//! budget of their own: one that does not fit keeps only its `text/plain`, cut to what is
//! left; once nothing is left, further rich outputs are counted and dropped. Errors are kept,
//! each cut to a fixed size.

use std::collections::VecDeque;

use mcpgym_e2b::cut::{ceil_boundary, cut_size, floor_boundary, past_marker};
use serde_json::{Map, Value};

use super::execution::StreamName;

/// Most bytes of one error output (name, message and traceback together).
const MAX_ERROR_BYTES: usize = 64 * 1024;
/// Below this many bytes left, a rich output is dropped rather than cut.
const MIN_RICH_BYTES: usize = 1024;

/// The marker that stands for characters of output that were not kept (shared with clients,
/// which count it when they cut again).
pub use mcpgym_e2b::cut::cut_marker;

/// `text` cut to about `max` bytes: three quarters of its beginning and a quarter of its end
/// around a [`cut_marker`] line. Unchanged when it fits.
pub(crate) fn head_and_tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    mcpgym_e2b::cut::head_and_tail(text, max / 4 * 3, max / 4)
}

/// What the budget decided for one piece of stream text.
pub(super) struct Kept<'a> {
    /// The part to keep and report now (the head), possibly empty.
    pub(super) now: &'a str,
}

/// The budget of one execution. See the module documentation.
#[derive(Debug)]
pub(super) struct OutputBudget {
    max: usize,
    head_max: usize,
    head_used: usize,
    tail_max: usize,
    tail: VecDeque<(StreamName, String)>,
    tail_bytes: usize,
    /// The head is full: stream text goes to the tail ring.
    cutting: bool,
    rich_max: usize,
    rich_used: usize,
    /// Characters of stream text and rich data not kept.
    pub(super) cut_chars: u64,
    /// Rich outputs dropped whole.
    pub(super) dropped_outputs: u64,
}

impl OutputBudget {
    /// A budget of about `max` bytes: half for streams (three quarters of that for the head,
    /// a quarter for the tail), half for rich outputs.
    pub(super) fn new(max: usize) -> Self {
        let streams = max / 2;
        OutputBudget {
            max,
            head_max: streams / 4 * 3,
            head_used: 0,
            tail_max: streams / 4,
            tail: VecDeque::new(),
            tail_bytes: 0,
            cutting: false,
            rich_max: max - streams,
            rich_used: 0,
            cut_chars: 0,
            dropped_outputs: 0,
        }
    }

    /// Whether anything was cut or dropped so far.
    pub(super) fn cut_anything(&self) -> bool {
        self.cut_chars > 0 || self.dropped_outputs > 0 || self.cutting
    }

    /// Takes a piece of stream text: returns the part kept at once; the rest goes to the tail.
    pub(super) fn stream<'a>(&mut self, name: StreamName, text: &'a str) -> Kept<'a> {
        if !self.cutting {
            let room = self.head_max - self.head_used;
            if text.len() <= room {
                self.head_used += text.len();
                return Kept { now: text };
            }
            let end = floor_boundary(text, room);
            self.head_used += end;
            self.cutting = true;
            self.push_tail(name, &text[end..]);
            return Kept { now: &text[..end] };
        }
        self.push_tail(name, text);
        Kept { now: "" }
    }

    fn push_tail(&mut self, name: StreamName, text: &str) {
        if text.is_empty() {
            return;
        }
        if text.len() >= self.tail_max {
            for (_, old) in self.tail.drain(..) {
                self.cut_chars += cut_size(&old);
            }
            let start = past_marker(text, ceil_boundary(text, text.len() - self.tail_max));
            self.cut_chars += cut_size(&text[..start]);
            self.tail_bytes = text.len() - start;
            self.tail.push_back((name, text[start..].to_owned()));
            return;
        }
        self.tail.push_back((name, text.to_owned()));
        self.tail_bytes += text.len();
        while self.tail_bytes > self.tail_max {
            let excess = self.tail_bytes - self.tail_max;
            let Some((_, front)) = self.tail.front_mut() else {
                break;
            };
            if front.len() <= excess {
                self.tail_bytes -= front.len();
                self.cut_chars += cut_size(front);
                self.tail.pop_front();
            } else {
                let start = past_marker(front, ceil_boundary(front, excess));
                self.cut_chars += cut_size(&front[..start]);
                front.drain(..start);
                self.tail_bytes -= start;
            }
        }
    }

    /// The end of the streams: the marker and the tail, in order, if anything was cut.
    pub(super) fn finish(&mut self) -> Vec<(StreamName, String)> {
        if !self.cut_anything() {
            return Vec::new();
        }
        let name = self
            .tail
            .front()
            .map_or(StreamName::Stdout, |(name, _)| *name);
        let mut marker = format!("\n{}", cut_marker(self.cut_chars));
        if self.dropped_outputs > 0 {
            marker.push_str(&format!(
                "\n[... {} more rich outputs not kept ...]",
                self.dropped_outputs
            ));
        }
        marker.push('\n');
        let mut out = vec![(name, marker)];
        out.extend(self.tail.drain(..));
        self.tail_bytes = 0;
        out
    }

    /// Takes a rich output's MIME bundle: `None` to drop it, else what to keep of it.
    pub(super) fn rich(&mut self, data: Map<String, Value>) -> Option<Map<String, Value>> {
        let size: usize = data.values().map(value_size).sum();
        let room = self.rich_max - self.rich_used;
        if size <= room {
            self.rich_used += size;
            return Some(data);
        }
        if room < MIN_RICH_BYTES {
            self.dropped_outputs += 1;
            self.cut_chars += size as u64;
            return None;
        }
        let others: Vec<&str> = data
            .keys()
            .filter(|m| *m != "text/plain")
            .map(String::as_str)
            .collect();
        let mut text = match data.get("text/plain") {
            Some(Value::String(text)) => head_and_tail(text, room - MIN_RICH_BYTES / 2),
            _ => String::new(),
        };
        if !others.is_empty() {
            text.push_str(&format!(
                "\n[... {} not kept: the output was too large ...]",
                others.join(", ")
            ));
        }
        self.rich_used += text.len();
        self.cut_chars += size.saturating_sub(text.len()) as u64;
        let mut kept = Map::new();
        kept.insert("text/plain".into(), Value::String(text));
        Some(kept)
    }

    /// Cuts an error to [`MAX_ERROR_BYTES`]: the message to half, the traceback's lines to
    /// the rest (its first and last lines kept).
    pub(super) fn error(
        &mut self,
        evalue: String,
        traceback: Vec<String>,
    ) -> (String, Vec<String>) {
        let evalue = if evalue.len() > MAX_ERROR_BYTES / 2 {
            self.cut_chars += (evalue.len() - MAX_ERROR_BYTES / 2) as u64;
            head_and_tail(&evalue, MAX_ERROR_BYTES / 2)
        } else {
            evalue
        };
        let room = MAX_ERROR_BYTES / 2;
        let total: usize = traceback.iter().map(String::len).sum();
        if total <= room {
            return (evalue, traceback);
        }
        self.cut_chars += (total - room) as u64;
        let joined = traceback.join("\n");
        let cut = head_and_tail(&joined, room);
        (evalue, cut.split('\n').map(str::to_owned).collect())
    }

    /// Forgets everything (the cell cleared its output).
    pub(super) fn reset(&mut self) {
        *self = OutputBudget::new(self.max);
    }
}

/// About how many bytes a JSON value takes.
fn value_size(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len(),
        Value::Array(items) => items.iter().map(value_size).sum::<usize>() + items.len(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + value_size(v) + 4).sum(),
        _ => 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_says_what_was_cut() {
        let text = "a".repeat(1000) + &"b".repeat(1000);
        let cut = head_and_tail(&text, 400);
        assert!(cut.starts_with(&"a".repeat(300)));
        assert!(cut.ends_with(&"b".repeat(100)));
        assert!(cut.contains("[... 1600 characters cut ...]"), "{cut}");
        assert_eq!(head_and_tail("short", 400), "short");
    }

    #[test]
    fn streams_keep_head_and_tail() {
        let mut budget = OutputBudget::new(800);
        // Streams: 300 bytes of head, 100 of tail.
        let (x, y, z) = ("x".repeat(250), "y".repeat(100), "z".repeat(7));
        assert_eq!(budget.stream(StreamName::Stdout, &x).now.len(), 250);
        assert_eq!(budget.stream(StreamName::Stdout, &y).now.len(), 50);
        for _ in 0..100 {
            assert_eq!(budget.stream(StreamName::Stderr, &z).now, "");
        }
        let end = budget.finish();
        assert_eq!(end[0].1, "\n[... 650 characters cut ...]\n");
        let tail: String = end[1..].iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(tail, "z".repeat(100));
        assert_eq!(end[1].0, StreamName::Stderr);
    }

    #[test]
    fn rich_outputs_shrink_then_go() {
        let mut budget = OutputBudget::new(8 * 1024);
        let mut big = Map::new();
        big.insert("text/plain".into(), Value::String("y".repeat(100_000)));
        big.insert("text/html".into(), Value::String("h".repeat(100_000)));
        let kept = budget.rich(big).unwrap();
        let text = kept["text/plain"].as_str().unwrap();
        assert!(text.len() < 4096, "{}", text.len());
        assert!(text.contains("characters cut") && text.contains("text/html not kept"));
        let mut more = Map::new();
        more.insert("text/plain".into(), Value::String("z".repeat(10_000)));
        assert!(budget.rich(more).is_none());
        assert_eq!(budget.dropped_outputs, 1);
    }
}
