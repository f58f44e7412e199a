//! `mcpgym`: every environment behind one binary.

mod bench;

// Every tool call allocates small JSON values on several threads; mimalloc serves that pattern
// with far less contention and fragmentation than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use mcpgym_desktop::display::DisplayPrograms;
use mcpgym_desktop::env::{DesktopArgs, DesktopEnv, DesktopEnvConfig};
use mcpgym_desktop::scale::Size;
use mcpgym_desktop::session::{DesktopConfig, DisplayChoice};
use mcpgym_desktop::worker::WorkerCommand;
use mcpgym_jupyter::{E2bClient, E2bConfig, Jupyter, JupyterArgs, JupyterConfig};
use mcpgym_sandbox::service::ServiceConfig;
use mcpgym_shared::Environment;
use mcpgym_shared::cli::{CommonArgs, TransportArgs};
use mcpgym_shared::http::{HttpOptions, serve};
use mcpgym_shared::hub::Hub;
use mcpgym_shared::stdio::serve_stdio;
use mcpgym_wordle::{Wordle, WordleArgs, WordleConfig};

/// Reinforcement-learning environments for LLM agents, each an MCP server.
///
/// Over stdio, one process plays one episode described by the flags. Over HTTP (--http), any
/// number of isolated episodes run at once: start them with POST /episodes, play them at
/// /episodes/{id}/mcp (or /mcp with a session, or _meta["mcpgym/episode"]), and read their
/// state and trajectory from the control plane.
#[derive(Debug, Parser)]
#[command(name = "mcpgym", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Wordle: guess a hidden 5-letter word in 6 tries (tools: guess, history).
    Wordle {
        #[command(flatten)]
        transport: TransportArgs,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten, next_help_heading = "Wordle")]
        wordle: WordleArgs,
    },
    /// Jupyter: solve a task by writing and running Python in a real IPython kernel, one
    /// sandbox per episode (tools: get_task, add_and_execute_code_cell,
    /// edit_and_execute_current_cell, execute_shell_command, get_notebook_state, final_answer).
    Jupyter {
        #[command(flatten)]
        transport: TransportArgs,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten, next_help_heading = "Jupyter")]
        jupyter: JupyterArgs,
        /// Where sandboxes come from: `local` runs the sandbox service inside this process on a
        /// loopback port; an http:// or https:// URL reaches a remote `mcpgym sandbox` (its
        /// token, if any, from MCPGYM_SANDBOX_TOKEN); `e2b` is E2B's cloud with E2B_API_KEY
        /// (over TLS, checked against the system's CA certificates).
        #[arg(
            long,
            value_name = "local|URL|e2b",
            default_value = "local",
            help_heading = "Jupyter"
        )]
        sandbox: String,
        /// Jailed kernels the local sandbox service keeps started ahead of demand.
        #[arg(long, value_name = "N", default_value_t = 2, help_heading = "Jupyter")]
        sandbox_pool: usize,
        #[command(flatten, next_help_heading = "Jails")]
        quotas: QuotaArgs,
    },
    /// Desktop: use a real Linux desktop (a private Xvfb display per episode) through
    /// screenshots, mouse and keyboard, in the Anthropic, Qwen3-VL or OpenAI action format;
    /// graded by the desktop's files, windows and clipboard when the episode ends.
    Desktop {
        #[command(flatten)]
        transport: TransportArgs,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten, next_help_heading = "Desktop")]
        desktop: DesktopArgs,
        #[command(flatten, next_help_heading = "Jails")]
        quotas: QuotaArgs,
    },
    /// One desktop episode's worker (screenshots and input on $DISPLAY), spoken to over
    /// stdin/stdout by the desktop environment.
    #[command(hide = true)]
    DesktopWorker,
    /// Host every environment behind one control plane: POST /episodes {"env": ...} picks one,
    /// /<env>/mcp serves each. Environments use their defaults; per-episode options adjust them.
    Serve {
        /// Address to listen on, e.g. 127.0.0.1:8000.
        #[arg(long, value_name = "ADDR")]
        http: std::net::SocketAddr,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten, next_help_heading = "Jails")]
        quotas: QuotaArgs,
    },
    /// The local sandbox service: E2B's HTTP protocol (control plane, code interpreter, envd
    /// subset) on one port, over IPython kernels in bubblewrap jails. Point E2B SDKs at it
    /// with E2B_API_URL and E2B_SANDBOX_URL set to http://ADDR.
    Sandbox(SandboxArgs),
    /// Load generators that print throughput, latency and memory figures.
    Bench {
        #[command(subcommand)]
        target: bench::BenchTarget,
    },
}

