//! The Jupyter environment: the MCP tools, and one sandbox per episode.
//!
//! - `start` creates a sandbox over E2B's protocol and runs the task's setup in it as its own
//!   process (`python3 -I -c SETUP` through envd's `process.Process/Start`, never through the
//!   kernel and never as a file the agent could read). `close` kills the sandbox.
//! - The task's prompt reaches the agent in two ways: the read-only `get_task()` tool, and at
//!   the top of the episode's first observation, whichever tool comes first (the prompt
//!   differs per episode, so it cannot be the server's instructions).
//! - Tools: `add_and_execute_code_cell(code)`, `edit_and_execute_current_cell(code)`,
//!   `execute_shell_command(command)`, `get_notebook_state(include_images?)`, `get_task()`,
//!   `final_answer(answer)`. See [`crate::observe`] for what an observation looks like.
//! - `final_answer` grades the answer and ends the episode with the `correct` component. For a
//!   hidden check, the agent's kernels and commands are killed first, then the check runs as
//!   its own process (`python3 -I -c CHECK`).

use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use rmcp::model::{ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use mcpgym_env::progress;
use mcpgym_env::tools::{Effect, NoArguments, ToolTable, tool};
use mcpgym_env::{
    BoxFuture, Environment, EpisodeRecord, EpisodeSpec, EpisodeState, Export, RescoreError,
    Rescored, StartError, StepOutcome, TaskSet,
};

use crate::e2b::{E2bClient, E2bError, Sandbox};
use crate::graded::{
    HomeSnapshot, PredictionsFile, graded_state, kept_answer, kept_chart, kept_home,
    kept_predictions, restore_program, snapshot_program,
};
use crate::grading::{Grading, Verdict};
use crate::notebook::{CellOutput, ExecutedCell};
use crate::observe::{CellObservation, ShellObservation, cell_observation, shell_text, truncate};
use crate::reward::{EpisodeReward, RewardConfig, RewardMode};
use crate::tasks::{JupyterTasks, SANDBOX_HOME, Task};
use mcpgym_env::rescore::GRADED_BUDGET;

/// Default tool calls per episode.
pub const DEFAULT_MAX_TURNS: u32 = 40;
/// Default per-cell timeout.
pub const DEFAULT_CELL_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a sandbox lives without a tool call (refreshed as the episode goes on).
const SANDBOX_LIFETIME: Duration = Duration::from_secs(3600);
/// The longest a task's setup or hidden check may run.
const SETUP_TIMEOUT: Duration = Duration::from_secs(120);

/// How the Jupyter environment is set up.
#[derive(Debug, Clone)]
pub struct JupyterConfig {
    /// The default reward mode (an episode's options may override it).
    pub reward: RewardMode,
    /// The default step cost.
    pub step_cost: Option<f64>,
    /// The default error cost.
    pub error_cost: Option<f64>,
    /// Longest a cell or command may run.
    pub cell_timeout: Duration,
}

impl Default for JupyterConfig {
    fn default() -> Self {
        Self {
            reward: RewardMode::Sparse,
            step_cost: None,
            error_cost: None,
            cell_timeout: DEFAULT_CELL_TIMEOUT,
        }
    }
}

/// Options an episode may set (`POST /episodes {"options": {...}}`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct JupyterOptions {
    /// Overrides `--reward`.
    reward: Option<RewardMode>,
    /// Overrides `--step-cost`.
    step_cost: Option<f64>,
    /// Overrides `--error-cost`.
    error_cost: Option<f64>,
}

/// Arguments of the two code-cell tools.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeArgs {
    /// Python source to run in the notebook's kernel (IPython syntax, so `!cmd` and `%magic`
    /// work too).
    pub code: String,
}

/// Arguments of `execute_shell_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// A bash command line, run in /home/user.
    pub command: String,
}

/// Arguments of `get_notebook_state`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotebookArgs {
    /// Whether to include the images the cells produced (default false).
    // Published as a plain boolean: OpenAI-style function schemas take one `type`, not
    // `["boolean", "null"]`. An explicit null is still read as false.
    #[serde(default = "no_images")]
    #[schemars(with = "bool")]
    pub include_images: Option<bool>,
}

/// `include_images` when left out (the schema shows it as `"default": false`).
fn no_images() -> Option<bool> {
    Some(false)
}

/// Arguments of `final_answer`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerArgs {
    /// Your final answer, in exactly the form the task asks for (e.g. only the number).
    pub answer: String,
}

/// What `get_task` returns as structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskObservation {
    /// The task's id.
    pub id: String,
    /// What to do, and the form of the answer.
    pub prompt: String,
}

/// One cell of `get_notebook_state`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NotebookCell {
    /// Position in the notebook, from 0.
    pub index: usize,
    /// `code` or `shell`.
    pub kind: String,
    /// The cell's source (the command, for a shell cell).
    pub source: String,
    /// The cell's output text, as it was shown.
    pub output: String,
}

