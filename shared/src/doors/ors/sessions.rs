//! ORS sessions and the episodes they are bound to.
//!
//! `POST /create` registers a session under its `X-Session-ID` with where its task comes
//! from. The session is bound to an ordinary hub episode as soon as its environment is known:
//! at once when `/create` names it (`env_name`, `X-Deployment`, or the only hosted one),
//! otherwise on the session's first `/<env>/…` request (ors-sdk's `session(split=, index=)`
//! sends no environment in `/create`). Sessions idle past the hub's idle TTL are dropped with
//! their episodes; the map holds at most the hub's `max_episodes` sessions.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use tokio::sync::watch;

use super::wire::{OrsError, TaskSpec, python_index};
use crate::env::Environment;
use crate::hub::{CreateEpisode, Hub, HubError};
use crate::task::Split;
use crate::trajectory::SessionRecord;

/// How long a finished call's result is kept for a client resuming with its `task_id`
/// (ors-sdk and openreward keep theirs as long).
const RESULT_LINGER: Duration = Duration::from_secs(60);

/// Where a session's task comes from.
#[derive(Debug, Clone)]
pub(super) enum TaskSource {
    /// A task object (`task_spec`).
    Spec(TaskSpec),
    /// The index-th task of a split.
    Index {
        /// The split.
        split: Split,
        /// The index, Python style.
        index: i64,
    },
}

impl TaskSource {
    /// The episode request this source makes in `env`.
    pub(super) fn request(&self, env: &dyn Environment) -> Result<CreateEpisode, OrsError> {
        Ok(match self {
            TaskSource::Spec(spec) => CreateEpisode {
                env: Some(env.name().to_owned()),
                task: Some(spec.id.clone()),
                seed: spec.seed,
                split: None,
                levels: None,
                options: spec.options.clone(),
                session: None,
            },
            TaskSource::Index { split, index } => {
                let tasks = env.tasks();
                let Some(id) = python_index(*index, tasks.len(*split))
                    .and_then(|position| tasks.get(*split, position))
                else {
                    return Err(OrsError::bad_request(format!(
                        "Invalid index {index}: the {split} split of {} has {} tasks (indices 0 to {}, or negative from the end)",
                        env.name(),
                        tasks.len(*split),
                        tasks.len(*split).saturating_sub(1)
                    )));
                };
                CreateEpisode {
                    env: Some(env.name().to_owned()),
                    task: Some(id),
                    seed: None,
                    split: Some(*split),
                    levels: None,
                    options: None,
                    session: None,
                }
            }
        })
    }
}

enum Binding {
    /// No episode yet: the environment is not known.
    Pending(TaskSource),
    /// The session's episode.
    Bound { env: &'static str, episode: String },
}

/// The outcome of one tool call: the compact JSON of `RunToolOutput`, or the message of an
/// SSE `error` event.
pub(super) type CallResult = Result<String, String>;

/// One tool call, kept so a client whose stream broke can resume it by `task_id`.
pub(super) struct Call {
    result: watch::Sender<Option<Arc<CallResult>>>,
    finished: Mutex<Option<Instant>>,
}

impl Call {
    /// Stores the outcome and wakes every stream waiting for it.
    pub(super) fn finish(&self, result: CallResult) {
        *lock(&self.finished) = Some(Instant::now());
        self.result.send_replace(Some(Arc::new(result)));
    }

    /// Waits for the outcome.
    pub(super) async fn outcome(&self) -> Arc<CallResult> {
        let mut receiver = self.result.subscribe();
        match receiver.wait_for(Option::is_some).await {
            Ok(value) => value
                .clone()
                .unwrap_or_else(|| Arc::new(Err(String::new()))),
            // The sender lives in `self`; it cannot be dropped while borrowed.
            Err(_) => Arc::new(Err("the call was abandoned".to_owned())),
        }
    }

    fn running(&self) -> bool {
        lock(&self.finished).is_none()
    }
}

/// One ORS session.
pub(super) struct Session {
    binding: tokio::sync::Mutex<Binding>,
    last_seen: Mutex<Instant>,
    deleted: AtomicBool,
    calls: Mutex<HashMap<String, Arc<Call>>>,
}

impl Session {
    /// Marks the session as used now.
    pub(super) fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    /// The environment the session is bound to, if it is bound.
    pub(super) async fn bound_env(&self) -> Option<&'static str> {
        match &*self.binding.lock().await {
            Binding::Bound { env, .. } => Some(env),
            Binding::Pending(_) => None,
        }
    }

    /// The session's episode in `env`, starting it if the session is not bound yet. Requests
    /// for the session wait while it starts.
    pub(super) async fn episode_for(
        &self,
        hub: &Hub,
        env: &Arc<dyn Environment>,
        id: &str,
    ) -> Result<String, OrsError> {
        let mut binding = self.binding.lock().await;
        let request = match &*binding {
            Binding::Bound {
                env: bound,
                episode,
            } if *bound == env.name() => {
                return Ok(episode.clone());
            }
            Binding::Bound { env: bound, .. } => {
                return Err(OrsError::bad_request(format!(
                    "this session plays {bound}, not {}; send its requests to /{bound}/…",
                    env.name()
                )));
            }
            Binding::Pending(source) => CreateEpisode {
                session: Some(SessionRecord::Ors { id: id.to_owned() }),
                ..source.request(env.as_ref())?
            },
        };
        let created = hub.create(request).await?;
        if self.deleted.load(Ordering::Acquire) {
            // Deleted while its episode started: nobody will use it.
            let _ = hub.delete(&created.id).await;
            return Err(HubError::UnknownEpisode(created.id).into());
        }
        *binding = Binding::Bound {
            env: created.env,
            episode: created.id.clone(),
        };
        Ok(created.id)
    }

