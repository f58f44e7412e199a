//! One game of Wordle: the board, the moves, and what each tool shows.

use std::sync::{Arc, LazyLock};

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use mcpgym_env::tools::{Effect, NoArguments, ToolTable, tool};
use mcpgym_env::{BoxFuture, EpisodeState, Reward, StepOutcome};

use crate::feedback::{Mark, score};
use crate::reward::RewardConfig;
use crate::words::{Word, WordList, parse_word, word_str};

/// Guesses per game.
pub const MAX_GUESSES: usize = 6;

/// Arguments of `guess`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuessArgs {
    /// Your guess: a 5-letter English word (case does not matter).
    pub word: String,
}

/// What `guess` returns as structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GuessObservation {
    /// The guess, lowercase.
    pub guess: String,
    /// One mark per letter.
    pub feedback: Vec<Mark>,
    /// Valid guesses made so far.
    pub guesses_used: usize,
    /// Guesses remaining.
    pub guesses_left: usize,
    /// Whether the word has been found.
    pub solved: bool,
    /// Whether the game is over.
    pub done: bool,
}

/// One row of the board.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BoardRow {
    /// The guess, lowercase.
    pub guess: String,
    /// One mark per letter.
    pub feedback: Vec<Mark>,
}

/// What `history` returns as structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BoardObservation {
    /// Every valid guess so far, in order.
    pub guesses: Vec<BoardRow>,
    /// Valid guesses made so far.
    pub guesses_used: usize,
    /// Guesses remaining.
    pub guesses_left: usize,
    /// Whether the word has been found.
    pub solved: bool,
    /// Whether the game is over.
    pub done: bool,
}