/// What `get_notebook_state` returns as structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NotebookObservation {
    /// Every cell, in order.
    pub cells: Vec<NotebookCell>,
    /// The index of the cell `edit_and_execute_current_cell` replaces, if any.
    pub current_cell: Option<usize>,
}

/// What `final_answer` returns as structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AnswerObservation {
    /// Whether the answer was right (for a scored task: whether its score reached success).
    pub correct: bool,
    /// What it earned, from 0 to 1 (partial credit for a model's predictions or hidden tests;
    /// 1 or 0 otherwise).
    pub score: f64,
    /// A sentence about the verdict (never the expected answer).
    pub message: String,
}

const INSTRUCTIONS: &str = "A Python notebook on a real IPython kernel in a private sandbox \
(home /home/user). Call get_task() to read the task, then run code with \
add_and_execute_code_cell(code) (state persists between cells), fix the last cell with \
edit_and_execute_current_cell(code), run shell commands with execute_shell_command(command), \
and review the notebook with get_notebook_state(). When you know the answer, call \
final_answer(answer) once, giving only what the task asks for: it is graded and ends the \
episode.";

/// Jupyter's tools.
static TOOLS: LazyLock<ToolTable<JupyterEpisode>> = LazyLock::new(|| {
    ToolTable::new()
        .sync(
            tool(
                "get_task",
                "Show the task of this episode: what to find or produce, and the form final_answer expects.",
            )
            .title("Show the task")
            .output::<TaskObservation>(),
            JupyterEpisode::get_task,
        )
        .asynchronous(
            tool(
                "add_and_execute_code_cell",
                "Add a code cell at the end of the notebook and run it in the kernel. Variables, \
                 imports and files persist between cells. Returns stdout, stderr, the cell's \
                 value, images (as image content) and any error with its traceback; long output \
                 is cut in the middle with a marker.",
            )
            .title("Add and run a code cell")
            .effect(Effect::Destroys)
            .output::<CellObservation>()
            .example(CODE_EXAMPLE),
            |episode: &mut JupyterEpisode, args: CodeArgs| Box::pin(episode.run_cell(args.code, false)),
        )
        .asynchronous(
            tool(
                "edit_and_execute_current_cell",
                "Replace the code of the current (last added) cell and run it again, e.g. to fix \
                 an error. The kernel keeps what earlier runs defined. Returns the same as \
                 add_and_execute_code_cell.",
            )
            .title("Edit and rerun the current cell")
            .effect(Effect::Destroys)
            .output::<CellObservation>()
            .example(CODE_EXAMPLE),
            |episode: &mut JupyterEpisode, args: CodeArgs| Box::pin(episode.run_cell(args.code, true)),
        )
        .asynchronous(
            tool(
                "execute_shell_command",
                "Run a bash command in /home/user as its own process (no network). Returns its \
                 stdout, its stderr and its exit code. /tmp is shared with the kernel and later \
                 commands; keep files in /home/user.",
            )
            .title("Run a shell command")
            .effect(Effect::Destroys)
            .output::<ShellObservation>()
            .example(r#"{"command": "ls -la"}"#),
            |episode: &mut JupyterEpisode, args: ShellArgs| Box::pin(episode.run_shell(args.command)),
        )
        .sync(
            tool(
                "get_notebook_state",
                "Show every cell so far with its output, and which cell is current. Images are \
                 included only with include_images=true.",
            )
            .title("Show the notebook")
            .output::<NotebookObservation>()
            .example(r#"{"include_images": false}"#),
            |episode: &mut JupyterEpisode, args: NotebookArgs| {
                episode.notebook_state(args.include_images.unwrap_or(false))
            },
        )
        .asynchronous(
            tool(
                "final_answer",
                "Submit the final answer, in exactly the form the task asks for (e.g. only the \
                 number). It is graded at once and the episode ends; there is one try.",
            )
            .title("Submit the final answer")
            .effect(Effect::Changes)
            .output::<AnswerObservation>()
            .example(r#"{"answer": "42"}"#),
            |episode: &mut JupyterEpisode, args: AnswerArgs| Box::pin(episode.final_answer(args.answer)),
        )
});

/// The example the code-cell tools show when their arguments do not parse.
const CODE_EXAMPLE: &str = r#"{"code": "print(1 + 1)"}"#;

/// The Jupyter environment.
#[derive(Debug)]
pub struct Jupyter {
    client: E2bClient,
    tasks: Arc<JupyterTasks>,
    config: JupyterConfig,
}

impl Jupyter {
    /// A Jupyter environment whose sandboxes come from `client`, with the built-in tasks.
    pub fn new(client: E2bClient, config: JupyterConfig) -> Self {
        Self::with_tasks(client, config, JupyterTasks::builtin())
    }

    /// A Jupyter environment with a task list of one's own.
    pub fn with_tasks(client: E2bClient, config: JupyterConfig, tasks: JupyterTasks) -> Self {
        Self {
            client,
            tasks: Arc::new(tasks),
            config,
        }
    }

    fn reward(&self, spec: &EpisodeSpec) -> Result<RewardConfig, StartError> {
        let options: JupyterOptions = spec.options("Jupyter")?;
        for cost in [options.step_cost, options.error_cost]
            .into_iter()
            .flatten()
        {
            if !cost.is_finite() {
                return Err(StartError::InvalidOptions(
                    "step_cost and error_cost must be finite numbers".into(),
                ));
            }
        }
        Ok(RewardConfig::new(
            options.reward.unwrap_or(self.config.reward),
            options.step_cost.or(self.config.step_cost),
            options.error_cost.or(self.config.error_cost),
        ))
    }

    async fn start_episode(&self, spec: &EpisodeSpec) -> Result<JupyterEpisode, StartError> {
        let reward = self.reward(spec)?;
        let task = self.tasks.get(&spec.task).ok_or_else(|| {
            StartError::InvalidOptions(format!("unknown Jupyter task {:?}", spec.task))
        })?;
        progress::report(0.0, Some(2.0), "starting a sandbox").await;
        let sandbox = self
            .client
            .create(SANDBOX_LIFETIME)
            .await
            .map_err(|error| {
                StartError::Unavailable(format!("cannot create a sandbox: {error}"))
            })?;
        progress::report(1.0, Some(2.0), "preparing the task's files").await;
        if task.has_setup()
            && let Err(message) = run_setup(&sandbox, &task).await
        {
            if let Err(error) = sandbox.kill().await {
                tracing::warn!(%error, "cannot kill a sandbox whose setup failed");
            }
            return Err(StartError::Unavailable(message));
        }
        Ok(JupyterEpisode {
            sandbox: Some(sandbox),
            task,
            reward: EpisodeReward::new(reward),
            cells: Vec::new(),
            shown: Vec::new(),
            shell: Vec::new(),
            current: None,
            prompt_shown: false,
            cell_timeout: self.config.cell_timeout,
            refreshed: Instant::now(),
            graded: None,
        })
    }

    /// The terminal components of an episode of `record`'s task graded again: the answer it
    /// kept (or its last accepted `final_answer` call's), checked in a new sandbox holding the
    /// home folder it kept when the task is graded by a hidden check.
    async fn rescore_record(&self, record: &EpisodeRecord) -> Result<Rescored, RescoreError> {
        let task = self.tasks.get(&record.task).ok_or_else(|| {
            RescoreError::NotRecorded(format!("there is no Jupyter task {:?}", record.task))
        })?;
        let terminal = |verdict: &Verdict| {
            Ok(Rescored::Terminal(
                RewardConfig::default().terminal(verdict),
            ))
        };
        let unanswered = Verdict::Incorrect {
            reason: String::new(),
        };
        let answer = match kept_answer(record.graded.as_ref())? {
            Some(answer) => answer,
            None => match record.last_accepted("final_answer") {
                // Ended at the turn limit without an answer: nothing was right.
                None => return terminal(&unanswered),
                Some(call) if call.arguments_cut => {
                    return Err(RescoreError::NotRecorded(
                        "the answer was cut to fit the record, and the file keeps no graded state"
                            .into(),
                    ));
                }
                Some(call) => call
                    .arguments
                    .get("answer")
                    .and_then(serde_json::Value::as_str)
                    .ok_or_else(|| {
                        RescoreError::NotRecorded("the recorded final_answer has no answer".into())
                    })?
                    .to_owned(),
            },
        };
        let program = match task.grade(&answer, SANDBOX_HOME) {
            Grading::Done(verdict) => return terminal(&verdict),
            Grading::Predictions(grader) => {
                let file = kept_predictions(record.graded.as_ref())?;
                return terminal(&grader.grade(file.as_deref()));
            }
            Grading::Chart(grader) => {
                let shown = kept_chart(record.graded.as_ref())?;
                return terminal(&grader.grade(shown.as_ref()));
            }
            Grading::Check(program) => program,
        };
        let archive = kept_home(record.graded.as_ref())?;
        let unavailable = |what: String| RescoreError::Unavailable(what);
        let sandbox = self
            .client
            .create(SETUP_TIMEOUT * 2)
            .await
            .map_err(|error| {
                unavailable(format!("cannot create a sandbox for the check: {error}"))
            })?;
        let verdict = async {
            let path = format!(
                "{SANDBOX_HOME}/.mcpgym-restore-{}.tar.gz",
                uuid::Uuid::new_v4().simple()
            );
            sandbox
                .write_file(&path, archive)
                .await
                .map_err(|error| format!("cannot write the kept home folder: {error}"))?;
            let restored = run_program(&sandbox, "restore", &restore_program(&path))
                .await
                .map_err(|error| format!("cannot restore the kept home folder: {error}"))?;
            if restored.exit_code != Some(0) {
                return Err(format!(
                    "cannot restore the kept home folder: {}",
                    restored.stderr.trim()
                ));
            }
            let output = run_program(&sandbox, "check", program.source())
                .await
                .map_err(|error| format!("cannot run the hidden check: {error}"))?;
            match output.error {
                None => Ok(program.interpret(&output.stdout, output.exit_code)),
                Some(error) => Err(format!("the hidden check could not run: {error}")),
            }
        }
        .await;
        if let Err(error) = sandbox.kill().await {
            tracing::warn!(%error, "cannot kill a rescoring sandbox");
        }
        terminal(&verdict.map_err(unavailable)?)
    }
}

/// Prepares the task's starting folder: its files through the sandbox's file API (no process
/// needed), then its setup code, if any, as its own process. `Err` with a sentence when that
/// failed.
async fn run_setup(sandbox: &Sandbox, task: &Task) -> Result<(), String> {
    for (path, bytes) in task.files() {
        sandbox
            .write_file(&format!("{SANDBOX_HOME}/{path}"), bytes.clone())
            .await
            .map_err(|error| format!("cannot write the task's file {path}: {error}"))?;
    }
    if !task.has_setup_code() {
        return Ok(());
    }
    let program = task.setup_code_program(SANDBOX_HOME);
    let output = run_program(sandbox, "setup", &program)
        .await
        .map_err(|error| format!("cannot run the task's setup: {error}"))?;
    if output.exit_code == Some(0) {
        Ok(())
    } else {
        tracing::warn!(task = task.id(), stderr = %output.stderr, "task setup failed");
        Err(format!(
            "the setup of task {} failed in the sandbox (exit {:?}{})",
            task.id(),
            output.exit_code,
            output.error.map(|e| format!(", {e}")).unwrap_or_default()
        ))
    }
}

impl Environment for Jupyter {
    fn name(&self) -> &'static str {
        "jupyter"
    }

    /// An episode holds a jailed kernel: about 280 MiB once the data-science stack is
    /// imported (2 GiB at most), so half a GiB of the machine's memory each, and 32 per core.
    fn default_max_episodes(&self) -> Option<usize> {
        Some(mcpgym_env::machine::episodes_that_fit(512 << 20, 32))
    }

    fn instructions(&self) -> &str {
        INSTRUCTIONS
    }

    fn tasks(&self) -> &TaskSet {
        self.tasks.set()
    }

    fn tools(&self) -> &[Tool] {
        TOOLS.list()
    }

    fn exports(&self) -> &[&'static str] {
        &["notebook"]
    }

    fn reports_progress(&self) -> bool {
        true
    }

    fn lost_on_restart(&self) -> &'static str {
        "the server restarted; this episode's kernel was lost"
    }

    fn default_max_turns(&self) -> u32 {
        DEFAULT_MAX_TURNS
    }

    /// The family's reference solver, or a listed task's answer key (see [`crate::oracle`]).
    fn oracle(&self, task: &str) -> Option<Box<dyn mcpgym_env::Oracle>> {
        crate::oracle::oracle(&self.tasks.get(task)?)
    }

    fn rescore<'a>(
        &'a self,
        record: &'a EpisodeRecord,
    ) -> BoxFuture<'a, Result<Rescored, RescoreError>> {
        Box::pin(self.rescore_record(record))
    }

    /// The task's own text: generated from its id alone, so no sandbox is needed.
    fn task_prompt(&self, task: &str) -> Option<String> {
        self.tasks.get(task).map(|task| task.prompt().to_owned())
    }

    fn start<'a>(
        &'a self,
        spec: &'a EpisodeSpec,
    ) -> BoxFuture<'a, Result<Box<dyn EpisodeState>, StartError>> {
        Box::pin(async move {
            self.start_episode(spec)
                .await
                .map(|episode| Box::new(episode) as Box<dyn EpisodeState>)
        })
    }
}

