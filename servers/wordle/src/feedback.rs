//! Per-letter feedback, computed as the original game does.

use schemars::JsonSchema;
use serde::Serialize;

use crate::words::Word;

/// The mark on one letter of a guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mark {
    /// The letter is in the word, in this position.
    Green,
    /// The letter is in the word, elsewhere (and not already accounted for).
    Yellow,
    /// The letter is not in the word (or occurs fewer times than guessed).
    Gray,
}

impl Mark {
    /// The square the game shows.
    pub fn square(self) -> char {
        match self {
            Mark::Green => '🟩',
            Mark::Yellow => '🟨',
            Mark::Gray => '⬛',
        }
    }
}

/// Scores a guess against the answer in two passes: greens first, then yellows consume the
/// answer's remaining letters from left to right. So a letter guessed twice is yellow only as
/// often as the answer has it left over.
pub fn score(guess: &Word, answer: &Word) -> [Mark; 5] {
    let mut marks = [Mark::Gray; 5];
    let mut left = [0u8; 26];
    for i in 0..5 {
        if guess[i] == answer[i] {
            marks[i] = Mark::Green;
        } else {
            left[usize::from(answer[i] - b'a')] += 1;
        }
    }
    for i in 0..5 {
        if marks[i] == Mark::Green {
            continue;
        }
        let letter = usize::from(guess[i] - b'a');
        if left[letter] > 0 {
            left[letter] -= 1;
            marks[i] = Mark::Yellow;
        }
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::Mark::{Gray as X, Green as G, Yellow as Y};
    use super::*;

    #[test]
    fn duplicate_letters() {
        // The documented case.
        assert_eq!(score(b"paper", b"apple"), [Y, Y, G, Y, X]);
        // A letter guessed twice, present once: only the first is yellow.
        assert_eq!(score(b"geese", b"those"), [X, X, X, G, G]);
        assert_eq!(score(b"eerie", b"those"), [X, X, X, X, G]);
        assert_eq!(score(b"speed", b"abide"), [X, X, Y, X, Y]);
        // Green takes precedence over an earlier yellow.
        assert_eq!(score(b"lolly", b"hello"), [X, Y, G, G, X]);
        assert_eq!(score(b"crane", b"crane"), [G; 5]);
        assert_eq!(score(b"aaaaa", b"apple"), [G, X, X, X, X]);
    }
}
