//! The desktop environment: tools in one of three action spaces, one desktop per episode, and
//! a grader that checks the desktop's real state when the episode ends.
//!
//! - `start` makes the episode's home, writes the task's files, starts a display (or takes the
//!   existing one), a worker on it and the task's applications in a jail, and waits until
//!   their windows are up.
//! - Every action is translated into a canonical [`Action`] in screen pixels (coordinates
//!   bounds-checked in the model's space and scaled), performed by the worker, and — for
//!   actions that change the screen — answered with a fresh screenshot after a settle delay.
//! - `terminate(status)` (or the turn limit) ends the episode: the grader reads the home
//!   folder, the window titles and the clipboard. The claimed status is recorded, never paid.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use mcpgym_env::rescore::{EpisodeRecord, RescoreError, Rescored};
use mcpgym_env::reward::Reward;
use mcpgym_env::tools::ToolTable;
use mcpgym_env::{
    BoxFuture, Environment, EpisodeSpec, EpisodeState, StartError, StepOutcome, TaskSet,
};

use crate::action::{Action, Point, Rect, TerminateStatus};
use crate::display::DisplayError;
use crate::grading::{DesktopSnapshot, Grade, grade, kept};
use crate::input::plan;
use crate::scale::{ScaleMode, Scaling, Size};
use crate::session::{Desktop, DesktopConfig, DisplayChoice, JAIL_HOME, Setup};
use crate::tasks::{DesktopTask, DesktopTasks};
use crate::tools::{ActionSpace, table};
use crate::worker::{Reply, Request, WorkerError};

/// Default tool calls per episode.
pub const DEFAULT_MAX_TURNS: u32 = 50;
/// Default settle delay before an action's screenshot, in milliseconds.
pub const DEFAULT_SETTLE_MS: u64 = 150;
/// How long `run_command` may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// How long start-up waits for the task's windows to appear.
const WINDOWS_TIMEOUT: Duration = Duration::from_secs(8);
/// The longest edge of an image sent to the model (Claude's limit).
const MAX_IMAGE_EDGE: u32 = 1568;

mcpgym_env::choices! {
    /// How the grade becomes reward.
    pub enum RewardMode: "reward mode" {
        /// `success`: 1 when every check of the task passes, else 0.
        Sparse = "sparse",
        /// `success`: the fraction of the task's checks that pass.
        Partial = "partial",
    }
}

/// The display a `--display` value names: `virtual` is a private Xvfb display of `size` per
/// episode; `:N` (or `:N.S`) is that existing display.
pub fn display_choice(name: &str, size: Size) -> Result<DisplayChoice, DisplayError> {
    if name == "virtual" {
        return Ok(DisplayChoice::Virtual(size));
    }
    crate::display::parse_display_name(name)?;
    Ok(DisplayChoice::Existing(name.to_owned()))
}

/// How the desktop environment is set up.
#[derive(Debug, Clone)]
pub struct DesktopEnvConfig {
    /// How desktops are made.
    pub desktop: DesktopConfig,
    /// Screenshot scaling.
    pub scale: ScaleMode,
    /// The action format.
    pub action_space: ActionSpace,
    /// Settle delay before an action's screenshot; `None` returns no screenshot.
    pub settle: Option<Duration>,
    /// Whether `run_command` is listed to the agent.
    pub allow_shell: bool,
    /// The default reward mode.
    pub reward: RewardMode,
}

impl DesktopEnvConfig {
    /// The defaults of every flag, with desktops made as `desktop` says.
    pub fn with_defaults(desktop: DesktopConfig) -> Self {
        Self {
            desktop,
            scale: ScaleMode::default(),
            action_space: ActionSpace::Anthropic,
            settle: Some(Duration::from_millis(DEFAULT_SETTLE_MS)),
            allow_shell: false,
            reward: RewardMode::Sparse,
        }
    }
}

/// Options an episode may set (`POST /episodes {"options": {...}}`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DesktopOptions {
    /// Overrides `--reward`.
    reward: Option<RewardMode>,
}

const INSTRUCTIONS: &str = "A Linux desktop (X11, openbox) with the task's applications open. \
Call get_task() to read the task. Look with screenshot, act with the mouse and keyboard tools; \
coordinates are pixels of the screenshots. When the desktop is in the state the task asks \
for, call terminate(status): the desktop itself (files, window titles, clipboard) is graded.";

