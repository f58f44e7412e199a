//! `mcpgym wordle`: Wordle's flags and how they become the environment.

use std::path::PathBuf;
use std::sync::Arc;

use mcpgym_wordle::{RewardMode, WordList, Wordle, WordleConfig};

use crate::choices;
use crate::jails::QuotaArgs;
use crate::registry::{Built, EnvFlags};

/// Wordle's own flags.
#[derive(Debug, Clone, clap::Args)]
pub struct WordleFlags {
    /// File of answers, one word per line (default: the original game's 2,315).
    #[arg(long, value_name = "FILE")]
    answers: Option<PathBuf>,

    /// File of allowed guesses, one word per line; answers are always allowed (default: the
    /// original game's 12,972).
    #[arg(long, value_name = "FILE")]
    allowed: Option<PathBuf>,

    /// Reward: sparse (win 1.0 plus an efficiency bonus) or shaped (adds an information
    /// component on every valid guess).
    #[arg(long, value_parser = choices::parser::<RewardMode>(), default_value_t = RewardMode::Sparse)]
    reward: RewardMode,

    /// Penalty for each refused guess (default 0 for sparse, 0.02 for shaped).
    #[arg(long, value_name = "X")]
    invalid_penalty: Option<f64>,
}

impl WordleFlags {
    /// The configuration the flags describe (reads the list files).
    fn config(&self) -> anyhow::Result<WordleConfig> {
        Ok(WordleConfig {
            words: WordList::from_files(self.answers.as_deref(), self.allowed.as_deref())?,
            reward: self.reward,
            invalid_penalty: self.invalid_penalty,
        })
    }
}

impl EnvFlags for WordleFlags {
    const NAME: &'static str = "wordle";
    const ABOUT: &'static str =
        "Wordle: guess a hidden 5-letter word in 6 tries (tools: guess, history)";
    const HEADING: &'static str = "Wordle";
    const JAILS: bool = false;

    fn build(self, _quotas: &QuotaArgs) -> anyhow::Result<Built> {
        Ok(Built::alone(Arc::new(Wordle::new(self.config()?))))
    }
}
