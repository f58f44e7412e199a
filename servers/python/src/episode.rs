//! One episode of a Python environment: an instance in one worker, and the calls that built
//! it, so it can be built again on a new worker when its own stops for another episode's sake.

use std::sync::Arc;

use mcpgym_env::{BoxFuture, EpisodeSpec, EpisodeState, Reward, StartError, StepOutcome};
use rmcp::model::{ContentBlock, JsonObject};
use serde_json::{Value, json};

use crate::pool::Pool;
use crate::worker::{Failure, Worker};

/// How many times a call is sent again after its worker stopped under it before the episode
/// gives up (each time, another episode's step brought the worker down).
const REBUILDS: usize = 3;

/// A running episode.
pub(crate) struct PythonEpisode {
    pool: Arc<Pool>,
    slot: usize,
    worker: Worker,
    /// The worker's name for this episode's instance.
    key: u64,
    spec: EpisodeSpec,
    /// The prompt `reset` returned.
    prompt: Option<String>,
    /// Each call made, with the answer it got.
    history: Vec<(String, JsonObject, Value)>,
    reveal: JsonObject,
}

/// What a worker's answer asks of the episode.
enum Answer {
    /// An answer to use.
    Ok(Value),
    /// The environment's code failed (it raised): the episode cannot go on.
    Raised(String),
    /// Options refused.
    Options(String),
}

fn classify(answer: Value) -> Answer {
    match answer.get("error").and_then(Value::as_str) {
        None => Answer::Ok(answer),
        Some(error) if answer["kind"] == "options" => Answer::Options(error.to_owned()),
        Some(error) => Answer::Raised(error.to_owned()),
    }
}

impl PythonEpisode {
    /// Starts an episode: places it, and resets a fresh instance in its worker.
    pub(crate) async fn start(
        pool: Arc<Pool>,
        key: u64,
        spec: &EpisodeSpec,
        label: &str,
    ) -> Result<Self, StartError> {
        let slot = pool.place();
        let started = Self::reset_somewhere(&pool, slot, key, spec).await;
        match started {
            Ok((worker, answer)) => match classify(answer) {
                Answer::Ok(answer) => Ok(Self {
                    pool,
                    slot,
                    worker,
                    key,
                    spec: spec.clone(),
                    prompt: answer["prompt"].as_str().map(str::to_owned),
                    history: Vec::new(),
                    reveal: JsonObject::new(),
                }),
                Answer::Options(error) => {
                    pool.leave(slot);
                    Err(StartError::InvalidOptions(error))
                }
                Answer::Raised(error) => {
                    pool.leave(slot);
                    Err(StartError::Unavailable(format!(
                        "{label}'s reset failed ({error}); the traceback is in the server's log"
                    )))
                }
            },
            Err(why) => {
                pool.leave(slot);
                Err(StartError::Unavailable(format!("{label}: {why}")))
            }
        }
    }

    /// Resets the instance in the slot's worker, starting a new worker when the one it held
    /// stopped first.
    async fn reset_somewhere(
        pool: &Pool,
        slot: usize,
        key: u64,
        spec: &EpisodeSpec,
    ) -> Result<(Worker, Value), String> {
        let request = json!({
            "op": "reset", "episode": key.to_string(), "task": spec.task,
            "seed": spec.seed, "options": spec.options,
        });
        for _ in 0..REBUILDS {
            let worker = pool.worker(slot).await.map_err(|e| e.to_string())?;
            match worker.ask(request.clone()).await {
                Ok(answer) => return Ok((worker, answer)),
                Err(Failure::Lost) => continue,
                Err(failure) => return Err(format!("its reset failed: {failure}")),
            }
        }
        Err("its worker kept stopping".into())
    }