/// The desktop environment.
#[derive(Debug)]
pub struct DesktopEnv {
    config: DesktopEnvConfig,
    tools: Arc<ToolTable<DesktopEpisode>>,
    tasks: DesktopTasks,
    /// One episode at a time on an existing display.
    exclusive: Option<Arc<Semaphore>>,
}

impl DesktopEnv {
    /// The environment with the built-in tasks.
    pub fn new(config: DesktopEnvConfig) -> Self {
        Self::with_tasks(config, DesktopTasks::builtin())
    }

    /// The environment serving `tasks`.
    pub fn with_tasks(config: DesktopEnvConfig, tasks: DesktopTasks) -> Self {
        let exclusive = matches!(config.desktop.display, DisplayChoice::Existing(_))
            .then(|| Arc::new(Semaphore::new(1)));
        Self {
            tools: Arc::new(table(config.action_space, config.allow_shell)),
            tasks,
            exclusive,
            config,
        }
    }

    async fn start_episode(&self, spec: &EpisodeSpec) -> Result<DesktopEpisode, StartError> {
        let options: DesktopOptions = spec.options("desktop")?;
        let task = self.tasks.get(&spec.task).ok_or_else(|| {
            StartError::InvalidOptions(format!("unknown desktop task {:?}", spec.task))
        })?;
        let permit = match &self.exclusive {
            Some(semaphore) => Some(semaphore.clone().try_acquire_owned().map_err(|_| {
                StartError::Unavailable(
                    "the display is in use by another episode; end that episode first (or use --display virtual for one display per episode)".into(),
                )
            })?),
            None => None,
        };
        let name = format!("{:016x}", spec.rng().next_u64() ^ unique());
        let started = std::time::Instant::now();
        let files = task.files();
        let setup = Setup {
            files: &files,
            pages: task.pages(),
            command: task.setup(),
            apps: task.launch(),
        };
        let mut desktop = Desktop::start(&self.config.desktop, &name, setup)
            .await
            .map_err(|error| StartError::Unavailable(format!("cannot start a desktop: {error}")))?;
        let display_ready = started.elapsed();
        wait_for_windows(&mut desktop, task.launch().len()).await;
        tracing::debug!(
            task = %task.id,
            display = desktop.display_name(),
            ?display_ready,
            windows_ready = ?started.elapsed(),
            "desktop started"
        );
        let scaling = Scaling::new(desktop.screen(), self.config.scale);
        Ok(DesktopEpisode {
            tools: Arc::clone(&self.tools),
            desktop: Some(desktop),
            task,
            scaling,
            settle: self.config.settle,
            reward: options.reward.unwrap_or(self.config.reward),
            prompt_shown: false,
            grade: None,
            graded: None,
            claimed: None,
            _permit: permit,
        })
    }
}

impl DesktopEnv {
    async fn rescore_record(&self, record: &EpisodeRecord) -> Result<Rescored, RescoreError> {
        let task = self.tasks.get(&record.task).ok_or_else(|| {
            RescoreError::NotRecorded(format!("there is no desktop task {:?}", record.task))
        })?;
        let restorable = kept::read(record.graded.as_ref()).map_err(RescoreError::NotRecorded)?;
        let mode: RewardMode = restorable.reward.parse().map_err(|e| {
            RescoreError::NotRecorded(format!("the graded state's reward mode: {e}"))
        })?;
        let home = std::env::temp_dir().join(format!(
            "mcpgym-rescore-{}-{:016x}",
            std::process::id(),
            unique().wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ));
        let unavailable = |e: std::io::Error| {
            RescoreError::Unavailable(format!("cannot make a home folder: {e}"))
        };
        tokio::fs::create_dir(&home).await.map_err(unavailable)?;
        let graded = match restorable.restore(&home).await {
            Ok(snapshot) => Ok(grade(&task, &snapshot).await),
            Err(error) => Err(RescoreError::NotRecorded(error)),
        };
        let _ = tokio::fs::remove_dir_all(&home).await;
        Ok(Rescored::Terminal(terminal_reward(mode, &graded?)))
    }
}

