//! One run of one task: the turn count, the turn limit, the reward ledger and the trajectory.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{ContentBlock, JsonObject};
use serde::Serialize;
use serde_json::Value;

use crate::env::{EpisodeState, StepOutcome};
use crate::reward::{RewardLedger, StepReward};
use crate::step::StepRecord;
use crate::trajectory::{
    ObservationImage, TrajectoryEnd, TrajectoryHeader, TrajectoryRecord, TrajectorySink,
    clipped_arguments, clipped_observation_text, clipped_structured, now_rfc3339,
};

/// Observation images an episode keeps in memory for the live viewer, newest last: enough to
/// step back through the last few screenshots, about 40 KB each.
pub const RECENT_IMAGES: usize = 16;

/// The public state of an episode, as `GET /episodes/{id}` returns it.
#[derive(Debug, Clone, Serialize)]
pub struct EpisodeStatus {
    /// The episode id.
    pub id: String,
    /// The environment's name.
    pub env: &'static str,
    /// The task id.
    pub task: String,
    /// The seed the episode started from.
    pub seed: u64,
    /// Tool calls made so far.
    pub turn: u32,
    /// The turn limit.
    pub max_turns: u32,
    /// The sum of every step's reward.
    #[serde(rename = "return")]
    pub return_: f64,
    /// The return by component.
    pub reward_components: BTreeMap<String, f64>,
    /// Whether the episode is over.
    pub done: bool,
    /// Whether it ended at the turn limit.
    pub truncated: bool,
    /// Whether it ended because the environment failed, not because of the agent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
    /// Why it was aborted, when the harness ended it rather than the environment's own call
    /// (its session was ended, the server restarted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abort_reason: Option<String>,
    /// The options the episode was created with (left out when none).
    #[serde(skip_serializing_if = "JsonObject::is_empty")]
    pub options: JsonObject,
    /// What the environment reveals once done (e.g. `answer`); empty before.
    #[serde(flatten)]
    pub revealed: JsonObject,
}

/// Whether an episode's outcome counts as solving its task, for pass rates: its `success` or
/// `win` reward component is positive when it has one; one with a `partial` component (partial
/// credit short of success) has not; otherwise its return is positive. An aborted episode
/// never passes.
pub fn passed(return_: f64, components: &BTreeMap<String, f64>, aborted: bool) -> bool {
    if aborted {
        return false;
    }
    match components.get("success").or_else(|| components.get("win")) {
        Some(value) => *value > 0.0,
        None => !components.contains_key("partial") && return_ > 0.0,
    }
}

