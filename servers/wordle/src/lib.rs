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
//! assert!(wordle.tasks().ids(Split::Train).len() > 1800);
//! ```

pub mod feedback;
pub mod game;
pub mod reward;
pub mod tasks;
pub mod words;

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde::Deserialize;

use mcpgym_env::schema::{input_schema, no_arguments, output_schema};
use mcpgym_env::{BoxFuture, Environment, EpisodeSpec, EpisodeState, StartError, TaskSet};

pub use game::WordleGame;
pub use reward::{RewardConfig, RewardMode, UnknownRewardMode};
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
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WordleOptions {
    reward: Option<RewardMode>,
    invalid_penalty: Option<f64>,
}

/// The Wordle environment.
#[derive(Debug)]
pub struct Wordle {
    words: Arc<WordList>,
    tasks: WordleTasks,
    tools: Vec<Tool>,
    reward: RewardMode,
    invalid_penalty: Option<f64>,
}

const INSTRUCTIONS: &str = "Wordle: find the hidden 5-letter English word in 6 guesses. \
Call guess(word); each letter comes back 🟩 (right letter, right spot), 🟨 (in the word, \
elsewhere) or ⬛ (not in the word, or no more of it). Words not in the list do not use a guess. \
history() shows the board.";

fn tools() -> Vec<Tool> {
    vec![
        Tool::new_with_raw(
            "guess",
            Some(
                "Guess the hidden 5-letter word. Returns the board with a mark per letter: 🟩 \
                 right letter in the right spot, 🟨 in the word but elsewhere, ⬛ not in the word \
                 (a repeated letter is marked only as often as the word has it). 6 guesses; a \
                 guess that is not a listed English word is refused and uses none."
                    .into(),
            ),
            input_schema::<game::GuessArgs>(),
        )
        .with_raw_output_schema(output_schema::<game::GuessObservation>())
        .with_annotations(
            ToolAnnotations::with_title("Guess a word")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ),
        Tool::new_with_raw(
            "history",
            Some("Show the board so far: every guess with its marks, and the guesses left.".into()),
            no_arguments(),
        )
        .with_raw_output_schema(output_schema::<game::BoardObservation>())
        .with_annotations(
            ToolAnnotations::with_title("Show the board")
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
    ]
}

impl Wordle {
    /// A Wordle environment.
    pub fn new(config: WordleConfig) -> Self {
        let tasks = WordleTasks::new(&config.words);
        Self {
            words: Arc::new(config.words),
            tasks,
            tools: tools(),
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
        let options: WordleOptions =
            serde_json::from_value(serde_json::Value::Object(spec.options.clone())).map_err(
                |error| {
                    StartError::InvalidOptions(format!(
                        "invalid Wordle options ({error}); allowed: {{\"reward\": \"sparse\"|\"shaped\", \"invalid_penalty\": number}}"
                    ))
                },
            )?;
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
        &self.tools
    }

    fn default_max_turns(&self) -> u32 {
        DEFAULT_MAX_TURNS
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
