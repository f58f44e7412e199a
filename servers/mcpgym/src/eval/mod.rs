//! `mcpgym eval`: runs a policy (a model behind an API, or a built-in one) over an
//! environment's tasks, in process, and prints pass rates per family.
//!
//! Each task is played `k` times (same task, same seed) by an agent loop over the hub: the
//! episode's own tool list is handed to the policy, each call it asks for is made on the
//! episode, and the loop ends when the episode is done, at the turn limit, when the policy
//! stops calling tools, or when the policy breaks (its endpoint fails past its retries, its
//! context overflows) — that episode's result, never the run's. Every episode's trajectory is
//! written to the output folder beside `eval.json`, the summary, rewritten after every
//! episode, so a run that is stopped resumes where it was (`mcpgym view OUT` shows both).

mod endpoint;
mod policy;
mod summary;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use mcpgym_shared::hub::{CreateEpisode, Hub, HubSettings};
use mcpgym_shared::oracle::Answered;
use mcpgym_shared::{Environment, Split};
use tokio::sync::Mutex;

use crate::export::{Progress, Rows, Selection};
use crate::jails::QuotaArgs;
use crate::registry::{Built, Registration};
use policy::{Call, Policy, PolicyKind, Stop};
use summary::{EpisodeResult, RunConfig, Summary};

/// Flags of `mcpgym eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// The environment.
    #[arg(long, value_name = "ENV", value_parser = crate::export::env_names())]
    env: String,
    /// Who plays: a model behind `--api`, or a built-in policy: `oracle` (the family's
    /// reference solver or demo: the ceiling), `noop` (no call at all: the floor), `random`
    /// (random tools with random arguments).
    #[arg(long, value_name = "POLICY", default_value = "model", value_parser = ["model", "oracle", "noop", "random"])]
    policy: String,
    /// The model's API: `openai` (chat completions with tool calling: vLLM, SGLang, Ollama,
    /// llama.cpp's server, OpenAI), `anthropic` (the Messages API; the desktop through the
    /// `computer_20251124` tool), `qwen3vl` (an OpenAI-compatible endpoint serving Qwen3-VL; the
    /// desktop in its `computer_use` action space).
    #[arg(long, value_name = "API", default_value = "openai", value_parser = ["openai", "anthropic", "qwen3vl"])]
    api: String,
    /// The API's base URL, e.g. http://127.0.0.1:8001/v1 for vLLM (`/chat/completions` or
    /// `/messages` is added). Default: OpenAI's or Anthropic's.
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
    /// The model's name, as the endpoint knows it.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The environment variable holding the API key (never printed nor written). Default:
    /// OPENAI_API_KEY, or ANTHROPIC_API_KEY for `--api anthropic`; a missing variable sends no
    /// key (local servers need none).
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// Sampling temperature.
    #[arg(long, value_name = "T", default_value_t = 0.0)]
    temperature: f64,
    /// Most tokens the model may write per call.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    max_tokens: u32,
    /// Longest one model call may take before it is retried.
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    request_timeout: u64,
    /// Retries of a model call that timed out, could not connect or got 429 or 5xx (with
    /// exponential backoff from 1 s, honouring Retry-After).
    #[arg(long, value_name = "N", default_value_t = 5)]
    retries: u32,
    /// Longest one episode may take; then it ends as it stands.
    #[arg(long, value_name = "SECS", default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    episode_timeout: u64,
    /// Turn limit of each episode (default: the environment's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_turns: Option<u32>,
    /// The split to take tasks from.
    #[arg(long, value_name = "SPLIT", default_value = "test", value_parser = ["train", "test"])]
    split: String,
    /// Only these task families (comma-separated); default: every family of the split and
    /// the tasks listed by id.
    #[arg(long, value_name = "NAME,…", value_delimiter = ',')]
    families: Vec<String>,
    /// Only tasks of these levels (comma-separated: easy, medium, hard), from the families
    /// that have levels; default: every task.
    #[arg(long, value_name = "LEVEL,…", value_delimiter = ',')]
    levels: Vec<mcpgym_shared::generate::Level>,
    /// Tasks to play, one of each family in turn. Default: 2 of each family
    /// (`--per-family`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "per_family")]
    count: Option<u64>,
    /// Tasks to play of each family (and of the listed tasks, taken as one group).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    per_family: Option<u64>,
    /// The first task's seed; task i gets seed SEED + i.
    #[arg(long, value_name = "SEED", default_value_t = 0)]
    seed: u64,
    /// Samples of each task (pass@k is over these).
    #[arg(short, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    k: u32,
    /// Episodes played at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    concurrency: u32,
    /// The folder for eval.json and every episode's trajectory. A folder holding a run with
    /// the same settings is resumed: finished episodes are not played again.
    #[arg(long, short, value_name = "DIR")]
    output: PathBuf,
    /// The environment's own flags, as `mcpgym ENV` takes them.
    #[arg(last = true, value_name = "ENV_FLAGS")]
    env_flags: Vec<String>,
}

