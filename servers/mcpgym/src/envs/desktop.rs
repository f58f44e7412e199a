//! `mcpgym desktop`: the desktop environment's flags, and the folder its episodes live in.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mcpgym_desktop::display::DisplayPrograms;
use mcpgym_desktop::env::{
    DEFAULT_SETTLE_MS, DesktopEnv, DesktopEnvConfig, RewardMode, display_choice,
};
use mcpgym_desktop::scale::{ScaleMode, Size};
use mcpgym_desktop::session::{DesktopConfig, DisplayChoice};
use mcpgym_desktop::task_file::load_task_file;
use mcpgym_desktop::tasks::DesktopTasks;
use mcpgym_desktop::tools::ActionSpace;
use mcpgym_desktop::worker::WorkerCommand;

use crate::choices;
use crate::jails::QuotaArgs;
use crate::registry::{Backing, Built, EnvFlags};

/// The desktop environment's own flags.
#[derive(Debug, Clone, clap::Args)]
pub struct DesktopFlags {
    /// `virtual`: a private Xvfb display per episode; `:N`: drive an existing display, one
    /// episode at a time.
    #[arg(long, value_name = "virtual|:N", default_value = "virtual")]
    display: String,
    /// Screen size of virtual displays.
    #[arg(long, value_name = "WxH", default_value = "1280x800")]
    size: Size,
    /// Screenshot size for the model (`auto`: at most 1568 px on the long edge and about
    /// 1.15 megapixels; `xga` 1024x768; `wxga` 1280x800; `none`; or `WxH`). The model's
    /// coordinates are mapped back to the screen.
    #[arg(long, value_name = "auto|xga|wxga|none|WxH", default_value = "auto")]
    scale: ScaleMode,
    /// The action format the tools speak.
    #[arg(long, value_parser = choices::parser::<ActionSpace>(), default_value_t = ActionSpace::Anthropic)]
    action_space: ActionSpace,
    /// Milliseconds to let the screen settle before the screenshot an action returns.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_SETTLE_MS)]
    settle_ms: u64,
    /// Do not return a screenshot after actions (the agent calls `screenshot` itself).
    #[arg(long)]
    no_action_screenshots: bool,
    /// List `run_command` to the agent (it lets the agent bypass the GUI).
    #[arg(long)]
    allow_shell: bool,
    /// How the grade is paid.
    #[arg(long, value_parser = choices::parser::<RewardMode>(), default_value_t = RewardMode::Sparse)]
    reward: RewardMode,
    /// Serve the tasks of this JSON Lines file instead of the built-in tasks and families (one
    /// task per line: id, split, prompt, apps, files, pages, setup, checks; see the README's
    /// "Your own desktop tasks").
    #[arg(long, value_name = "FILE")]
    tasks: Option<std::path::PathBuf>,
}

impl DesktopFlags {
    /// The configuration the flags describe, with desktops made as `desktop` says except for
    /// the display, which the flags give.
    fn config(&self, mut desktop: DesktopConfig) -> anyhow::Result<DesktopEnvConfig> {
        desktop.display = display_choice(&self.display, self.size)?;
        Ok(DesktopEnvConfig {
            desktop,
            scale: self.scale,
            action_space: self.action_space,
            settle: (!self.no_action_screenshots).then(|| Duration::from_millis(self.settle_ms)),
            allow_shell: self.allow_shell,
            reward: self.reward,
        })
    }
}

impl EnvFlags for DesktopFlags {
    const NAME: &'static str = "desktop";
    const ABOUT: &'static str = "Desktop: use a real Linux desktop (a private Xvfb display per \
        episode) through screenshots, mouse and keyboard, in the Anthropic, Qwen3-VL or OpenAI \
        action format; graded by the desktop's files, windows and clipboard when the episode \
        ends";
    const HEADING: &'static str = "Desktop";
    const JAILS: bool = true;

    /// Episodes live in a folder of this process's own, removed when the environment is
    /// released.
    fn build(self, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        // Read and checked before any desktop starts: a bad file fails at once, with its line.
        let tasks = match &self.tasks {
            Some(path) => DesktopTasks::from_tasks(load_task_file(path)?),
            None => DesktopTasks::builtin(),
        };
        let root = DesktopRoot::new()?;
        let config = self.config(root.config(quotas)?)?;
        Ok(Built {
            env: Arc::new(DesktopEnv::with_tasks(config, tasks)),
            backing: Some(Box::new(root)),
        })
    }
}

/// The folder desktop episodes live in (`$TMPDIR/mcpgym-desktop-PID`), removed when the
/// process ends normally.
struct DesktopRoot(std::path::PathBuf);

impl DesktopRoot {
    fn new() -> anyhow::Result<Self> {
        let root = std::env::temp_dir().join(format!("mcpgym-desktop-{}", std::process::id()));
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create {}", root.display()))?;
        Ok(Self(root))
    }

    /// Desktops made under this root by this binary's `desktop-worker`.
    fn config(&self, quotas: &QuotaArgs) -> anyhow::Result<DesktopConfig> {
        Ok(DesktopConfig {
            display: DisplayChoice::Virtual(Size {
                width: 1280,
                height: 800,
            }),
            programs: DisplayPrograms::default(),
            worker: WorkerCommand::current_exe().context("cannot find this executable")?,
            bwrap: "bwrap".into(),
            root: self.0.clone(),
            limits: quotas.apply(DesktopConfig::default_limits()),
        })
    }
}

impl Backing for DesktopRoot {
    fn release(self: Box<Self>) {}
}

impl Drop for DesktopRoot {
    /// Unmounts the episodes' size-limited homes, then removes the folder.
    fn drop(&mut self) {
        if let Err(error) = mcpgym_sandbox::jail::remove_root(&self.0) {
            tracing::warn!(folder = %self.0.display(), %error, "cannot remove the desktops' folder");
        }
    }
}
