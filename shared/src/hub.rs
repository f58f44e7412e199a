//! The hub: the environments a process hosts, its live episodes, and its settings. Every
//! transport (stdio, HTTP MCP, the control plane) goes through it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::JsonObject;
use serde::{Deserialize, Serialize};

use crate::env::{Environment, EpisodeSpec, EpisodeState, StartError};
use crate::episode::{Episode, EpisodeHeader, EpisodeStatus};
use crate::metrics::{Held, Metrics};
use crate::replica::{self, ReplicaName};
use crate::sessions::LegacySessions;
use crate::step::StepRecord;
use crate::store::{CloseReason, EpisodeSlot, EpisodeStore, FinishedEpisodes, NoPlace};
use crate::task::Split;
use crate::trajectory::{ImagePolicy, TrajectorySink, mime_type_of};
use mcpgym_env::generate::Level;

mod resume;

pub use resume::{RestoredSession, Resumed};

/// Why an episode is aborted when the legacy MCP session that started it is ended.
pub const SESSION_ENDED: &str = "the MCP session that started it was ended";

/// Finished episodes kept readable by default.
pub const DEFAULT_MAX_FINISHED: usize = 4096;

/// Settings shared by every episode a hub starts.
#[derive(Debug, Clone)]
pub struct HubSettings {
    /// Overrides each environment's default turn limit.
    pub max_turns: Option<u32>,
    /// Where to write one JSON Lines file per episode.
    pub trajectory_dir: Option<PathBuf>,
    /// Which observation images to write beside the trajectory files.
    pub trajectory_images: ImagePolicy,
    /// The most live episodes held at once (finished ones hold no place).
    pub max_episodes: usize,
    /// The most live episodes of one environment, by its name; an environment not named
    /// here has its own default ([`Environment::default_max_episodes`]), if any.
    pub max_episodes_per_env: BTreeMap<String, usize>,
    /// The most finished episodes kept readable; the oldest to finish is forgotten first.
    pub max_finished: usize,
    /// Episodes idle for longer than this are closed by the reaper.
    pub idle_ttl: Duration,
    /// The task used when a request names none (and the environment has it).
    pub default_task: Option<String>,
    /// The seed used when a request gives none; random otherwise.
    pub default_seed: Option<u64>,
    /// The split used when a request names none.
    pub default_split: Split,
    /// The levels a task is drawn from when a request names none (empty: every task).
    pub default_levels: Vec<Level>,
    /// Whether MCP sessions list a `reset` tool that starts a new episode.
    pub reset_tool: bool,
    /// This replica's name, put in front of every episode and session id it issues, so that a
    /// proxy in front of several routes each request to the replica holding its episode.
    pub replica: Option<ReplicaName>,
}

impl Default for HubSettings {
    fn default() -> Self {
        Self {
            max_turns: None,
            trajectory_dir: None,
            trajectory_images: ImagePolicy::default(),
            max_episodes: 10_000,
            max_episodes_per_env: BTreeMap::new(),
            max_finished: DEFAULT_MAX_FINISHED,
            idle_ttl: Duration::from_secs(900),
            default_task: None,
            default_seed: None,
            default_split: Split::Train,
            default_levels: Vec::new(),
            reset_tool: false,
            replica: None,
        }
    }
}

/// A request to start an episode, as `POST /episodes` takes it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateEpisode {
    /// The environment; may be left out when the server hosts only one.
    pub env: Option<String>,
    /// A task id; otherwise one is drawn from `split` with `seed`.
    pub task: Option<String>,
    /// The seed; the same task and seed give the same episode.
    pub seed: Option<u64>,
    /// The split to draw a task from.
    pub split: Option<Split>,
    /// Draw only a task of these levels (`["hard"]`), from the families that have levels;
    /// ignored when `task` names one. Default: the server's `--levels`, else every task.
    pub levels: Option<Vec<Level>>,
    /// Environment-specific options (see each environment's README section).
    pub options: Option<JsonObject>,
    /// The client session starting it, kept in the trajectory header (never from a body).
    #[serde(skip)]
    pub session: Option<crate::trajectory::SessionRecord>,
}

/// What `POST /episodes` answers.
#[derive(Debug, Clone, Serialize)]
pub struct EpisodeCreated {
    /// The new episode's id.
    pub id: String,
    /// Its environment.
    pub env: &'static str,
    /// Its task.
    pub task: String,
    /// Its seed.
    pub seed: u64,
    /// The path that serves MCP for exactly this episode.
    pub mcp_url: String,
}

/// Whether `task` is an instance of a generated family in the test split: what the test
/// secret derives.
fn is_generated_test_task(tasks: &crate::task::TaskSet, task: &str) -> bool {
    crate::task::parse_family_id(task)
        .is_some_and(|(name, _)| tasks.families().iter().any(|f| f.name == name))
        && tasks.split_of(task) == Some(Split::Test)
}

/// Whether `id` can be an episode id: ids are hex, after a replica's name and a `-` when the
/// server has one ([`replica`]); anything else cannot name a file of ours (and must not name
/// another).
pub fn is_episode_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= replica::MAX_NAME + 1 + 64
        && !id.starts_with('-')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Whether `name` can be an observation image's file name: `<turn>-<n>.<png|jpg|webp|gif>`.
pub fn is_image_name(name: &str) -> bool {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let Some((turn, n)) = stem.split_once('-') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit());
    digits(turn) && digits(n) && matches!(ext, "png" | "jpg" | "webp" | "gif")
}

/// The step records of a trajectory file's text after turn `after`, as JSON Lines.
pub fn steps_after(text: &str, after: u32) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let is_step = value
            .get("record")
            .and_then(|r| r.as_str())
            .unwrap_or("step")
            == "step";
        let turn = value.get("turn").and_then(|t| t.as_u64()).unwrap_or(0);
        if is_step && turn > u64::from(after) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Refuses a tool the environment does not have: the one check every transport makes, before