impl EvalArgs {
    /// The environment's name.
    pub fn env_name(&self) -> &str {
        &self.env
    }
}

/// One episode to play.
#[derive(Debug, Clone)]
struct Job {
    task: String,
    family: String,
    /// The task's level, where its family has levels.
    level: Option<String>,
    seed: u64,
    sample: u32,
}

/// Runs `mcpgym eval`: exit status 0 once every episode has a result.
pub fn run(args: EvalArgs, quotas: &QuotaArgs) -> anyhow::Result<()> {
    let kind = PolicyKind::from_args(&args)?;
    let registration = Registration::find(&args.env).context("no such environment")?;
    let mut env_flags = args.env_flags.clone();
    env_flags.extend(kind.env_flags(&args.env));
    let Built { env, backing } = registration
        .build_with(&env_flags, quotas)
        .with_context(|| format!("cannot start {}", args.env))?;
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(evaluate(&args, kind, env));
    Built::release(backing);
    result
}

async fn evaluate(
    args: &EvalArgs,
    kind: PolicyKind,
    env: Arc<dyn Environment>,
) -> anyhow::Result<()> {
    let jobs = jobs(args, &env)?;
    let config = RunConfig::of(args, &kind);
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot make {}", args.output.display()))?;
    let summary = Summary::open(&args.output, config)?;
    let pending: Vec<Job> = jobs
        .into_iter()
        .filter(|job| !summary.has(&job.task, job.seed, job.sample))
        .collect();
    if summary.len() > 0 {
        eprintln!(
            "resuming {}: {} episodes done, {} to play",
            args.output.display(),
            summary.len(),
            pending.len()
        );
    }
    let settings = HubSettings {
        max_turns: args.max_turns,
        trajectory_dir: Some(args.output.clone()),
        max_episodes: (args.concurrency as usize).max(1),
        ..HubSettings::default()
    };
    let hub = Arc::new(Hub::new(vec![env.clone()], settings)?);
    let summary = Arc::new(Mutex::new(summary));
    let progress = Arc::new(std::sync::Mutex::new(Progress::new(
        "episodes",
        pending.len() as u64,
    )));
    let gate = Arc::new(tokio::sync::Semaphore::new(args.concurrency as usize));
    let kind = Arc::new(kind);
    let mut playing = tokio::task::JoinSet::new();
    for job in pending {
        let (hub, summary, progress, gate, kind, env) = (
            hub.clone(),
            summary.clone(),
            progress.clone(),
            gate.clone(),
            kind.clone(),
            env.clone(),
        );
        let timeout = Duration::from_secs(args.episode_timeout);
        playing.spawn(async move {
            let _permit = gate.acquire_owned().await;
            let result = play(&hub, &env, &kind, &job, timeout).await;
            let written = summary.lock().await.record(result);
            progress.lock().unwrap_or_else(|e| e.into_inner()).tick();
            written
        });
    }
    while let Some(done) = playing.join_next().await {
        done.context("an episode's task panicked")??;
    }
    hub.close_all().await;
    if let Ok(progress) = Arc::try_unwrap(progress) {
        progress
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .finish();
    }
    let summary = summary.lock().await;
    print!("{}", summary.table_text());
    println!(
        "{} episodes; summary in {} (open it with `mcpgym view {}`)",
        summary.len(),
        summary.path().display(),
        args.output.display()
    );
    Ok(())
}

