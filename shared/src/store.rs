//! The store of live episodes: capacity, idle TTL and the reaper.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::env::Environment;
use crate::episode::{Episode, EpisodeStatus};
use crate::metrics::EnvMetrics;

/// Why an episode was closed; a call that was waiting for it or running on it is stopped and
/// told this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// `DELETE /episodes/{id}` (or a session's `reset`).
    Deleted,
    /// The reaper, after the episode was idle past the TTL.
    Idle,
    /// The server shutting down.
    Shutdown,
}

impl CloseReason {
    fn to_u8(self) -> u8 {
        match self {
            CloseReason::Deleted => 1,
            CloseReason::Idle => 2,
            CloseReason::Shutdown => 3,
        }
    }

    fn from_u8(value: u8) -> Option<Self> {
        match value {
            1 => Some(CloseReason::Deleted),
            2 => Some(CloseReason::Idle),
            3 => Some(CloseReason::Shutdown),
            _ => None,
        }
    }
}

impl std::fmt::Display for CloseReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CloseReason::Deleted => "deleted",
            CloseReason::Idle => "closed after being idle",
            CloseReason::Shutdown => "closed because the server is shutting down",
        })
    }
}

/// One live episode and its bookkeeping.
///
/// A tool call holds [`EpisodeSlot::episode`]'s lock for as long as it runs (a long cell, up
/// to its timeout), so what must answer at once does not take it: the status is a snapshot
/// ([`EpisodeSlot::status`]) refreshed after every call, and closing ([`EpisodeSlot::close`])
/// first tells the running call to stop ([`EpisodeSlot::closed`]), then takes the lock.
pub struct EpisodeSlot {
    /// The episode's id.
    pub id: Arc<str>,
    /// The environment the episode belongs to (its tools, its name).
    pub env: Arc<dyn Environment>,
    /// Its environment's counters.
    pub metrics: Option<Arc<EnvMetrics>>,
    /// The episode itself; calls on one episode run one at a time.
    pub episode: tokio::sync::Mutex<Episode>,
    /// The public state as of the last finished call (or the start).
    status: Mutex<EpisodeStatus>,
    /// Why the episode is being closed ([`CloseReason::to_u8`]); 0 while it is not.
    closing: AtomicU8,
    /// Wakes the calls waiting in [`EpisodeSlot::closed`] when `closing` is set.
    closing_wakes: tokio::sync::Notify,
    /// Milliseconds since the store's epoch when the episode was last used.
    last_used_ms: AtomicU64,
    /// When the episode started.
    pub started: std::time::SystemTime,
}

impl EpisodeSlot {
    /// A slot for a finished episode read back from its trajectory file, for the finished
    /// table.
    pub fn finished(
        env: Arc<dyn Environment>,
        metrics: Option<Arc<EnvMetrics>>,
        episode: Episode,
        status: EpisodeStatus,
        started: std::time::SystemTime,
    ) -> Arc<Self> {
        Arc::new(EpisodeSlot {
            id: episode.id().into(),
            env,
            metrics,
            status: Mutex::new(status),
            closing: AtomicU8::new(0),
            closing_wakes: tokio::sync::Notify::new(),
            episode: tokio::sync::Mutex::new(episode),
            last_used_ms: AtomicU64::new(0),
            started,
        })
    }

    /// The public state as of the last finished call; never waits for a running one.
    pub fn status(&self) -> EpisodeStatus {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Updates the public state in place; called with the episode's lock held, after each
    /// call.
    pub fn update_status(&self, update: impl FnOnce(&mut EpisodeStatus)) {
        update(&mut self.status.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Why the episode is being closed, once it is.
    pub fn closing(&self) -> Option<CloseReason> {
        CloseReason::from_u8(self.closing.load(Ordering::Acquire))
    }

    /// Resolves once the episode is being closed (at once if it already is). Calls race
    /// their work against it, so closing stops them.
    pub async fn closed(&self) -> CloseReason {
        loop {
            let woken = self.closing_wakes.notified();
            let mut woken = std::pin::pin!(woken);
            // Registered before the check, so a close between the check and the wait wakes it.
            woken.as_mut().enable();
            if let Some(reason) = self.closing() {
                return reason;
            }
            woken.await;
        }
    }

    /// Closes the episode: stops the call running on it or waiting for it, then, once the
    /// lock is free, releases what the episode holds ([`Episode::close`] runs the
    /// environment's close at most once). Call it on a slot already removed from the store.
    ///
    /// At shutdown the episode's trajectory file is left without its end, so the next start
    /// takes it up ([`crate::hub::Hub::resume`]).
    pub async fn close(&self, reason: CloseReason) {
        self.mark_closing(reason);
        let mut episode = self.episode.lock().await;
        match reason {
            CloseReason::Shutdown => episode.close_unended().await,
            CloseReason::Deleted | CloseReason::Idle => episode.close().await,
        }
    }

    /// Tells calls on the episode to stop, without waiting (the first reason stands).
    pub fn mark_closing(&self, reason: CloseReason) {
        if self
            .closing
            .compare_exchange(0, reason.to_u8(), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.closing_wakes.notify_waiters();
        }
    }
}

impl std::fmt::Debug for EpisodeSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpisodeSlot")
            .field("env", &self.env.name())
            .finish_non_exhaustive()
    }
}

/// Live episodes by id.
#[derive(Debug)]
pub struct EpisodeStore {
    episodes: RwLock<HashMap<Arc<str>, Arc<EpisodeSlot>>>,
    /// Episodes stored plus episodes being started: what counts against the capacity.
    reserved: AtomicUsize,
    capacity: usize,
    /// The same count per environment with a limit of its own, and that limit.
    per_env: HashMap<&'static str, (AtomicUsize, usize)>,
    epoch: Instant,
}

/// Why [`EpisodeStore::reserve`] found no place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoPlace {
    /// Every place of the store is held.
    Total(usize),
    /// Every place of this environment's own limit is held.
    Env(&'static str, usize),
}

/// A place in the store held while an episode starts; dropping it gives the place back.
#[derive(Debug)]
pub struct Reservation<'a> {
    store: &'a EpisodeStore,
    env: &'static str,
    used: bool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.used {
            self.store.release(self.env, 1);
        }
    }
}

