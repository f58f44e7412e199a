//! `mcpgym jupyter`: the Jupyter environment's flags, where its sandboxes come from, and the
//! sandbox service it can run inside this process.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mcpgym_jupyter::task_file::load_task_file;
use mcpgym_jupyter::{E2bClient, E2bConfig, Jupyter, JupyterConfig, JupyterTasks, RewardMode};
use mcpgym_sandbox::service::ServiceConfig;

use crate::choices;
use crate::jails::QuotaArgs;
use crate::registry::{Backing, Built, EnvFlags, Unstartable};
use crate::runtime::{MISSING, RuntimeArgs};

/// The Jupyter environment's own flags.
#[derive(Debug, Clone, clap::Args)]
pub struct JupyterFlags {
    /// Reward: sparse (only `correct`) or shaped (adds small costs per cell and per error).
    #[arg(long, value_parser = choices::parser::<RewardMode>(), default_value_t = RewardMode::Sparse)]
    reward: RewardMode,
    /// Cost of each cell run (`steps`); default 0 for sparse, 0.01 for shaped.
    #[arg(long, value_name = "X")]
    step_cost: Option<f64>,
    /// Cost of each cell that raised (`errors`); default 0 for sparse, 0.02 for shaped.
    #[arg(long, value_name = "X")]
    error_cost: Option<f64>,
    /// Longest a cell or shell command may run, in seconds; then it is interrupted and the
    /// observation says so.
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    cell_timeout: u64,
    /// Where sandboxes come from: `local` runs the sandbox service inside this process on a
    /// loopback port; an http:// or https:// URL reaches a remote `mcpgym sandbox` (its
    /// token, if any, from MCPGYM_SANDBOX_TOKEN), and several, comma-separated, spread the
    /// sandboxes over those hosts by free places (health-checked; a host that stops answering
    /// aborts its episodes and takes no new ones); `e2b` is E2B's cloud with E2B_API_KEY
    /// (over TLS, checked against the system's CA certificates).
    #[arg(long, value_name = "local|URL[,URL…]|e2b", default_value = "local")]
    sandbox: String,
    /// Jailed kernels the local sandbox service keeps started ahead of demand.
    #[arg(long, value_name = "N", default_value_t = 2)]
    sandbox_pool: usize,
    /// After a burst of episodes the local pool grows to the burst's size (for ten minutes),
    /// up to N kernels (an idle kernel costs about 40 MiB).
    #[arg(long, value_name = "N", default_value_t = 128)]
    sandbox_pool_max: usize,
    /// Longest a sandbox kernel may take to start, and an episode may wait for one when the
    /// local pool is empty (episodes queue for the kernels being started); then the episode
    /// fails to start with a sentence saying why.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    start_timeout: u64,
    #[command(flatten)]
    runtime: RuntimeArgs,
    /// Serve the tasks of this JSON Lines file instead of the built-in families (one task per
    /// line: id, split, prompt, files, setup, grader; see the README's "Your own tasks").
    #[arg(long, value_name = "FILE")]
    tasks: Option<std::path::PathBuf>,
}

impl JupyterFlags {
    /// The environment's configuration the flags describe.
    fn config(&self) -> JupyterConfig {
        JupyterConfig {
            reward: self.reward,
            step_cost: self.step_cost,
            error_cost: self.error_cost,
            cell_timeout: Duration::from_secs(self.cell_timeout),
        }
    }
}

impl EnvFlags for JupyterFlags {
    const NAME: &'static str = "jupyter";
    const ABOUT: &'static str = "Jupyter: solve a task by writing and running Python in a real \
        IPython kernel, one sandbox per episode (tools: get_task, add_and_execute_code_cell, \
        edit_and_execute_current_cell, execute_shell_command, get_notebook_state, final_answer)";
    const HEADING: &'static str = "Jupyter";
    const JAILS: bool = true;

    /// With `--sandbox local` the sandbox service runs in this process (see [`LocalSandbox`])
    /// and is stopped when the environment is released; it needs the runtime.
    fn build(self, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        self.assemble(quotas, false)
    }

    /// Without a runtime, `serve` still hosts the environment: its tasks are listed, and each
    /// episode fails to start saying how to install one.
    fn build_hosted(self, quotas: &QuotaArgs) -> anyhow::Result<Built> {
        self.assemble(quotas, true)
    }