impl EpisodeStatus {
    /// The status an end record (or [`crate::trajectory::file::RecordedEpisode::status`])
    /// wrote, for environment `env`: the known fields, and everything else as revealed.
    pub fn from_recorded(env: &'static str, recorded: &JsonObject) -> Self {
        let text = |key: &str| {
            recorded
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let number = |key: &str| recorded.get(key).and_then(Value::as_u64).unwrap_or(0);
        let flag = |key: &str| recorded.get(key).and_then(Value::as_bool).unwrap_or(false);
        let known = [
            "id",
            "env",
            "task",
            "seed",
            "turn",
            "max_turns",
            "return",
            "reward_components",
            "done",
            "truncated",
            "aborted",
            "abort_reason",
            "options",
        ];
        EpisodeStatus {
            id: text("id"),
            env,
            task: text("task"),
            seed: number("seed"),
            turn: u32::try_from(number("turn")).unwrap_or(u32::MAX),
            max_turns: u32::try_from(number("max_turns")).unwrap_or(u32::MAX),
            return_: recorded
                .get("return")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            reward_components: recorded
                .get("reward_components")
                .and_then(Value::as_object)
                .map(|components| {
                    components
                        .iter()
                        .filter_map(|(name, value)| Some((name.clone(), value.as_f64()?)))
                        .collect()
                })
                .unwrap_or_default(),
            done: flag("done"),
            truncated: flag("truncated"),
            aborted: flag("aborted"),
            abort_reason: recorded
                .get("abort_reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
            options: recorded
                .get("options")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            revealed: recorded
                .iter()
                .filter(|(key, _)| !known.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        }
    }

    /// Whether the episode solved its task ([`passed`]).
    pub fn passed(&self) -> bool {
        passed(self.return_, &self.reward_components, self.aborted)
    }

    /// Brings the status up to date with a step of its episode (what the episode reveals
    /// once done is set apart, by whoever saw it finish).
    pub fn apply(&mut self, step: &StepRecord) {
        self.turn = step.turn;
        self.return_ = step.return_;
        for (name, value) in &step.reward_components {
            *self.reward_components.entry(name.clone()).or_default() += value;
        }
        self.done = step.done;
        self.truncated = step.truncated;
        self.aborted = step.aborted;
    }
}

/// One episode. Only the shared layer touches these fields; the environment sees its own
/// [`EpisodeState`].
pub struct Episode {
    id: Arc<str>,
    env: &'static str,
    task: String,
    seed: u64,
    options: JsonObject,
    turn: u32,
    max_turns: u32,
    done: bool,
    truncated: bool,
    aborted: bool,
    abort_reason: Option<String>,
    ledger: RewardLedger,
    state: Option<Box<dyn EpisodeState>>,
    /// One record per tool call.
    trajectory: Vec<Arc<TrajectoryRecord>>,
    sink: Option<TrajectorySink>,
    /// The latest observation images, for the viewer.
    recent_images: VecDeque<ObservationImage>,
    /// Steps with images so far (the sink keeps one in N).
    image_steps: u64,
    /// Whether the trajectory's end record has been queued.
    ended: bool,
    /// What a finished episode still answers once its state is released ([`Episode::retire`]).
    retired: Option<Retired>,
    /// The latest calls made with an idempotency key, what they answered, and its size.
    answered: VecDeque<(Box<str>, StepRecord, usize)>,
    /// The sizes in `answered`, summed.
    answered_bytes: usize,
    /// Whether the trajectory's prompt line has been queued.
    prompt_recorded: bool,
    /// Whether the step records are in the trajectory file only (an episode read back after
    /// a restart).
    trajectory_in_file: bool,
}

/// Idempotency keys a live episode remembers the answers of (the oldest goes first).
pub const ANSWERED_KEYS: usize = 64;
/// Most bytes of answers a live episode keeps for its keys (screenshots are large); the
/// newest answer is kept whatever its size.
const ANSWERED_BYTES: usize = 4 << 20;
/// Answers a finished episode keeps: a retry comes soon after its call.
const ANSWERED_WHEN_FINISHED: usize = 4;

/// What a finished episode keeps of its state after [`Episode::retire`]: enough to answer
/// every read and every further call as it would have.
struct Retired {
    /// The environment's answer to a call on a finished episode.
    over_message: String,
    /// The task's prompt.
    prompt: Option<String>,
    /// Every document the environment exported at the end.
    exports: Vec<(String, crate::env::Export)>,
    /// What the environment revealed.
    revealed: JsonObject,
}

impl std::fmt::Debug for Episode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Episode")
            .field("id", &self.id)
            .field("env", &self.env)
            .field("turn", &self.turn)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

/// Everything an episode needs to be built, other than its state.
#[derive(Debug, Clone)]
pub struct EpisodeHeader {
    /// The episode id.
    pub id: Arc<str>,
    /// The environment's name.
    pub env: &'static str,
    /// The task id.
    pub task: String,
    /// The seed.
    pub seed: u64,
    /// The turn limit.
    pub max_turns: u32,
    /// The options it was created with (recorded in the trajectory's header).
    pub options: JsonObject,
    /// The client session that started it (recorded in the trajectory's header).
    pub session: Option<crate::trajectory::SessionRecord>,
    /// For a generated test task, the fingerprint of the test secret it was derived with
    /// ([`test_secret_fingerprint`](mcpgym_env::generate::test_secret_fingerprint)).
    pub test_secret: Option<String>,
}

impl Episode {
    /// A new episode around an environment's freshly started state.
    pub fn new(
        header: EpisodeHeader,
        state: Box<dyn EpisodeState>,
        sink: Option<TrajectorySink>,
    ) -> Self {
        if let Some(sink) = &sink {
            sink.header(TrajectoryHeader {
                record: "header".into(),
                episode: header.id.to_string(),
                env: header.env.to_owned(),
                task: header.task.clone(),
                seed: header.seed,
                options: header.options.clone(),
                max_turns: header.max_turns.max(1),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                time: now_rfc3339(),
                session: header.session.clone(),
                test_secret: header.test_secret.clone(),
            });
        }
        Self {
            state: Some(state),
            sink,
            ..Episode::new_unrecorded(header)
        }
    }

    /// The episode a trajectory file recorded, rebuilt by starting `state` afresh and making
    /// the recorded calls again (handing the prompt over where it was), each of which must
    /// answer as recorded: what a restart does for an environment whose episodes follow from
    /// their seed and calls alone. Nothing is written to the file again; the calls' answers
    /// are kept for their idempotency keys. On a difference, the state is closed and the
    /// sentence says where.
    pub async fn resume(
        header: EpisodeHeader,
        state: Box<dyn EpisodeState>,
        recorded: &crate::trajectory::file::RecordedEpisode,
        sink: Option<TrajectorySink>,
    ) -> Result<Self, String> {
        let mut episode = Episode::new(header, state, None);
        for step in recorded.typed_steps() {
            if recorded.prompt_after == Some(episode.turn) {
                episode.prompt();
            }
            if step.cut_bytes.contains_key("arguments") {
                episode.close().await;
                return Err(format!(
                    "turn {} was recorded with its arguments cut, so it cannot be made again",
                    step.turn
                ));
            }
            let replayed = episode
                .step_keyed(
                    &step.tool,
                    step.arguments.clone(),
                    step.idempotency_key.as_deref(),
                )
                .await;
            if let Some(difference) = crate::trajectory::replay::first_difference(&step, &replayed)
            {
                episode.close().await;
                return Err(format!(
                    "turn {} answered differently: {difference}",
                    step.turn
                ));
            }
            if let Some(key) = &step.idempotency_key {
                episode.remember_answer(key, &replayed);
            }
        }
        if recorded.prompt_after == Some(episode.turn) {
            episode.prompt();
        }
        episode.prompt_recorded = recorded.prompt_after.is_some();
        episode.ended = false;
        episode.sink = sink;
        Ok(episode)
    }

    /// A finished episode read back from its trajectory file after a restart: it holds no
    /// state, answers further calls with `over_message`, reads its steps from the file, and
    /// pays nothing more.
    pub fn restored(header: EpisodeHeader, status: &EpisodeStatus, over_message: String) -> Self {
        let mut ledger = RewardLedger::default();
        let components = status
            .reward_components
            .iter()
            .map(|(name, value)| crate::reward::Reward::new(name.clone(), *value))
            .collect();
        ledger.pay(components, Some(Vec::new()));
        Self {
            turn: status.turn,
            done: true,
            truncated: status.truncated,
            aborted: status.aborted,
            abort_reason: status.abort_reason.clone(),
            ledger,
            state: None,
            ended: true,
            prompt_recorded: true,
            trajectory_in_file: true,
            retired: Some(Retired {
                over_message,
                prompt: None,
                exports: Vec::new(),
                revealed: status.revealed.clone(),
            }),
            ..Episode::new_unrecorded(header)
        }
    }

    /// An episode with no state, no sink and nothing played: the base of [`Episode::restored`].
    fn new_unrecorded(header: EpisodeHeader) -> Self {
        Self {
            id: header.id,
            env: header.env,
            task: header.task,
            seed: header.seed,
            options: header.options,
            turn: 0,
            max_turns: header.max_turns.max(1),
            done: false,
            truncated: false,
            aborted: false,
            abort_reason: None,
            ledger: RewardLedger::default(),
            state: None,
            trajectory: Vec::new(),
            sink: None,
            recent_images: VecDeque::new(),
            image_steps: 0,
            ended: false,
            retired: None,
            answered: VecDeque::new(),
            answered_bytes: 0,
            prompt_recorded: false,
            trajectory_in_file: false,
        }
    }

    /// Whether the step records are read from the trajectory file rather than kept here.
    pub fn trajectory_in_file(&self) -> bool {
        self.trajectory_in_file
    }

    /// The episode id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether the episode is over.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Runs one tool call through the environment: the observation and what it paid, as the
    /// typed step record every transport reports.
    pub async fn step(&mut self, tool: &str, arguments: JsonObject) -> StepRecord {
        self.step_keyed(tool, arguments, None).await
    }

    /// [`Episode::step`], recording the call's idempotency key with it.
    pub async fn step_keyed(
        &mut self,
        tool: &str,
        arguments: JsonObject,
        key: Option<&str>,
    ) -> StepRecord {
        let started = Instant::now();
        let Some(state) = self.state.as_mut() else {
            return match &self.retired {
                Some(retired) => self.frozen(&retired.over_message),
                None => self.frozen("The episode has been closed; start a new episode."),
            };
        };
        if self.done {
            let message = state.over_message().to_owned();
            return self.frozen(&message);
        }
        self.turn += 1;
        // Kept for the record, clipped to its budget (a long cell is not stored twice).
        let record_arguments = clipped_arguments(&arguments);
        let outcome = state.call(tool, arguments).await;
        let StepOutcome {
            mut content,
            structured,
            is_error,
            rewards,
            finished,
            aborted,
        } = outcome;
        let ended_by_env = finished.is_some();
        let mut paid = self
            .ledger
            .pay(rewards, if aborted { None } else { finished });
        if aborted {
            self.done = true;
            self.aborted = true;
        } else if ended_by_env {
            self.done = true;
        } else if self.turn >= self.max_turns {
            self.done = true;
            self.truncated = true;
            let mut note = format!(
                "The turn limit ({}) is reached; the episode is over.",
                self.max_turns
            );
            let (extra, terminal) = state.finish_at_turn_limit().await;
            if let Some(extra) = extra {
                note.push(' ');
                note.push_str(&extra);
            }
            if !terminal.is_empty() {
                let final_paid = self.ledger.pay(Vec::new(), Some(terminal));
                paid.total += final_paid.total;
                for (name, value) in final_paid.components {
                    *paid.components.entry(name).or_default() += value;
                }
            }
            content.push(ContentBlock::text(note));
        }
        // Structured content describes successes only (it must match the output schema).
        let structured = if is_error { None } else { structured };
        let step = self.step_record(content, structured, is_error, &paid);
        self.record(tool, record_arguments, &step, started, key);
        if self.done {
            let graded = self.state.as_ref().and_then(|state| state.graded());
            self.write_end(graded);
        }
        step
    }

    /// A refused call on a finished or closed episode: it pays nothing and counts no turn.
    fn frozen(&self, message: &str) -> StepRecord {
        self.step_record(
            vec![ContentBlock::text(message)],
            None,
            true,
            &StepReward::default(),
        )
    }

    fn step_record(
        &self,
        content: Vec<ContentBlock>,
        structured: Option<Value>,
        is_error: bool,
        paid: &StepReward,
    ) -> StepRecord {
        StepRecord {
            episode: self.id.to_string(),
            turn: self.turn,
            content,
            structured,
            is_error,
            reward: paid.total,
            reward_components: paid
                .components
                .iter()
                .map(|(name, value)| (name.to_string(), *value))
                .collect(),
            return_: self.ledger.total(),
            done: self.done,
            truncated: self.truncated,
            aborted: self.aborted,
        }
    }

    /// Keeps the step in the trajectory: the step record, with its observation as text and
    /// everything clipped to the record's budgets, plus the call and its latency.
    fn record(
        &mut self,
        tool: &str,
        (arguments, arguments_cut): (JsonObject, usize),
        step: &StepRecord,
        started: Instant,
        key: Option<&str>,
    ) {
        let (observation, observation_cut) = clipped_observation_text(&step.content);
        let (structured, structured_cut) = match step.structured.as_ref().map(clipped_structured) {
            Some((value, cut)) => (Some(value), cut),
            None => (None, 0),
        };
        let cut_bytes = [
            ("observation", observation_cut),
            ("arguments", arguments_cut),
            ("structured", structured_cut),
        ]
        .into_iter()
        .filter(|(_, cut)| *cut > 0)
        .collect();
        let images = ObservationImage::from_content(step.turn, &step.content);
        let image_paths = images
            .iter()
            .map(|image| format!("{}/{}", self.id, image.name))
            .collect();
        let record = Arc::new(TrajectoryRecord {
            record: "step",
            time: std::time::SystemTime::now(),
            episode: self.id.clone(),
            turn: step.turn,
            tool: tool.to_owned(),
            arguments,
            observation,
            is_error: step.is_error,
            structured,
            reward: step.reward,
            reward_components: step.reward_components.clone(),
            done: step.done,
            truncated: step.truncated,
            aborted: step.aborted,
            latency_ms: started.elapsed().as_secs_f64() * 1000.0,
            cut_bytes,
            images: image_paths,
            idempotency_key: key.map(Into::into),
        });
        if let Some(sink) = &self.sink {
            sink.append(record.clone());
        }
        self.trajectory.push(record);
        if !images.is_empty() {
            if let Some(sink) = &self.sink
                && sink.image_policy().keeps(self.image_steps)
            {
                sink.images(&self.id, images.clone());
            }
            self.image_steps += 1;
            for image in images {
                if self.recent_images.len() == RECENT_IMAGES {
                    self.recent_images.pop_front();
                }
                self.recent_images.push_back(image);
            }
        }
    }

    /// Queues the trajectory file's end record, once, with what the grader read (`graded`)
    /// when the episode finished.
    fn write_end(&mut self, graded: Option<Value>) {
        if self.ended {
            return;
        }
        self.ended = true;
        if let Some(sink) = &self.sink {
            let end = TrajectoryEnd {
                record: "end",
                time: now_rfc3339(),
                status: self.status(),
                graded,
            };
            sink.end(&self.id, end);
        }
    }

    /// One of the latest observation images, by file name (`<turn>-<n>.png`).
    pub fn recent_image(&self, name: &str) -> Option<&ObservationImage> {
        self.recent_images.iter().find(|image| image.name == name)
    }

    /// The public state.
    pub fn status(&self) -> EpisodeStatus {
        EpisodeStatus {
            id: self.id.to_string(),
            env: self.env,
            task: self.task.clone(),
            seed: self.seed,
            turn: self.turn,
            max_turns: self.max_turns,
            return_: self.ledger.total(),
            reward_components: self
                .ledger
                .by_component()
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            done: self.done,
            truncated: self.truncated,
            aborted: self.aborted,
            abort_reason: self.abort_reason.clone(),
            options: self.options.clone(),
            revealed: self.revealed(),
        }
    }

    /// What the environment reveals: empty until the episode is done.
    pub fn revealed(&self) -> JsonObject {
        match (&self.state, &self.retired, self.done) {
            (Some(state), _, true) => state.reveal(),
            (None, Some(retired), _) => retired.revealed.clone(),
            _ => JsonObject::new(),
        }
    }

    /// The task's prompt (see [`EpisodeState::prompt`]); `None` once closed or when the
    /// environment has none. The first time a live episode hands it over, its trajectory
    /// says so (with the calls made before), whether or not the environment has a prompt of
    /// its own beside its instructions: a replay hands it over at the same point.
    pub fn prompt(&mut self) -> Option<String> {
        match (&mut self.state, &self.retired) {
            (Some(state), _) => {
                let prompt = state.prompt();
                if !self.prompt_recorded {
                    self.prompt_recorded = true;
                    if let Some(sink) = &self.sink {
                        sink.prompt(
                            &self.id,
                            crate::trajectory::TrajectoryPrompt {
                                record: "prompt".into(),
                                time: now_rfc3339(),
                                turn: self.turn,
                            },
                        );
                    }
                }
                prompt
            }
            (None, Some(retired)) => retired.prompt.clone(),
            (None, None) => None,
        }
    }

    /// A document the episode's environment exports, if it has one by that name.
    pub fn export(&self, name: &str) -> Option<crate::env::Export> {
        match (&self.state, &self.retired) {
            (Some(state), _) => state.export(name),
            (None, Some(retired)) => retired
                .exports
                .iter()
                .find(|(exported, _)| exported == name)
                .map(|(_, export)| export.clone()),
            (None, None) => None,
        }
    }

    /// What the call made with idempotency key `key` answered, if it was made here lately.
    pub fn answered(&self, key: &str) -> Option<&StepRecord> {
        self.answered
            .iter()
            .find(|(answered, _, _)| &**answered == key)
            .map(|(_, step, _)| step)
    }

    /// Remembers what the call with idempotency key `key` answered, within
    /// [`ANSWERED_KEYS`] keys and a byte budget.
    pub fn remember_answer(&mut self, key: &str, step: &StepRecord) {
        let size = step
            .content
            .iter()
            .map(|block| match block {
                ContentBlock::Text(text) => text.text.len(),
                ContentBlock::Image(image) => image.data.len(),
                _ => 256,
            })
            .sum::<usize>();
        self.answered.push_back((key.into(), step.clone(), size));
        self.answered_bytes += size;
        self.keep_answers(ANSWERED_KEYS, ANSWERED_BYTES);
    }

    /// Forgets the oldest answers until at most `count` and `bytes` remain (the newest
    /// stays).
    fn keep_answers(&mut self, count: usize, bytes: usize) {
        while self.answered.len() > 1
            && (self.answered.len() > count || self.answered_bytes > bytes)
            && let Some((_, _, size)) = self.answered.pop_front()
        {
            self.answered_bytes -= size;
        }
    }

    /// Ends an unfinished episode as aborted, paying nothing more (its return stays as it
    /// stood). Whether it was unfinished.
    pub fn abort(&mut self, reason: &str) -> bool {
        if self.done || self.state.is_none() {
            return false;
        }
        self.done = true;
        self.aborted = true;
        self.abort_reason = Some(reason.to_owned());
        self.write_end(None);
        true
    }

    /// Once the episode is done: keeps what its reads and further calls still need (the
    /// prompt, the documents `exports` names, what it reveals, the environment's "over"
    /// message, the last observation image), closes its trajectory file, and hands back the
    /// environment's state for the caller to close (which releases a kernel or a display
    /// while the episode stays readable). `None` while it is not done or once retired.
    pub fn retire(&mut self, exports: &[&str]) -> Option<Box<dyn EpisodeState>> {
        if !self.done || self.retired.is_some() {
            return None;
        }
        let mut state = self.state.take()?;
        self.retired = Some(Retired {
            over_message: state.over_message().to_owned(),
            prompt: state.prompt(),
            exports: exports
                .iter()
                .filter_map(|name| Some(((*name).to_owned(), state.export(name)?)))
                .collect(),
            revealed: state.reveal(),
        });
        while self.recent_images.len() > 1 {
            self.recent_images.pop_front();
        }
        self.keep_answers(ANSWERED_WHEN_FINISHED, ANSWERED_BYTES);
        // The end record was written, with what the grader read, by the finishing call.
        if let Some(sink) = &self.sink {
            sink.close(&self.id);
        }
        Some(state)
    }

    /// The trajectory's step records after turn `after` as JSON Lines (each record ends with
    /// a newline).
    pub fn trajectory_jsonl(&self, after: u32) -> String {
        let mut out = String::new();
        let first = self
            .trajectory
            .partition_point(|record| record.turn <= after);
        for record in &self.trajectory[first..] {
            out.push_str(&record.to_json_line());
            out.push('\n');
        }
        out
    }

    /// Releases what the episode holds. Safe to call more than once, and after
    /// [`Episode::retire`].
    pub async fn close(&mut self) {
        if self.state.is_some() {
            self.write_end(None);
        }
        self.release().await;
    }

    /// Releases what the episode holds without ending its trajectory file, whose live marker
    /// stays: at shutdown, so that the next start resumes the episode or says it was lost.
    pub async fn close_unended(&mut self) {
        self.ended = true;
        self.release().await;
    }

    async fn release(&mut self) {
        if let Some(state) = self.state.take() {
            state.close().await;
        }
        if let Some(sink) = &self.sink {
            sink.close(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::BoxFuture;
    use crate::reward::Reward;

    #[test]
    fn partial_credit_is_reward_but_not_a_pass() {
        let components = |pairs: &[(&str, f64)]| -> BTreeMap<String, f64> {
            pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        assert!(!passed(0.6, &components(&[("partial", 0.6)]), false));
        assert!(passed(0.9, &components(&[("success", 0.9)]), false));
        assert!(passed(1.0, &components(&[("correct", 1.0)]), false));
        assert!(!passed(0.9, &components(&[("success", 0.9)]), true));
    }

    /// A game that ends when `win` is called, paying 1.0 once.
    struct Counter;
    impl EpisodeState for Counter {
        fn call<'a>(&'a mut self, tool: &'a str, _: JsonObject) -> BoxFuture<'a, StepOutcome> {
            Box::pin(async move {
                match tool {
                    "win" => StepOutcome::ok("won").finish(vec![Reward::new("win", 1.0)]),
                    _ => StepOutcome::ok("ok").with_reward(Reward::new("step", 0.1)),
                }
            })
        }
        fn over_message(&self) -> &str {
            "over"
        }
    }

    fn episode(max_turns: u32) -> Episode {
        Episode::new(
            EpisodeHeader {
                id: "e1".into(),
                env: "test",
                task: "t".into(),
                seed: 1,
                max_turns,
                options: JsonObject::new(),
                session: None,
                test_secret: None,
            },
            Box::new(Counter),
            None,
        )
    }

    fn step_of(step: &StepRecord) -> Value {
        serde_json::to_value(step).unwrap()
    }

    #[tokio::test]
    async fn answers_kept_for_keys_are_bounded_by_count_and_size_and_few_once_finished() {
        let mut ep = episode(1000);
        let step = ep.step("tick", JsonObject::new()).await;
        for n in 0..100 {
            ep.remember_answer(&format!("k{n}"), &step);
        }
        assert!(ep.answered("k35").is_none() && ep.answered("k36").is_some());
        // A large answer (a screenshot) pushes out what would pass the byte budget.
        let mut large = step.clone();
        large.content = vec![ContentBlock::text("x".repeat(3 << 20))];
        ep.remember_answer("big-1", &large);
        ep.remember_answer("big-2", &large);
        assert!(ep.answered("big-1").is_none() && ep.answered("big-2").is_some());
        for n in 0..10 {
            ep.remember_answer(&format!("small-{n}"), &step);
        }
        ep.step("win", JsonObject::new()).await;
        ep.retire(&[])
            .expect("a finished episode hands back its state");
        assert_eq!(ep.answered.len(), ANSWERED_WHEN_FINISHED);
        assert!(ep.answered("small-9").is_some() && ep.answered("small-5").is_none());
    }

    #[tokio::test]
    async fn frozen_after_done_and_paid_once() {
        let mut ep = episode(10);
        let won = ep.step("win", JsonObject::new()).await;
        assert_eq!(step_of(&won)["reward"], 1.0);
        assert_eq!(step_of(&won)["done"], true);
        let again = ep.step("win", JsonObject::new()).await;
        assert!(again.is_error);
        assert_eq!(step_of(&again)["reward"], 0.0);
        assert_eq!(step_of(&again)["return"], 1.0);
        assert_eq!(step_of(&again)["turn"], 1);
        assert_eq!(ep.trajectory.len(), 1);
    }

    #[tokio::test]
    async fn truncates_at_max_turns() {
        let mut ep = episode(2);
        ep.step("x", JsonObject::new()).await;
        let last = ep.step("x", JsonObject::new()).await;
        let step = step_of(&last);
        assert_eq!(step["done"], true);
        assert_eq!(step["truncated"], true);
        assert!((step["return"].as_f64().unwrap() - 0.2).abs() < 1e-9);
        let text = last.text();
        assert!(text.contains("turn limit (2)"), "{text}");
    }

    /// An episode graded by its final state, also when the turn limit ends it.
    struct Graded;
    impl EpisodeState for Graded {
        fn call<'a>(&'a mut self, _: &'a str, _: JsonObject) -> BoxFuture<'a, StepOutcome> {
            Box::pin(async { StepOutcome::ok("ok") })
        }
        fn finish_at_turn_limit(&mut self) -> BoxFuture<'_, (Option<String>, Vec<Reward>)> {
            Box::pin(async { (Some("Graded.".into()), vec![Reward::new("success", 1.0)]) })
        }
    }

    #[tokio::test]
    async fn the_turn_limit_can_pay_a_final_grade_once() {
        let mut ep = Episode::new(
            EpisodeHeader {
                id: "e2".into(),
                env: "test",
                task: "t".into(),
                seed: 1,
                max_turns: 1,
                options: JsonObject::new(),
                session: None,
                test_secret: None,
            },
            Box::new(Graded),
            None,
        );
        let last = ep.step("x", JsonObject::new()).await;
        let step = step_of(&last);
        assert_eq!(step["truncated"], true);
        assert_eq!(step["reward"], 1.0);
        assert_eq!(step["reward_components"]["success"], 1.0);
        assert!(last.text().contains("Graded."));
        let after = ep.step("x", JsonObject::new()).await;
        assert_eq!(step_of(&after)["return"], 1.0);
    }

    /// An environment whose display dies on the second call.
    struct Fragile;
    impl EpisodeState for Fragile {
        fn call<'a>(&'a mut self, tool: &'a str, _: JsonObject) -> BoxFuture<'a, StepOutcome> {
            Box::pin(async move {
                match tool {
                    "crash" => StepOutcome::abort("The display stopped; the episode cannot go on.")
                        .with_reward(Reward::new("late", 0.5))
                        .finish(vec![Reward::new("success", 1.0)]),
                    _ => StepOutcome::ok("ok").with_reward(Reward::new("step", 0.1)),
                }
            })
        }
    }

    #[tokio::test]
    async fn an_environment_failure_ends_the_episode_as_aborted_without_a_terminal_reward() {
        let mut ep = Episode::new(
            EpisodeHeader {
                id: "e3".into(),
                env: "test",
                task: "t".into(),
                seed: 1,
                max_turns: 10,
                options: JsonObject::new(),
                session: None,
                test_secret: None,
            },
            Box::new(Fragile),
            None,
        );
        ep.step("x", JsonObject::new()).await;
        let crashed = ep.step("crash", JsonObject::new()).await;
        assert!(crashed.aborted && crashed.done && crashed.is_error);
        assert!(!crashed.truncated);
        // Step rewards already earned stay; the terminal one is not paid.
        assert!((crashed.return_ - 0.6).abs() < 1e-9, "{crashed:?}");
        assert_eq!(crashed.reward_components.get("success"), None);
        let status = ep.status();
        assert!(status.aborted && status.done);
        assert_eq!(serde_json::to_value(&status).unwrap()["aborted"], true);
        assert!(ep.trajectory.last().unwrap().aborted);
        let after = ep.step("x", JsonObject::new()).await;
        assert!(after.is_error && after.aborted);
    }

    /// The status kept up to date step by step is the status built from scratch.
    #[tokio::test]
    async fn a_status_applied_step_by_step_matches_one_built_from_scratch() {
        for (ending, max_turns) in [("win", 10), ("x", 3), ("crash", 10)] {
            let state: Box<dyn EpisodeState> = if ending == "crash" {
                Box::new(Fragile)
            } else {
                Box::new(Counter)
            };
            let mut ep = Episode::new(
                EpisodeHeader {
                    id: "e4".into(),
                    env: "test",
                    task: "t".into(),
                    seed: 1,
                    max_turns,
                    options: JsonObject::new(),
                    session: None,
                    test_secret: None,
                },
                state,
                None,
            );
            let mut status = ep.status();
            for tool in ["x", "x", ending, "x"] {
                let step = ep.step(tool, JsonObject::new()).await;
                status.apply(&step);
                let built = ep.status();
                assert_eq!(
                    serde_json::to_value(&status).unwrap(),
                    serde_json::to_value(&built).unwrap(),
                    "after {tool} ending with {ending}"
                );
            }
        }
    }
}
