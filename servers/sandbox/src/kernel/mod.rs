//! One Jupyter kernel in its own jail, driven over ZMQ: IPython by default, or the kernel of
//! another [`Language`] (Deno for JavaScript and TypeScript, IRkernel for R, a bash behind
//! IPython for Bash) set in [`KernelConfig::language`].
//!
//! ```no_run
//! # async fn demo() -> mcpgym_sandbox::Result<()> {
//! use std::time::Duration;
//! use mcpgym_sandbox::{JailConfig, Kernel, KernelConfig};
//!
//! let mut kernel = Kernel::start(KernelConfig::new(JailConfig::new("/tmp/sandbox-1"))).await?;
//! let run = kernel.execute("x = 6 * 7\nx", Duration::from_secs(10)).await?;
//! assert_eq!(run.outputs[0].data("text/plain").unwrap(), "42");
//! kernel.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Every wait has a deadline. An execution that outlives its timeout is interrupted
//! (`interrupt_request` on control); if the kernel is not idle after a grace period, the whole
//! jail is killed and a fresh kernel started in the same home directory, and the
//! [`Execution`] says so. An execution whose future is dropped half-way (a client that went
//! away) is settled the same way at the start of the next call, so a new request never queues
//! behind an abandoned one.

mod budget;
mod channels;
mod execution;
mod language;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use jupyter_protocol::{
    ExecuteRequest, InterruptRequest, JupyterMessage, JupyterMessageContent, KernelInfoRequest,
    ReplyStatus,
};
use tokio::time::Instant;

pub use budget::cut_marker;
pub use execution::{Event, Execution, ExecutionStatus, Output, StreamName};
pub use language::{KernelKind, Language, valid_env_name};

use crate::error::{Error, Result};
use crate::jail::{self, Jail, JailConfig, UidLease, UidPool};
use channels::{Channels, is_reply_to};
use execution::Collector;

/// Name of the connection file and prefix of the socket files in the jail's run directory.
const CONNECTION_FILE: &str = "kernel.json";
/// Name, in the jail's run directory, of the script every Python kernel runs before the first
/// cell: the rich displays E2B's template gives (charts, DataFrames as data, shown images).
const PYTHON_STARTUP_FILE: &str = "startup.py";
const PYTHON_STARTUP: &str = include_str!("python_startup.py");
/// Name, in the run directory, of the script that makes an IPython kernel run its cells as Bash.
const BASH_MODE_FILE: &str = "bash_mode.py";
const BASH_MODE: &str = include_str!("bash_mode.py");
/// The relay that puts a TCP-only kernel (Deno, IRkernel) behind the run directory's socket
/// files, and the connection file it writes for that kernel.
const TCP_RELAY_FILE: &str = "tcp_relay.py";
const TCP_RELAY: &str = include_str!("tcp_relay.py");
const TCP_CONNECTION_FILE: &str = "kernel-tcp.json";
/// Where IRkernel's R is, from Debian's r-base-core and r-cran-irkernel.
const R_PROGRAM: &str = "/usr/bin/R";
const IRKERNEL_LIBRARY: &str = "/usr/lib/R/site-library/IRkernel";
const SOCKET_PREFIX: &str = "kernel";
/// How often an unanswered `kernel_info_request` is sent again while starting: a probe sent
/// before the kernel subscribed its iopub socket is answered on shell only, and waiting long
/// for the next one would add that much to every start.
const READY_PROBE: Duration = Duration::from_millis(100);
/// How long after a Deno cell's last message a late one is still taken (see `Kernel::linger`).
const DENO_LINGER: Duration = Duration::from_millis(25);

