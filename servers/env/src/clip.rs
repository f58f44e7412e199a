//! Head-and-tail clipping of text and JSON to a byte budget: the start and the end of a long
//! output are what a reader needs (the command, the error at the bottom), and what was cut is
//! said in place, as `…[cut N bytes]…`.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The key under which JSON too large to clip string by string is kept, as clipped JSON text.
pub const CLIPPED_JSON_KEY: &str = "mcpgym/clipped";

/// The sentence put where bytes were cut.
fn marker(cut: usize) -> String {
    format!("\n…[cut {cut} bytes]…\n")
}

/// The largest char boundary of `text` at or below `index`.
pub fn floor_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The smallest char boundary of `text` at or above `index`.
pub fn ceil_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// `text` kept within `budget` bytes of its own (plus the marker): its first and last
/// `budget / 2` bytes around a marker saying how much was cut. Returns the bytes cut.
pub fn clip_text(text: &str, budget: usize) -> (Cow<'_, str>, usize) {
    if text.len() <= budget {
        return (Cow::Borrowed(text), 0);
    }
    let head = floor_boundary(text, budget / 2);
    let tail = ceil_boundary(text, text.len() - (budget - budget / 2));
    let cut = tail - head;
    let mut clipped = String::with_capacity(budget + 32);
    clipped.push_str(&text[..head]);
    clipped.push_str(&marker(cut));
    clipped.push_str(&text[tail..]);
    (Cow::Owned(clipped), cut)
}

/// Builds a text from pieces while keeping only its first and last `budget / 2` bytes, so a
/// huge text never exists whole.
#[derive(Debug)]
pub struct Clipper {
    half: usize,
    head: String,
    /// The latest bytes past the head; trimmed to `half` whenever it reaches twice that.
    tail: String,
    /// Bytes dropped from the tail's front so far.
    dropped: usize,
}

impl Clipper {
    /// A clipper keeping at most `budget` bytes of text.
    pub fn new(budget: usize) -> Self {
        Clipper {
            half: budget / 2,
            head: String::new(),
            tail: String::new(),
            dropped: 0,
        }
    }

    /// Appends a piece.
    pub fn push_str(&mut self, mut piece: &str) {
        if self.tail.is_empty() && self.head.len() < self.half {
            let room = floor_boundary(piece, self.half - self.head.len());
            self.head.push_str(&piece[..room]);
            piece = &piece[room..];
            if piece.is_empty() {
                return;
            }
        }
        if piece.len() >= self.half {
            // Everything in the tail so far, and the piece's start, fall out of the window.
            let start = ceil_boundary(piece, piece.len() - self.half);
            self.dropped += self.tail.len() + start;
            self.tail.clear();
            self.tail.push_str(&piece[start..]);
            return;
        }
        self.tail.push_str(piece);
        if self.tail.len() >= 2 * self.half.max(1) {
            let start = ceil_boundary(&self.tail, self.tail.len() - self.half);
            self.dropped += start;
            self.tail.drain(..start);
        }
    }

    /// The text, with a marker where bytes were cut, and how many were.
    pub fn finish(self) -> (String, usize) {
        let Clipper {
            half,
            mut head,
            tail,
            dropped,
        } = self;
        // The tail may still hold up to twice its share.
        let (tail, cut) = if tail.len() > half {
            let start = ceil_boundary(&tail, tail.len() - half);
            (&tail[start..], dropped + start)
        } else {
            (tail.as_str(), dropped)
        };
        if cut > 0 {
            head.push_str(&marker(cut));
        }
        head.push_str(tail);
        (head, cut)
    }
}

/// Counts the bytes written to it.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The length of `value` as compact JSON.
fn json_len(value: &Value) -> usize {
    let mut count = Count(0);
    // Writing a `Value` to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// A cheap bound: at most this many bytes as JSON, counting every string byte as a
/// six-byte escape.
fn json_len_bound(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 24,
        Value::String(s) => 6 * s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|v| json_len_bound(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| 6 * k.len() + 4 + json_len_bound(v))
                .sum::<usize>()
        }
    }
}

/// The length of a string's contents once escaped as JSON (without its quotes).
fn escaped_len(text: &str) -> usize {
    text.bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..0x20 => 6,
            _ => 1,
        })
        .sum()
}

/// Collects the escaped lengths of every string value (not keys).
fn string_lengths(value: &Value, lengths: &mut Vec<usize>) {
    match value {
        Value::String(s) => lengths.push(escaped_len(s)),
        Value::Array(items) => items.iter().for_each(|v| string_lengths(v, lengths)),
        Value::Object(map) => map.values().for_each(|v| string_lengths(v, lengths)),
        _ => {}
    }
}

