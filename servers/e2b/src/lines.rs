//! Splitting a JSON-lines body (the code interpreter's `/execute` stream) into lines as it
//! arrives, holding at most one line of a bounded size.

/// One line of a JSON-lines body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A whole line (without its newline).
    Whole(Vec<u8>),
    /// A line longer than the reader's limit, skipped as it passed: its length.
    Dropped(usize),
}

/// Splits a body into lines as it arrives; a line longer than `max` bytes is counted and
/// skipped, never buffered.
#[derive(Debug)]
pub struct LineReader {
    max: usize,
    buffer: Vec<u8>,
    /// Bytes of an overlong line skipped so far (`Some` while skipping).
    skipping: Option<usize>,
}

impl LineReader {
    /// A reader keeping lines of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        LineReader {
            max,
            buffer: Vec::new(),
            skipping: None,
        }
    }

    /// Bytes held while waiting for the rest of a line.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Takes the next piece of the body; returns the lines it completed.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<Line> {
        let mut lines = Vec::new();
        while !chunk.is_empty() {
            match chunk.iter().position(|b| *b == b'\n') {
                Some(newline) => {
                    let (part, rest) = (&chunk[..newline], &chunk[newline + 1..]);
                    match self.skipping.take() {
                        Some(skipped) => lines.push(Line::Dropped(skipped + part.len())),
                        None if self.buffer.len() + part.len() > self.max => {
                            lines.push(Line::Dropped(self.buffer.len() + part.len()));
                            self.buffer = Vec::new();
                        }
                        None => {
                            self.buffer.extend_from_slice(part);
                            lines.push(Line::Whole(std::mem::take(&mut self.buffer)));
                        }
                    }
                    chunk = rest;
                }
                None => {
                    match &mut self.skipping {
                        Some(skipped) => *skipped += chunk.len(),
                        None if self.buffer.len() + chunk.len() > self.max => {
                            self.skipping = Some(self.buffer.len() + chunk.len());
                            self.buffer = Vec::new();
                        }
                        None => self.buffer.extend_from_slice(chunk),
                    }
                    chunk = &[];
                }
            }
        }
        lines
    }

    /// The last line, if the body did not end with a newline.
    pub fn finish(self) -> Option<Line> {
        match self.skipping {
            Some(skipped) => Some(Line::Dropped(skipped)),
            None => (!self.buffer.is_empty()).then_some(Line::Whole(self.buffer)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks() {
        let body = b"{\"a\":1}\n\n{\"b\":2}\nlast";
        for size in 1..body.len() {
            let mut reader = LineReader::new(64);
            let mut got = Vec::new();
            for chunk in body.chunks(size) {
                got.extend(reader.push(chunk));
            }
            got.extend(reader.finish());
            assert_eq!(
                got,
                vec![
                    Line::Whole(br#"{"a":1}"#.to_vec()),
                    Line::Whole(Vec::new()),
                    Line::Whole(br#"{"b":2}"#.to_vec()),
                    Line::Whole(b"last".to_vec()),
                ],
                "chunks of {size}"
            );
        }
    }

    #[test]
    fn overlong_lines_are_skipped_unbuffered() {
        let max = 1000;
        let mut lines = LineReader::new(max);
        let mut got = lines.push(b"{\"a\":1}\n{\"b\"");
        let big = vec![b'x'; max];
        for _ in 0..3 {
            got.extend(lines.push(&big));
            assert!(lines.buffered() <= max);
        }
        got.extend(lines.push(b"}\nlast"));
        assert_eq!(got[0], Line::Whole(br#"{"a":1}"#.to_vec()));
        assert_eq!(got[1], Line::Dropped(3 * max + 5));
        assert_eq!(lines.finish(), Some(Line::Whole(b"last".to_vec())));
        // One chunk holding a whole overlong line.
        let mut lines = LineReader::new(4);
        assert_eq!(
            lines.push(b"123456\nok\n"),
            vec![Line::Dropped(6), Line::Whole(b"ok".to_vec())]
        );
        assert_eq!(lines.finish(), None);
    }
}