    /// Tasks, tools and prompts need no kernel: no sandbox service is started, and the client
    /// names an address nothing listens on, since no episode is ever started on this one.
    fn catalog(self, _quotas: &QuotaArgs) -> anyhow::Result<Built> {
        let tasks = match &self.tasks {
            Some(path) => JupyterTasks::from_tasks(load_task_file(path)?),
            None => JupyterTasks::builtin(),
        };
        let client = E2bClient::new(E2bConfig::single_url(NOWHERE, None))?;
        Ok(Built::alone(Arc::new(Jupyter::with_tasks(
            client,
            self.config(),
            tasks,
        ))))
    }
}

/// Where the client of a Jupyter environment without a runtime points: never reached, since
/// [`Unstartable`] refuses every episode before it would start a sandbox.
const NOWHERE: &str = "http://127.0.0.1:9";

impl JupyterFlags {
    /// The environment; `hosted` beside others, as an [`Unstartable`] one when the local
    /// sandboxes have no runtime.
    fn assemble(self, quotas: &QuotaArgs, hosted: bool) -> anyhow::Result<Built> {
        let config = self.config();
        // Read and checked before any sandbox starts: a bad file fails at once, with its line.
        let tasks = match &self.tasks {
            Some(path) => JupyterTasks::from_tasks(load_task_file(path)?),
            None => JupyterTasks::builtin(),
        };
        let e2b = match self.sandbox.as_str() {
            "local" => None,
            "e2b" => {
                let key = std::env::var("E2B_API_KEY")
                    .context("--sandbox e2b needs E2B_API_KEY in the environment")?;
                Some(vec![E2bConfig::cloud(key)])
            }
            urls => {
                let token = std::env::var("MCPGYM_SANDBOX_TOKEN").ok();
                Some(
                    urls.split(',')
                        .map(|url| E2bConfig::single_url(url.trim(), token.clone()))
                        .collect(),
                )
            }
        };
        let Some(e2b) = e2b else {
            let python = match self.runtime.find()? {
                Some(python) => python,
                None if hosted => {
                    tracing::warn!("{MISSING}; until then Jupyter episodes fail to start");
                    let client = E2bClient::new(E2bConfig::single_url(NOWHERE, None))?;
                    let env = Arc::new(Jupyter::with_tasks(client, config, tasks));
                    return Ok(Built::alone(Arc::new(Unstartable { env, why: MISSING })));
                }
                None => anyhow::bail!(MISSING),
            };
            let sandbox = LocalSandbox::start(&self, quotas, python)?;
            let client = match sandbox.client() {
                Ok(client) => client,
                Err(error) => {
                    sandbox.stop();
                    return Err(error);
                }
            };
            return Ok(Built {
                env: Arc::new(Jupyter::with_tasks(client, config, tasks)),
                backing: Some(Box::new(sandbox)),
            });
        };
        let client = E2bClient::pool(e2b)?;
        Ok(Built::alone(Arc::new(Jupyter::with_tasks(
            client, config, tasks,
        ))))
    }
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
    fn start(
        flags: &JupyterFlags,
        quotas: &QuotaArgs,
        python: mcpgym_sandbox::Runtime,
    ) -> anyhow::Result<Self> {
        let token = random_token().context("cannot make a token for the local sandbox service")?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("sandbox")
            .enable_all()
            .build()?;
        let config = ServiceConfig {
            pool_size: flags.sandbox_pool,
            pool_max: flags.sandbox_pool_max,
            start_timeout: Duration::from_secs(flags.start_timeout),
            // Episodes are bounded by --max-episodes; one sandbox each.
            max_sandboxes: usize::MAX,
            // The client stops waiting at --cell-timeout and drops the request, which makes
            // the service interrupt the cell or kill the command. The service's own deadline
            // is only a backstop, late enough for task setups and hidden checks (120 s).
            execution_timeout: Duration::from_secs(flags.cell_timeout.max(120) + 5),
            token: Some(token.clone()),
            limits: quotas.apply(Default::default()),
            runtime: python,
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

impl Backing for LocalSandbox {
    fn release(self: Box<Self>) {
        self.stop();
    }
}

/// 256 bits from the kernel's random source, as hex.
fn random_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