/// How often a long cell reports that it is still running (to clients that asked for progress).
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// One episode: its sandbox, the notebook so far, the reward account.
pub struct JupyterEpisode {
    sandbox: Option<Sandbox>,
    task: Task,
    reward: EpisodeReward,
    cells: Vec<ExecutedCell>,
    /// The text shown for each cell, for `get_notebook_state`.
    shown: Vec<String>,
    /// Whether each cell is a shell command.
    shell: Vec<bool>,
    current: Option<usize>,
    prompt_shown: bool,
    cell_timeout: Duration,
    refreshed: Instant,
    /// What `final_answer` was graded on (see [`crate::graded`]), once it was.
    graded: Option<serde_json::Value>,
}

impl JupyterEpisode {
    fn sandbox(&self) -> Result<&Sandbox, StepOutcome> {
        self.sandbox
            .as_ref()
            .ok_or_else(|| StepOutcome::error("The sandbox is gone; start a new episode."))
    }

    /// Keeps the sandbox alive while the episode is used.
    async fn refresh(&mut self) {
        if self.refreshed.elapsed() < SANDBOX_LIFETIME / 4 {
            return;
        }
        if let Some(sandbox) = &self.sandbox {
            match sandbox.set_timeout(SANDBOX_LIFETIME).await {
                Ok(()) => self.refreshed = Instant::now(),
                Err(error) => tracing::warn!(%error, "cannot refresh a sandbox's lifetime"),
            }
        }
    }

