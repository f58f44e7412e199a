//! The worker processes, one per slot, and which episodes each holds.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Mutex;

use crate::worker::{Launch, SpawnError, Worker};

/// A fixed number of slots, each holding a worker started when first needed and replaced when
/// it stops.
pub(crate) struct Pool {
    launch: Launch,
    slots: Vec<Slot>,
}

struct Slot {
    worker: Mutex<Option<Worker>>,
    /// Live episodes placed here.
    episodes: AtomicUsize,
}

impl Pool {
    pub(crate) fn new(launch: Launch, workers: usize) -> Self {
        let slots = (0..workers.max(1))
            .map(|_| Slot {
                worker: Mutex::new(None),
                episodes: AtomicUsize::new(0),
            })
            .collect();
        Self { launch, slots }
    }

    pub(crate) fn launch(&self) -> &Launch {
        &self.launch
    }

    /// The slot with the fewest live episodes, counted as holding one more.
    pub(crate) fn place(&self) -> usize {
        let (slot, _) = self
            .slots
            .iter()
            .enumerate()
            .min_by_key(|(_, slot)| slot.episodes.load(Ordering::Relaxed))
            .unwrap_or((0, &self.slots[0]));
        self.slots[slot].episodes.fetch_add(1, Ordering::Relaxed);
        slot
    }

    /// An episode placed at `slot` has ended.
    pub(crate) fn leave(&self, slot: usize) {
        self.slots[slot].episodes.fetch_sub(1, Ordering::Relaxed);
    }

    /// The slot's running worker, started (or started again) when it has none.
    pub(crate) async fn worker(&self, slot: usize) -> Result<Worker, SpawnError> {
        let mut held = self.slots[slot].worker.lock().await;
        if let Some(worker) = held.as_ref().filter(|worker| !worker.is_stopped()) {
            return Ok(worker.clone());
        }
        let worker = Worker::spawn(&self.launch).await?;
        *held = Some(worker.clone());
        Ok(worker)
    }
}