/// How to start a kernel. [`KernelConfig::new`] gives working defaults.
#[derive(Debug, Clone)]
pub struct KernelConfig {
    /// The jail the kernel runs in.
    pub jail: JailConfig,
    /// The Python interpreter, as a path inside the jail. Deno is looked for beside it.
    pub python: String,
    /// What the kernel runs.
    pub language: Language,
    /// How long start-up (and each restart) may take before it fails.
    pub start_timeout: Duration,
    /// After a timeout: how long the interrupted code may take to stop before the kernel is
    /// killed and restarted.
    pub interrupt_grace: Duration,
    /// About the most bytes of output kept per execution, however much the code prints or
    /// displays: half for stdout and stderr (their beginning and their end, with a
    /// [`cut_marker`] line between), half for results and displays (one that does not fit
    /// keeps only a cut `text/plain`). What is cut marks the execution
    /// [truncated](Execution::truncated). Also the longest stream message ever queued.
    pub max_output_bytes: usize,
    /// Where a host uid for the jail comes from when [`JailConfig::run_as`] is not set.
    /// Defaults to [`UidPool::default`] when running as root and `None` otherwise.
    pub uid_pool: Option<UidPool>,
}

impl KernelConfig {
    /// Defaults: Debian's `/usr/bin/python3`, 30 s to start, 2 s of grace, 2 MiB of output.
    pub fn new(jail: JailConfig) -> Self {
        // SAFETY: geteuid cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        KernelConfig {
            jail,
            python: "/usr/bin/python3".to_owned(),
            language: Language::Python,
            start_timeout: Duration::from_secs(30),
            interrupt_grace: Duration::from_secs(2),
            max_output_bytes: 2 << 20,
            uid_pool: root.then(UidPool::default),
        }
    }
}

/// A running IPython kernel in a jail.
///
/// Dropping it kills the jail; [`Kernel::shutdown`] does the same and waits for it.
pub struct Kernel {
    config: KernelConfig,
    jail: Jail,
    channels: Channels,
    /// The request whose outcome is not known yet (its future was dropped).
    pending: Option<String>,
    restarts: u32,
    // Held for the kernel's lifetime so restarts keep the uid that owns the home directory.
    _lease: Option<UidLease>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("root", &self.config.jail.root)
            .field("jail", &self.jail)
            .field("restarts", &self.restarts)
            .finish_non_exhaustive()
    }
}

impl Kernel {
    /// Starts a kernel in a new jail and returns once it answers `kernel_info_request` and
    /// its iopub messages reach us.
    pub async fn start(mut config: KernelConfig) -> Result<Kernel> {
        let kind = kernel_for(config.language, &config.python)?;
        if kind == KernelKind::Deno {
            // V8 reserves far more address space than any RLIMIT_AS would allow: its memory
            // is bounded by the jail's cgroup instead. Its caches go to the sandbox's /tmp.
            config.jail.limits.unlimited_address_space = true;
            for (key, value) in [
                ("DENO_DIR", "/tmp/deno"),
                ("DENO_NO_UPDATE_CHECK", "1"),
                ("DENO_NO_PROMPT", "1"),
                ("NO_COLOR", "1"),
            ] {
                config.jail.env.retain(|(k, _)| k != key);
                config.jail.env.push((key.to_owned(), value.to_owned()));
            }
        }
        let mut lease = None;
        if let (None, Some(pool)) = (config.jail.run_as, config.uid_pool.clone()) {
            let leased = tokio::task::spawn_blocking(move || pool.lease())
                .await
                .expect("uid lease panicked")?;
            config.jail.run_as = Some(leased.user());
            lease = Some(leased);
        }
        let (jail, channels) = launch(&config).await?;
        Ok(Kernel {
            config,
            jail,
            channels,
            pending: None,
            restarts: 0,
            _lease: lease,
        })
    }

    /// Runs `code` and returns its outputs in order. Failures of the code are outputs, not
    /// errors; `Err` means the kernel could not be reached or restarted.
    ///
    /// After `timeout` the code is interrupted; if it does not stop within the grace period,
    /// the kernel is replaced by a fresh one ([`Execution::restarted`]).
    pub async fn execute(&mut self, code: &str, timeout: Duration) -> Result<Execution> {
        self.run(code, timeout, None, false).await
    }

    /// Runs `code` as housekeeping: no execution count, no history, no result value (IPython's
    /// `silent`). For setting up the kernel (environment, working directory) without the
    /// user's cell numbers moving.
    pub async fn execute_silently(&mut self, code: &str, timeout: Duration) -> Result<Execution> {
        self.run(code, timeout, None, true).await
    }