    /// Puts the prompt above the first observation of the episode.
    fn get_task(&mut self, _: NoArguments) -> StepOutcome {
        self.prompt_shown = true;
        StepOutcome::ok(self.task.prompt()).with_structured(json!({
            "id": self.task.id(),
            "prompt": self.task.prompt(),
        }))
    }

    fn with_prompt(&mut self, mut outcome: StepOutcome) -> StepOutcome {
        if !self.prompt_shown {
            self.prompt_shown = true;
            outcome.content.insert(
                0,
                ContentBlock::text(format!("Task: {}\n---", self.task.prompt())),
            );
        }
        outcome
    }

    async fn run_cell(&mut self, code: String, replace: bool) -> StepOutcome {
        if replace && self.current.is_none() {
            return StepOutcome::error(
                "There is no current cell to edit yet; add one with add_and_execute_code_cell(code).",
            );
        }
        if code.trim().is_empty() {
            return StepOutcome::error("The code is empty; pass the Python to run as \"code\".");
        }
        let sandbox = match self.sandbox() {
            Ok(sandbox) => sandbox.clone(),
            Err(outcome) => return outcome,
        };
        let running = sandbox.execute(&code, None, self.cell_timeout);
        let execution = match progress::while_running("cell running", PROGRESS_EVERY, running).await
        {
            Ok(execution) => execution,
            Err(error) => {
                let sentence = format!(
                    "The kernel could not run the cell: {error}. Try again; if it persists, the sandbox is gone."
                );
                return sandbox_failure(&sandbox, &error, sentence).await;
            }
        };
        let (content, structured) =
            cell_observation(execution.execution_count, &execution.outputs, true);
        let shown = content_text(&content);
        let cell = ExecutedCell::code(code, execution.execution_count, execution.outputs);
        match (replace, self.current) {
            (true, Some(index)) => {
                self.cells[index] = cell;
                self.shown[index] = shown;
            }
            _ => {
                self.cells.push(cell);
                self.shown.push(shown);
                self.shell.push(false);
                self.current = Some(self.cells.len() - 1);
            }
        }
        let rewards = self.reward.cell(execution.raised);
        let mut outcome = StepOutcome {
            content,
            structured: serde_json::to_value(&structured).ok(),
            ..StepOutcome::default()
        };
        outcome.rewards = rewards;
        outcome
    }