/// an episode is started or bound for the call.
pub fn check_tool(env: &dyn Environment, tool: &str) -> Result<(), HubError> {
    let tools = env.tools();
    if tools.iter().any(|t| t.name == tool) {
        return Ok(());
    }
    let offered: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    Err(HubError::UnknownTool {
        env: env.name(),
        tool: tool.to_owned(),
        offered: offered.join(", "),
    })
}

/// Why a hub request failed. Each message is a sentence the caller can act on.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The named environment is not hosted here.
    #[error("unknown environment {name:?}; this server hosts: {hosted}")]
    UnknownEnv {
        /// The name asked for.
        name: String,
        /// The names hosted.
        hosted: String,
    },
    /// Several environments are hosted and the request named none.
    #[error("name the environment with \"env\"; this server hosts: {0}")]
    EnvRequired(String),
    /// The task id does not exist in the environment.
    #[error(
        "unknown task {task:?} for {env}; list the task ids with GET /tasks?env={env}&split=train"
    )]
    UnknownTask {
        /// The environment.
        env: &'static str,
        /// The task asked for.
        task: String,
    },
    /// The task exists, but not in the split the request named.
    #[error("task {task:?} is in the {actual} split, not {requested}")]
    SplitMismatch {
        /// The task.
        task: String,
        /// The split the request named.
        requested: Split,
        /// The task's split.
        actual: Split,
    },
    /// The split has no tasks to draw from.
    #[error("the {split} split of {env} has no tasks")]
    EmptySplit {
        /// The environment.
        env: &'static str,
        /// The split.
        split: Split,
    },
    /// No family of the split has levels, so no task of the levels asked for can be drawn.
    #[error(
        "the {split} split of {env} has no task of level {levels}: none of its families has levels (list them with GET /tasks?env={env}, whose families show their levels); leave the levels out"
    )]
    NoTaskAtLevels {
        /// The environment.
        env: &'static str,
        /// The split.
        split: Split,
        /// The levels asked for, joined by commas.
        levels: String,
    },
    /// No live episode has this id.
    #[error(
        "unknown episode {0:?}: it never existed, was deleted, was closed after being idle, or finished before the last --max-finished finished episodes; start one with POST /episodes"
    )]
    UnknownEpisode(String),
    /// The request named an episode by the empty id (`/episodes//trajectory`).
    #[error(
        "no episode id in the request: name the episode by the id POST /episodes answered (e.g. /episodes/ID/trajectory)"
    )]
    NoEpisodeId,
    /// The episode id names another replica: the request bypassed the proxy, or named its
    /// episode only where a proxy cannot read it (in `_meta` or a body).
    #[error(
        "episode {id:?} belongs to replica {owner}, but this is replica {here}: send its requests through the proxy with the id where it routes on it (the path /episodes/{id}/…, or the header Mcpgym-Episode: {id})"
    )]
    Misrouted {
        /// The episode id.
        id: String,
        /// The replica it names.
        owner: String,
        /// This replica's name (`unnamed` when it has none).
        here: String,
    },
    /// The episode has no observation image by that name (kept in memory or on disk).
    #[error(
        "episode {id:?} has no image {name:?}: images are named <turn>-<n>.png, the live episode keeps its latest {recent}, and older ones are on disk only with --trajectory-dir (and --trajectory-images keeping them)",
        recent = crate::episode::RECENT_IMAGES
    )]
    NoImage {
        /// The episode id.
        id: String,
        /// The image asked for.
        name: String,
    },
    /// The episode was deleted or closed while the call waited for it or ran; the call was
    /// stopped.
    #[error(
        "episode {id:?} was {reason} while this call was running; the call was stopped. Start a new episode with POST /episodes"
    )]
    Closed {
        /// The episode.
        id: String,
        /// Why it was closed.
        reason: CloseReason,
    },
    /// The episode's environment exports no document by that name.
    #[error("episode {id:?} has no {name:?} to export; {env} episodes export: {offered}")]
    NoExport {
        /// The episode.
        id: String,
        /// Its environment.
        env: &'static str,
        /// The name asked for.
        name: String,
        /// What it does export.
        offered: String,
    },
    /// The store is full.
    #[error(
        "the server already holds its maximum of {0} live episodes (finished ones hold no place); delete unfinished ones you no longer need with DELETE /episodes/{{id}}, wait for idle ones to be reaped, or raise --max-episodes"
    )]
    Full(usize),
    /// An idempotency key that cannot be one.
    #[error(
        "the idempotency key {0:?} is not one: give 1 to 128 visible ASCII characters (a UUID is a good key)"
    )]
    BadKey(String),
    /// No call with this idempotency key has been answered on the episode.
    #[error(
        "episode {id:?} has answered no call with idempotency key {key:?}: the call never arrived (send it again with the same key), or it is among the older calls beyond the last {n} keys",
        n = crate::episode::ANSWERED_KEYS
    )]
    NoAnswer {
        /// The episode.
        id: String,
        /// The key.
        key: String,
    },
    /// The environment's own limit is reached (other environments may still start).
    #[error(
        "the server already holds its maximum of {limit} live {env} episodes ({idle} of them unused for a minute or more; finished ones hold no place); delete {env} episodes you no longer need with DELETE /episodes/{{id}}, wait for idle ones to be reaped, or raise it with --max-episodes {env}=N"
    )]
    EnvFull {
        /// The environment.
        env: &'static str,
        /// Its limit.
        limit: usize,
        /// How many of its live episodes have been idle for a minute or more.
        idle: usize,
    },
    /// The tool is not one of the episode's environment's tools.
    #[error("unknown tool {tool:?}; {env} offers: {offered}")]
    UnknownTool {
        /// The environment.
        env: &'static str,
        /// The tool asked for.
        tool: String,
        /// The tools it has.
        offered: String,
    },
    /// The environment could not start the episode.
    #[error(transparent)]
    Start(#[from] StartError),
}