    /// Like [`Kernel::execute`], and also sends each output to `events` the moment the kernel
    /// produces it, while the cell still runs. The returned [`Execution`] holds them all too.
    ///
    /// Dropping the future half-way (the client went away) leaves the cell running until
    /// [`Kernel::settle_abandoned`] or the next execution ends it.
    pub async fn execute_streaming(
        &mut self,
        code: &str,
        timeout: Duration,
        events: tokio::sync::mpsc::UnboundedSender<Event>,
    ) -> Result<Execution> {
        self.run(code, timeout, Some(events), false).await
    }

    /// Ends an execution whose future was dropped: interrupt it now, and kill and restart the
    /// kernel if it does not stop within the grace period. Does nothing when none is pending.
    pub async fn settle_abandoned(&mut self) -> Result<()> {
        self.settle().await
    }

    async fn run(
        &mut self,
        code: &str,
        timeout: Duration,
        events: Option<tokio::sync::mpsc::UnboundedSender<Event>>,
        silent: bool,
    ) -> Result<Execution> {
        self.settle().await?;
        self.shed_big_buffers().await;
        // A kernel that died since the last call (killed from outside, or by the code of an
        // earlier cell in a thread) is replaced before the cell runs, and the cell says so.
        let died_before = self.jail.try_wait().is_some();
        if died_before {
            tracing::debug!(root = %self.config.jail.root.display(), "kernel found dead; restarting");
            self.restart().await?;
        }
        let restarted_event = events.clone();
        let started = Instant::now();
        let request: JupyterMessage = ExecuteRequest {
            code: code.to_owned(),
            silent,
            store_history: !silent,
            user_expressions: None,
            allow_stdin: false,
            // With `true`, ipykernel 6.17 aborts every request that arrives in the moments
            // after an error, even one sent after the error's reply. We never queue cells,
            // so there is nothing it should abort.
            stop_on_error: false,
        }
        .into();
        let msg_id = request.header.msg_id.clone();
        self.pending = Some(msg_id.clone());
        // Outputs of this request are queued from now on; a dropped future stops that.
        self.channels.want(Some(&msg_id));
        let _unwant = Unwant(self.channels.current.clone());
        let mut died_before = died_before;
        if let Err(error) = self.channels.shell.send(request.clone()).await {
            // The kernel went away between the check and the send: once more on a fresh one.
            tracing::debug!(%error, "cannot send to the kernel; restarting");
            self.restart().await?;
            self.pending = Some(msg_id.clone());
            self.channels.want(Some(&msg_id));
            self.channels.shell.send(request).await?;
            died_before = true;
        }
        if died_before && let Some(events) = restarted_event {
            let _ = events.send(Event::KernelRestarted);
        }

        let mut collected = Collector::new(self.config.max_output_bytes).streaming_to(events);
        let mut interrupted = false;
        let mut restarted = false;
        let status = match self
            .collect(&msg_id, &mut collected, started + timeout)
            .await
        {
            Ended::Finished => {
                self.linger(&msg_id, &mut collected).await;
                match collected.reply {
                    Some(ReplyStatus::Ok) | None => ExecutionStatus::Ok,
                    Some(ReplyStatus::Error) => ExecutionStatus::Error,
                    Some(ReplyStatus::Aborted) => ExecutionStatus::Aborted,
                }
            }
            Ended::KernelGone => {
                self.restart().await?;
                restarted = true;
                ExecutionStatus::KernelDied
            }
            Ended::Deadline => {
                interrupted = true;
                let stopped = match self.send_interrupt().await {
                    Ok(()) => {
                        let grace = Instant::now() + self.config.interrupt_grace;
                        matches!(
                            self.collect(&msg_id, &mut collected, grace).await,
                            Ended::Finished
                        )
                    }
                    Err(error) => {
                        tracing::debug!(%error, "interrupt failed");
                        false
                    }
                };
                if !stopped {
                    self.restart().await?;
                    restarted = true;
                }
                ExecutionStatus::TimedOut
            }
        };
        self.pending = None;
        self.channels.want(None);
        collected.finish();
        self.shed_big_buffers().await;
        Ok(Execution {
            status,
            execution_count: collected.execution_count,
            interrupted,
            restarted,
            died_before,
            truncated: collected.truncated(),
            cut_characters: collected.cut_characters(),
            elapsed: started.elapsed(),
            outputs: collected.outputs,
        })
    }