    async fn run_shell(&mut self, command: String) -> StepOutcome {
        if command.trim().is_empty() {
            return StepOutcome::error(
                "The command is empty; pass a bash command line as \"command\".",
            );
        }
        let sandbox = match self.sandbox() {
            Ok(sandbox) => sandbox.clone(),
            Err(outcome) => return outcome,
        };
        let args = ["-l", "-c", command.as_str()];
        let running = sandbox.run("/bin/bash", &args, SANDBOX_HOME, self.cell_timeout);
        let output = match progress::while_running("command running", PROGRESS_EVERY, running).await
        {
            Ok(output) => output,
            Err(error) => {
                let sentence = format!("The command could not run: {error}.");
                return sandbox_failure(&sandbox, &error, sentence).await;
            }
        };
        let observation = ShellObservation {
            stdout: truncate(&output.stdout),
            stderr: truncate(&output.stderr),
            exit_code: output.exit_code,
            error: output.error.clone(),
        };
        let text = shell_text(&observation);
        let mut outputs = Vec::new();
        if !output.stdout.is_empty() {
            outputs.push(CellOutput::stdout(output.stdout));
        }
        if !output.stderr.is_empty() {
            outputs.push(CellOutput::stderr(output.stderr));
        }
        self.cells
            .push(ExecutedCell::shell(&command, None, outputs));
        self.shown.push(text.clone());
        self.shell.push(true);
        let raised = output.exit_code != Some(0);
        let mut outcome = StepOutcome::ok(text)
            .with_structured(serde_json::to_value(&observation).unwrap_or_default());
        outcome.rewards = self.reward.cell(raised);
        outcome
    }

    fn notebook_state(&self, include_images: bool) -> StepOutcome {
        let mut cells = Vec::new();
        let mut content = Vec::new();
        let mut text = String::new();
        for (index, cell) in self.cells.iter().enumerate() {
            let kind = if self.shell[index] { "shell" } else { "code" };
            let marker = if self.current == Some(index) {
                " (current)"
            } else {
                ""
            };
            text.push_str(&format!(
                "--- cell {index} [{kind}]{marker} ---\n{}\n--- output ---\n{}\n",
                cell.source, self.shown[index]
            ));
            if include_images {
                let (blocks, _) = cell_observation(cell.execution_count, &cell.outputs, true);
                content.extend(blocks.into_iter().skip(1));
            }
            cells.push(NotebookCell {
                index,
                kind: kind.into(),
                source: cell.source.clone(),
                output: self.shown[index].clone(),
            });
        }
        if cells.is_empty() {
            text.push_str("The notebook is empty.");
        }
        content.insert(0, ContentBlock::text(truncate(&text)));
        let observation = NotebookObservation {
            cells,
            current_cell: self.current,
        };
        StepOutcome {
            content,
            structured: serde_json::to_value(&observation).ok(),
            ..StepOutcome::default()
        }
    }

