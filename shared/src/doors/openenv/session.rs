//! OpenEnv sessions and the episode operations behind every OpenEnv route.
//!
//! An OpenEnv session is what a client holds between resets: a WebSocket connection, or a
//! session made with JSON-RPC `openenv/session/create` (which a WebSocket may then attach to
//! with `?session_id=`). It runs at most one episode at a time, an ordinary hub episode; a
//! reset closes the previous one. Operations on a session run one at a time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::time::Instant;

use serde_json::Value;

use super::wire::{self, Action, DoorError, ResetParams};
use crate::env::Environment;
use crate::hub::{CreateEpisode, Hub, HubError};
use crate::replica::ReplicaName;
use crate::task::Split;
use crate::trajectory::SessionRecord;

/// Starts an episode of `env` from reset parameters; answers the reset envelope and the id.
pub async fn start(
    hub: &Hub,
    env: &Arc<dyn Environment>,
    params: ResetParams,
    session: Option<SessionRecord>,
) -> Result<(Value, Arc<str>), DoorError> {
    let task = match params.index {
        Some(index) => {
            let split = params.split.unwrap_or(hub.settings().default_split);
            Some(task_at(env.as_ref(), split, index)?)
        }
        None => params.task,
    };
    let created = hub
        .create(CreateEpisode {
            env: Some(env.name().to_owned()),
            task,
            seed: params.seed,
            split: params.split,
            levels: None,
            options: params.options,
            session,
        })
        .await?;
    let prompt = hub.prompt(&created.id).await?;
    let envelope = wire::reset_envelope(&created, prompt, params.episode_id.as_deref());
    Ok((envelope, created.id.into()))
}

/// The task at `index` in a split's task list.
fn task_at(env: &dyn Environment, split: Split, index: usize) -> Result<String, DoorError> {
    let tasks = env.tasks();
    tasks.get(split, index as u64).ok_or_else(|| {
        DoorError::Invalid(format!(
            "index {index} is out of range: the {split} split of {} has {} tasks (indices 0 to {})",
            env.name(),
            tasks.len(split),
            tasks.len(split).saturating_sub(1)
        ))
    })
}

/// The key of a step's `metadata` that holds its idempotency key.
pub const IDEMPOTENCY_KEY: &str = "idempotency_key";

/// Runs one action on an episode of `env` (none yet: only `list_tools` works).
pub async fn step(
    hub: &Hub,
    env: &Arc<dyn Environment>,
    episode: Option<&str>,
    action: Action,
) -> Result<Value, DoorError> {
    let status = match episode {
        Some(id) => Some(episode_of(hub, env.as_ref(), id)?.status()),
        None => None,
    };
    match action {
        Action::ListTools { .. } => Ok(wire::list_tools_envelope(env.as_ref(), status.as_ref())),
        Action::CallTool {
            tool_name,
            arguments,
            metadata,
        } => {
            let (Some(id), Some(status)) = (episode, status) else {
                return Err(DoorError::NoEpisode);
            };
            let key = match metadata.as_ref().and_then(|m| m.get(IDEMPOTENCY_KEY)) {
                None => None,
                Some(Value::String(key)) => Some(key.as_str()),
                Some(other) => {
                    return Err(DoorError::Invalid(format!(
                        "metadata.{IDEMPOTENCY_KEY} must be a string (a UUID is a good key), not {other}"
                    )));
                }
            };
            match hub
                .step_keyed(id, &tool_name, arguments.unwrap_or_default(), key)
                .await
            {
                Ok(step) => Ok(wire::call_envelope(&tool_name, &step)),
                Err(error @ HubError::UnknownTool { .. }) => Ok(wire::call_error_envelope(
                    &tool_name,
                    "tool_not_found",
                    error.to_string(),
                    &status,
                )),
                Err(error) => Err(error.into()),
            }
        }
    }
}

/// OpenEnv's state of an episode of `env` (or of none).
pub fn state(hub: &Hub, env: &dyn Environment, episode: Option<&str>) -> Result<Value, DoorError> {
    let status = match episode {
        Some(id) => Some(episode_of(hub, env, id)?.status()),
        None => None,
    };
    Ok(wire::state(env, status.as_ref()))
}

/// A live episode that belongs to `env`.
fn episode_of(
    hub: &Hub,
    env: &dyn Environment,
    id: &str,
) -> Result<Arc<crate::store::EpisodeSlot>, DoorError> {
    let slot = hub.episode(id)?;
    if slot.env.name() != env.name() {
        return Err(DoorError::Invalid(format!(
            "episode {id:?} is a {} episode, not a {} one; use /{}/step",
            slot.env.name(),
            env.name(),
            slot.env.name()
        )));
    }
    Ok(slot)
}

