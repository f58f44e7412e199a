//! Wordle for mcpgym: guess a hidden five-letter word in six tries.
//!
//! - The original game's lists ship inside the crate ([`WordList::original`]); custom lists
//!   with `--answers FILE --allowed FILE`.
//! - Tools: `guess(word)` and the read-only `history()`. Feedback in two passes, as the
//!   original game ([`feedback::score`]).
//! - Reward: sparse by default, shaped on request ([`reward`]).
//! - Tasks: the answer list split into train and test with stable ids ([`tasks`]).
//!
//! ```
//! use mcpgym_wordle::{Wordle, WordleConfig};
//! use mcpgym_env::{Environment, Split};
//!
//! let wordle = Wordle::new(WordleConfig::default());
//! assert_eq!(wordle.name(), "wordle");
//! assert!(wordle.tasks().listed(Split::Train).len() > 1800);
//! ```

pub mod feedback;
pub mod game;
pub mod reward;
pub mod tasks;
pub mod words;

use std::sync::Arc;

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

use mcpgym_env::{BoxFuture, Environment, EpisodeSpec, EpisodeState, StartError, TaskSet};

pub use game::WordleGame;
pub use reward::{RewardConfig, RewardMode};
pub use tasks::WordleTasks;
pub use words::{WordList, WordListError};

/// Default tool calls per episode: six guesses leave room for refused guesses and `history`.
pub const DEFAULT_MAX_TURNS: u32 = 20;

/// How a Wordle environment is set up.
#[derive(Debug, Clone)]
pub struct WordleConfig {
    /// The word lists.
    pub words: WordList,
    /// The default reward mode (an episode's options may override it).
    pub reward: RewardMode,
    /// The default invalid-guess penalty.
    pub invalid_penalty: Option<f64>,
}

impl Default for WordleConfig {
    fn default() -> Self {
        Self {
            words: WordList::original(),
            reward: RewardMode::Sparse,
            invalid_penalty: None,
        }
    }
}

/// Options an episode may set (`POST /episodes {"options": {...}}`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WordleOptions {
    /// Overrides `--reward`.
    reward: Option<RewardMode>,
    /// Overrides `--invalid-penalty`.
    invalid_penalty: Option<f64>,
}

/// The Wordle environment.
#[derive(Debug)]
pub struct Wordle {
    words: Arc<WordList>,
    tasks: WordleTasks,
    reward: RewardMode,
    invalid_penalty: Option<f64>,
}

const INSTRUCTIONS: &str = "Wordle: find the hidden 5-letter English word in 6 guesses. \
Call guess(word); each letter comes back 🟩 (right letter, right spot), 🟨 (in the word, \
elsewhere) or ⬛ (not in the word, or no more of it). Words not in the list do not use a guess. \
history() shows the board.";

impl Wordle {
    /// A Wordle environment.
    pub fn new(config: WordleConfig) -> Self {
        let tasks = WordleTasks::new(&config.words);
        Self {
            words: Arc::new(config.words),
            tasks,
            reward: config.reward,
            invalid_penalty: config.invalid_penalty,
        }
    }

    /// The answer behind a task id. For harnesses and tests; no tool exposes it.
    pub fn answer_of(&self, task: &str) -> Option<String> {
        self.tasks
            .answer(task)
            .map(|w| words::word_str(&w).to_owned())
    }

    fn game(&self, spec: &EpisodeSpec) -> Result<WordleGame, StartError> {
        let options: WordleOptions = spec.options("Wordle")?;
        if let Some(penalty) = options.invalid_penalty
            && !penalty.is_finite()
        {
            return Err(StartError::InvalidOptions(
                "invalid_penalty must be a finite number".into(),
            ));
        }
        let answer = self.tasks.answer(&spec.task).ok_or_else(|| {
            StartError::InvalidOptions(format!("unknown Wordle task {:?}", spec.task))
        })?;
        let reward = RewardConfig::new(
            options.reward.unwrap_or(self.reward),
            options.invalid_penalty.or(self.invalid_penalty),
        );
        Ok(WordleGame::new(answer, self.words.clone(), reward))
    }
}

impl Environment for Wordle {
    fn name(&self) -> &'static str {
        "wordle"
    }

    fn instructions(&self) -> &str {
        INSTRUCTIONS
    }

    fn tasks(&self) -> &TaskSet {
        self.tasks.set()
    }

    fn tools(&self) -> &[Tool] {
        game::TOOLS.list()
    }

    /// A game follows from its answer and guesses alone: a restart replays it.
    fn resumable(&self) -> bool {
        true
    }

    fn default_max_turns(&self) -> u32 {
        DEFAULT_MAX_TURNS
    }

    /// Guesses the answer: the task's word, known to the server.
    fn oracle(&self, task: &str) -> Option<Box<dyn mcpgym_env::Oracle>> {
        let answer = self.tasks.answer(task)?;
        let guess = mcpgym_env::OracleMove::call(
            "guess",
            serde_json::json!({ "word": words::word_str(&answer) }),
        );
        Some(Box::new(mcpgym_env::oracle::Script::new(vec![guess])))
    }

    fn start<'a>(
        &'a self,
        spec: &'a EpisodeSpec,
    ) -> BoxFuture<'a, Result<Box<dyn EpisodeState>, StartError>> {
        let game = self
            .game(spec)
            .map(|game| Box::new(game) as Box<dyn EpisodeState>);
        Box::pin(std::future::ready(game))
    }
}