    async fn final_answer(&mut self, answer: String) -> StepOutcome {
        let mut home = None;
        let mut predictions = None;
        let mut chart = None;
        // Whatever the grader, the episode is over: nothing the agent started (a process in
        // the background, a kernel thread) goes on running, or writing, after the answer.
        let stopped = match self.sandbox() {
            Ok(sandbox) => stop_agent(&sandbox.clone()).await,
            Err(_) => Err("the sandbox is gone".to_owned()),
        };
        let verdict = match self.task.grade(&answer, SANDBOX_HOME) {
            Grading::Done(verdict) => {
                if let Err(what) = &stopped {
                    tracing::warn!(%what, "cannot stop the agent's processes after its answer");
                }
                verdict
            }
            Grading::Predictions(grader) => match (self.sandbox(), stopped) {
                (Ok(sandbox), Ok(())) => {
                    let sandbox = sandbox.clone();
                    match read_predictions(&sandbox, &grader.file).await {
                        Ok(file) => {
                            let verdict = match &file {
                                PredictionsFile::Read(bytes) => grader.grade(Some(bytes)),
                                PredictionsFile::Absent => grader.grade(None),
                                PredictionsFile::OverBudget(bytes) => Verdict::Incorrect {
                                    reason: format!(
                                        "{} holds {bytes} bytes, more than the {GRADED_BUDGET} a predictions file may",
                                        grader.file
                                    ),
                                },
                            };
                            predictions = Some(file);
                            verdict
                        }
                        Err(_) if !sandbox.host_answers().await => return host_gone(&sandbox),
                        Err(what) => {
                            tracing::warn!(%what, "cannot read the predictions file");
                            Verdict::Incorrect {
                                reason: "the predictions file could not be read from the sandbox"
                                    .into(),
                            }
                        }
                    }
                }
                (Err(_), _) => Verdict::Incorrect {
                    reason: "the sandbox is gone, so the predictions could not be read".into(),
                },
                (_, Err(what)) => {
                    // Reading the file while something of the agent's may still write it
                    // would grade a moving target.
                    tracing::warn!(%what, "cannot stop the agent's processes before reading its predictions");
                    Verdict::Incorrect {
                        reason: "the agent's processes could not be stopped, so the predictions were not read".into(),
                    }
                }
            },
            Grading::Chart(grader) => {
                let shown = crate::charts::last_chart(&self.cells).cloned();
                let verdict = grader.grade(shown.as_ref());
                chart = Some(shown);
                verdict
            }
            Grading::Check(program) => match self.sandbox() {
                Ok(sandbox) => {
                    let sandbox = sandbox.clone();
                    let checked = match stopped {
                        Ok(()) => run_check(&sandbox, &program, &mut home).await,
                        Err(what) => Err(what),
                    };
                    match checked {
                        Ok(verdict) => verdict,
                        // Not the agent's fault: no reward either way.
                        Err(_) if !sandbox.host_answers().await => return host_gone(&sandbox),
                        Err(what) => {
                            tracing::warn!(%what, "hidden check could not run");
                            Verdict::Incorrect {
                                reason: "the hidden check could not run in the sandbox".into(),
                            }
                        }
                    }
                }
                Err(_) => Verdict::Incorrect {
                    reason: "the sandbox is gone, so the hidden check could not run".into(),
                },
            },
        };
        self.graded = Some(graded_state(
            &answer,
            home.as_ref(),
            predictions.as_ref(),
            chart.as_ref(),
        ));
        let message = match &verdict {
            Verdict::Correct => "Correct. The episode is over.".to_owned(),
            Verdict::Incorrect { reason } => {
                format!("Incorrect: {reason}. The episode is over.")
            }
            Verdict::Scored { reason, .. } => format!("Scored: {reason}. The episode is over."),
        };
        let observation = AnswerObservation {
            correct: verdict.is_correct(),
            score: verdict.score(),
            message: message.clone(),
        };
        StepOutcome::ok(message)
            .with_structured(serde_json::to_value(&observation).unwrap_or_default())
            .finish(self.reward.terminal(&verdict))
    }
}

/// The end of an episode whose sandbox service stopped answering: its kernel and files were
/// there, so it cannot go on. Aborted, which pays nothing.
fn host_gone(sandbox: &Sandbox) -> StepOutcome {
    tracing::warn!(
        host = sandbox.host_url(),
        sandbox = sandbox.id(),
        "a sandbox service stopped answering; its episode is aborted"
    );
    StepOutcome::abort(
        "The sandbox service holding this episode's kernel and files stopped answering, so the episode cannot go on. Start a new episode.",
    )
}