/// Every episode of the run, in order: tasks taken one of each family in turn, each `k` times.
fn jobs(args: &EvalArgs, env: &Arc<dyn Environment>) -> anyhow::Result<Vec<Job>> {
    let split: Split = args.split.parse().map_err(anyhow::Error::msg)?;
    let selection = |count| Selection {
        split,
        families: args.families.clone(),
        levels: args.levels.clone(),
        count,
        seed: args.seed,
    };
    let groups = Rows::new(env.clone(), selection(Some(1)))?.groups();
    let count = args
        .count
        .unwrap_or(groups as u64 * args.per_family.unwrap_or(2));
    let rows = Rows::new(env.clone(), selection(Some(count)))?;
    let tasks = env.tasks();
    let level_of = |task: &str| {
        let (name, n) = mcpgym_shared::task::parse_family_id(task)?;
        let family = tasks.families().iter().find(|f| f.name == name)?;
        Some(family.level_of(n)?.name().to_owned())
    };
    Ok(rows
        .iter()
        .flat_map(|row| {
            let family = row
                .extra_info
                .family
                .clone()
                .unwrap_or_else(|| "listed".to_owned());
            let level = level_of(&row.task);
            (0..args.k).map(move |sample| Job {
                task: row.task.clone(),
                family: family.clone(),
                level: level.clone(),
                seed: row.seed,
                sample,
            })
        })
        .collect())
}

/// Plays one episode to its end; every failure is the episode's result.
async fn play(
    hub: &Hub,
    env: &Arc<dyn Environment>,
    kind: &PolicyKind,
    job: &Job,
    timeout: Duration,
) -> EpisodeResult {
    let started = Instant::now();
    let mut result = EpisodeResult::new(&job.task, &job.family, job.seed, job.sample);
    result.level = job.level.clone();
    let created = match hub
        .create(CreateEpisode {
            env: Some(env.name().to_owned()),
            task: Some(job.task.clone()),
            seed: Some(job.seed),
            ..CreateEpisode::default()
        })
        .await
    {
        Ok(created) => created,
        Err(error) => {
            result.error = Some(format!("the episode did not start: {error}"));
            result.wall_s = started.elapsed().as_secs_f64();
            return result;
        }
    };
    result.episode = created.id.clone();
    let outcome = tokio::time::timeout(
        timeout,
        drive(hub, env, kind, job, &created.id, &mut result),
    )
    .await;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(stop)) => result.error = Some(stop.to_string()),
        Err(_) => result.error = Some(format!("the episode took longer than {timeout:?}")),
    }
    if let Ok(status) = hub.status(&created.id).await {
        result.apply(&status);
    }
    let _ = hub.delete(&created.id).await;
    result.wall_s = started.elapsed().as_secs_f64();
    result
}

/// The agent loop: the policy's calls made on the episode until it ends or the policy stops.
async fn drive(
    hub: &Hub,
    env: &Arc<dyn Environment>,
    kind: &PolicyKind,
    job: &Job,
    id: &str,
    result: &mut EpisodeResult,
) -> Result<(), Stop> {
    let prompt = hub
        .prompt(id)
        .await
        .map_err(|error| Stop::Environment(error.to_string()))?;
    let mut policy: Box<dyn Policy> = kind.start(env, job, &prompt)?;
    // Calls refused before they reach the episode (an unknown tool, malformed arguments)
    // use no turn: the rounds are bounded too, so a model repeating one never loops forever.
    let turns = hub.status(id).await.map_or(100, |s| s.max_turns);
    let mut answered: Vec<policy::Answer> = Vec::new();
    for _ in 0..=turns.saturating_mul(2) {
        let calls = policy.next(&answered).await;
        let usage = policy.usage();
        (result.tokens_in, result.tokens_out) = (usage.0, usage.1);
        let calls = calls?;
        if calls.is_empty() {
            return Ok(());
        }
        answered.clear();
        for call in calls {
            let answer = make(hub, id, call).await;
            let over = answer.record.as_ref().is_ok_and(|r| r.done);
            answered.push(answer);
            if over {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Makes one call on the episode; a call the hub refuses (an unknown tool, an episode gone)
/// or malformed arguments become an error answer the policy sees.
async fn make(hub: &Hub, id: &str, call: Call) -> policy::Answer {
    let record = match call.arguments {
        Ok(arguments) => hub
            .step(id, &call.tool, arguments)
            .await
            .map_err(|error| error.to_string()),
        Err(malformed) => Err(malformed),
    };
    policy::Answer {
        id: call.id,
        tool: call.tool,
        record,
    }
}

impl policy::Answer {
    /// The answer as an oracle reads it.
    fn as_answered(&self) -> Answered<'_> {
        match &self.record {
            Ok(record) => Answered {
                text: record
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map_or("", |t| t.text.as_str()),
                structured: record.structured.as_ref(),
                is_error: record.is_error,
            },
            Err(error) => Answered {
                text: error,
                structured: None,
                is_error: true,
            },
        }
    }
}