/// Flags of `mcpgym sandbox`.
#[derive(Debug, clap::Args)]
struct SandboxArgs {
    /// Address to listen on, e.g. 127.0.0.1:49999.
    #[arg(long, value_name = "ADDR")]
    http: std::net::SocketAddr,
    /// Jailed kernels kept started ahead of demand, so a create is ready at once.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pool: usize,
    /// Longest a cell or command may run: then it is interrupted, and if it does not stop
    /// within a grace period the kernel is killed and restarted (the response says so).
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    execution_timeout: u64,
    /// Most sandboxes alive at once; further creates get 429.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    max_sandboxes: u64,
    /// Token every request must carry (X-API-Key or Authorization: Bearer), or on the data
    /// plane the sandbox's envdAccessToken as X-Access-Token. Required beyond loopback.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "MCPGYM_TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// Where the sandboxes' files live: a fresh folder mcpgym-sandbox-PID is made in DIR and
    /// removed at exit (default: $TMPDIR). Keep DIR short: kernel sockets live below it, and
    /// a socket path may not exceed 107 bytes.
    #[arg(long, value_name = "DIR")]
    root_dir: Option<std::path::PathBuf>,
    #[command(flatten, next_help_heading = "Jails")]
    quotas: QuotaArgs,
    #[command(flatten, next_help_heading = "HTTP connections")]
    connections: mcpgym_shared::cli::ConnectionArgs,
}

/// Sizes of every jail's writable file systems (kernels, shell commands, desktop
/// applications). An agent that fills one gets "No space left on device" inside.
#[derive(Debug, Clone, clap::Args)]
struct QuotaArgs {
    /// Size of each jail's home (/home/user): a tmpfs mounted on the episode's folder when
    /// the server runs as root; without root the home is bounded only per file (1 GiB).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_size)]
    home_size: u64,
    /// Size of each jail's private /tmp.
    #[arg(long, value_name = "SIZE", default_value = "512M", value_parser = parse_size)]
    tmp_size: u64,
    /// Size of each jail's /dev/shm.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    shm_size: u64,
}

impl QuotaArgs {
    /// `limits` with these sizes.
    fn apply(&self, limits: mcpgym_sandbox::jail::Limits) -> mcpgym_sandbox::jail::Limits {
        mcpgym_sandbox::jail::Limits {
            home_bytes: Some(self.home_size),
            tmp_bytes: Some(self.tmp_size),
            shm_bytes: Some(self.shm_size),
            ..limits
        }
    }
}

/// A size in bytes: a whole number with an optional K, M or G suffix (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let (digits, shift) = match trimmed.char_indices().last() {
        Some((at, 'k' | 'K')) => (&trimmed[..at], 10),
        Some((at, 'm' | 'M')) => (&trimmed[..at], 20),
        Some((at, 'g' | 'G')) => (&trimmed[..at], 30),
        _ => (trimmed, 0),
    };
    let refuse = || {
        format!(
            "{text:?} is not a size: give a whole number of bytes with an optional K, M or G suffix, e.g. 512M"
        )
    };
    let value: u64 = digits.parse().map_err(|_| refuse())?;
    let bytes = value
        .checked_shl(shift)
        .filter(|b| b >> shift == value)
        .ok_or_else(refuse)?;
    if bytes < 1 << 20 {
        return Err(format!(
            "{text:?} is too small: a jail's file system needs at least 1M"
        ));
    }
    Ok(bytes)
}

// mimalloc's option setter (the library is linked in for the allocator above).
unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}
/// `mi_option_purge_delay` in mimalloc 2 and 3.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