    /// After a huge message, replaces the channels with fresh ones: the old sockets' read
    /// buffers grew to its size and would keep it for the kernel's lifetime. If that fails,
    /// the old channels stay.
    async fn shed_big_buffers(&mut self) {
        if !self.channels.saw_big() {
            return;
        }
        let started = Instant::now();
        let deadline = started + self.config.start_timeout;
        let fresh = match tokio::time::timeout_at(deadline, self.channels.reconnect()).await {
            Ok(Ok(mut fresh)) => {
                match wait_ready(&mut self.jail, &mut fresh, started, deadline).await {
                    Ok(()) => fresh,
                    Err(error) => {
                        tracing::warn!(%error, "cannot reconnect to the kernel; keeping its channels");
                        return;
                    }
                }
            }
            Ok(Err(error)) => {
                tracing::warn!(%error, "cannot reconnect to the kernel; keeping its channels");
                return;
            }
            Err(_) => return,
        };
        self.channels = fresh;
        self.channels
            .drain_iopub(Duration::from_millis(50), Duration::from_millis(500))
            .await;
        tracing::debug!(elapsed = ?started.elapsed(), "kernel channels renewed after a large message");
    }

    /// Sends `interrupt_request` on the control channel: the running code gets a
    /// `KeyboardInterrupt`. Returns once sent; code that ignores SIGINT keeps running.
    pub async fn interrupt(&mut self) -> Result<()> {
        self.send_interrupt().await
    }

    /// Kills the jail and starts a fresh kernel in a new one. Files in the home directory
    /// stay; variables, imports and processes are gone.
    pub async fn restart(&mut self) -> Result<()> {
        self.jail.kill().await;
        self.pending = None;
        let (jail, channels) = launch(&self.config).await?;
        self.jail = jail;
        self.channels = channels;
        self.restarts += 1;
        Ok(())
    }

    /// Kills the jail and everything in it. The sandbox directory stays for the caller to
    /// remove.
    pub async fn shutdown(mut self) {
        self.jail.kill().await;
    }

    /// How many times the kernel was restarted, by [`Kernel::restart`] or after a timeout.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// Host directory bound at `/home/user` in the jail.
    pub fn home_dir(&self) -> PathBuf {
        self.config.jail.home_dir()
    }

    /// The configuration the kernel was started with (after any uid lease).
    pub fn config(&self) -> &KernelConfig {
        &self.config
    }

    /// The jail the kernel runs in.
    pub fn jail(&self) -> &Jail {
        &self.jail
    }

    /// Ends a request whose caller went away before it finished: interrupt, wait for idle
    /// within the grace period, else restart.
    async fn settle(&mut self) -> Result<()> {
        let Some(msg_id) = self.pending.take() else {
            return Ok(());
        };
        // Nobody reads its outputs: let none be queued.
        self.channels.want(None);
        let mut ignored = Collector::new(0);
        // It may have finished on its own meanwhile.
        if let Ended::Finished = self.collect(&msg_id, &mut ignored, Instant::now()).await {
            return Ok(());
        }
        let stopped = self.send_interrupt().await.is_ok() && {
            let grace = Instant::now() + self.config.interrupt_grace;
            matches!(
                self.collect(&msg_id, &mut ignored, grace).await,
                Ended::Finished
            )
        };
        if !stopped {
            self.restart().await?;
        }
        Ok(())
    }