/// What a failed request to the sandbox gives the agent: the end of the episode when the
/// service holding it is gone, else `sentence` (a passing fault it may retry).
async fn sandbox_failure(sandbox: &Sandbox, error: &E2bError, sentence: String) -> StepOutcome {
    if error.is_transport() && !sandbox.host_answers().await {
        return host_gone(sandbox);
    }
    StepOutcome::error(sentence)
}

/// Kills what the agent runs in the sandbox: every kernel context and every command, with what
/// they started in the background. `Err` says what could not be stopped.
async fn stop_agent(sandbox: &Sandbox) -> Result<(), String> {
    let failed = Err;
    match sandbox.contexts().await {
        Ok(contexts) => {
            for context in contexts {
                if let Err(error) = sandbox.delete_context(&context.id).await {
                    return failed(format!("cannot stop the kernel: {error}"));
                }
            }
        }
        Err(error) => return failed(format!("cannot list the kernels: {error}")),
    }
    match sandbox.processes().await {
        Ok(pids) => {
            for pid in pids {
                if let Err(error) = sandbox.kill_process(pid).await {
                    return failed(format!("cannot stop process {pid}: {error}"));
                }
            }
        }
        Err(error) => return failed(format!("cannot list the processes: {error}")),
    }
    Ok(())
}

/// With the agent stopped ([`stop_agent`]), keeps the home folder as the check will see it in
/// `home` (for rescoring), then runs the hidden check as its own process; `Err` says what kept
/// it from running.
async fn run_check(
    sandbox: &Sandbox,
    program: &crate::grading::CheckProgram,
    home: &mut Option<HomeSnapshot>,
) -> Result<Verdict, String> {
    let failed = Err;
    *home = snapshot_home(sandbox).await;
    match run_program(sandbox, "check", program.source()).await {
        Ok(output) if output.error.is_none() => {
            Ok(program.interpret(&output.stdout, output.exit_code))
        }
        Ok(output) => failed(output.error.unwrap_or_default()),
        Err(error) => failed(error.to_string()),
    }
}

/// The home folder as a gzipped tar, taken by a program of ours and removed from the folder
/// before the check runs; `None` (logged) when it could not be taken: grading goes on.
async fn snapshot_home(sandbox: &Sandbox) -> Option<HomeSnapshot> {
    let path = format!(
        "{SANDBOX_HOME}/.mcpgym-graded-{}.tar.gz",
        uuid::Uuid::new_v4().simple()
    );
    let taken = async {
        let output = run_program(sandbox, "snapshot", &snapshot_program(&path))
            .await
            .map_err(|error| error.to_string())?;
        let printed = output.stdout.trim();
        if let Some(bytes) = printed.strip_prefix("OVER ") {
            return Ok(HomeSnapshot::OverBudget(bytes.parse().unwrap_or(0)));
        }
        if printed != "OK" {
            return Err(format!(
                "the snapshot printed {printed:?}: {}",
                output.stderr.trim()
            ));
        }
        let archive = sandbox.read_file(&path).await.map_err(|e| e.to_string())?;
        let removed = sandbox
            .run(
                "python3",
                &["-I", "-c", &format!("import os; os.remove({path:?})")],
                SANDBOX_HOME,
                SETUP_TIMEOUT,
            )
            .await
            .map_err(|e| e.to_string())?;
        if removed.exit_code != Some(0) {
            return Err(format!(
                "cannot remove the snapshot: {}",
                removed.stderr.trim()
            ));
        }
        Ok(HomeSnapshot::Kept(archive))
    }
    .await;
    match taken {
        Ok(snapshot) => Some(snapshot),
        Err(error) => {
            tracing::warn!(%error, "cannot keep the home folder the hidden check reads");
            None
        }
    }
}

/// Reads a modelling task's predictions file after the agent's processes are stopped: its
/// size first (by a program of ours), so a huge file is refused rather than read.
async fn read_predictions(sandbox: &Sandbox, file: &str) -> Result<PredictionsFile, String> {
    let path = format!("{SANDBOX_HOME}/{file}");
    let probe = format!(
        "import os\np = {path:?}\nprint(os.path.getsize(p) if os.path.isfile(p) else -1)\n"
    );
    let output = run_program(sandbox, "size", &probe)
        .await
        .map_err(|error| error.to_string())?;
    let size: i64 = output.stdout.trim().parse().map_err(|_| {
        format!(
            "the size probe printed {:?}: {}",
            output.stdout.trim(),
            output.stderr.trim()
        )
    })?;
    match u64::try_from(size) {
        Err(_) => Ok(PredictionsFile::Absent),
        Ok(bytes) if bytes > GRADED_BUDGET as u64 => Ok(PredictionsFile::OverBudget(bytes)),
        Ok(_) => sandbox
            .read_file(&path)
            .await
            .map(PredictionsFile::Read)
            .map_err(|error| error.to_string()),
    }
}