/// Refuses what cannot be an idempotency key: 1 to 128 visible ASCII characters.
fn check_key(key: &str) -> Result<(), HubError> {
    let fine = (1..=128).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic());
    if fine {
        Ok(())
    } else {
        Err(HubError::BadKey(key.chars().take(140).collect()))
    }
}

/// Each environment's own limit on live episodes: the one `settings` names, else its
/// default. A name that is not an environment here is refused with a sentence.
fn env_limits(
    envs: &BTreeMap<&'static str, Arc<dyn Environment>>,
    settings: &HubSettings,
) -> std::io::Result<Vec<(&'static str, usize)>> {
    if let Some(unknown) = settings
        .max_episodes_per_env
        .keys()
        .find(|name| !envs.contains_key(name.as_str()))
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "--max-episodes names {unknown:?}, which this server does not host; it hosts: {}",
                envs.keys().copied().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(envs
        .iter()
        .filter_map(|(name, env)| {
            let limit = settings
                .max_episodes_per_env
                .get(*name)
                .copied()
                .or_else(|| env.default_max_episodes())?;
            Some((*name, limit))
        })
        .collect())
}

/// A fresh seed from the operating system's entropy, for episodes started without one.
fn random_seed() -> u64 {
    uuid::Uuid::new_v4().as_u64_pair().0
}

/// Finished episodes the hub remembers for the viewer's summary, newest last.
pub const RECENT_FINISHED: usize = 2000;

/// An episode that has ended, as the viewer's summary counts it.
#[derive(Debug, Clone, Serialize)]
pub struct FinishedEpisode {
    /// The episode id.
    pub id: String,
    /// Its environment.
    pub env: &'static str,
    /// Its task.
    pub task: String,
    /// Its return.
    #[serde(rename = "return")]
    pub return_: f64,
    /// Whether it solved the task ([`crate::episode::passed`]).
    pub passed: bool,
    /// Whether it ended at the turn limit.
    pub truncated: bool,
    /// Whether the environment failed.
    pub aborted: bool,
    /// Turns played.
    pub turn: u32,
    /// When it ended, RFC 3339.
    pub time: String,
}