impl EpisodeStore {
    /// An empty store holding at most `capacity` episodes, and at most `per_env[env]` of
    /// an environment named there.
    pub fn new(capacity: usize, per_env: &[(&'static str, usize)]) -> Self {
        Self {
            episodes: RwLock::new(HashMap::new()),
            reserved: AtomicUsize::new(0),
            capacity,
            per_env: per_env
                .iter()
                .map(|&(env, limit)| (env, (AtomicUsize::new(0), limit)))
                .collect(),
            epoch: Instant::now(),
        }
    }

    /// The limit of `env`'s own, if it has one.
    pub fn env_capacity(&self, env: &str) -> Option<usize> {
        self.per_env.get(env).map(|(_, limit)| *limit)
    }

    /// Gives back `count` places of `env`.
    fn release(&self, env: &str, count: usize) {
        self.reserved.fetch_sub(count, Ordering::AcqRel);
        if let Some((used, _)) = self.per_env.get(env) {
            used.fetch_sub(count, Ordering::AcqRel);
        }
    }

    /// The most episodes the store holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Episodes in the store now.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Holds a place for an episode of `env` about to start, or says which limit is reached.
    pub fn reserve(&self, env: &'static str) -> Result<Reservation<'_>, NoPlace> {
        let take = |count: &AtomicUsize, limit: usize| {
            count
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < limit).then_some(n + 1)
                })
                .is_ok()
        };
        if let Some((used, limit)) = self.per_env.get(env)
            && !take(used, *limit)
        {
            return Err(NoPlace::Env(env, *limit));
        }
        if !take(&self.reserved, self.capacity) {
            if let Some((used, _)) = self.per_env.get(env) {
                used.fetch_sub(1, Ordering::AcqRel);
            }
            return Err(NoPlace::Total(self.capacity));
        }
        Ok(Reservation {
            store: self,
            env,
            used: false,
        })
    }

    /// Live episodes of `env`, and how many of them have been idle for at least `idle`.
    pub fn count_of(&self, env: &str, idle: Duration) -> (usize, usize) {
        let cutoff = self.now_ms().saturating_sub(idle.as_millis() as u64);
        let map = self.read();
        let of_env = map.values().filter(|slot| slot.env.name() == env);
        of_env.fold((0, 0), |(all, idle), slot| {
            let is_idle = slot.last_used_ms.load(Ordering::Relaxed) < cutoff;
            (all + 1, idle + usize::from(is_idle))
        })
    }

    /// Stores a started episode in its reserved place.
    pub fn insert(
        &self,
        mut reservation: Reservation<'_>,
        env: Arc<dyn Environment>,
        metrics: Option<Arc<EnvMetrics>>,
        episode: Episode,
    ) -> Arc<EpisodeSlot> {
        reservation.used = true;
        let id: Arc<str> = episode.id().into();
        let slot = Arc::new(EpisodeSlot {
            id: id.clone(),
            env,
            metrics,
            status: Mutex::new(episode.status()),
            closing: AtomicU8::new(0),
            closing_wakes: tokio::sync::Notify::new(),
            episode: tokio::sync::Mutex::new(episode),
            last_used_ms: AtomicU64::new(self.now_ms()),
            started: std::time::SystemTime::now(),
        });
        self.write().insert(id, slot.clone());
        slot
    }