    /// The episode, if bound; waits for a binding in progress.
    pub(super) async fn episode(&self) -> Option<String> {
        match &*self.binding.lock().await {
            Binding::Bound { episode, .. } => Some(episode.clone()),
            Binding::Pending(_) => None,
        }
    }

    /// Registers a new call under a fresh `task_id`, forgetting results kept past their time.
    pub(super) fn start_call(&self) -> (String, Arc<Call>) {
        let task_id = uuid::Uuid::new_v4().simple().to_string();
        let call = Arc::new(Call {
            result: watch::Sender::new(None),
            finished: Mutex::new(None),
        });
        let mut calls = lock(&self.calls);
        calls.retain(|_, call| lock(&call.finished).is_none_or(|t| t.elapsed() < RESULT_LINGER));
        calls.insert(task_id.clone(), call.clone());
        (task_id, call)
    }

    /// A call still kept, by `task_id`.
    pub(super) fn call(&self, task_id: &str) -> Option<Arc<Call>> {
        lock(&self.calls).get(task_id).cloned()
    }

    fn idle_since(&self) -> Instant {
        *lock(&self.last_seen)
    }

    fn busy(&self) -> bool {
        self.binding.try_lock().is_err() || lock(&self.calls).values().any(|c| c.running())
    }
}

/// Every ORS session of a server.
pub(super) struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    capacity: usize,
    ttl: Duration,
}

/// A poisoned lock only means another request panicked mid-update of plain data; go on.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Sessions {
    /// An empty map holding at most `capacity` sessions, each dropped after `ttl` unused.
    pub(super) fn new(capacity: usize, ttl: Duration) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            capacity,
            ttl,
        }
    }

    /// How often stale sessions are looked for.
    pub(super) fn sweep_period(&self) -> Duration {
        (self.ttl / 4).clamp(Duration::from_millis(50), Duration::from_secs(5))
    }

    /// Registers a session. Fails if the id is taken or the map is full (after dropping stale
    /// sessions, which are returned for [`Sessions::retire`]).
    pub(super) fn insert(
        &self,
        id: &str,
        source: TaskSource,
    ) -> (Result<Arc<Session>, OrsError>, Vec<Arc<Session>>) {
        let mut map = lock(&self.map);
        if map.contains_key(id) {
            return (
                Err(OrsError::bad_request(format!(
                    "Session already exists: {id:?} already has an episode; get a new id from POST /create_session"
                ))),
                Vec::new(),
            );
        }
        let mut stale = Vec::new();
        if map.len() >= self.capacity {
            stale = self.take_stale_locked(&mut map);
            if map.len() >= self.capacity {
                return (
                    Err(OrsError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!(
                            "the server already holds its maximum of {} ORS sessions; POST /delete finished ones, wait for idle ones to be dropped, or raise --max-episodes",
                            self.capacity
                        ),
                    )),
                    stale,
                );
            }
        }
        let session = Arc::new(Session {
            binding: tokio::sync::Mutex::new(Binding::Pending(source)),
            last_seen: Mutex::new(Instant::now()),
            deleted: AtomicBool::new(false),
            calls: Mutex::new(HashMap::new()),
        });
        map.insert(id.to_owned(), session.clone());
        (Ok(session), stale)
    }

    /// Holds again a session a previous server held, bound to its episode (see
    /// [`crate::hub::Hub::resume`]); a session already held is left as it is.
    pub(super) fn restore(&self, id: &str, env: &'static str, episode: &str) {
        let session = Arc::new(Session {
            binding: tokio::sync::Mutex::new(Binding::Bound {
                env,
                episode: episode.to_owned(),
            }),
            last_seen: Mutex::new(Instant::now()),
            deleted: AtomicBool::new(false),
            calls: Mutex::new(HashMap::new()),
        });
        lock(&self.map).entry(id.to_owned()).or_insert(session);
    }

    /// A session, marked as used now.
    pub(super) fn get(&self, id: &str) -> Option<Arc<Session>> {
        let session = lock(&self.map).get(id).cloned()?;
        session.touch();
        Some(session)
    }

    /// Removes a session; [`Sessions::retire`] closes its episode.
    pub(super) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let session = lock(&self.map).remove(id)?;
        session.deleted.store(true, Ordering::Release);
        Some(session)
    }

    /// Removes sessions unused for longer than the TTL and not busy.
    pub(super) fn take_stale(&self) -> Vec<Arc<Session>> {
        self.take_stale_locked(&mut lock(&self.map))
    }

    fn take_stale_locked(&self, map: &mut HashMap<String, Arc<Session>>) -> Vec<Arc<Session>> {
        let stale: Vec<String> = map
            .iter()
            .filter(|(_, s)| s.idle_since().elapsed() > self.ttl && !s.busy())
            .map(|(id, _)| id.clone())
            .collect();
        stale
            .iter()
            .filter_map(|id| map.remove(id))
            .inspect(|s| s.deleted.store(true, Ordering::Release))
            .collect()
    }

    /// Closes the episodes of removed sessions (those already closed are skipped).
    pub(super) async fn retire(hub: &Hub, sessions: Vec<Arc<Session>>) {
        for session in sessions {
            if let Some(episode) = session.episode().await {
                let _ = hub.delete(&episode).await;
            }
        }
    }
}