/// Wordle's tools.
pub(crate) static TOOLS: LazyLock<ToolTable<WordleGame>> = LazyLock::new(|| {
    ToolTable::new()
        .sync(
            tool(
                "guess",
                "Guess the hidden 5-letter word. Returns the board with a mark per letter: 🟩 \
                 right letter in the right spot, 🟨 in the word but elsewhere, ⬛ not in the word \
                 (a repeated letter is marked only as often as the word has it). 6 guesses; a \
                 guess that is not a listed English word is refused and uses none.",
            )
            .title("Guess a word")
            .effect(Effect::Changes)
            .output::<GuessObservation>()
            .example(r#"{"word": "crane"}"#),
            WordleGame::guess,
        )
        .sync(
            tool(
                "history",
                "Show the board so far: every guess with its marks, and the guesses left.",
            )
            .title("Show the board")
            .output::<BoardObservation>(),
            WordleGame::history,
        )
});

/// The state of one game.
#[derive(Debug)]
pub struct WordleGame {
    answer: Word,
    words: Arc<WordList>,
    reward: RewardConfig,
    board: Vec<(Word, [Mark; 5])>,
    /// Answers still consistent with the board, as a bitset over the answer list (shaped
    /// reward only).
    candidates: Option<Vec<u64>>,
}

impl WordleGame {
    /// A new game for `answer`.
    pub fn new(answer: Word, words: Arc<WordList>, reward: RewardConfig) -> Self {
        let candidates = (reward.mode == crate::reward::RewardMode::Shaped).then(|| {
            let n = words.answers().len();
            let mut bits = vec![u64::MAX; n.div_ceil(64)];
            if !n.is_multiple_of(64) {
                *bits.last_mut().expect("non-empty list") = (1u64 << (n % 64)) - 1;
            }
            bits
        });
        Self {
            answer,
            words,
            reward,
            board: Vec::new(),
            candidates,
        }
    }

    fn solved(&self) -> bool {
        self.board
            .last()
            .is_some_and(|(_, marks)| *marks == [Mark::Green; 5])
    }

    fn done(&self) -> bool {
        self.solved() || self.board.len() >= MAX_GUESSES
    }

    fn guesses_left(&self) -> usize {
        MAX_GUESSES - self.board.len()
    }

    /// The board as the model reads it: one line per guess, then what is left.
    fn board_text(&self) -> String {
        // A row is 5 letters, a space, 5 four-byte squares and a newline.
        let mut text = String::with_capacity(self.board.len() * 27 + 48);
        for (word, marks) in &self.board {
            text.extend(word.iter().map(|b| char::from(b.to_ascii_uppercase())));
            text.push(' ');
            text.extend(marks.iter().map(|m| m.square()));
            text.push('\n');
        }
        let answer = word_str(&self.answer).to_ascii_uppercase();
        if self.solved() {
            let n = self.board.len();
            let plural = if n == 1 { "guess" } else { "guesses" };
            text.push_str(&format!("Solved in {n} {plural}! The answer was {answer}."));
        } else if self.done() {
            text.push_str(&format!("Out of guesses. The answer was {answer}."));
        } else if self.board.is_empty() {
            text.push_str(&format!(
                "No guesses yet. {} guesses left.",
                self.guesses_left()
            ));
        } else {
            let left = self.guesses_left();
            let plural = if left == 1 { "guess" } else { "guesses" };
            text.push_str(&format!("{left} {plural} left."));
        }
        text
    }

    /// Narrows the candidates to those consistent with the newest row; returns (before, after).
    fn narrow(&mut self, guess: &Word, marks: &[Mark; 5]) -> Option<(usize, usize)> {
        let answers = self.words.answers();
        let bits = self.candidates.as_mut()?;
        let before: usize = bits.iter().map(|b| b.count_ones() as usize).sum();
        for (index, answer) in answers.iter().enumerate() {
            let (word, bit) = (index / 64, 1u64 << (index % 64));
            if bits[word] & bit != 0 && score(guess, answer) != *marks {
                bits[word] &= !bit;
            }
        }
        let after: usize = bits.iter().map(|b| b.count_ones() as usize).sum();
        Some((before, after))
    }

    fn refuse(&self, why: String) -> StepOutcome {
        let left = self.guesses_left();
        let mut outcome = StepOutcome::error(format!(
            "{why} No guess was used; {left} {} left.",
            if left == 1 { "guess" } else { "guesses" }
        ));
        if let Some(penalty) = self.reward.invalid() {
            outcome = outcome.with_reward(penalty);
        }
        outcome
    }

    fn guess(&mut self, args: GuessArgs) -> StepOutcome {
        let Some(word) = parse_word(&args.word) else {
            return self.refuse(format!(
                "{:?} is not a guess: a guess is exactly 5 letters A-Z, like \"crane\".",
                args.word.trim()
            ));
        };
        if !self.words.is_allowed(&word) {
            return self.refuse(format!(
                "{} is not in the word list; guess an English 5-letter word.",
                word_str(&word).to_ascii_uppercase()
            ));
        }
        let marks = score(&word, &self.answer);
        self.board.push((word, marks));
        let narrowed = self.narrow(&word, &marks);
        let observation = GuessObservation {
            guess: word_str(&word).to_owned(),
            feedback: marks.to_vec(),
            guesses_used: self.board.len(),
            guesses_left: self.guesses_left(),
            solved: self.solved(),
            done: self.done(),
        };
        let mut outcome = StepOutcome::ok(self.board_text())
            .with_structured(serde_json::to_value(&observation).unwrap_or_default());
        if let Some((before, after)) = narrowed
            && let Some(reward) = self
                .reward
                .information(before, after, self.words.answers().len())
        {
            outcome = outcome.with_reward(reward);
        }
        if self.done() {
            let solved_in = self.solved().then_some(self.board.len());
            outcome = outcome.finish(self.reward.terminal(solved_in));
        }
        outcome
    }

    fn history(&mut self, _: NoArguments) -> StepOutcome {
        let observation = BoardObservation {
            guesses: self
                .board
                .iter()
                .map(|(word, marks)| BoardRow {
                    guess: word_str(word).to_owned(),
                    feedback: marks.to_vec(),
                })
                .collect(),
            guesses_used: self.board.len(),
            guesses_left: self.guesses_left(),
            solved: self.solved(),
            done: self.done(),
        };
        StepOutcome::ok(self.board_text())
            .with_structured(serde_json::to_value(&observation).unwrap_or_default())
    }
}

impl EpisodeState for WordleGame {
    fn call<'a>(&'a mut self, tool: &'a str, arguments: JsonObject) -> BoxFuture<'a, StepOutcome> {
        TOOLS.call(self, tool, arguments)
    }

    fn reveal(&self) -> JsonObject {
        let mut revealed = JsonObject::new();
        revealed.insert("answer".into(), word_str(&self.answer).into());
        revealed.insert("solved".into(), self.solved().into());
        revealed.insert("guesses_used".into(), self.board.len().into());
        revealed
    }

    fn finish_at_turn_limit(&mut self) -> BoxFuture<'_, (Option<String>, Vec<Reward>)> {
        let note = format!(
            "The answer was {}.",
            word_str(&self.answer).to_ascii_uppercase()
        );
        Box::pin(async move { (Some(note), Vec::new()) })
    }

    fn over_message(&self) -> &str {
        "The game is over; start a new episode."
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reward::RewardMode;

    fn game(mode: RewardMode) -> WordleGame {
        let words = Arc::new(WordList::original());
        WordleGame::new(*b"apple", words, RewardConfig::new(mode, None))
    }

    /// Calls `guess` through the tool table, as the server does.
    fn guess(g: &mut WordleGame, arguments: JsonObject) -> StepOutcome {
        use std::task::{Context, Poll, Waker};
        let mut call = TOOLS.call(g, "guess", arguments);
        match call.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(outcome) => outcome,
            Poll::Pending => panic!("Wordle answers at once"),
        }
    }

    fn args(word: &str) -> JsonObject {
        let mut a = JsonObject::new();
        a.insert("word".into(), word.into());
        a
    }

    #[test]
    fn a_win_finishes_with_the_terminal_reward() {
        let mut g = game(RewardMode::Sparse);
        let first = guess(&mut g, args("PAPER "));
        assert!(!first.is_error);
        let text = first.text();
        assert!(
            text.starts_with("PAPER 🟨🟨🟩🟨⬛\n5 guesses left."),
            "{text}"
        );
        assert!(!text.to_lowercase().contains("apple"));
        assert!(first.finished.is_none());
        let win = guess(&mut g, args("apple"));
        assert!(
            win.text()
                .contains("Solved in 2 guesses! The answer was APPLE.")
        );
        let terminal = win.finished.unwrap();
        assert_eq!(terminal[0].value, 1.0);
        assert_eq!(terminal[1].value, 0.4);
    }

    #[test]
    fn invalid_guesses_use_no_guess() {
        let mut g = game(RewardMode::Shaped);
        for bad in ["abc", "xqzvb", "cr4ne", ""] {
            let out = guess(&mut g, args(bad));
            assert!(out.is_error, "{bad}");
            assert_eq!(out.rewards[0].name, "invalid");
        }
        let wrong_type = guess(&mut g, {
            let mut a = JsonObject::new();
            a.insert("word".into(), 12.into());
            a
        });
        assert!(wrong_type.text().contains("Invalid arguments for guess"));
        assert_eq!(g.guesses_left(), 6);
    }

    #[test]
    fn six_misses_lose() {
        let mut g = game(RewardMode::Shaped);
        let mut last = None;
        for word in ["crane", "sloth", "dumpy", "wight", "fjord", "vexed"] {
            last = Some(guess(&mut g, args(word)));
        }
        let last = last.unwrap();
        assert!(
            last.text()
                .contains("Out of guesses. The answer was APPLE.")
        );
        assert_eq!(last.finished.unwrap()[0].value, 0.0);
        assert!(g.done());
    }

    #[test]
    fn shaped_information_is_positive_and_bounded() {
        let mut g = game(RewardMode::Shaped);
        let out = guess(&mut g, args("crane"));
        let info = out
            .rewards
            .iter()
            .find(|r| r.name == "information")
            .unwrap();
        assert!(info.value > 0.0 && info.value < 0.2, "{}", info.value);
    }
}
