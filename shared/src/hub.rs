//! The hub: the environments a process hosts, its live episodes, and its settings. Every
//! transport (stdio, HTTP MCP, the control plane) goes through it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResult, JsonObject};
use serde::{Deserialize, Serialize};

use crate::env::{Environment, EpisodeSpec, StartError};
use crate::episode::{Episode, EpisodeHeader, EpisodeStatus};
use crate::metrics::Metrics;
use crate::rng::random_seed;
use crate::store::{EpisodeSlot, EpisodeStore};
use crate::task::Split;
use crate::trajectory::TrajectorySink;

/// Settings shared by every episode a hub starts.
#[derive(Debug, Clone)]
pub struct HubSettings {
    /// Overrides each environment's default turn limit.
    pub max_turns: Option<u32>,
    /// Where to write one JSON Lines file per episode.
    pub trajectory_dir: Option<PathBuf>,
    /// The most episodes held at once.
    pub max_episodes: usize,
    /// Episodes idle for longer than this are closed by the reaper.
    pub idle_ttl: Duration,
    /// The task used when a request names none (and the environment has it).
    pub default_task: Option<String>,
    /// The seed used when a request gives none; random otherwise.
    pub default_seed: Option<u64>,
    /// The split used when a request names none.
    pub default_split: Split,
    /// Whether MCP sessions list a `reset` tool that starts a new episode.
    pub reset_tool: bool,
}

impl Default for HubSettings {
    fn default() -> Self {
        Self {
            max_turns: None,
            trajectory_dir: None,
            max_episodes: 10_000,
            idle_ttl: Duration::from_secs(900),
            default_task: None,
            default_seed: None,
            default_split: Split::Train,
            reset_tool: false,
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
    /// Environment-specific options (see each environment's README section).
    pub options: Option<JsonObject>,
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
    /// No live episode has this id.
    #[error(
        "unknown episode {0:?}: it never existed, was deleted, or was closed after being idle; start one with POST /episodes"
    )]
    UnknownEpisode(String),
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
        "the server already holds its maximum of {0} episodes; delete finished ones with DELETE /episodes/{{id}}, wait for idle ones to be reaped, or raise --max-episodes"
    )]
    Full(usize),
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

/// The environments, the episodes and the settings behind every transport.
pub struct Hub {
    envs: BTreeMap<&'static str, Arc<dyn Environment>>,
    store: EpisodeStore,
    settings: HubSettings,
    sink: Option<TrajectorySink>,
    metrics: Metrics,
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
            Some(dir) => Some(TrajectorySink::start(dir)?),
            None => None,
        };
        let envs: BTreeMap<_, _> = envs.into_iter().map(|e| (e.name(), e)).collect();
        Ok(Arc::new(Self {
            metrics: Metrics::new(envs.keys().copied()),
            store: EpisodeStore::new(settings.max_episodes),
            envs,
            settings,
            sink,
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

    /// Episodes held now.
    pub fn live_episodes(&self) -> usize {
        self.store.len()
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
                _ => env
                    .tasks()
                    .pick(split, seed)
                    .ok_or(HubError::EmptySplit {
                        env: env.name(),
                        split,
                    })?
                    .to_owned(),
            },
        };
        let reservation = self
            .store
            .reserve()
            .ok_or(HubError::Full(self.store.capacity()))?;
        let spec = EpisodeSpec {
            task,
            seed,
            options: request.options.unwrap_or_default(),
        };
        let state = env.start(&spec).await?;
        let id: Arc<str> = uuid::Uuid::new_v4().simple().to_string().into();
        let header = EpisodeHeader {
            id: id.clone(),
            env: env.name(),
            task: spec.task.clone(),
            seed,
            max_turns: self
                .settings
                .max_turns
                .unwrap_or_else(|| env.default_max_turns()),
        };
        let episode = Episode::new(header, state, self.sink.clone());
        self.store.insert(reservation, env.clone(), episode);
        if let Some(metrics) = self.metrics.env(env.name()) {
            metrics.episode_started();
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

    /// A live episode.
    pub fn episode(&self, id: &str) -> Result<Arc<EpisodeSlot>, HubError> {
        self.store
            .get(id)
            .ok_or_else(|| HubError::UnknownEpisode(id.to_owned()))
    }

    /// Calls a tool on an episode.
    pub async fn call(
        &self,
        id: &str,
        tool: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, HubError> {
        let slot = self.episode(id)?;
        let env = &slot.env;
        if !env.tools().iter().any(|t| t.name == tool) {
            return Err(HubError::UnknownTool {
                env: env.name(),
                tool: tool.to_owned(),
                offered: env
                    .tools()
                    .iter()
                    .map(|t| t.name.as_ref())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let started = Instant::now();
        let mut episode = slot.episode.lock().await;
        let was_done = episode.is_done();
        let result = episode.step(tool, arguments).await;
        let finished_now = !was_done && episode.is_done();
        drop(episode);
        self.store.touch(&slot);
        if let Some(metrics) = self.metrics.env(env.name()) {
            metrics.tool_call(started.elapsed(), result.is_error == Some(true));
            if finished_now {
                metrics.episode_finished();
            }
        }
        Ok(result)
    }

    /// An episode's public state.
    pub async fn status(&self, id: &str) -> Result<EpisodeStatus, HubError> {
        let slot = self.episode(id)?;
        let episode = slot.episode.lock().await;
        Ok(episode.status())
    }

    /// An episode's trajectory as JSON Lines: from memory while it lives, from its file after.
    pub async fn trajectory(&self, id: &str) -> Result<String, HubError> {
        if let Some(slot) = self.store.get(id) {
            return Ok(slot.episode.lock().await.trajectory_jsonl());
        }
        // Ids are hex; anything else cannot name a file of ours (and must not name another).
        let well_formed = !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit());
        if let (Some(sink), true) = (&self.sink, well_formed)
            && let Ok(text) = tokio::fs::read_to_string(sink.path_for(id)).await
        {
            return Ok(text);
        }
        Err(HubError::UnknownEpisode(id.to_owned()))
    }

    /// A document the episode exports (`GET /episodes/{id}/{name}`).
    pub async fn export(&self, id: &str, name: &str) -> Result<crate::env::Export, HubError> {
        let slot = self.episode(id)?;
        let episode = slot.episode.lock().await;
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

    /// Closes an episode and releases everything it holds.
    pub async fn delete(&self, id: &str) -> Result<(), HubError> {
        let slot = self
            .store
            .remove(id)
            .ok_or_else(|| HubError::UnknownEpisode(id.to_owned()))?;
        slot.episode.lock().await.close().await;
        Ok(())
    }

    /// Starts the reaper: episodes idle past the TTL are closed. Stops when the hub is dropped.
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
                drop(hub);
                if !idle.is_empty() {
                    tracing::info!(count = idle.len(), "closing idle episodes");
                }
                for slot in idle {
                    tokio::spawn(async move { slot.episode.lock().await.close().await });
                }
            }
        });
    }

    /// Closes every episode (at shutdown).
    pub async fn close_all(&self) {
        for slot in self.store.drain() {
            slot.episode.lock().await.close().await;
        }
    }
}