    /// Feeds the messages of request `msg_id` into `collected` until it finished, the kernel
    /// went away, or `deadline` passed. Messages of other requests are dropped.
    async fn collect(
        &mut self,
        msg_id: &str,
        collected: &mut Collector,
        deadline: Instant,
    ) -> Ended {
        let channels = &mut self.channels;
        let jail = &mut self.jail;
        while !collected.finished() {
            tokio::select! {
                // Queued messages first, so nothing the kernel said before dying is lost.
                biased;
                message = channels.iopub_rx.recv() => match message {
                    Some(m) if is_reply_to(&m, msg_id) => collected.iopub(m.content),
                    Some(_) => {}
                    None => return Ended::KernelGone,
                },
                message = channels.shell_rx.recv() => match message {
                    Some(m) if is_reply_to(&m, msg_id) => {
                        if let JupyterMessageContent::ExecuteReply(reply) = m.content {
                            collected.execution_count = Some(reply.execution_count.value() as u32);
                            collected.reply = Some(reply.status);
                        }
                    }
                    Some(_) => {}
                    None => return Ended::KernelGone,
                },
                _ = jail.wait() => return Ended::KernelGone,
                _ = tokio::time::sleep_until(deadline) => return Ended::Deadline,
            }
        }
        Ended::Finished
    }

    /// Deno's kernel may publish a cell's result just after its `status: idle` (they leave
    /// from different tasks): for it, outputs of the request that arrive within
    /// [`DENO_LINGER`] of the last one are still the cell's.
    async fn linger(&mut self, msg_id: &str, collected: &mut Collector) {
        if self.config.language.kernel() != Some(KernelKind::Deno) {
            return;
        }
        while let Ok(Some(message)) =
            tokio::time::timeout(DENO_LINGER, self.channels.iopub_rx.recv()).await
        {
            if is_reply_to(&message, msg_id) {
                collected.iopub(message.content);
            }
        }
    }

    /// Sends `interrupt_request` on control without waiting for `interrupt_reply`: Debian's
    /// ipykernel 6.17 echoes the request's empty content as the reply, which has no `status`
    /// and does not parse, so the end of the interrupted execution is what we wait for.
    async fn send_interrupt(&mut self) -> Result<()> {
        // Replies to earlier requests, if any parsed, are of no use any more.
        while self.channels.control_rx.try_recv().is_ok() {}
        self.channels
            .control
            .send(InterruptRequest {}.into())
            .await?;
        Ok(())
    }
}

/// Stops queueing a request's outputs when dropped (its future ended, one way or another).
struct Unwant(channels::Current);

impl Drop for Unwant {
    fn drop(&mut self) {
        *self.0.lock().expect("iopub filter lock") = None;
    }
}

/// Why [`Kernel::collect`] stopped.
enum Ended {
    Finished,
    KernelGone,
    Deadline,
}

