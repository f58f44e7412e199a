//! Legacy MCP sessions (the revisions before 2026-07-28: `initialize`, then an
//! `Mcp-Session-Id` on every request), held as a few hundred bytes each beside the episodes and
//! reaped by the same reaper.
//!
//! rmcp keeps a worker task, channels and buffers for every session it opens (about 100 KiB).
//! A session that only lists and calls tools needs none of that: [`crate::legacy`] opens it
//! here and answers its requests from this table. rmcp is handed a session only when a request
//! needs what it alone does (a reply that becomes a stream of progress, a method the direct
//! path does not answer); it then restores the session from this table through
//! [`EndpointSessions`], its session store, and replays the handshake from the stored
//! `initialize` parameters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};
use uuid::Uuid;

use crate::replica::{self, ReplicaName};
use crate::trajectory::SessionRecord;

/// Most legacy sessions held at once; past it, `initialize` is refused until idle ones are
/// reaped. At a few hundred bytes each this bounds the table to a few hundred MiB.
pub const MAX_SESSIONS: usize = 1_000_000;

/// The MCP endpoint a session was opened on. As with rmcp's session manager per endpoint, a
/// session id is valid only on the endpoint that issued it.
pub type Endpoint = u32;

/// The episode a session's calls go to when they name none, and how often it has reset.
#[derive(Debug, Default)]
pub struct SessionBinding {
    /// The bound episode; the lock is held while a first call starts it, so two concurrent
    /// first calls share one episode.
    pub(crate) episode: tokio::sync::Mutex<Option<Arc<str>>>,
    /// Resets so far, so that a fixed `--seed` gives a fixed sequence of games.
    pub(crate) resets: AtomicU64,
    /// The session as the trajectory header of each episode it starts records it; `None`
    /// for a binding that is not a legacy session's.
    pub(crate) record: Option<SessionRecord>,
}

/// One legacy session.
#[derive(Debug)]
pub struct LegacySession {
    endpoint: Endpoint,
    /// The client's `initialize` parameters as JSON, for rmcp to replay if it takes over.
    initialize: Box<str>,
    /// Its episode.
    pub binding: SessionBinding,
    /// Requests answered so far with a stream of their own: the `N` of their SSE event ids
    /// (`0/N`, `1/N`), numbered as rmcp numbers them.
    requests: AtomicU32,
    /// Milliseconds since the table's epoch when the session was last used.
    last_used_ms: AtomicU64,
    /// Whether rmcp holds a worker for the session (it restored or opened it).
    in_rmcp: AtomicBool,
}

impl LegacySession {
    /// The number of the next request answered with a stream of its own.
    pub fn next_request(&self) -> u32 {
        self.requests.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether rmcp holds a worker for this session, so that messages it must see (a
    /// cancellation, a reply to its request) go to it.
    pub fn in_rmcp(&self) -> bool {
        self.in_rmcp.load(Ordering::Relaxed)
    }
}

/// The table is full.
#[derive(Debug, thiserror::Error)]
#[error(
    "the server holds {0} MCP sessions, its most; end sessions you no longer use (DELETE with their Mcp-Session-Id) or wait for idle ones to be closed"
)]
pub struct SessionsFull(pub usize);

/// The legacy sessions of every endpoint, by id.
pub struct LegacySessions {
    sessions: RwLock<HashMap<u128, Arc<LegacySession>>>,
    epoch: Instant,
    capacity: usize,
    /// The replica's name, in front of the ids it issues (`<name>-<uuid>`).
    replica: Option<ReplicaName>,
    /// Told of every session a client ends with `DELETE` (the hub ends its episode).
    on_delete: Option<Box<dyn Fn(Arc<LegacySession>) + Send + Sync>>,
}

impl std::fmt::Debug for LegacySessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySessions")
            .field("capacity", &self.capacity)
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

impl Default for LegacySessions {
    fn default() -> Self {
        Self::new(MAX_SESSIONS)
    }
}

/// The table key of a session id: ids are UUIDs in their lowercase hyphenated form, as rmcp
/// issues them, after the replica's name and a `-` when it has one (rmcp's own sessions keep
/// bare UUIDs); any other spelling of the same UUID is another (unknown) id.
fn key(replica: Option<&ReplicaName>, id: &str) -> Option<u128> {
    let id = replica
        .and_then(|name| id.strip_prefix(name.as_str())?.strip_prefix('-'))
        .unwrap_or(id);
    if id.len() != uuid::fmt::Hyphenated::LENGTH {
        return None;
    }
    let uuid = Uuid::try_parse(id).ok()?;
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    (uuid.hyphenated().encode_lower(&mut text) == id).then(|| uuid.as_u128())
}

impl LegacySessions {
    /// A table holding at most `capacity` sessions.
    pub fn new(capacity: usize) -> Self {
        Self {
            sessions: RwLock::default(),
            epoch: Instant::now(),
            capacity,
            replica: None,
            on_delete: None,
        }
    }