/// A copy of `value` with every string longer than `limit` clipped; adds the bytes cut.
fn clip_strings(value: &Value, limit: usize, cut: &mut usize) -> Value {
    match value {
        Value::String(s) => {
            let (text, n) = clip_text(s, limit);
            *cut += n;
            Value::String(text.into_owned())
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| clip_strings(v, limit, cut)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), clip_strings(v, limit, cut)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The largest per-string length that brings the strings' total to at most `room`
/// ("water-filling": short strings stay whole, long ones share what is left).
fn string_limit(mut lengths: Vec<usize>, room: usize) -> usize {
    lengths.sort_unstable();
    let mut left = room;
    let mut remaining = lengths.len();
    for length in lengths {
        let share = left / remaining.max(1);
        if length > share {
            return share;
        }
        left -= length;
        remaining -= 1;
    }
    usize::MAX
}

/// `value` kept within `budget` bytes of JSON: when it is larger, its long strings are clipped
/// head and tail; when that is not enough (a huge array of numbers, huge keys), it becomes
/// `{"mcpgym/clipped": "<the JSON text, clipped to half the budget>"}` (about the budget
/// once escaped). Returns the bytes cut.
pub fn clip_json(value: &Value, budget: usize) -> (Value, usize) {
    if json_len_bound(value) <= budget {
        return (value.clone(), 0);
    }
    let size = json_len(value);
    if size <= budget {
        return (value.clone(), 0);
    }
    let mut lengths = Vec::new();
    string_lengths(value, &mut lengths);
    let strings: usize = lengths.iter().sum();
    let markers = 32 * lengths.len();
    let structure = size.saturating_sub(strings);
    if structure + markers < budget {
        let mut limit = string_limit(lengths, budget - structure - markers);
        // Escapes in the kept parts (`\n`, `\"`) can still overflow: tighten and retry.
        for _ in 0..4 {
            let mut cut = 0;
            let clipped = clip_strings(value, limit, &mut cut);
            if json_len(&clipped) <= budget {
                return (clipped, cut);
            }
            limit /= 2;
        }
    }
    let text = serde_json::to_string(value).unwrap_or_default();
    // Half the budget: escaping the JSON text as a string can nearly double it.
    let (text, cut) = clip_text(&text, budget / 2);
    let mut wrapper = Map::new();
    wrapper.insert(
        CLIPPED_JSON_KEY.to_owned(),
        Value::String(text.into_owned()),
    );
    (Value::Object(wrapper), cut)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn short_text_is_kept_and_long_text_keeps_head_and_tail() {
        assert_eq!(clip_text("hello", 10), (Cow::Borrowed("hello"), 0));
        let text = format!("START{}END", "x".repeat(1000));
        let (clipped, cut) = clip_text(&text, 100);
        assert!(clipped.starts_with("STARTxxx"), "{clipped}");
        assert!(clipped.ends_with("xxxEND"), "{clipped}");
        assert_eq!(cut, text.len() - 100);
        assert!(clipped.contains(&format!("[cut {cut} bytes]")));
    }

    #[test]
    fn clipping_respects_characters() {
        let text = "é".repeat(1000);
        let (clipped, cut) = clip_text(&text, 101);
        assert!(cut > 0);
        assert!(clipped.len() < 200);
    }

    #[test]
    fn the_clipper_matches_clip_text() {
        let pieces: Vec<String> = (0..500).map(|i| format!("line {i} ✓\n")).collect();
        let whole: String = pieces.concat();
        for budget in [0, 1, 7, 64, 1000, 100_000] {
            let mut clipper = Clipper::new(budget);
            for piece in &pieces {
                clipper.push_str(piece);
            }
            let (streamed, cut) = clipper.finish();
            assert_eq!(
                streamed.len() - marker_len(cut),
                whole.len() - cut,
                "{budget}"
            );
            assert!(whole.len() - cut <= budget, "{budget}");
            let kept_start = &streamed[..streamed.find('\n').unwrap_or(0)];
            assert!(whole.starts_with(kept_start), "{budget}");
            if cut == 0 {
                assert_eq!(streamed, whole);
            } else {
                let tail = streamed.rsplit("…\n").next().unwrap();
                assert!(whole.ends_with(tail), "{budget}");
            }
        }
        // One huge piece.
        let mut clipper = Clipper::new(20);
        clipper.push_str(&"a".repeat(1_000_000));
        clipper.push_str("THE END");
        let (text, cut) = clipper.finish();
        assert_eq!(cut, 1_000_007 - 20);
        assert!(
            text.starts_with("aaaaaaaaaa\n…[cut") && text.ends_with("aaaTHE END"),
            "{text}"
        );
    }

    fn marker_len(cut: usize) -> usize {
        if cut == 0 { 0 } else { marker(cut).len() }
    }

    #[test]
    fn json_keeps_its_shape_and_clips_long_strings() {
        let value = json!({"code": "print(1)\n".repeat(10_000), "language": "python", "n": 3});
        let (clipped, cut) = clip_json(&value, 1024);
        assert!(cut > 0);
        assert_eq!(clipped["language"], "python");
        assert_eq!(clipped["n"], 3);
        let code = clipped["code"].as_str().unwrap();
        assert!(
            code.starts_with("print(1)") && code.contains("bytes]…"),
            "{code}"
        );
        assert!(serde_json::to_string(&clipped).unwrap().len() <= 1024);

        let small = json!({"word": "crane"});
        assert_eq!(clip_json(&small, 1024), (small.clone(), 0));
    }

    #[test]
    fn json_without_long_strings_is_kept_as_clipped_text() {
        let value = json!({"numbers": (0..100_000).collect::<Vec<_>>()});
        let (clipped, cut) = clip_json(&value, 1024);
        assert!(cut > 0);
        let text = clipped[CLIPPED_JSON_KEY].as_str().unwrap();
        assert!(text.starts_with("{\"numbers\":[0,1,2"), "{text}");
        assert!(text.ends_with("99999]}"), "{text}");
    }
}