fn main() -> anyhow::Result<()> {
    // Memory freed after a burst (an agent printing a gigabyte, a huge cell value) goes back
    // to the system at once; with a delay, a thread that then idles keeps it resident.
    // SAFETY: sets one integer option; mimalloc reads options atomically.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    let cli = Cli::parse();
    init_tracing();
    let jails = matches!(
        cli.command,
        Command::Jupyter { .. }
            | Command::Desktop { .. }
            | Command::Serve { .. }
            | Command::Sandbox(_)
    );
    if jails {
        // Without root, a mount namespace of our own is what lets jail homes have a size
        // limit; the kernel grants it only while this process has one thread, so now.
        if let Err(error) = mcpgym_sandbox::jail::enter_private_mount_namespace() {
            tracing::warn!(%error, "cannot enter a private mount namespace; jail homes will have no size limit");
        }
    }
    if !matches!(cli.command, Command::DesktopWorker | Command::Bench { .. }) {
        remove_stale_jails(&cli.command);
    }
    match cli.command {
        Command::Wordle {
            transport,
            common,
            wordle,
        } => {
            let config = WordleConfig::from_args(&wordle)?;
            let env: Arc<dyn Environment> = Arc::new(Wordle::new(config));
            run_env(env, transport, common)
        }
        Command::Jupyter {
            transport,
            common,
            jupyter,
            sandbox,
            sandbox_pool,
            quotas,
        } => run_jupyter(transport, common, jupyter, &sandbox, sandbox_pool, &quotas),
        Command::Desktop {
            transport,
            common,
            desktop,
            quotas,
        } => {
            let desktops = DesktopRoot::new()?;
            let config = DesktopEnvConfig::from_args(&desktop, desktops.config(&quotas)?)
                .map_err(anyhow::Error::msg)?;
            let env: Arc<dyn Environment> = Arc::new(DesktopEnv::new(config));
            run_env(env, transport, common)
        }
        Command::DesktopWorker => Ok(mcpgym_desktop::worker::serve_stdio()?),
        Command::Serve {
            http,
            common,
            quotas,
        } => {
            let sandbox =
                LocalSandbox::start(2, JupyterConfig::default().cell_timeout.as_secs(), &quotas)?;
            let desktops = DesktopRoot::new()?;
            let desktop = DesktopEnvConfig::with_defaults(desktops.config(&quotas)?);
            let envs: Vec<Arc<dyn Environment>> = vec![
                Arc::new(Wordle::new(WordleConfig::default())),
                Arc::new(Jupyter::new(sandbox.client()?, JupyterConfig::default())),
                Arc::new(DesktopEnv::new(desktop)),
            ];
            let hub = Hub::new(envs, common.hub_settings()).context("cannot start")?;
            let options = HttpOptions {
                mount_root_mcp: false,
                ..common.http_options()
            };
            let served = current_thread()?.block_on(async {
                serve(hub, http, options, shutdown_signal())
                    .await
                    .map_err(anyhow::Error::from)
            });
            sandbox.stop();
            served
        }
        Command::Sandbox(args) => run_sandbox(args),
        Command::Bench { target } => bench::run(target),
    }
}

/// Serves one environment over stdio, or over HTTP with `--http`.
fn run_env(
    env: Arc<dyn Environment>,
    transport: TransportArgs,
    common: CommonArgs,
) -> anyhow::Result<()> {
    let hub = Hub::new(vec![env.clone()], common.hub_settings())
        .context("cannot create the trajectory directory")?;
    match transport.http {
        Some(addr) => {
            hub.check_defaults(env.as_ref())?;
            current_thread()?.block_on(async {
                serve(hub, addr, common.http_options(), shutdown_signal())
                    .await
                    .map_err(anyhow::Error::from)
            })
        }
        // One client, one episode: a single thread avoids cross-thread wake-ups per message.
        None => current_thread()?
            .block_on(async { serve_stdio(hub, env).await.map_err(anyhow::Error::from) }),
    }
}

/// Serves the Jupyter environment. With `--sandbox local` the sandbox service runs in this
/// process on a loopback port, on a multi-thread runtime of its own (so it keeps serving
/// whichever runtime the MCP side uses), and the environment gets only its URL.
fn run_jupyter(
    transport: TransportArgs,
    common: CommonArgs,
    args: JupyterArgs,
    sandbox: &str,
    pool: usize,
    quotas: &QuotaArgs,
) -> anyhow::Result<()> {
    let config = JupyterConfig::from_args(&args);
    let e2b = match sandbox {
        "local" => None,
        "e2b" => {
            let key = std::env::var("E2B_API_KEY")
                .context("--sandbox e2b needs E2B_API_KEY in the environment")?;
            Some(E2bConfig::cloud(key))
        }
        url => Some(E2bConfig::single_url(
            url,
            std::env::var("MCPGYM_SANDBOX_TOKEN").ok(),
        )),
    };
    let Some(e2b) = e2b else {
        let sandbox = LocalSandbox::start(pool, args.cell_timeout, quotas)?;
        let env: Arc<dyn Environment> = Arc::new(Jupyter::new(sandbox.client()?, config));
        let result = run_env(env, transport, common);
        sandbox.stop();
        return result;
    };
    let client = E2bClient::new(e2b)?;
    let env: Arc<dyn Environment> = Arc::new(Jupyter::new(client, config));
    run_env(env, transport, common)
}

/// The sandbox service running inside this process on a loopback port, on a multi-thread
/// runtime of its own (so it keeps serving whichever runtime the MCP side uses). The Jupyter
/// environment gets only its URL.
///
/// The service is private to this process: it gets a random token only this process knows,
/// so another local process can neither list the sandboxes nor reach their kernels and files.
struct LocalSandbox {
    runtime: tokio::runtime::Runtime,
    url: String,
    token: String,
    stop: tokio::sync::oneshot::Sender<()>,
    service: tokio::task::JoinHandle<Result<(), mcpgym_sandbox::service::ServeError>>,
}