    /// The same table, telling `hook` of every session a client ends with `DELETE`.
    pub fn on_delete(self, hook: impl Fn(Arc<LegacySession>) + Send + Sync + 'static) -> Self {
        Self {
            on_delete: Some(Box::new(hook)),
            ..self
        }
    }

    /// A table of [`MAX_SESSIONS`] whose ids carry `replica`'s name.
    pub fn named(replica: Option<ReplicaName>) -> Self {
        Self {
            replica,
            ..Self::default()
        }
    }

    /// The id clients use for the session `id`: the UUID, after the replica's name if any.
    pub fn id_text(&self, id: Uuid) -> String {
        let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
        replica::qualify(
            self.replica.as_ref(),
            id.hyphenated().encode_lower(&mut text),
        )
    }

    fn key(&self, id: &str) -> Option<u128> {
        key(self.replica.as_ref(), id)
    }

    /// Sessions held now.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<u128, Arc<LegacySession>>> {
        // A panic elsewhere cannot leave the map half-written: every write is one insert or
        // remove, so a poisoned lock still guards a whole map.
        self.sessions.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<u128, Arc<LegacySession>>> {
        self.sessions.write().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn insert(
        &self,
        key: u128,
        endpoint: Endpoint,
        initialize: Box<str>,
        in_rmcp: bool,
    ) -> Result<Arc<LegacySession>, SessionsFull> {
        let record = SessionRecord::Mcp {
            id: self.id_text(Uuid::from_u128(key)),
            endpoint,
            initialize: initialize.to_string(),
        };
        let session = Arc::new(LegacySession {
            endpoint,
            initialize,
            binding: SessionBinding {
                record: Some(record),
                ..SessionBinding::default()
            },
            requests: AtomicU32::new(0),
            last_used_ms: AtomicU64::new(self.now_ms()),
            in_rmcp: AtomicBool::new(in_rmcp),
        });
        let mut sessions = self.write();
        if sessions.len() >= self.capacity && !sessions.contains_key(&key) {
            return Err(SessionsFull(self.capacity));
        }
        sessions.insert(key, session.clone());
        Ok(session)
    }

    /// Opens a session on `endpoint` for a client that sent these `initialize` parameters
    /// (JSON); returns its new id.
    pub fn open(
        &self,
        endpoint: Endpoint,
        initialize: Box<str>,
    ) -> Result<(Uuid, Arc<LegacySession>), SessionsFull> {
        let id = Uuid::new_v4();
        let session = self.insert(id.as_u128(), endpoint, initialize, false)?;
        Ok((id, session))
    }

    /// Holds again a session a previous server held, bound to `episode` (see
    /// [`crate::hub::Hub::resume`]); a session already held is left as it is.
    pub fn restore(
        &self,
        id: &str,
        endpoint: Endpoint,
        initialize: &str,
        episode: &str,
    ) -> Result<(), SessionsFull> {
        let Some(key) = self.key(id) else {
            return Ok(());
        };
        if self.read().contains_key(&key) {
            return Ok(());
        }
        let session = self.insert(key, endpoint, initialize.into(), false)?;
        if let Ok(mut bound) = session.binding.episode.try_lock() {
            *bound = Some(episode.into());
        }
        Ok(())
    }

    /// The session with this id, on `endpoint` when one is given; marks it used.
    pub fn get(&self, id: &str, endpoint: Option<Endpoint>) -> Option<Arc<LegacySession>> {
        let session = self.read().get(&self.key(id)?)?.clone();
        if endpoint.is_some_and(|endpoint| endpoint != session.endpoint) {
            return None;
        }
        session.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Some(session)
    }

    /// Whether the session is held, without marking it used.
    pub fn contains(&self, id: &str) -> bool {
        self.key(id)
            .is_some_and(|key| self.read().contains_key(&key))
    }

    /// Ends a session; the session, if it was held.
    pub fn remove(&self, id: &str) -> Option<Arc<LegacySession>> {
        let key = self.key(id)?;
        self.write().remove(&key)
    }

    /// Ends the sessions unused for `ttl`; returns how many.
    pub fn remove_idle(&self, ttl: Duration) -> usize {
        let now = self.now_ms();
        let ttl = ttl.as_millis() as u64;
        let mut sessions = self.write();
        let before = sessions.len();
        sessions.retain(|_, session| {
            now.saturating_sub(session.last_used_ms.load(Ordering::Relaxed)) < ttl
        });
        before - sessions.len()
    }

    /// Drops every session (at shutdown).
    pub fn clear(&self) {
        self.write().clear();
    }

    /// One endpoint's sessions as rmcp's session store.
    pub fn for_endpoint(self: &Arc<Self>, endpoint: Endpoint) -> EndpointSessions {
        EndpointSessions {
            sessions: self.clone(),
            endpoint,
        }
    }
}

/// One endpoint's sessions, as the store rmcp restores sessions from, saves the sessions it
/// opens itself to, and deletes ended sessions from.
#[derive(Debug)]
pub struct EndpointSessions {
    sessions: Arc<LegacySessions>,
    endpoint: Endpoint,
}

impl EndpointSessions {
    fn load_now(&self, id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(session) = self.sessions.get(id, Some(self.endpoint)) else {
            return Ok(None);
        };
        let params: InitializeRequestParams = serde_json::from_str(&session.initialize)?;
        session.in_rmcp.store(true, Ordering::Relaxed);
        Ok(Some(SessionState::new(params)))
    }