    /// Every live episode, in no order.
    pub fn all(&self) -> Vec<Arc<EpisodeSlot>> {
        self.read().values().cloned().collect()
    }

    /// The episode with this id, marked as used now.
    pub fn get(&self, id: &str) -> Option<Arc<EpisodeSlot>> {
        let slot = self.read().get(id).cloned()?;
        slot.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Some(slot)
    }

    /// Marks an episode as used now (at the end of a long call, say).
    pub fn touch(&self, slot: &EpisodeSlot) {
        slot.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// Removes an episode; the caller closes it.
    pub fn remove(&self, id: &str) -> Option<Arc<EpisodeSlot>> {
        let slot = self.write().remove(id)?;
        self.release(slot.env.name(), 1);
        Some(slot)
    }

    /// Removes every episode idle for longer than `ttl` and not in a call right now.
    pub fn take_idle(&self, ttl: Duration) -> Vec<Arc<EpisodeSlot>> {
        let cutoff = self.now_ms().saturating_sub(ttl.as_millis() as u64);
        let idle: Vec<Arc<str>> = self
            .read()
            .iter()
            .filter(|(_, slot)| slot.last_used_ms.load(Ordering::Relaxed) < cutoff)
            .filter(|(_, slot)| slot.episode.try_lock().is_ok())
            .map(|(id, _)| id.clone())
            .collect();
        if idle.is_empty() {
            return Vec::new();
        }
        let mut map = self.write();
        let taken: Vec<_> = idle.iter().filter_map(|id| map.remove(id)).collect();
        drop(map);
        for slot in &taken {
            self.release(slot.env.name(), 1);
        }
        taken
    }

    /// Removes every episode (at shutdown).
    pub fn drain(&self) -> Vec<Arc<EpisodeSlot>> {
        let taken: Vec<_> = self.write().drain().map(|(_, slot)| slot).collect();
        for slot in &taken {
            self.release(slot.env.name(), 1);
        }
        taken
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    // A panic while holding the lock cannot leave the map half-updated (every update is one
    // HashMap call), so a poisoned lock is still safe to use.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<Arc<str>, Arc<EpisodeSlot>>> {
        self.episodes.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<Arc<str>, Arc<EpisodeSlot>>> {
        self.episodes.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// Finished episodes, kept readable after their environment's state is released: they hold
/// no place in the [`EpisodeStore`]. Bounded; the oldest to finish goes first.
#[derive(Debug)]
pub struct FinishedEpisodes {
    held: Mutex<FinishedMap>,
    capacity: usize,
    dropped: AtomicU64,
}

/// Finished episodes by id, and their ids oldest first.
#[derive(Debug, Default)]
struct FinishedMap {
    by_id: HashMap<Arc<str>, Arc<EpisodeSlot>>,
    order: std::collections::VecDeque<Arc<str>>,
}

impl FinishedEpisodes {
    /// An empty table holding at most `capacity` episodes.
    pub fn new(capacity: usize) -> Self {
        Self {
            held: Mutex::new(FinishedMap::default()),
            capacity,
            dropped: AtomicU64::new(0),
        }
    }

    /// Keeps a finished episode, dropping the oldest when the table is full.
    pub fn insert(&self, slot: Arc<EpisodeSlot>) {
        if self.capacity == 0 {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut held = self.lock();
        while held.by_id.len() >= self.capacity {
            let Some(oldest) = held.order.pop_front() else {
                break;
            };
            if held.by_id.remove(&oldest).is_some() {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        held.order.push_back(slot.id.clone());
        held.by_id.insert(slot.id.clone(), slot);
    }

    /// The finished episode with this id.
    pub fn get(&self, id: &str) -> Option<Arc<EpisodeSlot>> {
        self.lock().by_id.get(id).cloned()
    }

    /// Forgets a finished episode (its id stays in the order until it comes up).
    pub fn remove(&self, id: &str) -> Option<Arc<EpisodeSlot>> {
        let mut held = self.lock();
        let slot = held.by_id.remove(id)?;
        // Ids removed early leave the order only when they reach its front; keep it from
        // growing past twice the capacity meanwhile.
        if held.order.len() > 2 * self.capacity.max(1) {
            let FinishedMap { by_id, order } = &mut *held;
            order.retain(|id| by_id.contains_key(id));
        }
        Some(slot)
    }

    /// Every finished episode held now.
    pub fn all(&self) -> Vec<Arc<EpisodeSlot>> {
        self.lock().by_id.values().cloned().collect()
    }

    /// Finished episodes held now.
    pub fn len(&self) -> usize {
        self.lock().by_id.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Finished episodes dropped to make room so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Forgets every finished episode (at shutdown).
    pub fn clear(&self) {
        *self.lock() = FinishedMap::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FinishedMap> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}