/// The environments, the episodes and the settings behind every transport.
pub struct Hub {
    envs: BTreeMap<&'static str, Arc<dyn Environment>>,
    store: EpisodeStore,
    /// Finished episodes, readable, holding no place in `store`.
    finished_episodes: FinishedEpisodes,
    /// Legacy MCP sessions, reaped with the episodes.
    sessions: Arc<LegacySessions>,
    finished: std::sync::Mutex<std::collections::VecDeque<FinishedEpisode>>,
    settings: HubSettings,
    sink: Option<TrajectorySink>,
    metrics: Metrics,
    /// Door sessions [`Hub::resume`] found, for their doors to hold again.
    restored_sessions: std::sync::Mutex<Vec<RestoredSession>>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("envs", &self.envs.keys().collect::<Vec<_>>())
            .field("store", &self.store)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Hub {
    /// A hub for these environments. Starts the trajectory writer when a directory is set.
    pub fn new(
        envs: Vec<Arc<dyn Environment>>,
        settings: HubSettings,
    ) -> std::io::Result<Arc<Self>> {
        let sink = match &settings.trajectory_dir {
            Some(dir) => Some(TrajectorySink::start(dir, settings.trajectory_images)?),
            None => None,
        };
        let envs: BTreeMap<_, _> = envs.into_iter().map(|e| (e.name(), e)).collect();
        let per_env = env_limits(&envs, &settings)?;
        Ok(Arc::new_cyclic(|hub: &std::sync::Weak<Hub>| {
            let hub = hub.clone();
            // A client that ends its session ends the episode the session started.
            let sessions =
                LegacySessions::named(settings.replica.clone()).on_delete(move |session| {
                    let Some(hub) = hub.upgrade() else { return };
                    tokio::spawn(async move {
                        let started = session.binding.episode.lock().await.clone();
                        if let Some(id) = started {
                            hub.abort(&id, SESSION_ENDED).await;
                        }
                    });
                });
            Self {
                metrics: Metrics::new(envs.keys().copied()),
                store: EpisodeStore::new(settings.max_episodes, &per_env),
                finished_episodes: FinishedEpisodes::new(settings.max_finished),
                sessions: Arc::new(sessions),
                finished: std::sync::Mutex::new(std::collections::VecDeque::new()),
                envs,
                settings,
                sink,
                restored_sessions: std::sync::Mutex::default(),
            }
        }))
    }

    /// The hosted environments, by name.
    pub fn envs(&self) -> impl Iterator<Item = &Arc<dyn Environment>> {
        self.envs.values()
    }

    /// The settings.
    pub fn settings(&self) -> &HubSettings {
        &self.settings
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The legacy MCP sessions of every HTTP endpoint.
    pub fn sessions(&self) -> &Arc<LegacySessions> {
        &self.sessions
    }

    /// Live episodes held now (finished ones hold no place).
    pub fn live_episodes(&self) -> usize {
        self.store.len()
    }

    /// What the server holds now, for the metrics.
    pub fn held(&self) -> Held {
        Held {
            live: self.store.len(),
            finished: self.finished_episodes.len(),
            finished_dropped: self.finished_episodes.dropped(),
        }
    }

    fn hosted(&self) -> String {
        self.envs.keys().copied().collect::<Vec<_>>().join(", ")
    }

    /// An environment by name, or the only one when `name` is `None`.
    pub fn env(&self, name: Option<&str>) -> Result<&Arc<dyn Environment>, HubError> {
        match name {
            Some(name) => self.envs.get(name).ok_or_else(|| HubError::UnknownEnv {
                name: name.to_owned(),
                hosted: self.hosted(),
            }),
            None if self.envs.len() == 1 => Ok(self.envs.values().next().expect("one env")),
            None => Err(HubError::EnvRequired(self.hosted())),
        }
    }

    /// Checks that the default task (if any) exists in the environment, so a bad `--task`
    /// fails at start-up instead of on the first call.
    pub fn check_defaults(&self, env: &dyn Environment) -> Result<(), HubError> {
        match &self.settings.default_task {
            Some(task) if env.tasks().split_of(task).is_none() => Err(HubError::UnknownTask {
                env: env.name(),
                task: task.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// Starts an episode.
    pub async fn create(&self, request: CreateEpisode) -> Result<EpisodeCreated, HubError> {
        let env = self.env(request.env.as_deref())?.clone();
        let split = request.split.unwrap_or(self.settings.default_split);
        let seed = request
            .seed
            .or(self.settings.default_seed)
            .unwrap_or_else(random_seed);
        let task = match request.task {
            Some(task) => {
                let actual = env
                    .tasks()
                    .split_of(&task)
                    .ok_or_else(|| HubError::UnknownTask {
                        env: env.name(),
                        task: task.clone(),
                    })?;
                if let Some(requested) = request.split
                    && requested != actual
                {
                    return Err(HubError::SplitMismatch {
                        task,
                        requested,
                        actual,
                    });
                }
                task
            }
            None => match &self.settings.default_task {
                Some(task) if env.tasks().split_of(task).is_some() => task.clone(),
                _ => {
                    let levels = request
                        .levels
                        .as_deref()
                        .unwrap_or(&self.settings.default_levels);
                    env.tasks()
                        .pick_at(split, seed, levels)
                        .ok_or_else(|| match levels {
                            [] => HubError::EmptySplit {
                                env: env.name(),
                                split,
                            },
                            levels => HubError::NoTaskAtLevels {
                                env: env.name(),
                                split,
                                levels: levels
                                    .iter()
                                    .map(|l| l.name())
                                    .collect::<Vec<_>>()
                                    .join(","),
                            },
                        })?
                }
            },
        };
        let reservation = self.store.reserve(env.name()).map_err(|full| match full {
            NoPlace::Total(limit) => HubError::Full(limit),
            NoPlace::Env(env, limit) => HubError::EnvFull {
                env,
                limit,
                idle: self.store.count_of(env, Duration::from_secs(60)).1,
            },
        })?;
        let spec = EpisodeSpec {
            task,
            seed,
            options: request.options.unwrap_or_default(),
        };
        let state = env.start(&spec).await?;
        let id: Arc<str> = replica::qualify(
            self.settings.replica.as_ref(),
            uuid::Uuid::new_v4()
                .simple()
                .encode_lower(&mut uuid::Uuid::encode_buffer()),
        )
        .into();
        let header = EpisodeHeader {
            id: id.clone(),
            env: env.name(),
            task: spec.task.clone(),
            seed,
            max_turns: self
                .settings
                .max_turns
                .unwrap_or_else(|| env.default_max_turns()),
            options: spec.options.clone(),
            session: request.session,
            test_secret: is_generated_test_task(env.tasks(), &spec.task)
                .then(mcpgym_env::generate::test_secret_fingerprint),
        };
        let episode = Episode::new(header, state, self.sink.clone());
        let metrics = self.metrics.env(env.name()).cloned();
        if let Some(metrics) = &metrics {
            metrics.episode_started();
        }
        self.store
            .insert(reservation, env.clone(), metrics, episode);
        // The header (and the live marker) is in the journal before the client learns the id.
        if let Some(sink) = &self.sink {
            sink.synced().await;
        }
        tracing::debug!(episode = %id, env = env.name(), task = %spec.task, seed, "episode started");
        Ok(EpisodeCreated {
            mcp_url: format!("/episodes/{id}/mcp"),
            id: id.to_string(),
            env: env.name(),
            task: spec.task,
            seed,
        })
    }

    /// An episode: a live one, or a finished one still kept readable.
    pub fn episode(&self, id: &str) -> Result<Arc<EpisodeSlot>, HubError> {
        self.store
            .get(id)
            .or_else(|| self.finished_episodes.get(id))
            .ok_or_else(|| self.not_here(id))
    }

    /// The error for an episode id this replica does not hold: misrouted when the id names
    /// another replica (a request that reached the wrong one must not pass for an episode that
    /// ended), unknown otherwise.
    pub fn not_here(&self, id: &str) -> HubError {
        if id.is_empty() {
            return HubError::NoEpisodeId;
        }
        let here = self.settings.replica.as_ref();
        match replica::owner_of_episode(id) {
            Some(owner) if here.is_none_or(|here| here.as_str() != owner) => HubError::Misrouted {
                id: id.to_owned(),
                owner: owner.to_owned(),
                here: here.map_or_else(|| "unnamed".to_owned(), ToString::to_string),
            },
            _ => HubError::UnknownEpisode(id.to_owned()),
        }
    }

    /// Calls a tool on an episode: the typed step record every transport reports.
    pub async fn step(
        &self,
        id: &str,
        tool: &str,
        arguments: JsonObject,
    ) -> Result<StepRecord, HubError> {
        self.step_keyed(id, tool, arguments, None).await
    }

    /// [`Hub::step`] with an idempotency key: a call whose key this episode has already
    /// answered gets that answer again and plays no step.
    pub async fn step_keyed(
        &self,
        id: &str,
        tool: &str,
        arguments: JsonObject,
        key: Option<&str>,
    ) -> Result<StepRecord, HubError> {
        let slot = self.episode(id)?;
        self.step_on(&slot, tool, arguments, key).await
    }

    /// What the call made on episode `id` with idempotency key `key` answered: after a call
    /// still running on it ends, so a client whose connection dropped mid-call learns the
    /// outcome without playing it again.
    pub async fn answer(&self, id: &str, key: &str) -> Result<StepRecord, HubError> {
        check_key(key)?;
        let slot = self.episode(id)?;
        let episode = slot.episode.lock().await;
        episode
            .answered(key)
            .cloned()
            .ok_or_else(|| HubError::NoAnswer {
                id: id.to_owned(),
                key: key.to_owned(),
            })
    }

    /// [`Hub::step_keyed`] on an episode already looked up.
    pub async fn step_on(
        &self,
        slot: &EpisodeSlot,
        tool: &str,
        arguments: JsonObject,
        key: Option<&str>,
    ) -> Result<StepRecord, HubError> {
        check_tool(slot.env.as_ref(), tool)?;
        if let Some(key) = key {
            check_key(key)?;
        }
        let started = Instant::now();
        let run = async {
            let mut episode = slot.episode.lock().await;
            if let Some(answer) = key.and_then(|key| episode.answered(key)) {
                return (answer.clone(), false, None, true);
            }
            let was_done = episode.is_done();
            let result = episode.step_keyed(tool, arguments, key).await;
            if let Some(key) = key {
                episode.remember_answer(key, &result);
            }
            let finished_now = !was_done && episode.is_done();
            let revealed = finished_now.then(|| episode.revealed());
            slot.update_status(|status| {
                status.apply(&result);
                if let Some(revealed) = revealed {
                    status.revealed = revealed;
                }
            });
            let released = if finished_now {
                episode.retire(slot.env.exports())
            } else {
                None
            };
            (result, finished_now, released, false)
        };
        // Closing the episode (delete, reaper, shutdown) drops the call where it stands,
        // whether it waits for the lock or runs (a dropped E2B request interrupts its cell),
        // so the lock frees at once for the close.
        let (result, finished_now, released, replayed) = tokio::select! {
            biased;
            reason = slot.closed() => {
                return Err(HubError::Closed { id: slot.id.to_string(), reason });
            }
            done = run => done,
        };
        self.store.touch(slot);
        if replayed {
            return Ok(result);
        }
        // The step is in the journal before its answer leaves: a restart never rewinds past
        // what a client was told.
        if let Some(sink) = &self.sink {
            sink.synced().await;
        }
        if let Some(metrics) = &slot.metrics {
            metrics.tool_call(started.elapsed(), result.is_error);
            if finished_now {
                metrics.episode_finished();
            }
        }
        if finished_now {
            self.finished(slot, released);
        }
        Ok(result)
    }

    fn remember_finished(&self, status: EpisodeStatus) {
        let finished = FinishedEpisode {
            passed: status.passed(),
            id: status.id,
            env: status.env,
            task: status.task,
            return_: status.return_,
            truncated: status.truncated,
            aborted: status.aborted,
            turn: status.turn,
            time: crate::trajectory::now_rfc3339(),
        };
        let mut ring = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        if ring.len() == RECENT_FINISHED {
            ring.pop_front();
        }
        ring.push_back(finished);
    }

    /// The last [`RECENT_FINISHED`] episodes that ended, oldest first.
    pub fn recent_finished(&self) -> Vec<FinishedEpisode> {
        let ring = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        ring.iter().cloned().collect()
    }

    /// Live episodes and the finished ones still readable, newest first: at most `limit` of
    /// them, with the total.
    pub fn list(&self, limit: usize) -> (Vec<Arc<EpisodeSlot>>, usize) {
        let mut slots = self.store.all();
        slots.extend(self.finished_episodes.all());
        slots.sort_by_key(|slot| std::cmp::Reverse(slot.started));
        let total = slots.len();
        slots.truncate(limit);
        (slots, total)
    }

    /// What the agent is asked to do in this episode: the environment's instructions, then
    /// the task's prompt when it has one. Waits for a running call.
    pub async fn prompt(&self, id: &str) -> Result<String, HubError> {
        let slot = self.episode(id)?;
        let prompt = slot.episode.lock().await.prompt();
        if let Some(sink) = &self.sink {
            sink.synced().await;
        }
        Ok(crate::env::full_prompt(
            slot.env.instructions(),
            prompt.as_deref(),
        ))
    }

    /// An episode's public state as of its last finished call: answers at once, even while a
    /// call runs.
    pub async fn status(&self, id: &str) -> Result<EpisodeStatus, HubError> {
        Ok(self.episode(id)?.status())
    }

    /// An episode's step records after turn `after` as JSON Lines: from memory while it
    /// lives, from its file after (without the file's header and end records). While a call
    /// runs, this waits for it to finish (the record is written at its end).
    pub async fn trajectory(&self, id: &str, after: u32) -> Result<String, HubError> {
        if let Ok(slot) = self.episode(id) {
            let episode = slot.episode.lock().await;
            if !episode.trajectory_in_file() {
                return Ok(episode.trajectory_jsonl(after));
            }
        }
        if let (Some(sink), true) = (&self.sink, is_episode_id(id))
            && let Ok(text) = tokio::fs::read_to_string(sink.path_for(id)).await
        {
            return Ok(steps_after(&text, after));
        }
        Err(self.not_here(id))
    }

    /// One of an episode's observation images by file name (`<turn>-<n>.png`): from memory
    /// while the episode keeps it, else from the trajectory directory. Its MIME type and bytes.
    pub async fn image(&self, id: &str, name: &str) -> Result<(&'static str, Vec<u8>), HubError> {
        let missing = || HubError::NoImage {
            id: id.to_owned(),
            name: name.to_owned(),
        };
        if !is_image_name(name) || !is_episode_id(id) {
            return Err(missing());
        }
        if let Ok(slot) = self.episode(id) {
            let base64 = slot
                .episode
                .lock()
                .await
                .recent_image(name)
                .map(|image| image.base64.clone());
            if let Some(bytes) = base64.and_then(|b| {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD
                    .decode(b.as_bytes())
                    .ok()
            }) {
                return Ok((mime_type_of(name), bytes));
            }
        }
        match &self.sink {
            Some(sink) => match tokio::fs::read(sink.dir().join(id).join(name)).await {
                Ok(bytes) => Ok((mime_type_of(name), bytes)),
                Err(_) => Err(missing()),
            },
            None => Err(missing()),
        }
    }

    /// A document the episode exports (`GET /episodes/{id}/{name}`).
    pub async fn export(&self, id: &str, name: &str) -> Result<crate::env::Export, HubError> {
        let slot = self.episode(id)?;
        let episode = slot.episode.lock().await;
        // Deleted while this waited for a running call: gone, not lacking the document.
        if slot.closing().is_some() {
            return Err(HubError::UnknownEpisode(id.to_owned()));
        }
        episode.export(name).ok_or_else(|| HubError::NoExport {
            id: id.to_owned(),
            env: slot.env.name(),
            name: name.to_owned(),
            offered: match slot.env.exports() {
                [] => "nothing".to_owned(),
                names => names.join(", "),
            },
        })
    }

    /// Ends a live, unfinished episode as aborted (its return as it stood) after any call
    /// running on it, saying `reason` in its status: it releases what it holds and stays
    /// readable like any finished episode. An episode that is finished or not here is left as
    /// it is.
    pub async fn abort(&self, id: &str, reason: &str) {
        let Some(slot) = self.store.get(id) else {
            return;
        };
        let released = {
            let mut episode = slot.episode.lock().await;
            if !episode.abort(reason) {
                return;
            }
            slot.update_status(|status| *status = episode.status());
            episode.retire(slot.env.exports())
        };
        if let Some(metrics) = &slot.metrics {
            metrics.episode_finished();
        }
        self.finished(&slot, released);
        tracing::debug!(episode = id, reason, "episode aborted");
    }

    /// What follows an episode's end: it is counted for the viewer, leaves the live store for
    /// the finished table (still readable, holding no place), and its `released` state (a
    /// kernel, a display) is closed in the background.
    fn finished(&self, slot: &EpisodeSlot, released: Option<Box<dyn EpisodeState>>) {
        self.remember_finished(slot.status());
        if let Some(finished) = self.store.remove(&slot.id) {
            self.finished_episodes.insert(finished);
        }
        if let Some(state) = released {
            tokio::spawn(state.close());
        }
    }

    /// Closes an episode and releases everything it holds. It leaves the store at once (new
    /// calls get "unknown episode"); a call running on it is stopped with
    /// [`HubError::Closed`], and the environment's close (which kills a sandbox) runs as soon
    /// as that call has let go. Returns once the close is done; the close finishes even if the
    /// caller stops waiting.
    pub async fn delete(&self, id: &str) -> Result<(), HubError> {
        let slot = self
            .store
            .remove(id)
            .or_else(|| self.finished_episodes.remove(id))
            .ok_or_else(|| self.not_here(id))?;
        let closing = tokio::spawn(async move { slot.close(CloseReason::Deleted).await });
        if let Err(error) = closing.await {
            tracing::error!(episode = id, %error, "closing a deleted episode failed");
        }
        Ok(())
    }

    /// Starts the reaper: episodes and legacy sessions idle past the TTL are closed. Stops when
    /// the hub is dropped.
    pub fn spawn_reaper(self: &Arc<Self>) {
        let ttl = self.settings.idle_ttl;
        let period = (ttl / 4).clamp(Duration::from_millis(50), Duration::from_secs(10));
        let hub = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(period);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticker.tick().await;
                let Some(hub) = hub.upgrade() else { break };
                let idle = hub.store.take_idle(ttl);
                let idle_sessions = hub.sessions.remove_idle(ttl);
                drop(hub);
                if idle_sessions > 0 {
                    tracing::info!(count = idle_sessions, "ended idle MCP sessions");
                }
                if !idle.is_empty() {
                    tracing::info!(count = idle.len(), "closing idle episodes");
                }
                for slot in idle {
                    tokio::spawn(async move { slot.close(CloseReason::Idle).await });
                }
            }
        });
    }

    /// Closes every episode (at shutdown), stopping the calls that run on them.
    pub async fn close_all(&self) {
        self.sessions.clear();
        self.finished_episodes.clear();
        let slots = self.store.drain();
        // Stop every running call first, so no close waits behind another episode's call.
        for slot in &slots {
            slot.mark_closing(CloseReason::Shutdown);
        }
        for slot in slots {
            slot.close(CloseReason::Shutdown).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rmcp::model::Tool;
    use tokio::sync::Notify;
    use tokio::time::timeout;

    use super::*;
    use crate::env::{BoxFuture, EpisodeState, StepOutcome};
    use crate::task::TaskSet;

    /// What the test environment's episodes report.
    #[derive(Default)]
    struct Probe {
        /// A call has started (a permit per call).
        started: Notify,
        /// Lets one `wait` call finish.
        release: Notify,
        /// How often an episode was closed.
        closes: AtomicUsize,
        /// Calls dropped before they finished.
        dropped: AtomicUsize,
    }

    /// An environment whose `wait` tool runs until released, like a long cell.
    struct Slow {
        probe: Arc<Probe>,
        tasks: TaskSet,
        tools: Vec<Tool>,
    }

    struct SlowState(Arc<Probe>);

    /// Counts a call dropped before its end.
    struct Unfinished(Arc<Probe>, bool);
    impl Drop for Unfinished {
        fn drop(&mut self) {
            if !self.1 {
                self.0.dropped.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    impl Environment for Slow {
        fn name(&self) -> &'static str {
            "slow"
        }
        fn instructions(&self) -> &str {
            "call wait"
        }
        fn tasks(&self) -> &TaskSet {
            &self.tasks
        }
        fn tools(&self) -> &[Tool] {
            &self.tools
        }
        fn default_max_turns(&self) -> u32 {
            10
        }
        fn exports(&self) -> &[&'static str] {
            &["notes"]
        }
        fn start<'a>(
            &'a self,
            _spec: &'a EpisodeSpec,
        ) -> BoxFuture<'a, Result<Box<dyn EpisodeState>, StartError>> {
            let probe = self.probe.clone();
            Box::pin(async move { Ok(Box::new(SlowState(probe)) as Box<dyn EpisodeState>) })
        }
    }

    impl EpisodeState for SlowState {
        fn call<'a>(&'a mut self, tool: &'a str, _: JsonObject) -> BoxFuture<'a, StepOutcome> {
            Box::pin(async move {
                let mut unfinished = Unfinished(self.0.clone(), false);
                self.0.started.notify_one();
                if tool == "wait" {
                    self.0.release.notified().await;
                }
                unfinished.1 = true;
                match tool {
                    "finish" => StepOutcome::ok("finished")
                        .finish(vec![crate::reward::Reward::new("win", 1.0)]),
                    _ => StepOutcome::ok("done"),
                }
            })
        }
        fn reveal(&self) -> JsonObject {
            serde_json::json!({"answer": "t"})
                .as_object()
                .unwrap()
                .clone()
        }
        fn prompt(&mut self) -> Option<String> {
            Some("finish it".into())
        }
        fn export(&self, name: &str) -> Option<crate::env::Export> {
            (name == "notes").then(|| crate::env::Export {
                content_type: "text/plain",
                body: b"my notes".to_vec(),
            })
        }
        fn over_message(&self) -> &str {
            "Game over: the answer was t."
        }
        fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
            Box::pin(async move {
                self.0.closes.fetch_add(1, Ordering::SeqCst);
            })
        }
    }

    const PROMPT: Duration = Duration::from_secs(2);

    /// The test environment with these tools (none takes arguments), reporting to `probe`.
    fn slow(probe: &Arc<Probe>, tools: &[&'static str]) -> Slow {
        let tool = |name: &'static str| {
            Tool::new_with_raw(name, Some(name.into()), crate::schema::no_arguments())
        };
        Slow {
            probe: probe.clone(),
            tasks: TaskSet::new(vec!["t".into()], Vec::new()),
            tools: tools.iter().map(|name| tool(name)).collect(),
        }
    }

    async fn hub() -> (Arc<Hub>, Arc<Probe>, String) {
        let probe = Arc::new(Probe::default());
        let env = slow(&probe, &["wait", "quick"]);
        let hub = Hub::new(vec![Arc::new(env)], HubSettings::default()).unwrap();
        let id = hub.create(CreateEpisode::default()).await.unwrap().id;
        (hub, probe, id)
    }

    #[tokio::test]
    async fn a_finished_episode_frees_its_place_at_once_and_stays_readable() {
        let probe = Arc::new(Probe::default());
        let env = slow(&probe, &["finish", "quick"]);
        let settings = HubSettings {
            max_episodes: 1,
            max_finished: 2,
            ..HubSettings::default()
        };
        let hub = Hub::new(vec![Arc::new(env)], settings).unwrap();
        let first = hub.create(CreateEpisode::default()).await.unwrap().id;
        let full = hub.create(CreateEpisode::default()).await.unwrap_err();
        assert!(matches!(full, HubError::Full(1)), "{full:?}");
        hub.step(&first, "quick", JsonObject::new()).await.unwrap();
        let last = hub.step(&first, "finish", JsonObject::new()).await.unwrap();
        assert!(last.done && last.reward == 1.0, "{last:?}");

        // Its place is free at once, and its state released.
        let second = hub.create(CreateEpisode::default()).await.unwrap().id;
        timeout(PROMPT, async {
            while probe.closes.load(Ordering::SeqCst) < 1 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the finished episode's state is closed");

        // Everything a reader asks of it still answers.
        let status = hub.status(&first).await.unwrap();
        assert!(status.done && status.return_ == 1.0 && status.turn == 2);
        assert_eq!(status.revealed["answer"], "t");
        assert_eq!(hub.trajectory(&first, 0).await.unwrap().lines().count(), 2);
        assert_eq!(hub.export(&first, "notes").await.unwrap().body, b"my notes");
        assert!(
            hub.prompt(&first)
                .await
                .unwrap()
                .ends_with("Task: finish it")
        );
        let again = hub.step(&first, "quick", JsonObject::new()).await.unwrap();
        assert!(again.is_error && again.turn == 2 && again.reward == 0.0);
        assert!(format!("{:?}", again.content).contains("Game over: the answer was t."));
        let held = hub.held();
        assert_eq!((held.live, held.finished, held.finished_dropped), (1, 1, 0));

        // The finished table keeps the latest two; the oldest goes first.
        hub.step(&second, "finish", JsonObject::new())
            .await
            .unwrap();
        let third = hub.create(CreateEpisode::default()).await.unwrap().id;
        hub.step(&third, "finish", JsonObject::new()).await.unwrap();
        let held = hub.held();
        assert_eq!((held.live, held.finished, held.finished_dropped), (0, 2, 1));
        let forgotten = hub.status(&first).await.unwrap_err();
        assert!(
            matches!(forgotten, HubError::UnknownEpisode(_)),
            "{forgotten:?}"
        );
        assert!(hub.status(&second).await.unwrap().done);

        // Deleting a finished episode forgets it.
        hub.delete(&second).await.unwrap();
        assert!(hub.status(&second).await.is_err());
        assert_eq!(hub.held().finished, 1);
        assert_eq!(probe.closes.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_named_replica_names_itself_in_its_ids_and_points_elsewhere_for_others() {
        let env = Slow {
            probe: Arc::default(),
            tasks: TaskSet::new(vec!["t".into()], Vec::new()),
            tools: Vec::new(),
        };
        let settings = HubSettings {
            replica: Some(ReplicaName::new("mcpgym-4").unwrap()),
            ..HubSettings::default()
        };
        let hub = Hub::new(vec![Arc::new(env)], settings).unwrap();
        let created = hub.create(CreateEpisode::default()).await.unwrap();
        assert_eq!(replica::owner_of_episode(&created.id), Some("mcpgym-4"));
        assert!(is_episode_id(&created.id));
        assert_eq!(created.mcp_url, format!("/episodes/{}/mcp", created.id));
        hub.status(&created.id).await.unwrap();
        // Another replica's episode: misrouted, with where it lives and how to get there.
        let elsewhere = "mcpgym-5-0123456789abcdef0123456789abcdef";
        let error = hub.status(elsewhere).await.unwrap_err();
        assert!(matches!(error, HubError::Misrouted { .. }), "{error:?}");
        let sentence = error.to_string();
        assert!(
            sentence.contains("belongs to replica mcpgym-5, but this is replica mcpgym-4")
                && sentence.contains("Mcpgym-Episode"),
            "{sentence}"
        );
        // Its own name on an id it does not hold, or a bare id: unknown, as ever.
        for unknown in [
            "mcpgym-4-0123456789abcdef0123456789abcdef",
            "0123456789abcdef",
        ] {
            assert!(matches!(
                hub.delete(unknown).await,
                Err(HubError::UnknownEpisode(_))
            ));
        }
    }

    #[test]
    fn episode_ids_are_file_safe_with_or_without_a_replica_name() {
        for id in [
            "0123456789abcdef",
            "mcpgym-0-0123456789abcdef0123456789abcdef",
        ] {
            assert!(is_episode_id(id), "{id}");
        }
        for id in ["", "-x", "../x", "a/b", "a.b", "a b", &"a".repeat(200)] {
            assert!(!is_episode_id(id), "{id}");
        }
    }

    /// Starts a `wait` call and returns once it runs.
    async fn running_call(
        hub: &Arc<Hub>,
        probe: &Probe,
        id: &str,
    ) -> tokio::task::JoinHandle<Result<StepRecord, HubError>> {
        let (hub, id) = (hub.clone(), id.to_owned());
        let call = tokio::spawn(async move { hub.step(&id, "wait", JsonObject::new()).await });
        timeout(PROMPT, probe.started.notified())
            .await
            .expect("the call starts");
        call
    }

    #[tokio::test]
    async fn status_answers_while_a_call_runs() {
        let (hub, probe, id) = hub().await;
        let call = running_call(&hub, &probe, &id).await;
        let status = timeout(PROMPT, hub.status(&id))
            .await
            .expect("status does not wait for the running call")
            .unwrap();
        // As of the last finished call: none yet.
        assert_eq!((status.turn, status.done), (0, false));
        probe.release.notify_one();
        let result = timeout(PROMPT, call).await.unwrap().unwrap().unwrap();
        assert!(!result.is_error);
        assert_eq!(hub.status(&id).await.unwrap().turn, 1);
        hub.step(&id, "quick", JsonObject::new()).await.unwrap();
        assert_eq!(hub.status(&id).await.unwrap().turn, 2);
        assert_eq!(probe.closes.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn delete_stops_a_running_call_and_closes_once() {
        let (hub, probe, id) = hub().await;
        let call = running_call(&hub, &probe, &id).await;
        // A second call queued behind the first, waiting for the episode.
        let queued = {
            let (hub, id) = (hub.clone(), id.clone());
            tokio::spawn(async move { hub.step(&id, "quick", JsonObject::new()).await })
        };
        tokio::task::yield_now().await;

        timeout(PROMPT, hub.delete(&id))
            .await
            .expect("delete does not wait for the running call")
            .unwrap();
        assert_eq!(probe.closes.load(Ordering::SeqCst), 1);
        assert_eq!(
            probe.dropped.load(Ordering::SeqCst),
            1,
            "the call was dropped"
        );

        for handle in [call, queued] {
            let error = timeout(PROMPT, handle).await.unwrap().unwrap().unwrap_err();
            assert!(
                matches!(
                    error,
                    HubError::Closed {
                        reason: CloseReason::Deleted,
                        ..
                    }
                ),
                "{error:?}"
            );
            let text = error.to_string();
            assert!(
                text.contains(&format!(
                    "episode {id:?} was deleted while this call was running"
                )),
                "{text}"
            );
        }

        // Gone for everything else, and closed only once.
        assert!(matches!(
            hub.status(&id).await,
            Err(HubError::UnknownEpisode(_))
        ));
        assert!(matches!(
            hub.step(&id, "quick", JsonObject::new()).await,
            Err(HubError::UnknownEpisode(_))
        ));
        assert!(matches!(
            hub.delete(&id).await,
            Err(HubError::UnknownEpisode(_))
        ));
        assert_eq!(hub.live_episodes(), 0);
        assert_eq!(probe.closes.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn delete_of_an_idle_episode_closes_it_once() {
        let (hub, probe, id) = hub().await;
        hub.step(&id, "quick", JsonObject::new()).await.unwrap();
        hub.delete(&id).await.unwrap();
        assert_eq!(probe.closes.load(Ordering::SeqCst), 1);
        assert_eq!(probe.dropped.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn shutdown_stops_running_calls() {
        let (hub, probe, id) = hub().await;
        let call = running_call(&hub, &probe, &id).await;
        timeout(PROMPT, hub.close_all())
            .await
            .expect("shutdown does not wait for the running call");
        assert_eq!(probe.closes.load(Ordering::SeqCst), 1);
        let error = timeout(PROMPT, call).await.unwrap().unwrap().unwrap_err();
        assert!(
            matches!(
                error,
                HubError::Closed {
                    reason: CloseReason::Shutdown,
                    ..
                }
            ),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn the_reaper_leaves_a_running_call_alone() {
        let probe = Arc::new(Probe::default());
        let env = Slow {
            probe: probe.clone(),
            tasks: TaskSet::new(vec!["t".into()], Vec::new()),
            tools: vec![Tool::new_with_raw(
                "wait",
                Some("wait".into()),
                crate::schema::no_arguments(),
            )],
        };
        let settings = HubSettings {
            idle_ttl: Duration::from_millis(50),
            ..HubSettings::default()
        };
        let hub = Hub::new(vec![Arc::new(env)], settings).unwrap();
        hub.spawn_reaper();
        let id = hub.create(CreateEpisode::default()).await.unwrap().id;
        let call = running_call(&hub, &probe, &id).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        // Still there, and its status still answers.
        assert_eq!(hub.status(&id).await.unwrap().turn, 0);
        probe.release.notify_one();
        timeout(PROMPT, call).await.unwrap().unwrap().unwrap();
        // Idle now: reaped and closed once.
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(matches!(
            hub.status(&id).await,
            Err(HubError::UnknownEpisode(_))
        ));
        assert_eq!(probe.closes.load(Ordering::SeqCst), 1);
    }
}