impl LocalSandbox {
    fn start(pool: usize, cell_timeout: u64, quotas: &QuotaArgs) -> anyhow::Result<Self> {
        let token = random_token().context("cannot make a token for the local sandbox service")?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("sandbox")
            .enable_all()
            .build()?;
        let config = ServiceConfig {
            pool_size: pool,
            // The client stops waiting at --cell-timeout and drops the request, which makes
            // the service interrupt the cell or kill the command. The service's own deadline
            // is only a backstop, late enough for task setups and hidden checks (120 s).
            execution_timeout: std::time::Duration::from_secs(cell_timeout.max(120) + 5),
            token: Some(token.clone()),
            limits: quotas.apply(Default::default()),
            ..ServiceConfig::default()
        };
        let listening = runtime
            .block_on(mcpgym_sandbox::service::Listening::bind(
                ([127, 0, 0, 1], 0).into(),
                config,
            ))
            .context("cannot start the local sandbox service")?;
        let url = format!("http://{}", listening.local_addr());
        tracing::debug!(%url, "local sandbox service listening");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let service = runtime.spawn(listening.serve(async move {
            let _ = stopped.await;
        }));
        Ok(Self {
            runtime,
            url,
            token,
            stop,
            service,
        })
    }

    fn client(&self) -> anyhow::Result<E2bClient> {
        Ok(E2bClient::new(E2bConfig::single_url(
            self.url.clone(),
            Some(self.token.clone()),
        ))?)
    }

    /// Kills every sandbox and removes the service's folder.
    fn stop(self) {
        let _ = self.stop.send(());
        match self.runtime.block_on(self.service) {
            Ok(Err(error)) => tracing::warn!(%error, "the local sandbox service failed"),
            Err(error) => tracing::warn!(%error, "the local sandbox service panicked"),
            Ok(Ok(())) => {}
        }
    }
}

/// 256 bits from the kernel's random source, as hex.
fn random_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
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

impl Drop for DesktopRoot {
    /// Unmounts the episodes' size-limited homes, then removes the folder.
    fn drop(&mut self) {
        if let Err(error) = mcpgym_sandbox::jail::remove_root(&self.0) {
            tracing::warn!(folder = %self.0.display(), %error, "cannot remove the desktops' folder");
        }
    }
}

/// Serves the sandbox service until Ctrl-C or SIGTERM, then kills every sandbox.
fn run_sandbox(args: SandboxArgs) -> anyhow::Result<()> {
    let defaults = ServiceConfig::default();
    let config = ServiceConfig {
        // Never DIR itself: the service removes its folder at exit.
        root_dir: match args.root_dir {
            Some(dir) => dir.join(format!("mcpgym-sandbox-{}", std::process::id())),
            None => defaults.root_dir,
        },
        pool_size: args.pool,
        execution_timeout: std::time::Duration::from_secs(args.execution_timeout),
        max_sandboxes: usize::try_from(args.max_sandboxes).unwrap_or(usize::MAX),
        token: args.token,
        limits: args.quotas.apply(defaults.limits.clone()),
        http: args.connections.config(),
        ..defaults
    };
    // Kernels, jails and streamed responses all wait on I/O; two workers keep one slow
    // start-up from delaying every other request.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        mcpgym_sandbox::service::serve(args.http, config, shutdown_signal())
            .await
            .map_err(anyhow::Error::from)
    })
}

/// Removes what servers that were killed left behind: their sandbox and desktop folders
/// (unmounting size-limited homes first) and their cgroups. Only folders and cgroups whose
/// server process is gone are touched, so servers running beside this one keep theirs.
fn remove_stale_jails(command: &Command) {
    let mut dirs = vec![std::env::temp_dir()];
    if let Command::Sandbox(SandboxArgs {
        root_dir: Some(dir),
        ..
    }) = command
    {
        dirs.push(dir.clone());
    }
    for dir in dirs {
        let removed = mcpgym_sandbox::jail::cleanup_stale(&dir);
        if !removed.folders.is_empty() || !removed.cgroups.is_empty() {
            tracing::info!(folders = ?removed.folders, cgroups = ?removed.cgroups, "removed what stopped servers left behind");
        }
    }
}

/// A runtime on this thread. HTTP serving adds one such thread per further core.
fn current_thread() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Logs go to stderr (stdout belongs to MCP over stdio); RUST_LOG sets the level.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
