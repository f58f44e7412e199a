//! The store of live episodes: capacity, idle TTL and the reaper.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use crate::env::Environment;
use crate::episode::Episode;

/// One live episode and its bookkeeping.
pub struct EpisodeSlot {
    /// The environment the episode belongs to.
    pub env: Arc<dyn Environment>,
    /// The episode itself; calls on one episode run one at a time.
    pub episode: tokio::sync::Mutex<Episode>,
    /// Milliseconds since the store's epoch when the episode was last used.
    last_used_ms: AtomicU64,
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
    epoch: Instant,
}

/// A place in the store held while an episode starts; dropping it gives the place back.
#[derive(Debug)]
pub struct Reservation<'a> {
    store: &'a EpisodeStore,
    used: bool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.used {
            self.store.reserved.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl EpisodeStore {
    /// An empty store holding at most `capacity` episodes.
    pub fn new(capacity: usize) -> Self {
        Self {
            episodes: RwLock::new(HashMap::new()),
            reserved: AtomicUsize::new(0),
            capacity,
            epoch: Instant::now(),
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

    /// Holds a place for an episode about to start, or `None` when the store is full.
    pub fn reserve(&self) -> Option<Reservation<'_>> {
        self.reserved
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.capacity).then_some(n + 1)
            })
            .ok()
            .map(|_| Reservation {
                store: self,
                used: false,
            })
    }

    /// Stores a started episode in its reserved place.
    pub fn insert(
        &self,
        mut reservation: Reservation<'_>,
        env: Arc<dyn Environment>,
        episode: Episode,
    ) -> Arc<EpisodeSlot> {
        reservation.used = true;
        let id: Arc<str> = episode.id().into();
        let slot = Arc::new(EpisodeSlot {
            env,
            episode: tokio::sync::Mutex::new(episode),
            last_used_ms: AtomicU64::new(self.now_ms()),
        });
        self.write().insert(id, slot.clone());
        slot
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
        self.reserved.fetch_sub(1, Ordering::AcqRel);
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
        self.reserved.fetch_sub(taken.len(), Ordering::AcqRel);
        taken
    }

    /// Removes every episode (at shutdown).
    pub fn drain(&self) -> Vec<Arc<EpisodeSlot>> {
        let taken: Vec<_> = self.write().drain().map(|(_, slot)| slot).collect();
        self.reserved.fetch_sub(taken.len(), Ordering::AcqRel);
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
