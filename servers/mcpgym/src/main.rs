//! `mcpgym`: every environment behind one binary.

mod bench;
mod choices;
mod envs;
mod eval;
mod export;
mod jails;
mod new;
mod python;
mod registry;
mod replay;
mod rescore;
mod runtime;
mod secret;

// Every tool call allocates small JSON values on several threads; mimalloc serves that pattern
// with far less contention and fragmentation than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use mcpgym_sandbox::service::ServiceConfig;
use mcpgym_shared::Environment;
use mcpgym_shared::cli::{CommonArgs, TransportArgs};
use mcpgym_shared::http::{HttpOptions, serve};
use mcpgym_shared::hub::Hub;
use mcpgym_shared::stdio::serve_stdio;

use crate::envs::ENVIRONMENTS;
use crate::jails::QuotaArgs;
use crate::python::PythonArgs;
use crate::registry::{Built, EnvCommand, Registration};
use crate::runtime::{RUNTIME_VAR, RuntimeArgs};

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
    /// The file holding the secret test instances of generated task families are derived
    /// with (64 hex digits; made on first use): servers that must pose the same test tasks
    /// share it. Default: $XDG_STATE_HOME/mcpgym/test-secret or ~/.local/state/mcpgym/test-secret.
    #[arg(long, global = true, value_name = "FILE", env = "MCPGYM_TEST_SECRET")]
    test_secret: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// One subcommand per environment in [`ENVIRONMENTS`].
    #[command(flatten)]
    Env(EnvCommand),
    /// Serve one environment written in Python: a class deriving mcpgym.env.Environment,
    /// with tools marked @tool (see the Python package's mcpgym.env). Over stdio one episode;
    /// over HTTP (--http) any number, spread over worker processes.
    Python {
        /// The class, as module:Class (found from the working folder or PYTHONPATH) or
        /// path/to/file.py:Class.
        #[arg(value_name = "MODULE:CLASS")]
        spec: String,
        #[command(flatten)]
        transport: TransportArgs,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten, next_help_heading = "Python")]
        python: PythonArgs,
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
        #[command(flatten)]
        host: HostArgs,
    },
    /// The local sandbox service: E2B's HTTP protocol (control plane, code interpreter, envd
    /// subset) on one port, over IPython kernels in bubblewrap jails. Point E2B SDKs at it
    /// with E2B_API_URL and E2B_SANDBOX_URL set to http://ADDR.
    Sandbox(SandboxArgs),
    /// Serve the episode viewer over a folder of recorded trajectories (what --trajectory-dir
    /// wrote), with no environment running: open http://ADDR/ in a browser.
    View {
        /// The folder of EPISODE_ID.jsonl files.
        #[arg(value_name = "DIR")]
        dir: std::path::PathBuf,
        /// Address to listen on.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8000")]
        http: std::net::SocketAddr,
        /// Bearer token every request must carry (a browser gives it once as ?token=TOKEN);
        /// required to listen beyond loopback.
        #[arg(
            long,
            value_name = "TOKEN",
            env = "MCPGYM_TOKEN",
            hide_env_values = true
        )]
        token: Option<String>,
    },
    /// Play a recorded Wordle, Jupyter, Hi-Lo or Python-written episode again from its file's header and
    /// actions, and report whether every observation and reward matches (exit status 1 at
    /// the first difference, which it names).
    Replay {
        /// A trajectory file (EPISODE_ID.jsonl).
        #[arg(value_name = "FILE")]
        file: std::path::PathBuf,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Grade recorded episodes again, offline, and report any reward that differs from the one
    /// paid online: by replaying the calls (Wordle, Hi-Lo, Python environments), or from what
    /// the grader read when each episode ended (Jupyter's answer and files, the desktop's
    /// graded files, titles and clipboard). Exits 1 when one differs.
    Rescore {
        /// Trajectory files, or folders of them (a folder's eval-run sub-folders included).
        #[arg(value_name = "PATH", required = true)]
        paths: Vec<std::path::PathBuf>,
        /// Episodes graded at once.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
        concurrency: u16,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Start a new environment: its files, from a template that plays (Python by default:
    /// a class and its test; Rust: a crate, its test and how to register it).
    New(new::NewArgs),
    /// Run a model (OpenAI-compatible tool calling, Anthropic's Messages API, Qwen3-VL) or a
    /// built-in policy (oracle, noop, random) over an environment's tasks: prints pass@1,
    /// pass@k, reward, turns, tokens and time per family; writes eval.json and every
    /// episode's trajectory into the output folder (`mcpgym view DIR` shows them), and
    /// resumes a run stopped there. An environment's own flags go after `--`.
    Eval {
        #[command(flatten)]
        eval: eval::EvalArgs,
        #[command(flatten, next_help_heading = "Jails")]
        quotas: QuotaArgs,
    },
    /// Export an environment's tasks as a training dataset (jsonl or parquet).
    Tasks {
        #[command(subcommand)]
        command: export::TasksCommand,
    },
    /// Export recorded episodes as chat data (OpenAI-style messages with tool calls).
    Trajectories {
        #[command(subcommand)]
        command: export::TrajectoriesCommand,
    },
    /// The data-science runtime Jupyter's sandboxes run on: `install` builds it into the
    /// per-user cache (once), `path` says which one the servers use.
    Runtime {
        #[command(subcommand)]
        command: runtime::RuntimeCommand,
    },
    /// Load generators that print throughput, latency and memory figures.
    Bench {
        #[command(subcommand)]
        target: bench::BenchTarget,
    },
}

/// Flags of the commands that build environments themselves (`serve`, `replay`, `rescore`):
/// the sandboxes' runtime, the jails' quotas and the environments written in Python.
#[derive(Debug, clap::Args)]
struct HostArgs {
    #[command(flatten)]
    runtime: RuntimeArgs,
    #[command(flatten, next_help_heading = "Jails")]
    quotas: QuotaArgs,
    /// An environment written in Python (module:Class or path/to/file.py:Class): hosted
    /// beside the built-in ones, or the one the episodes were recorded in; repeat for
    /// several.
    #[arg(long = "python", value_name = "MODULE:CLASS", help_heading = "Python")]
    python_envs: Vec<String>,
    #[command(flatten, next_help_heading = "Python")]
    python: PythonArgs,
}

impl HostArgs {
    /// The environments written in Python, loaded.
    fn python_environments(&self) -> anyhow::Result<Vec<Arc<dyn Environment>>> {
        self.python_envs
            .iter()
            .map(|spec| self.python.load(spec))
            .collect()
    }
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
    /// After a burst of creates the pool grows to the burst's size (for ten minutes), up to N
    /// kernels (an idle kernel costs about 40 MiB).
    #[arg(long, value_name = "N", default_value_t = 128)]
    pool_max: usize,
    /// Longest a kernel may take to start, and a create may wait for one when the pool is
    /// empty (creates queue for the kernels being started); then the create gets 503.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    start_timeout: u64,
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
    #[command(flatten)]
    runtime: RuntimeArgs,
    #[command(flatten, next_help_heading = "Jails")]
    quotas: QuotaArgs,
    #[command(flatten, next_help_heading = "HTTP connections")]
    connections: mcpgym_shared::cli::ConnectionArgs,
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
    if let Command::Serve { host, .. }
    | Command::Replay { host, .. }
    | Command::Rescore { host, .. } = &cli.command
        && let Some(dir) = &host.runtime.runtime
    {
        // The environments `serve` hosts read their flags' defaults, the runtime's from this
        // variable.
        // SAFETY: no other thread exists yet.
        unsafe { std::env::set_var(RUNTIME_VAR, dir) };
    }
    init_tracing();
    if matches!(
        cli.command,
        Command::Env(_)
            | Command::Serve { .. }
            | Command::Replay { .. }
            | Command::Rescore { .. }
            | Command::Eval { .. }
            | Command::Tasks { .. }
    ) {
        // A user without a writable state folder (e.g. `nobody`) still serves, with the
        // public test split, and is told how to keep it secret.
        if let Err(error) = secret::load(cli.test_secret.as_deref()) {
            if cli.test_secret.is_some() {
                return Err(error);
            }
            tracing::warn!(
                "{error:#}; test instances are the public ones: pass --test-secret FILE"
            );
        }
    }
    let jails = match &cli.command {
        Command::Env(env) => env.registration.jails,
        Command::Serve { .. } => ENVIRONMENTS.iter().any(|env| env.jails),
        Command::Sandbox(_) | Command::Replay { .. } | Command::Rescore { .. } => true,
        Command::Eval { eval, .. } => Registration::find(eval.env_name()).is_some_and(|r| r.jails),
        Command::DesktopWorker
        | Command::Python { .. }
        | Command::New(_)
        | Command::Bench { .. }
        | Command::View { .. }
        | Command::Tasks { .. }
        | Command::Trajectories { .. }
        | Command::Runtime { .. } => false,
    };
    if jails {
        // Without root, a mount namespace of our own is what lets jail homes have a size
        // limit; the kernel grants it only while this process has one thread, so now.
        if let Err(error) = mcpgym_sandbox::jail::enter_private_mount_namespace() {
            tracing::warn!(%error, "cannot enter a private mount namespace; jail homes will have no size limit");
        }
        // On cgroup v2, a cgroup delegated to us holds the jails' cgroups (memory, tasks and
        // CPU per jail without root).
        if let Some(cgroup) = mcpgym_sandbox::jail::use_delegated_cgroup() {
            tracing::debug!(cgroup = %cgroup.display(), "jail cgroups go here");
        }
    }
    if !matches!(
        cli.command,
        Command::DesktopWorker
            | Command::New(_)
            | Command::Bench { .. }
            | Command::View { .. }
            | Command::Tasks { .. }
            | Command::Trajectories { .. }
            | Command::Runtime { .. }
    ) {
        remove_stale_jails(&cli.command);
    }
    match cli.command {
        Command::Env(env) => {
            let (Built { env, backing }, transport, common) = env.build()?;
            let served = run_env(env, transport, common);
            Built::release(backing);
            served
        }
        Command::Python {
            spec,
            transport,
            common,
            python,
        } => run_env(python.load(&spec)?, transport, common),
        Command::DesktopWorker => Ok(mcpgym_desktop::worker::serve_stdio()?),
        Command::Serve { http, common, host } => run_serve(http, common, &host),
        Command::Sandbox(args) => run_sandbox(args),
        Command::New(args) => new::run(args),
        Command::Bench { target } => bench::run(target),
        Command::Eval { eval, quotas } => eval::run(eval, &quotas),
        Command::Tasks { command } => export::run_tasks(command),
        Command::Trajectories { command } => export::run_trajectories(command),
        Command::Runtime { command } => runtime::run(command),
        Command::View { dir, http, token } => run_view(dir, http, token),
        Command::Replay { file, host } => {
            if replay::run(&file, &host.quotas, &host.python_environments()?)? {
                Ok(())
            } else {
                std::process::exit(1)
            }
        }
        Command::Rescore {
            paths,
            concurrency,
            host,
        } => {
            let python = host.python_environments()?;
            if rescore::run(&paths, usize::from(concurrency), &host.quotas, &python)? {
                Ok(())
            } else {
                std::process::exit(1)
            }
        }
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

/// Hosts every registered environment, each with its flags' defaults, and the Python ones
/// named, behind one control plane.
fn run_serve(
    http: std::net::SocketAddr,
    common: CommonArgs,
    host: &HostArgs,
) -> anyhow::Result<()> {
    let quotas = &host.quotas;
    // Loaded first, so a class that cannot serve stops the server before anything starts.
    let mut loaded: Vec<Arc<dyn Environment>> = Vec::new();
    for (spec, env) in host.python_envs.iter().zip(host.python_environments()?) {
        if let Some(taken) = ENVIRONMENTS.iter().find(|r| r.name == env.name()) {
            anyhow::bail!(
                "{spec} is named {:?}, which {} already is: give the class another name",
                env.name(),
                taken.name
            );
        }
        if loaded.iter().any(|other| other.name() == env.name()) {
            anyhow::bail!("two Python environments are named {:?}", env.name());
        }
        loaded.push(env);
    }
    let mut envs: Vec<Arc<dyn Environment>> = Vec::new();
    let mut backings = Vec::new();
    for registration in ENVIRONMENTS {
        match registration.build_default(quotas) {
            Ok(built) => {
                envs.push(built.env);
                backings.push(built.backing);
            }
            Err(error) => {
                drop(envs);
                backings.into_iter().for_each(Built::release);
                return Err(error.context(format!("cannot start {}", registration.name)));
            }
        }
    }
    envs.extend(loaded);
    let served = Hub::new(envs, common.hub_settings())
        .context("cannot start")
        .and_then(|hub| {
            let options = HttpOptions {
                mount_root_mcp: false,
                ..common.http_options()
            };
            current_thread()?.block_on(async {
                serve(hub, http, options, shutdown_signal())
                    .await
                    .map_err(anyhow::Error::from)
            })
        });
    backings.into_iter().for_each(Built::release);
    served
}

/// Serves the viewer over a folder of recordings until Ctrl-C or SIGTERM.
fn run_view(
    dir: std::path::PathBuf,
    http: std::net::SocketAddr,
    token: Option<String>,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        dir.is_dir(),
        "{} is not a folder: give the folder --trajectory-dir wrote",
        dir.display()
    );
    let options = HttpOptions {
        token,
        ..HttpOptions::default()
    };
    current_thread()?.block_on(async {
        mcpgym_shared::viewer::recorded::serve_dir(dir, http, options, shutdown_signal())
            .await
            .map_err(anyhow::Error::from)
    })
}

/// Serves the sandbox service until Ctrl-C or SIGTERM, then kills every sandbox.
fn run_sandbox(args: SandboxArgs) -> anyhow::Result<()> {
    let runtime = args.runtime.resolve()?;
    let defaults = ServiceConfig::default();
    let config = ServiceConfig {
        // Never DIR itself: the service removes its folder at exit.
        root_dir: match args.root_dir {
            Some(dir) => dir.join(format!("mcpgym-sandbox-{}", std::process::id())),
            None => defaults.root_dir,
        },
        pool_size: args.pool,
        pool_max: args.pool_max,
        start_timeout: std::time::Duration::from_secs(args.start_timeout),
        execution_timeout: std::time::Duration::from_secs(args.execution_timeout),
        max_sandboxes: usize::try_from(args.max_sandboxes).unwrap_or(usize::MAX),
        token: args.token,
        limits: args.quotas.apply(defaults.limits.clone()),
        http: args.connections.config(),
        runtime,
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