/// Runs a setup or check program as its own process. The program travels as a file (a task's
/// files may be far larger than one command-line argument may be) under a name nobody can
/// guess, and deletes it as its first act, so nothing the agent runs later can read it; nothing
/// of the agent's runs meanwhile (setups run before its first cell, checks after its processes
/// are stopped).
async fn run_program(
    sandbox: &Sandbox,
    what: &str,
    program: &str,
) -> Result<crate::e2b::CommandOutput, crate::E2bError> {
    let path = format!(
        "{SANDBOX_HOME}/.mcpgym-{what}-{}.py",
        uuid::Uuid::new_v4().simple()
    );
    let source = format!("import os as _os\n_os.remove(__file__)\ndel _os\n{program}");
    sandbox.write_file(&path, source.into_bytes()).await?;
    sandbox
        .run("python3", &["-I", &path], SANDBOX_HOME, SETUP_TIMEOUT)
        .await
}

fn content_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

impl JupyterEpisode {
    /// The episode as a Jupyter notebook: the task as a markdown cell, then every cell run.
    fn notebook(&self) -> serde_json::Value {
        let mut cells = Vec::with_capacity(self.cells.len() + 1);
        cells.push(ExecutedCell::markdown(format!(
            "**Task `{}`**\n\n{}",
            self.task.id(),
            self.task.prompt()
        )));
        cells.extend(self.cells.iter().cloned());
        let mut metadata = serde_json::Map::new();
        metadata.insert("task".into(), self.task.id().into());
        crate::notebook::build_notebook(&cells, metadata)
    }
}

impl EpisodeState for JupyterEpisode {
    fn prompt(&mut self) -> Option<String> {
        self.prompt_shown = true;
        Some(self.task.prompt().to_owned())
    }

    fn graded(&self) -> Option<serde_json::Value> {
        self.graded.clone()
    }

    fn export(&self, name: &str) -> Option<Export> {
        (name == "notebook").then(|| Export {
            content_type: "application/x-ipynb+json",
            body: serde_json::to_vec_pretty(&self.notebook()).unwrap_or_default(),
        })
    }

    fn call<'a>(&'a mut self, tool: &'a str, arguments: JsonObject) -> BoxFuture<'a, StepOutcome> {
        Box::pin(async move {
            self.refresh().await;
            let outcome = TOOLS.call(&mut *self, tool, arguments).await;
            self.with_prompt(outcome)
        })
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        let sandbox = self.sandbox;
        Box::pin(async move {
            if let Some(sandbox) = sandbox
                && let Err(error) = sandbox.kill().await
            {
                tracing::warn!(%error, sandbox = sandbox.id(), "cannot kill an episode's sandbox");
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::e2b::E2bConfig;

    fn jupyter() -> Jupyter {
        let client = E2bClient::new(E2bConfig::single_url("http://127.0.0.1:1", None)).unwrap();
        Jupyter::new(client, JupyterConfig::default())
    }

    fn spec(options: serde_json::Value) -> EpisodeSpec {
        EpisodeSpec {
            task: "classic/0".into(),
            seed: 1,
            options: options.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn options_choose_the_reward_or_explain_themselves() {
        let env = jupyter();
        let shaped = env.reward(&spec(json!({"reward": "shaped"}))).unwrap();
        assert_eq!(shaped.mode, RewardMode::Shaped);
        assert_eq!(shaped.step_cost, 0.01);
        let custom = env.reward(&spec(json!({"step_cost": 0.5}))).unwrap();
        assert_eq!(custom.mode, RewardMode::Sparse);
        assert_eq!(custom.step_cost, 0.5);
        let Err(StartError::InvalidOptions(message)) = env.reward(&spec(json!({"rewards": 1})))
        else {
            panic!("unknown options are refused");
        };
        assert!(message.contains("allowed"), "{message}");
    }

    #[test]
    fn tools_are_annotated_and_self_contained() {
        let env = jupyter();
        let names: Vec<&str> = env.tools().iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "get_task",
                "add_and_execute_code_cell",
                "edit_and_execute_current_cell",
                "execute_shell_command",
                "get_notebook_state",
                "final_answer"
            ]
        );
        for tool in env.tools() {
            let schemas =
                serde_json::to_string(&(&tool.input_schema, &tool.output_schema)).unwrap();
            assert!(!schemas.contains("$ref"), "{}: {schemas}", tool.name);
            let read_only = tool.annotations.as_ref().unwrap().read_only_hint;
            let expected = matches!(tool.name.as_ref(), "get_task" | "get_notebook_state");
            assert_eq!(read_only, Some(expected), "{}", tool.name);
        }
        // Nothing a tool publishes names a grader.
        let all = serde_json::to_string(env.tools()).unwrap();
        assert!(!all.contains("grader") && !all.contains("17758"));
    }
}
