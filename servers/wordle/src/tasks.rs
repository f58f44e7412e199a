//! Tasks: the answer list split into train and test, with stable ids.
//!
//! A word's split and its place in it depend only on the word itself (a fixed hash), so ids
//! are the same on every machine and do not follow the list's alphabetical order.

use mcpgym_env::{Split, TaskSet};

use crate::words::{Word, WordList};

/// Lists shorter than this are all train: a split of a handful of words is not useful.
const MIN_ANSWERS_TO_SPLIT: usize = 10;

/// FNV-1a, 64-bit: fixed forever, unlike the standard library's hasher.
fn stable_hash(word: &Word) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in b"mcpgym-wordle:".iter().chain(word) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The tasks of a word list: ids and the answer behind each.
#[derive(Debug, Clone)]
pub struct WordleTasks {
    set: TaskSet,
    train: Vec<Word>,
    test: Vec<Word>,
}

impl WordleTasks {
    /// Splits the answers: about one in five goes to test.
    pub fn new(words: &WordList) -> Self {
        let split_at_all = words.answers().len() >= MIN_ANSWERS_TO_SPLIT;
        let mut keyed: Vec<(u64, Word)> = words
            .answers()
            .iter()
            .map(|w| (stable_hash(w), *w))
            .collect();
        keyed.sort_unstable();
        let (test, train): (Vec<_>, Vec<_>) = keyed
            .into_iter()
            .partition(|(hash, _)| split_at_all && hash.is_multiple_of(5));
        let train: Vec<Word> = train.into_iter().map(|(_, w)| w).collect();
        let test: Vec<Word> = test.into_iter().map(|(_, w)| w).collect();
        let ids = |split: Split, n: usize| (0..n).map(|i| format!("{split}-{i:04}")).collect();
        Self {
            set: TaskSet::new(ids(Split::Train, train.len()), ids(Split::Test, test.len())),
            train,
            test,
        }
    }

    /// The task ids.
    pub fn set(&self) -> &TaskSet {
        &self.set
    }

    /// The answer of a task. Library callers only: nothing the agent can reach calls this
    /// before the episode is done.
    pub fn answer(&self, task: &str) -> Option<Word> {
        let (split, index) = task.split_once('-')?;
        let index: usize = index.parse().ok()?;
        let words = match split {
            "train" => &self.train,
            "test" => &self.test,
            _ => return None,
        };
        words.get(index).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_disjoint_and_cover_the_answers() {
        let words = WordList::original();
        let tasks = WordleTasks::new(&words);
        let train = tasks.set().listed(Split::Train);
        let test = tasks.set().listed(Split::Test);
        assert_eq!(train.len() + test.len(), 2315);
        assert!(test.len() > 350 && test.len() < 600, "{}", test.len());
        let mut all: Vec<Word> = train
            .iter()
            .chain(test)
            .map(|id| tasks.answer(id).unwrap())
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 2315);
    }

    #[test]
    fn ids_are_pinned() {
        // The ids depend only on the words; these must never change, or saved results and
        // published splits stop meaning the same tasks.
        let tasks = WordleTasks::new(&WordList::original());
        assert_eq!(tasks.set().listed(Split::Train).len(), 1881);
        assert_eq!(tasks.set().listed(Split::Test).len(), 434);
        for (id, word) in [
            ("train-0000", b"light"),
            ("train-1000", b"lying"),
            ("test-0000", b"serif"),
            ("test-0100", b"retro"),
        ] {
            assert_eq!(tasks.answer(id), Some(*word), "{id}");
        }
    }

    #[test]
    fn small_lists_are_all_train() {
        let words = WordList::from_text("apple\n", "").unwrap();
        let tasks = WordleTasks::new(&words);
        assert_eq!(tasks.set().listed(Split::Train), ["train-0000"]);
        assert_eq!(tasks.answer("train-0000"), Some(*b"apple"));
        assert_eq!(tasks.answer("train-0001"), None);
        assert_eq!(tasks.answer("bogus"), None);
    }
}