    fn store_now(&self, id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let key = self
            .sessions
            .key(id)
            .ok_or_else(|| format!("session id {id:?} is not a UUID"))?;
        if let Some(session) = self.sessions.get(id, Some(self.endpoint)) {
            session.in_rmcp.store(true, Ordering::Relaxed);
            return Ok(());
        }
        let initialize = serde_json::to_string(&state.initialize_params)?;
        self.sessions
            .insert(key, self.endpoint, initialize.into(), true)?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl SessionStore for EndpointSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        self.load_now(session_id)
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        self.store_now(session_id, state)
    }

    /// Called for a client's `DELETE` only (rmcp ends idle sessions without it).
    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        if let Some(session) = self.sessions.remove(session_id)
            && let Some(hook) = &self.sessions.on_delete
        {
            hook(session);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INIT: &str = r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}"#;

    #[test]
    fn a_session_is_found_by_its_id_on_its_endpoint_only() {
        let table = LegacySessions::default();
        let (id, _) = table.open(1, INIT.into()).unwrap();
        let text = id.hyphenated().to_string();
        assert!(table.get(&text, Some(1)).is_some());
        assert!(table.get(&text, None).is_some());
        assert!(table.get(&text, Some(2)).is_none(), "another endpoint");
        assert!(table.get(&text.to_uppercase(), Some(1)).is_none());
        assert!(table.get(&id.simple().to_string(), Some(1)).is_none());
        assert!(table.get("not-a-session", Some(1)).is_none());
        assert!(table.remove(&text).is_some());
        assert!(table.get(&text, Some(1)).is_none());
        assert!(table.remove(&text).is_none());
    }

    #[test]
    fn a_named_replica_puts_its_name_in_front_of_its_session_ids() {
        let name = ReplicaName::new("mcpgym-1").unwrap();
        let table = LegacySessions::named(Some(name));
        let (id, _) = table.open(1, INIT.into()).unwrap();
        let text = table.id_text(id);
        assert_eq!(text, format!("mcpgym-1-{}", id.hyphenated()));
        assert_eq!(replica::owner_of_session(&text), Some("mcpgym-1"));
        assert!(table.get(&text, Some(1)).is_some());
        // rmcp's own sessions keep bare UUIDs, found as they are.
        assert!(table.get(&id.hyphenated().to_string(), Some(1)).is_some());
        // Another replica's id for the same UUID is not this one's.
        assert!(
            table
                .get(&format!("mcpgym-2-{}", id.hyphenated()), Some(1))
                .is_none()
        );
        assert!(table.remove(&text).is_some());
    }

    #[test]
    fn request_numbers_count_up_per_session() {
        let table = LegacySessions::default();
        let (_, a) = table.open(0, INIT.into()).unwrap();
        let (_, b) = table.open(0, INIT.into()).unwrap();
        assert_eq!((a.next_request(), a.next_request()), (0, 1));
        assert_eq!(b.next_request(), 0);
    }

    #[test]
    fn a_full_table_refuses_new_sessions_with_a_sentence() {
        let table = LegacySessions::new(2);
        table.open(0, INIT.into()).unwrap();
        table.open(0, INIT.into()).unwrap();
        let full = table.open(0, INIT.into()).unwrap_err();
        assert!(full.to_string().contains("DELETE"), "{full}");
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn idle_sessions_are_removed_and_used_ones_kept() {
        let table = LegacySessions::default();
        let (idle, _) = table.open(0, INIT.into()).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let (used, _) = table.open(0, INIT.into()).unwrap();
        assert_eq!(table.remove_idle(Duration::from_millis(20)), 1);
        assert!(table.get(&idle.to_string(), None).is_none());
        assert!(table.get(&used.to_string(), None).is_some());
    }

    #[tokio::test]
    async fn rmcp_restores_saves_and_deletes_through_the_endpoint_store() {
        let table = Arc::new(LegacySessions::default());
        let store = table.for_endpoint(3);
        let (id, session) = table.open(3, INIT.into()).unwrap();
        let id = id.to_string();
        assert!(!session.in_rmcp());
        let state = store.load(&id).await.unwrap().expect("held");
        assert_eq!(state.initialize_params.client_info.name, "t");
        assert!(session.in_rmcp(), "a restored session is rmcp's too");
        assert!(table.for_endpoint(4).load(&id).await.unwrap().is_none());

        let opened_by_rmcp = Uuid::new_v4().to_string();
        store.store(&opened_by_rmcp, &state).await.unwrap();
        assert!(table.get(&opened_by_rmcp, Some(3)).unwrap().in_rmcp());
        assert!(store.store("not-a-uuid", &state).await.is_err());

        store.delete(&id).await.unwrap();
        assert!(table.get(&id, None).is_none());
    }
}
