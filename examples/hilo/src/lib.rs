//! Hi-Lo: find a hidden number from 1 to N; each guess is answered "higher" or "lower". A whole
//! mcpgym environment (tasks, tools, reward, options), served by `mcpgym hilo` and `mcpgym
//! serve` through one line in the binary's registry.

use mcpgym_env::tools::{Effect, NoArguments, ToolTable, tool};
use mcpgym_env::{BoxFuture, Environment, EpisodeSpec, EpisodeState, Reward};
use mcpgym_env::{StartError, StepOutcome, TaskSet};
use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::sync::{Arc, LazyLock};

/// Task ids name the range; the seed picks the number, so a task has N instances.
const TRAIN: [u64; 4] = [16, 100, 1000, 4096];
const TEST: [u64; 2] = [50, 5000];

/// Arguments of `guess`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Guess {
    /// A whole number between 1 and the task's upper bound.
    pub number: u64,
}

/// What `guess` and `rules` return as structured content.
#[derive(Serialize, JsonSchema)]
pub struct Report {
    /// `higher`, `lower` or `correct` (`none` from `rules`).
    pub hint: &'static str,
    /// The lowest the number can be, as far as the hints tell.
    pub low: u64,
    /// The highest it can be.
    pub high: u64,
    /// Guesses left.
    pub guesses_left: u32,
}

/// Options an episode may set: `{"guesses": 12}`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Options {
    /// Guesses allowed (default: just enough for a bisection).
    guesses: Option<u32>,
}

static TOOLS: LazyLock<ToolTable<Game>> = LazyLock::new(|| {
    ToolTable::new()
        .sync(
            tool(
                "guess",
                "Guess the hidden number; the answer is higher, lower or correct.",
            )
            .title("Guess a number")
            .effect(Effect::Changes)
            .output::<Report>()
            .example(r#"{"number": 50}"#),
            Game::guess,
        )
        .sync(
            tool(
                "rules",
                "Show where the number can be, and the guesses left.",
            )
            .output::<Report>(),
            |game: &mut Game, _: NoArguments| game.report("none"),
        )
});

/// The Hi-Lo environment.
pub struct HiLo {
    tasks: TaskSet,
}

impl Default for HiLo {
    fn default() -> Self {
        let ids = |bounds: &[u64]| bounds.iter().map(|n| format!("1-to-{n}")).collect();
        let tasks = TaskSet::new(ids(&TRAIN), ids(&TEST));
        Self { tasks }
    }
}

impl Environment for HiLo {
    fn name(&self) -> &'static str {
        "hilo"
    }
    fn instructions(&self) -> &str {
        "Hi-Lo: find the hidden number. Call guess(number); each answer says higher, lower or \
         correct. rules() shows the range and the guesses left. Fewer guesses pay more."
    }
    fn tasks(&self) -> &TaskSet {
        &self.tasks
    }
    fn tools(&self) -> &[Tool] {
        TOOLS.list()
    }
    /// A game follows from its seed and guesses alone: a restart replays it.
    fn resumable(&self) -> bool {
        true
    }
    fn default_max_turns(&self) -> u32 {
        30
    }
    /// Bisects the range the hints leave.
    fn oracle(&self, task: &str) -> Option<Box<dyn mcpgym_env::Oracle>> {
        let high: u64 = task.strip_prefix("1-to-")?.parse().ok()?;
        Some(Box::new(Bisect { low: 1, high }))
    }
    fn start<'a>(
        &'a self,
        spec: &'a EpisodeSpec,
    ) -> BoxFuture<'a, Result<Box<dyn EpisodeState>, StartError>> {
        Box::pin(async move {
            let options: Options = spec.options("Hi-Lo")?;
            // The hub starts listed tasks only: the id parses.
            let high: u64 = spec.task.trim_start_matches("1-to-").parse().unwrap_or(100);
            let bisection = u64::BITS - (high - 1).leading_zeros() + 1;
            let guesses = options.guesses.unwrap_or(bisection);
            if !(1..=64).contains(&guesses) {
                return Err(StartError::InvalidOptions(
                    "guesses must be between 1 and 64".into(),
                ));
            }
            let number = 1 + spec.rng().below(high as usize) as u64;
            let game = Game {
                number,
                low: 1,
                high,
                guesses,
                used: 0,
            };
            Ok(Box::new(game) as Box<dyn EpisodeState>)
        })
    }
}

/// The reference solution: guess the middle of what the hints leave.
struct Bisect {
    low: u64,
    high: u64,
}

impl mcpgym_env::Oracle for Bisect {
    fn next(&mut self, last: Option<mcpgym_env::Answered<'_>>) -> mcpgym_env::OracleMove {
        if let Some(report) = last.and_then(|answer| answer.structured) {
            if report["hint"] == "correct" {
                return mcpgym_env::OracleMove::Done;
            }
            let bound = |key: &str, or: u64| report[key].as_u64().unwrap_or(or);
            (self.low, self.high) = (bound("low", self.low), bound("high", self.high));
        }
        let middle = self.low + (self.high - self.low) / 2;
        mcpgym_env::OracleMove::call("guess", serde_json::json!({ "number": middle }))
    }
}

/// One game: the hidden number and what the hints have narrowed it to.
struct Game {
    number: u64,
    low: u64,
    high: u64,
    guesses: u32,
    used: u32,
}

impl Game {
    fn report(&self, hint: &'static str) -> StepOutcome {
        let left = self.guesses - self.used;
        let report = Report {
            hint,
            low: self.low,
            high: self.high,
            guesses_left: left,
        };
        let text = format!(
            "{hint}: the number is in {}..={}, {left} guesses left.",
            self.low, self.high
        );
        StepOutcome::ok(text).with_structured(serde_json::to_value(report).unwrap_or_default())
    }

    fn guess(&mut self, Guess { number }: Guess) -> StepOutcome {
        if !(self.low..=self.high).contains(&number) {
            let (low, high) = (self.low, self.high);
            return StepOutcome::error(format!("Guess from {low} to {high}; no guess was used."));
        }
        self.used += 1;
        let hint = match number.cmp(&self.number) {
            Ordering::Less => {
                self.low = number + 1;
                "higher"
            }
            Ordering::Greater => {
                self.high = number - 1;
                "lower"
            }
            Ordering::Equal => "correct",
        };
        let outcome = self.report(hint);
        let left = f64::from(self.guesses - self.used);
        match hint {
            "correct" => outcome.finish(vec![
                Reward::new("win", 1.0),
                Reward::new("efficiency", 0.5 * left / f64::from(self.guesses)),
            ]),
            _ if left == 0.0 => outcome.finish(vec![Reward::new("win", 0.0)]),
            _ => outcome,
        }
    }
}

impl EpisodeState for Game {
    fn call<'a>(&'a mut self, tool: &'a str, arguments: JsonObject) -> BoxFuture<'a, StepOutcome> {
        TOOLS.call(self, tool, arguments)
    }
    fn reveal(&self) -> JsonObject {
        JsonObject::from_iter([("number".to_owned(), self.number.into())])
    }
    fn finish_at_turn_limit(&mut self) -> BoxFuture<'_, (Option<String>, Vec<Reward>)> {
        let note = format!("The number was {}.", self.number);
        Box::pin(async move { (Some(note), vec![Reward::new("win", 0.0)]) })
    }
}

/// The environment, as the registry builds it.
pub fn new() -> Arc<dyn Environment> {
    Arc::new(HiLo::default())
}