/// A number that differs between episodes started with the same seed.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    (u64::from(std::process::id()) << 32) ^ NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Waits until the task's applications have mapped their windows and one has the focus (or
/// a timeout), so the first screenshot shows them and the first keys reach them.
async fn wait_for_windows(desktop: &mut Desktop, apps: usize) {
    if apps == 0 {
        return;
    }
    let deadline = tokio::time::Instant::now() + WINDOWS_TIMEOUT;
    while tokio::time::Instant::now() < deadline {
        match desktop.request(&Request::Windows).await {
            // Input typed before a window has the focus would be lost.
            Ok(Reply::Windows {
                titles, focused, ..
            }) if titles.len() >= apps && focused => return,
            Ok(_) => {}
            Err(_) => return,
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    tracing::warn!("the task's windows did not all appear in time");
}

impl Environment for DesktopEnv {
    fn name(&self) -> &'static str {
        "desktop"
    }

    /// An episode holds a display and its applications: 70–290 MiB (PSS), and about 24
    /// desktops per core at one action a second (see the README's capacity table).
    fn default_max_episodes(&self) -> Option<usize> {
        Some(mcpgym_env::machine::episodes_that_fit(300 << 20, 24))
    }

    fn instructions(&self) -> &str {
        INSTRUCTIONS
    }

    fn tasks(&self) -> &TaskSet {
        self.tasks.set()
    }

    fn tools(&self) -> &[Tool] {
        self.tools.list()
    }

    fn lost_on_restart(&self) -> &'static str {
        "the server restarted; this episode's display was lost"
    }

    fn default_max_turns(&self) -> u32 {
        DEFAULT_MAX_TURNS
    }

    /// The task's demo (see [`crate::oracle`]): only with `run_command` served, in the
    /// anthropic action space.
    fn oracle(&self, task: &str) -> Option<Box<dyn mcpgym_env::Oracle>> {
        let playable =
            self.config.allow_shell && self.config.action_space == ActionSpace::Anthropic;
        if !playable {
            return None;
        }
        Some(crate::oracle::oracle(self.tasks.get(task)?))
    }

    /// Grades the files, titles, clipboard and page requests the end record kept, in a home
    /// folder rebuilt from them: no display is needed.
    fn rescore<'a>(
        &'a self,
        record: &'a EpisodeRecord,
    ) -> BoxFuture<'a, Result<Rescored, RescoreError>> {
        Box::pin(self.rescore_record(record))
    }

    /// The task's own text: generated from its id alone, so no display is needed.
    fn task_prompt(&self, task: &str) -> Option<String> {
        self.tasks.get(task).map(|task| task.instruction.clone())
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

/// One episode: its desktop, its task, how it scales and what it was graded.
pub struct DesktopEpisode {
    tools: Arc<ToolTable<DesktopEpisode>>,
    desktop: Option<Desktop>,
    task: Arc<DesktopTask>,
    scaling: Scaling,
    settle: Option<Duration>,
    reward: RewardMode,
    prompt_shown: bool,
    grade: Option<Grade>,
    /// What the final grade read ([`kept`]), for the end record.
    graded: Option<Value>,
    claimed: Option<TerminateStatus>,
    _permit: Option<OwnedSemaphorePermit>,
}

/// The terminal reward `mode` pays for a grade.
fn terminal_reward(mode: RewardMode, grade: &Grade) -> Vec<Reward> {
    let value = match mode {
        RewardMode::Sparse => f64::from(u8::from(grade.passed)),
        RewardMode::Partial if grade.checks.is_empty() => f64::from(u8::from(grade.passed)),
        RewardMode::Partial => {
            grade.checks.iter().filter(|c| c.passed).count() as f64 / grade.checks.len() as f64
        }
    };
    vec![Reward::new("success", value)]
}

/// What went wrong performing an action.
enum Failure {
    /// The action was refused; the episode goes on.
    Refused(String),
    /// The display or its worker is gone; the episode must end.
    DisplayGone(String),
    /// The worker failed; whether the display is gone is decided by looking at it.
    Worker(WorkerError),
}

impl From<WorkerError> for Failure {
    fn from(error: WorkerError) -> Self {
        Failure::Worker(error)
    }
}

impl DesktopEpisode {
    /// How screenshots and coordinates scale between the screen and the model.
    pub(crate) fn scaling(&self) -> &Scaling {
        &self.scaling
    }

    /// `get_task`: the instruction, which then need not head the next observation.
    pub(crate) fn get_task(&mut self) -> StepOutcome {
        self.prompt_shown = true;
        StepOutcome::ok(self.task.instruction.as_str())
            .with_structured(json!({"id": self.task.id, "instruction": self.task.instruction}))
    }

    fn desktop(&mut self) -> Result<&mut Desktop, Failure> {
        self.desktop
            .as_mut()
            .ok_or_else(|| Failure::DisplayGone("the desktop is already closed".into()))
    }

    /// A screenshot of the whole screen, scaled for the model.
    async fn screenshot(&mut self) -> Result<ContentBlock, Failure> {
        let resize_to = (!self.scaling.is_identity())
            .then_some((self.scaling.model.width, self.scaling.model.height));
        let reply = self
            .desktop()?
            .request(&Request::Capture {
                region: None,
                resize_to,
            })
            .await?;
        png_content(reply)
    }

    /// Performs an action; the content the model sees.
    async fn perform(&mut self, action: &Action) -> Result<Vec<ContentBlock>, Failure> {
        let (sx, sy) = (self.scaling.model.width, self.scaling.model.height);
        match action {
            Action::Screenshot => Ok(vec![self.screenshot().await?]),
            Action::ScreenSize => Ok(vec![ContentBlock::text(format!("{sx}x{sy}"))]),
            Action::CursorPosition => {
                let reply = self.desktop()?.request(&Request::Cursor).await?;
                let Reply::Cursor { x, y } = reply else {
                    return Err(Failure::DisplayGone(format!("unexpected reply {reply:?}")));
                };
                let point = Point {
                    x: x.max(0) as u32,
                    y: y.max(0) as u32,
                };
                let (mx, my) = self.scaling.to_model(point);
                Ok(vec![ContentBlock::text(format!("X={mx},Y={my}"))])
            }
            Action::Wait { duration } => {
                tokio::time::sleep(*duration).await;
                Ok(vec![self.screenshot().await?])
            }
            Action::Zoom { region } => Ok(vec![self.zoom(*region).await?]),
            Action::Answer { text } => {
                Ok(vec![ContentBlock::text(format!("Answer recorded: {text}"))])
            }
            Action::Terminate { .. } => Ok(Vec::new()),
            input => {
                let Some(steps) = plan(input) else {
                    return Err(Failure::Refused("this action is not supported".into()));
                };
                self.desktop()?.request(&Request::Input { steps }).await?;
                let mut content = vec![ContentBlock::text(describe(input, &self.scaling))];
                if let Some(settle) = self.settle {
                    tokio::time::sleep(settle).await;
                    content.push(self.screenshot().await?);
                }
                Ok(content)
            }
        }
    }

    /// A region at full resolution (shrunk only if it exceeds the image size limit).
    async fn zoom(&mut self, region: Rect) -> Result<ContentBlock, Failure> {
        let (width, height) = (region.x2 - region.x1, region.y2 - region.y1);
        let long = width.max(height);
        let resize_to = (long > MAX_IMAGE_EDGE).then(|| {
            (
                (u64::from(width) * u64::from(MAX_IMAGE_EDGE) / u64::from(long)).max(1) as u32,
                (u64::from(height) * u64::from(MAX_IMAGE_EDGE) / u64::from(long)).max(1) as u32,
            )
        });
        let reply = self
            .desktop()?
            .request(&Request::Capture {
                region: Some(region),
                resize_to,
            })
            .await?;
        png_content(reply)
    }

    /// What the grader judges: the desktop as it is now (`None` once it is closed).
    async fn snapshot(&mut self) -> Option<DesktopSnapshot> {
        let desktop = self.desktop.as_mut()?;
        let window_titles = match desktop.request(&Request::Windows).await {
            Ok(Reply::Windows { titles, .. }) => titles,
            _ => Vec::new(),
        };
        Some(DesktopSnapshot {
            home: desktop.home().to_path_buf(),
            window_titles,
            clipboard: desktop.clipboard().await,
            page_requests: desktop.page_requests(),
        })
    }

    /// The terminal reward for a grade.
    fn terminal(&self, grade: &Grade) -> Vec<Reward> {
        terminal_reward(self.reward, grade)
    }

    /// Grades the desktop for the last time, keeps what the grade read (for `mcpgym rescore`)
    /// and stops it: an ended episode holds no display, applications or page server, whether
    /// or not its client ever deletes it.
    async fn final_grade(&mut self) -> Grade {
        let grade = match self.snapshot().await {
            Some(snapshot) => {
                let grade = grade(&self.task, &snapshot).await;
                self.graded =
                    Some(kept::keep(self.task.checks(), &snapshot, &self.reward.to_string()).await);
                grade
            }
            None => Grade {
                passed: false,
                checks: Vec::new(),
            },
        };
        if let Some(desktop) = self.desktop.take() {
            desktop.stop().await;
        }
        grade
    }

    /// Ends the episode: grade, stop the desktop, pay.
    async fn finish(&mut self, status: Option<TerminateStatus>) -> StepOutcome {
        self.claimed = status;
        let grade = self.final_grade().await;
        let terminal = self.terminal(&grade);
        let passed = grade.checks.iter().filter(|c| c.passed).count();
        let verdict = if grade.passed {
            "The task is complete".to_owned()
        } else {
            format!(
                "The task is not complete ({passed} of {} checks pass)",
                grade.checks.len()
            )
        };
        let claim = match status {
            Some(TerminateStatus::Success) => "you reported success",
            Some(TerminateStatus::Failure) => "you reported failure",
            None => "the episode ended",
        };
        let structured = json!({
            "passed": grade.passed,
            "checks_passed": passed,
            "checks": grade.checks.len(),
            "claimed": status,
        });
        self.grade = Some(grade);
        StepOutcome::ok(format!("{verdict}; {claim}. The episode is over."))
            .with_structured(structured)
            .finish(terminal)
    }

    fn with_prompt(&mut self, mut outcome: StepOutcome) -> StepOutcome {
        if !self.prompt_shown {
            self.prompt_shown = true;
            outcome.content.insert(
                0,
                ContentBlock::text(format!("Task: {}\n---", self.task.instruction)),
            );
        }
        outcome
    }

    /// `run_command`: a shell command in the episode's jail.
    pub(crate) async fn run_command(&mut self, arguments: JsonObject) -> StepOutcome {
        let command = match arguments.get("command") {
            Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
            _ => {
                return StepOutcome::error(
                    "run_command takes {\"command\": \"ls -l\"}: a non-empty /bin/sh command line",
                );
            }
        };
        let Some(desktop) = self.desktop.as_ref() else {
            return StepOutcome::error("The desktop is closed.");
        };
        match desktop.run_command(&command, COMMAND_TIMEOUT).await {
            Ok(output) => {
                let status = match (output.timed_out, output.exit_code) {
                    (true, _) => format!("killed after {} s", COMMAND_TIMEOUT.as_secs()),
                    (false, Some(code)) => format!("exit code {code}"),
                    (false, None) => "killed by a signal".into(),
                };
                StepOutcome::ok(format!(
                    "{status} (in {JAIL_HOME})\n--- stdout\n{}\n--- stderr\n{}",
                    output.stdout, output.stderr
                ))
                .with_structured(json!({
                    "exit_code": output.exit_code,
                    "stdout": output.stdout,
                    "stderr": output.stderr,
                    "timed_out": output.timed_out,
                }))
            }
            Err(error) => StepOutcome::error(format!("The command could not run: {error}")),
        }
    }

    /// Performs the action a tool call asked for (or answers why it cannot).
    pub(crate) async fn act(&mut self, action: Result<Action, String>) -> StepOutcome {
        let action = match action {
            Ok(action) => action,
            Err(message) => return self.with_prompt(StepOutcome::error(message)),
        };
        if let Action::Terminate { status } = action {
            return self.finish(Some(status)).await;
        }
        let failure = match self.perform(&action).await {
            Ok(content) => {
                return self.with_prompt(StepOutcome {
                    content,
                    ..StepOutcome::default()
                });
            }
            Err(Failure::Worker(error)) => {
                let alive = self.desktop.as_mut().is_some_and(Desktop::is_alive);
                match error {
                    WorkerError::Failed(message) if alive => {
                        Failure::Refused(format!("The desktop could not do that: {message}."))
                    }
                    other => Failure::DisplayGone(other.to_string()),
                }
            }
            Err(other) => other,
        };
        match failure {
            Failure::Refused(message) | Failure::Worker(WorkerError::Failed(message)) => {
                self.with_prompt(StepOutcome::error(message))
            }
            Failure::Worker(error) => self.with_prompt(StepOutcome::error(error.to_string())),
            Failure::DisplayGone(message) => {
                tracing::warn!(task = %self.task.id, %message, "an episode's display stopped");
                // The environment failed, not the agent: aborted, so trainers can drop it.
                let outcome = StepOutcome::abort(format!(
                    "The desktop's display stopped working ({message}); the episode is over and was not graded. Start a new episode."
                ));
                if let Some(desktop) = self.desktop.take() {
                    tokio::spawn(desktop.stop());
                }
                outcome
            }
        }
    }
}

/// The PNG of a capture reply as MCP image content (the worker's base64, not copied).
fn png_content(reply: Reply) -> Result<ContentBlock, Failure> {
    match reply {
        Reply::Png { base64, .. } => Ok(ContentBlock::image(base64, "image/png")),
        other => Err(Failure::DisplayGone(format!(
            "unexpected reply {other:?} to a capture"
        ))),
    }
}

/// A short line saying what an input action did, in the model's coordinates.
fn describe(action: &Action, scaling: &Scaling) -> String {
    let at = |p: &Point| {
        let (x, y) = scaling.to_model(*p);
        format!("[{x}, {y}]")
    };
    match action {
        Action::MouseMove { to } => format!("Moved the pointer to {}.", at(to)),
        Action::Click {
            at: Some(p),
            count,
            button,
            ..
        } => format!("Clicked {button:?} ×{count} at {}.", at(p)).to_lowercase(),
        Action::Click { count, button, .. } => {
            format!("Clicked {button:?} ×{count} at the pointer.").to_lowercase()
        }
        Action::Drag { path } => match (path.first(), path.last()) {
            (Some(a), Some(b)) => format!("Dragged from {} to {}.", at(a), at(b)),
            _ => "Dragged.".into(),
        },
        Action::DragFromPointer { to } => format!("Dragged from the pointer to {}.", at(to)),
        Action::MouseDown { .. } => "Pressed the button.".into(),
        Action::MouseUp { .. } => "Released the button.".into(),
        Action::Scroll {
            direction, amount, ..
        } => format!("Scrolled {direction:?} {amount} clicks.").to_lowercase(),
        Action::Type { text } => format!("Typed {} characters.", text.chars().count()),
        Action::Key { chords } => format!("Pressed {} key chord(s).", chords.len()),
        Action::HoldKey { duration, .. } => {
            format!("Held the key for {:.1} s.", duration.as_secs_f64())
        }
        _ => "Done.".into(),
    }
}

impl EpisodeState for DesktopEpisode {
    fn prompt(&mut self) -> Option<String> {
        self.prompt_shown = true;
        Some(self.task.instruction.to_owned())
    }

    fn call<'a>(&'a mut self, tool: &'a str, arguments: JsonObject) -> BoxFuture<'a, StepOutcome> {
        let tools = Arc::clone(&self.tools);
        tools.call(self, tool, arguments)
    }

    fn reveal(&self) -> JsonObject {
        let mut reveal = JsonObject::new();
        if let Some(grade) = &self.grade {
            reveal.insert("passed".into(), grade.passed.into());
            reveal.insert(
                "checks".into(),
                grade
                    .checks
                    .iter()
                    .map(
                        |c| json!({"check": c.description, "passed": c.passed, "detail": c.detail}),
                    )
                    .collect(),
            );
        }
        if let Some(claimed) = self.claimed {
            reveal.insert("claimed".into(), json!(claimed));
        }
        reveal
    }

    fn over_message(&self) -> &str {
        "The episode is over (the desktop was graded); start a new episode."
    }

    fn graded(&self) -> Option<Value> {
        self.graded.clone()
    }

    fn finish_at_turn_limit(&mut self) -> BoxFuture<'_, (Option<String>, Vec<Reward>)> {
        Box::pin(async move {
            let grade = self.final_grade().await;
            let terminal = self.terminal(&grade);
            let note = if grade.passed {
                "The desktop was graded: the task is complete."
            } else {
                "The desktop was graded: the task is not complete."
            };
            self.grade = Some(grade);
            (Some(note.to_owned()), terminal)
        })
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        let desktop = self.desktop;
        Box::pin(async move {
            if let Some(desktop) = desktop {
                desktop.stop().await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpgym_env::Choice;

    #[test]
    fn reward_mode_names_read_back_and_unknown_ones_list_the_choices() {
        for &mode in RewardMode::ALL {
            assert_eq!(mode.to_string().parse::<RewardMode>(), Ok(mode));
            let json = Value::String(mode.to_string());
            assert_eq!(serde_json::from_value::<RewardMode>(json).unwrap(), mode);
        }
        let error = "full".parse::<RewardMode>().unwrap_err().to_string();
        assert!(
            error.contains("\"full\"") && error.contains("`partial`"),
            "{error}"
        );
    }

    #[test]
    fn display_names_are_virtual_or_an_existing_display() {
        let size = Size {
            width: 800,
            height: 600,
        };
        assert_eq!(
            display_choice("virtual", size).unwrap(),
            DisplayChoice::Virtual(size)
        );
        assert_eq!(
            display_choice(":3", size).unwrap(),
            DisplayChoice::Existing(":3".into())
        );
        assert!(display_choice("3", size).is_err());
    }
}