/// One OpenEnv session: an environment and the episode it runs now.
pub struct Session {
    id: Arc<str>,
    env: Arc<dyn Environment>,
    /// Held by each operation, so they run one at a time and in order.
    running: tokio::sync::Mutex<()>,
    episode: Mutex<Option<Arc<str>>>,
    /// Whether a WebSocket is attached (at most one is: a newer one takes over).
    attached: AtomicBool,
    /// How many WebSockets have attached so far; the newest is the one attached. A change
    /// tells the one before that it was taken over.
    attachments: tokio::sync::watch::Sender<u64>,
    /// A close was asked for while a WebSocket was attached; it happens when it detaches.
    close_pending: AtomicBool,
    touched: Mutex<Instant>,
    /// Made with `openenv/session/create`, so a client may come back to it by id (after a
    /// restart too: its episodes' trajectory headers name it); a WebSocket's own session
    /// ends with the connection.
    named: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("env", &self.env.name())
            .field("episode", &self.episode())
            .finish_non_exhaustive()
    }
}

/// A new session id, after `replica`'s name when the server has one.
fn fresh_id(replica: Option<&ReplicaName>) -> Arc<str> {
    let id = uuid::Uuid::new_v4();
    crate::replica::qualify(
        replica,
        id.simple().encode_lower(&mut uuid::Uuid::encode_buffer()),
    )
    .into()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Session {
    /// A session of `env` with no episode yet, its id after `replica`'s name when the server
    /// has one (a proxy routes the WebSocket's `?session_id=` on it).
    pub fn new(env: Arc<dyn Environment>, replica: Option<&ReplicaName>) -> Arc<Self> {
        Self::with_id(fresh_id(replica), env, false)
    }

    fn with_id(id: Arc<str>, env: Arc<dyn Environment>, named: bool) -> Arc<Self> {
        Arc::new(Self {
            id,
            env,
            running: tokio::sync::Mutex::new(()),
            episode: Mutex::new(None),
            attached: AtomicBool::new(false),
            attachments: tokio::sync::watch::Sender::new(0),
            close_pending: AtomicBool::new(false),
            touched: Mutex::new(Instant::now()),
            named,
        })
    }

    /// The session id.
    pub fn id(&self) -> &Arc<str> {
        &self.id
    }

    /// The environment.
    pub fn env(&self) -> &Arc<dyn Environment> {
        &self.env
    }

    /// The episode it runs now.
    pub fn episode(&self) -> Option<Arc<str>> {
        lock(&self.episode).clone()
    }

    fn touch(&self) {
        *lock(&self.touched) = Instant::now();
    }

    /// Closes the current episode (if any) and starts a new one.
    pub async fn reset(&self, hub: &Hub, params: ResetParams) -> Result<Value, DoorError> {
        let _running = self.running.lock().await;
        self.touch();
        self.end_episode(hub).await;
        let record = self.named.then(|| SessionRecord::OpenEnv {
            id: self.id.to_string(),
        });
        let (envelope, id) = start(hub, &self.env, params, record).await?;
        *lock(&self.episode) = Some(id);
        Ok(envelope)
    }

    /// Runs one action on the current episode.
    pub async fn step(&self, hub: &Hub, action: Action) -> Result<Value, DoorError> {
        let _running = self.running.lock().await;
        self.touch();
        let episode = self.episode();
        step(hub, &self.env, episode.as_deref(), action).await
    }

    /// The current episode's state.
    pub fn state(&self, hub: &Hub) -> Result<Value, DoorError> {
        self.touch();
        let episode = self.episode();
        state(hub, self.env.as_ref(), episode.as_deref())
    }

    /// Closes the current episode, stopping a call that runs on it.
    pub async fn end_episode(&self, hub: &Hub) {
        let episode = lock(&self.episode).take();
        if let Some(id) = episode {
            // Already gone (deleted, reaped): nothing to close.
            let _ = hub.delete(&id).await;
        }
    }

    /// Marks a WebSocket as attached, taking the session over from one attached before (a
    /// client reconnecting after its connection dropped, perhaps before the server saw it go):
    /// that one's receiver sees the change and ends. The attachment's number, for
    /// [`Session::detach`], and a receiver that changes when a newer one attaches.
    pub fn attach(&self) -> (u64, tokio::sync::watch::Receiver<u64>) {
        self.touch();
        self.attached.store(true, Ordering::SeqCst);
        let mut number = 0;
        self.attachments.send_modify(|count| {
            *count += 1;
            number = *count;
        });
        let mut taken_over = self.attachments.subscribe();
        taken_over.mark_unchanged();
        (number, taken_over)
    }

    /// Marks attachment `number` as gone, unless a newer one took over; true when it was the
    /// attached one and a close was asked for meanwhile.
    pub fn detach(&self, number: u64) -> bool {
        self.touch();
        if *self.attachments.borrow() != number {
            return false;
        }
        self.attached.store(false, Ordering::SeqCst);
        self.close_pending.load(Ordering::SeqCst)
    }

    /// Whether a close was asked for while a WebSocket was attached.
    pub fn close_pending(&self) -> bool {
        self.close_pending.load(Ordering::SeqCst)
    }

    /// How long since it was last used, unless a WebSocket holds it.
    fn idle_for(&self) -> Option<std::time::Duration> {
        (!self.attached.load(Ordering::SeqCst)).then(|| lock(&self.touched).elapsed())
    }
}

/// The sessions made with `openenv/session/create` on one hub.
#[derive(Debug, Default)]
pub struct Sessions {
    map: Mutex<HashMap<Arc<str>, Arc<Session>>>,
    /// WebSockets open now. An upgraded connection leaves the server's connection limit, so
    /// the door holds its own.
    sockets: AtomicUsize,
}

/// One open WebSocket's place in [`Sessions`]; freed when dropped.
#[derive(Debug)]
pub struct SocketSlot(Arc<Sessions>);

impl Drop for SocketSlot {
    fn drop(&mut self) {
        self.0.sockets.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What closing a session did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// It is gone.
    Now,
    /// A WebSocket holds it; it goes when that detaches.
    Pending,
}

impl Sessions {
    /// A place for one more WebSocket, unless `limit` are open.
    pub fn open_socket(self: &Arc<Self>, limit: usize) -> Option<SocketSlot> {
        self.sockets
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < limit).then_some(open + 1)
            })
            .ok()
            .map(|_| SocketSlot(self.clone()))
    }

    /// Makes a session of `env`. Sessions idle past the hub's TTL are forgotten first (their
    /// episodes are the hub reaper's); past the episode limit, none is made.
    pub fn create(&self, hub: &Hub, env: Arc<dyn Environment>) -> Result<Arc<Session>, HubError> {
        let ttl = hub.settings().idle_ttl;
        let limit = hub.settings().max_episodes;
        let mut map = lock(&self.map);
        map.retain(|_, session| session.idle_for().is_none_or(|idle| idle < ttl));
        if map.len() >= limit {
            return Err(HubError::Full(limit));
        }
        let session = Session::with_id(fresh_id(hub.settings().replica.as_ref()), env, true);
        map.insert(session.id.clone(), session.clone());
        Ok(session)
    }

    /// Holds again a named session a previous server held, running `episode` (see
    /// [`crate::hub::Hub::resume`]); a session already held is left as it is.
    pub fn restore(&self, id: &str, env: Arc<dyn Environment>, episode: &str) {
        let session = Session::with_id(id.into(), env, true);
        *lock(&session.episode) = Some(episode.into());
        lock(&self.map).entry(session.id.clone()).or_insert(session);
    }

    /// A session by id.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.map).get(id).cloned()
    }

    /// Closes a session and its episode, or marks it to close when its WebSocket detaches.
    pub async fn close(&self, hub: &Hub, id: &str) -> Option<Closed> {
        let session = {
            let mut map = lock(&self.map);
            let session = map.get(id)?.clone();
            if session.attached.load(Ordering::SeqCst) {
                session.close_pending.store(true, Ordering::SeqCst);
                return Some(Closed::Pending);
            }
            map.remove(id);
            session
        };
        // Closing the episode first stops a call running on it; then once the session's
        // operations are done, whatever a reset running meanwhile started.
        session.end_episode(hub).await;
        let _running = session.running.lock().await;
        session.end_episode(hub).await;
        Some(Closed::Now)
    }

    /// Forgets a session whose close was pending (its WebSocket has closed its episode).
    pub fn forget(&self, id: &str) {
        lock(&self.map).remove(id);
    }
}

/// The hub's session registry. Doors keep their own state; this finds it from the hub, for
/// the routes and for the `/<env>/mcp` middleware alike.
pub fn sessions_of(hub: &Arc<Hub>) -> Arc<Sessions> {
    /// Each live hub with its sessions.
    type Registry = Vec<(Weak<Hub>, Arc<Sessions>)>;
    static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Default::default);
    let mut registry = lock(&REGISTRY);
    registry.retain(|(owner, _)| owner.strong_count() > 0);
    if let Some((_, sessions)) = registry
        .iter()
        .find(|(owner, _)| std::ptr::eq(owner.as_ptr(), Arc::as_ptr(hub)))
    {
        return sessions.clone();
    }
    let sessions = Arc::new(Sessions::default());
    registry.push((Arc::downgrade(hub), sessions.clone()));
    sessions
}