/// Writes the connection file, starts the jail, connects and waits until the kernel is ready.
async fn launch(config: &KernelConfig) -> Result<(Jail, Channels)> {
    let started = Instant::now();
    let deadline = started + config.start_timeout;
    config.jail.prepare().await?;
    let key = uuid::Uuid::new_v4().simple().to_string();
    let run_dir = config.jail.run_dir();
    let host_prefix = run_dir.join(SOCKET_PREFIX);
    let inside_prefix = PathBuf::from(jail::RUN).join(SOCKET_PREFIX);
    let inside_info = channels::connection_info(&inside_prefix, &key);
    write_connection_file(config, &inside_info).await?;

    let command = kernel_command(config).await?;
    let mut jail = Jail::spawn(&config.jail, &command).await?;

    // Wait for the socket files: zeromq does not retry an ipc connect to a missing path.
    let sockets = channels::socket_files(&host_prefix);
    loop {
        if let Some(status) = jail.try_wait() {
            return Err(Error::ExitedDuringStart {
                status: status.to_string(),
                log_tail: jail.log_tail(2000).await,
            });
        }
        let mut all = true;
        for socket in &sockets {
            all &= tokio::fs::try_exists(socket).await.unwrap_or(false);
        }
        if all {
            break;
        }
        if Instant::now() >= deadline {
            return Err(start_timeout(&jail, started).await);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let session = uuid::Uuid::new_v4().to_string();
    let host_info = channels::connection_info(&host_prefix, &key);
    // A socket file can exist a moment before its listener accepts: retry until the deadline.
    let mut channels = loop {
        match tokio::time::timeout_at(
            deadline,
            Channels::connect(&host_info, &session, config.max_output_bytes),
        )
        .await
        {
            Ok(Ok(channels)) => break channels,
            Ok(Err(error)) if Instant::now() < deadline => {
                tracing::debug!(%error, "kernel not accepting yet");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            _ => return Err(start_timeout(&jail, started).await),
        }
    };

    wait_ready(&mut jail, &mut channels, started, deadline).await?;
    channels
        .drain_iopub(Duration::from_millis(50), Duration::from_millis(500))
        .await;
    tracing::debug!(elapsed = ?started.elapsed(), root = %config.jail.root.display(), "kernel ready");
    Ok((jail, channels))
}

/// Sends `kernel_info_request` every [`READY_PROBE`] until one is answered on shell and the
/// iopub status of one reaches us: a SUB socket only receives once its subscription has
/// travelled to the kernel (the "slow joiner"), and executing before that loses output.
async fn wait_ready(
    jail: &mut Jail,
    channels: &mut Channels,
    started: Instant,
    deadline: Instant,
) -> Result<()> {
    let mut probes: Vec<String> = Vec::new();
    let (mut replied, mut heard) = (false, false);
    let mut next_probe = Instant::now();
    while !(replied && heard) {
        if Instant::now() >= next_probe {
            let probe: JupyterMessage = KernelInfoRequest {}.into();
            probes.push(probe.header.msg_id.clone());
            channels.shell.send(probe).await?;
            next_probe = Instant::now() + READY_PROBE;
        }
        let answers = |m: &JupyterMessage| probes.iter().any(|id| is_reply_to(m, id));
        tokio::select! {
            biased;
            message = channels.shell_rx.recv() => match message {
                Some(m) => replied |= answers(&m),
                None => return Err(channels::closed("shell")),
            },
            message = channels.iopub_rx.recv() => match message {
                Some(m) => heard |= answers(&m),
                None => return Err(channels::closed("iopub")),
            },
            status = jail.wait() => {
                return Err(Error::ExitedDuringStart {
                    status: status.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string()),
                    log_tail: jail.log_tail(2000).await,
                });
            }
            _ = tokio::time::sleep_until(next_probe.min(deadline)) => {
                if Instant::now() >= deadline {
                    return Err(start_timeout(jail, started).await);
                }
            }
        }
    }
    Ok(())
}

async fn start_timeout(jail: &Jail, started: Instant) -> Error {
    Error::StartTimeout {
        waited: started.elapsed(),
        log_tail: jail.log_tail(2000).await,
    }
}

/// Which kernel program serves `language` on the runtime whose interpreter is `python` (a
/// path on the host, the same as inside jails), checked to be installed. The error says what
/// to install.
pub fn kernel_for(language: Language, python: &str) -> Result<KernelKind> {
    let unavailable = |reason: String| Error::LanguageUnavailable { language, reason };
    let kind = language
        .kernel()
        .ok_or_else(|| unavailable(language.unsupported().unwrap_or_default().to_owned()))?;
    match kind {
        KernelKind::IPython | KernelKind::Bash => {}
        KernelKind::Deno => {
            let deno = deno_program(python);
            if !deno.is_file() {
                return Err(unavailable(format!(
                    "Deno, which runs JavaScript and TypeScript, is not at {} (beside the runtime's Python): run .ci/setup, which installs it there from npm",
                    deno.display()
                )));
            }
        }
        KernelKind::IRkernel => {
            if !PathBuf::from(IRKERNEL_LIBRARY).is_dir() || !PathBuf::from(R_PROGRAM).is_file() {
                return Err(unavailable(
                    "R's kernel is not installed: install Debian's r-base-core and r-cran-irkernel (.ci/setup does)".to_owned(),
                ));
            }
        }
    }
    Ok(kind)
}

/// Deno, beside the runtime's Python: the setup script installs it into the runtime's `bin`.
fn deno_program(python: &str) -> PathBuf {
    PathBuf::from(python).with_file_name("deno")
}

/// The command that starts the kernel in its jail, with the files it needs written to the run
/// directory.
async fn kernel_command(config: &KernelConfig) -> Result<Vec<OsString>> {
    let run = PathBuf::from(jail::RUN);
    let connection_file = run.join(CONNECTION_FILE).to_string_lossy().into_owned();
    let python = config.python.as_str();
    let relay = |kernel: &[&str]| -> Vec<String> {
        let mut command = vec![
            python.to_owned(),
            run.join(TCP_RELAY_FILE).to_string_lossy().into_owned(),
            connection_file.clone(),
            run.join(TCP_CONNECTION_FILE).to_string_lossy().into_owned(),
            "--".to_owned(),
        ];
        command.extend(kernel.iter().map(|arg| (*arg).to_owned()));
        command
    };
    // IPython, running `startup` before the first cell.
    let ipython = |startup: PathBuf| -> Vec<String> {
        vec![
            python.to_owned(),
            "-m".to_owned(),
            "ipykernel_launcher".to_owned(),
            "-f".to_owned(),
            connection_file.clone(),
            // Keep the user's home free of IPython's own files.
            "--HistoryManager.enabled=False".to_owned(),
            format!("--IPKernelApp.exec_files=[{:?}]", startup.to_string_lossy()),
        ]
    };
    let command: Vec<String> = match kernel_for(config.language, python)? {
        KernelKind::IPython => {
            write_run_file(config, PYTHON_STARTUP_FILE, PYTHON_STARTUP.as_bytes()).await?;
            ipython(run.join(PYTHON_STARTUP_FILE))
        }
        KernelKind::Bash => {
            write_run_file(config, BASH_MODE_FILE, BASH_MODE.as_bytes()).await?;
            ipython(run.join(BASH_MODE_FILE))
        }
        KernelKind::Deno => {
            write_run_file(config, TCP_RELAY_FILE, TCP_RELAY.as_bytes()).await?;
            let deno = deno_program(python).to_string_lossy().into_owned();
            relay(&[&deno, "jupyter", "--kernel", "--conn", "{connection_file}"])
        }
        KernelKind::IRkernel => {
            write_run_file(config, TCP_RELAY_FILE, TCP_RELAY.as_bytes()).await?;
            relay(&[
                R_PROGRAM,
                "--slave",
                "--no-save",
                "--no-restore",
                "-e",
                "IRkernel::main()",
                "--args",
                "{connection_file}",
            ])
        }
    };
    Ok(command.into_iter().map(OsString::from).collect())
}

/// Writes a file the kernel reads at start into the run directory, readable by the jail's user.
async fn write_run_file(config: &KernelConfig, name: &str, contents: &[u8]) -> Result<()> {
    let path = config.jail.run_dir().join(name);
    let contents = contents.to_vec();
    let run_as = config.jail.run_as;
    tokio::task::spawn_blocking(move || -> Result<()> {
        std::fs::write(&path, contents).map_err(|e| Error::io("write", &path, e))?;
        if let Some(user) = run_as {
            std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid))
                .map_err(|e| Error::io("chown", &path, e))?;
        }
        Ok(())
    })
    .await
    .expect("writing a run file panicked")
}

/// Empties the run directory, then writes the kernel's connection file into it, readable by
/// the jail's user.
async fn write_connection_file(
    config: &KernelConfig,
    info: &jupyter_protocol::connection_info::ConnectionInfo,
) -> Result<()> {
    let run_dir = config.jail.run_dir();
    tokio::task::spawn_blocking(move || -> Result<()> {
        // Sockets of a previous kernel would make us connect before the new one has bound.
        let entries = std::fs::read_dir(&run_dir).map_err(|e| Error::io("list", &run_dir, e))?;
        for entry in entries.flatten() {
            let stale = entry.path();
            std::fs::remove_file(&stale).map_err(|e| Error::io("remove", &stale, e))?;
        }
        Ok(())
    })
    .await
    .expect("emptying the run directory panicked")?;
    let text = serde_json::to_vec_pretty(info).expect("a connection info always serializes");
    write_run_file(config, CONNECTION_FILE, &text).await
}