    /// Builds the instance again on the slot's (new) worker: a reset and every recorded call,
    /// each of which must answer as it did.
    async fn rebuild(&mut self) -> Result<(), String> {
        let (worker, answer) = Self::reset_somewhere(&self.pool, self.slot, self.key, &self.spec)
            .await
            .map_err(|why| format!("it could not be started again: {why}"))?;
        if answer["prompt"].as_str() != self.prompt.as_deref() {
            return Err("starting it again gave another prompt".into());
        }
        for (turn, (tool, arguments, recorded)) in self.history.iter().enumerate() {
            let mut again = worker
                .ask(call_request(self.key, tool, arguments))
                .await
                .map_err(|failure| format!("replaying turn {}: {failure}", turn + 1))?;
            if let Some(object) = again.as_object_mut() {
                object.remove("id");
            }
            if &again != recorded {
                return Err(format!("replaying turn {} gave another answer", turn + 1));
            }
        }
        self.worker = worker;
        Ok(())
    }

    async fn call_once(&mut self, tool: &str, arguments: JsonObject) -> StepOutcome {
        let request = call_request(self.key, tool, &arguments);
        for _ in 0..REBUILDS {
            match self.worker.ask(request.clone()).await {
                Ok(answer) => return self.take(tool, arguments, answer),
                Err(Failure::Lost) => {
                    // Another episode's step stopped the worker before this one ran.
                    if let Err(why) = self.rebuild().await {
                        return StepOutcome::abort(format!(
                            "The environment's worker was restarted after another episode's \
                             step failed, and this episode was lost: {why}."
                        ));
                    }
                }
                Err(failure) => return StepOutcome::abort(format!("{failure}.")),
            }
        }
        StepOutcome::abort("The environment's worker kept stopping; this episode was lost.")
    }

    /// Turns a worker's answer into the step's outcome, recording it.
    fn take(&mut self, tool: &str, arguments: JsonObject, mut answer: Value) -> StepOutcome {
        if let Some(object) = answer.as_object_mut() {
            object.remove("id");
        }
        let outcome = match classify(answer.clone()) {
            Answer::Ok(answer) => outcome_of(&answer),
            Answer::Raised(error) | Answer::Options(error) => {
                return StepOutcome::abort(format!(
                    "The environment failed during this step ({error}); the episode cannot go on."
                ));
            }
        };
        if let Some(reveal) = answer.get("reveal").and_then(Value::as_object) {
            self.reveal = reveal.clone();
        }
        self.history.push((tool.to_owned(), arguments, answer));
        outcome
    }
}

fn call_request(key: u64, tool: &str, arguments: &JsonObject) -> Value {
    json!({"op": "call", "episode": key.to_string(), "tool": tool, "arguments": arguments})
}

/// A step's outcome from a worker's answer (`content`, `rewards`, `done`, `is_error`,
/// `structured`).
fn outcome_of(answer: &Value) -> StepOutcome {
    let content = answer["content"]
        .as_array()
        .map(|parts| parts.iter().filter_map(content_block).collect())
        .unwrap_or_default();
    let rewards: Vec<Reward> = answer["rewards"]
        .as_object()
        .map(|rewards| {
            rewards
                .iter()
                .filter_map(|(name, value)| Some(Reward::new(name.clone(), value.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let done = answer["done"].as_bool().unwrap_or(false);
    StepOutcome {
        content,
        structured: answer.get("structured").cloned(),
        is_error: answer["is_error"].as_bool().unwrap_or(false),
        // Rewards of the last step are its terminal ones: paid once.
        rewards: if done { Vec::new() } else { rewards.clone() },
        finished: done.then_some(rewards),
        aborted: false,
    }
}

fn content_block(part: &Value) -> Option<ContentBlock> {
    match part["type"].as_str()? {
        "text" => Some(ContentBlock::text(part["text"].as_str()?)),
        "image" => Some(ContentBlock::image(
            part["data"].as_str()?,
            part["mimeType"].as_str().unwrap_or("image/png"),
        )),
        _ => None,
    }
}

impl EpisodeState for PythonEpisode {
    fn call<'a>(&'a mut self, tool: &'a str, arguments: JsonObject) -> BoxFuture<'a, StepOutcome> {
        Box::pin(self.call_once(tool, arguments))
    }

    fn reveal(&self) -> JsonObject {
        self.reveal.clone()
    }

    fn prompt(&mut self) -> Option<String> {
        self.prompt.clone()
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let request = json!({"op": "close", "episode": self.key.to_string()});
            // A worker that stopped holds nothing of the episode any more.
            let _ = self.worker.ask(request).await;
            self.pool.leave(self.slot);
        })
    }
}
