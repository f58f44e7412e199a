//! The marker put where output was cut: `[... N characters cut ...]`.
//!
//! The service writes it into a cell's or command's output when it keeps only the head and
//! tail; the client writes it again when it cuts further. Markers compose: text cut that
//! holds a marker counts for what the marker stood for, so the number a reader finally sees is
//! what the program really printed beyond what is shown.

const OPEN: &str = "[... ";
const CLOSE: &str = " characters cut ...]";

/// The marker standing for `count` characters that were not kept.
pub fn cut_marker(count: u64) -> String {
    format!("{OPEN}{count}{CLOSE}")
}

/// How many characters `dropped` stands for: its own, except that a marker inside it counts
/// for what it stood for.
pub fn cut_size(dropped: &str) -> u64 {
    let mut total = 0u64;
    let mut rest = dropped;
    while let Some(at) = rest.find(OPEN) {
        total += rest[..at].chars().count() as u64;
        let after = &rest[at + OPEN.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match (
            after[..digits].parse::<u64>(),
            after[digits..].starts_with(CLOSE),
        ) {
            (Ok(count), true) => {
                total = total.saturating_add(count);
                rest = &after[digits + CLOSE.len()..];
            }
            _ => {
                total += OPEN.len() as u64;
                rest = after;
            }
        }
    }
    total + rest.chars().count() as u64
}

/// `start` (a char boundary of `text`), moved past the end of a marker it would split, so a
/// marker is dropped whole and counted for what it stood for.
pub fn past_marker(text: &str, start: usize) -> usize {
    let Some(open) = text.get(..start).and_then(|head| head.rfind(OPEN)) else {
        return start;
    };
    match text[open..].find(CLOSE) {
        Some(close) if open + close + CLOSE.len() > start => open + close + CLOSE.len(),
        _ => start,
    }
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

/// `text` cut to `head` bytes of its beginning and `tail` bytes of its end around a marker
/// line (composing with markers in the cut part). Unchanged when it fits.
pub fn head_and_tail(text: &str, head: usize, tail: usize) -> String {
    if text.len() <= head.saturating_add(tail) {
        return text.to_owned();
    }
    let head_end = floor_boundary(text, head);
    let tail_start = ceil_boundary(text, text.len() - tail).max(head_end);
    format!(
        "{}\n{}\n{}",
        &text[..head_end],
        cut_marker(cut_size(&text[head_end..tail_start])),
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_compose() {
        let inner = format!("ab{}cd", cut_marker(1000));
        assert_eq!(cut_size(&inner), 1004);
        assert_eq!(cut_size("[... x characters cut ...]"), 26);
        assert_eq!(cut_size("é[... 5"), 7);
        let text = format!("{}{}{}", "h".repeat(100), inner, "t".repeat(100));
        let cut = head_and_tail(&text, 50, 50);
        assert!(cut.contains(&cut_marker(50 + 1004 + 50)), "{cut}");
        assert_eq!(head_and_tail("short", 4, 4), "short");
    }

    #[test]
    fn cuts_keep_char_boundaries_and_whole_markers() {
        let text = "é".repeat(100);
        let cut = head_and_tail(&text, 51, 51);
        let kept = "é".repeat(25);
        assert_eq!(cut, format!("{kept}\n[... 50 characters cut ...]\n{kept}"));
        let text = format!("x{}y", cut_marker(7));
        assert_eq!(past_marker(&text, 8), text.len() - 1);
        assert_eq!(past_marker(&text, 0), 0);
        assert_eq!(past_marker(&text, text.len()), text.len());
    }
}
