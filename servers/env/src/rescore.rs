//! Grading a finished episode again from its record, offline (`mcpgym rescore`).
//!
//! An episode whose calls alone decide its reward (Wordle, Hi-Lo) is re-scored by playing its
//! calls again ([`Rescored::ByReplay`], the default). One graded on a state the calls do not
//! rebuild exactly (a kernel's files, a desktop's documents) keeps what its grader read when it
//! ended ([`EpisodeState::graded`](crate::EpisodeState::graded), bounded by
//! [`GRADED_BUDGET`]) in its trajectory's end record, and
//! [`Environment::rescore`](crate::Environment::rescore) grades that again, returning the
//! terminal components it would pay ([`Rescored::Terminal`]).

use rmcp::model::JsonObject;
use serde_json::Value;

use crate::reward::Reward;

/// Bytes of file content an episode's graded state keeps at most (before encoding); an
/// environment whose grader read more says so in it, and its rescore reports that.
pub const GRADED_BUDGET: usize = 8 * 1024 * 1024;

/// A finished episode as its trajectory recorded it: what [`crate::Environment::rescore`]
/// grades again.
#[derive(Debug, Clone)]
pub struct EpisodeRecord {
    /// The task.
    pub task: String,
    /// The seed.
    pub seed: u64,
    /// The options it was created with.
    pub options: JsonObject,
    /// Its calls, in order.
    pub calls: Vec<RecordedCall>,
    /// Whether it ended at the turn limit.
    pub truncated: bool,
    /// What its grader read when it ended ([`crate::EpisodeState::graded`]), if the
    /// environment kept anything.
    pub graded: Option<Value>,
}

/// One recorded call.
#[derive(Debug, Clone)]
pub struct RecordedCall {
    /// The tool.
    pub tool: String,
    /// Its arguments, as recorded.
    pub arguments: JsonObject,
    /// Whether the arguments were cut to fit the record (then they are not what was sent).
    pub arguments_cut: bool,
    /// Whether the call was refused.
    pub is_error: bool,
}

impl EpisodeRecord {
    /// The last call to `tool` that was not refused.
    pub fn last_accepted(&self, tool: &str) -> Option<&RecordedCall> {
        self.calls
            .iter()
            .rev()
            .find(|call| call.tool == tool && !call.is_error)
    }
}

/// What grading a record again gave.
#[derive(Debug, Clone)]
pub enum Rescored {
    /// The calls decide the reward: play them again on a new episode and compare every
    /// component.
    ByReplay,
    /// The components the grader pays at the end, graded again; the rest were paid for the
    /// calls as they were made.
    Terminal(Vec<Reward>),
}

/// Why a record cannot be graded again.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RescoreError {
    /// The record lacks what grading needs (an answer cut to fit, files over the budget, a
    /// file written before graded states were kept); the sentence says which.
    #[error("{0}")]
    NotRecorded(String),
    /// What grading needs could not be had here (a sandbox, a converter); the sentence says
    /// which.
    #[error("{0}")]
    Unavailable(String),
}
