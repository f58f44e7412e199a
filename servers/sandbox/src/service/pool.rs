//! The warm pool: jailed kernels started ahead of demand, so a create only hands one over.
//!
//! Each warm kernel has its own sandbox root (fresh home, fresh uid) and goes to exactly one
//! sandbox; it is never given back. The pool keeps `pool_size` kernels ready, or more when
//! demand was higher: its target is the most sandboxes seen running or being created at once
//! within the last [`DEMAND_WINDOW`] (a GRPO step starts the same group size again and again;
//! episodes run one after another need no more than one), capped by
//! `pool_max` and the sandbox limit. Kernels start a few at a time ([`parallel_starts`]): on
//! two cores more at once only slows them all down. Refills wait until creates have been
//! quiet for a moment, so they never take the cores from a burst being served.
//!
//! A create that finds the pool empty waits for the next kernel to start, up to
//! `start_timeout`, instead of starting one of its own: a burst of hundreds of creates then
//! queues behind a bounded number of starts instead of thrashing the machine, and is served in
//! order. A create that cannot be served in time is told why.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use crate::jail::{JailConfig, UidLease, UidPool};
use crate::kernel::{Kernel, KernelConfig};

use super::ServiceConfig;

/// How long a burst of creates keeps the pool's target up.
pub(crate) const DEMAND_WINDOW: Duration = Duration::from_secs(600);
/// How long after the last create the pool waits before refilling: a start costs a core for
/// a third of a second, which the creates of a burst still being served need more.
const QUIET: Duration = Duration::from_millis(1500);

/// A started kernel in its own sandbox root, not yet given to a sandbox.
pub(crate) struct Warm {
    pub(crate) kernel: Kernel,
    pub(crate) root: PathBuf,
    pub(crate) lease: Option<UidLease>,
}

/// Why no kernel could be handed over.
#[derive(Debug)]
pub(crate) struct Starved {
    /// How long the create waited.
    pub(crate) waited: Duration,
    /// Kernels starting when it gave up.
    pub(crate) starting: usize,
    /// Creates waiting when it gave up (itself included).
    pub(crate) waiting: usize,
    /// The last start failure, if starts are failing.
    pub(crate) failure: Option<String>,
}

/// Pre-started kernels, refilled in the background.
pub(crate) struct Pool {
    ready: Mutex<VecDeque<Warm>>,
    /// Creates waiting for the next kernel, oldest first.
    waiters: Mutex<VecDeque<oneshot::Sender<Warm>>>,
    /// Kernels being started now.
    starting: AtomicUsize,
    /// When recent creates were served, and how many sandboxes were running or being created
    /// then (that one included), for the demand-sized target.
    demand: Mutex<VecDeque<(Instant, usize)>>,
    last_failure: Mutex<Option<String>>,
    /// When a create last took a kernel.
    last_take: Mutex<Option<Instant>>,
    wanted: Notify,
    config: Arc<ServiceConfig>,
}

impl Pool {
    /// An empty pool; [`Pool::spawn_refiller`] fills it.
    pub(crate) fn new(config: Arc<ServiceConfig>) -> Arc<Pool> {
        Arc::new(Pool {
            ready: Mutex::new(VecDeque::new()),
            waiters: Mutex::new(VecDeque::new()),
            starting: AtomicUsize::new(0),
            demand: Mutex::new(VecDeque::new()),
            last_failure: Mutex::new(None),
            last_take: Mutex::new(None),
            wanted: Notify::new(),
            config,
        })
    }

    /// Starts the background task that keeps the pool at its target and serves waiting
    /// creates. It runs even with a pool size of 0: then it starts kernels only for creates.
    pub(crate) fn spawn_refiller(self: &Arc<Self>) {
        // The pool lives as long as the service; the task ends with the runtime.
        let this = self.clone();
        tokio::spawn(async move {
            loop {
                let wanted = this.wanted.notified();
                while this.should_start() {
                    this.starting.fetch_add(1, Ordering::SeqCst);
                    let pool = this.clone();
                    tokio::spawn(async move { pool.start_one().await });
                }
                // A refill held back during a burst is looked at again once it is quiet.
                tokio::select! {
                    _ = wanted => {}
                    _ = tokio::time::sleep(QUIET) => {}
                }
            }
        });
    }

    /// Whether one more kernel should start now.
    fn should_start(&self) -> bool {
        let starting = self.starting.load(Ordering::SeqCst);
        if starting >= parallel_starts() {
            return false;
        }
        let waiting = self.waiting();
        if waiting > starting {
            // Creates are waiting: start kernels for them first of all.
            return true;
        }
        let last_take = *self.last_take.lock().expect("pool lock");
        if last_take.is_some_and(|at| at.elapsed() < QUIET) {
            return false;
        }
        let have = self.len() + starting;
        have < self.target().min(self.config.max_sandboxes.max(1))
    }

    /// The number of kernels the pool aims to keep ready.
    fn target(&self) -> usize {
        let recent = {
            let mut demand = self.demand.lock().expect("pool demand lock");
            while demand
                .front()
                .is_some_and(|(at, _)| at.elapsed() > DEMAND_WINDOW)
            {
                demand.pop_front();
            }
            // The most at once, not how many: counting every create of the window grew the
            // pool by a kernel per episode for episodes run one after another.
            demand
                .iter()
                .map(|(_, at_once)| *at_once)
                .max()
                .unwrap_or(0)
        };
        self.config
            .pool_size
            .max(recent.min(self.config.pool_max))
            .min(self.config.max_sandboxes)
    }

    async fn start_one(self: Arc<Self>) {
        let started = start_kernel(&self.config, false).await;
        self.starting.fetch_sub(1, Ordering::SeqCst);
        match started {
            Ok(warm) => {
                *self.last_failure.lock().expect("pool failure lock") = None;
                self.hand_over(warm);
            }
            Err(error) => {
                tracing::warn!(%error, "cannot start a warm kernel; retrying in 1 s");
                *self.last_failure.lock().expect("pool failure lock") = Some(error.to_string());
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        self.wanted.notify_one();
    }

    /// Gives a fresh kernel to the oldest waiting create, or keeps it ready.
    fn hand_over(&self, mut warm: Warm) {
        loop {
            let waiter = self.waiters.lock().expect("pool waiters lock").pop_front();
            match waiter {
                // A waiter that gave up meanwhile hands the kernel back.
                Some(waiter) => match waiter.send(warm) {
                    Ok(()) => return,
                    Err(back) => warm = back,
                },
                None => {
                    self.ready.lock().expect("pool lock").push_back(warm);
                    return;
                }
            }
        }
    }

    /// A warm kernel: one that is ready, else the next one started, waiting up to `timeout`.
    /// `demand` is how many sandboxes are running or being created, this one included.
    pub(crate) async fn take(&self, timeout: Duration, demand: usize) -> Result<Warm, Starved> {
        let now = Instant::now();
        self.demand
            .lock()
            .expect("pool demand lock")
            .push_back((now, demand));
        *self.last_take.lock().expect("pool lock") = Some(now);
        let ready = self.ready.lock().expect("pool lock").pop_front();
        if let Some(warm) = ready {
            self.wanted.notify_one();
            return Ok(warm);
        }
        let started = Instant::now();
        let (sender, receiver) = oneshot::channel();
        self.waiters
            .lock()
            .expect("pool waiters lock")
            .push_back(sender);
        self.wanted.notify_one();
        match tokio::time::timeout(timeout, receiver).await {
            Ok(Ok(warm)) => Ok(warm),
            _ => {
                let starved = Starved {
                    waited: started.elapsed(),
                    starting: self.starting.load(Ordering::SeqCst),
                    waiting: self.waiting(),
                    failure: self.last_failure.lock().expect("pool failure lock").clone(),
                };
                // Our sender is dropped with the receiver; `waiting` skips it from now on.
                Err(starved)
            }
        }
    }

    /// Creates still waiting for a kernel.
    fn waiting(&self) -> usize {
        let mut waiters = self.waiters.lock().expect("pool waiters lock");
        waiters.retain(|w| !w.is_closed());
        waiters.len()
    }

    /// How many kernels are ready.
    pub(crate) fn len(&self) -> usize {
        self.ready.lock().expect("pool lock").len()
    }

    /// Kills every warm kernel (service shutdown).
    pub(crate) async fn drain(&self) {
        let all: Vec<Warm> = self.ready.lock().expect("pool lock").drain(..).collect();
        for warm in all {
            warm.kernel.shutdown().await;
            super::registry::remove_root(warm.root).await;
        }
    }
}

/// Kernels started at once: one per core, at least two (a start waits on I/O part of the time).
fn parallel_starts() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}
/// Starts a kernel in a new sandbox root under the service's directory, with a fresh uid.
pub(crate) async fn start_kernel(
    config: &ServiceConfig,
    allow_network: bool,
) -> crate::Result<Warm> {
    let root = config.root_dir.join(super::registry::short_id());
    let lease = if running_as_root() {
        let uids = UidPool::default();
        Some(
            tokio::task::spawn_blocking(move || uids.lease())
                .await
                .expect("uid lease panicked")?,
        )
    } else {
        None
    };
    let mut jail = JailConfig::new(&root);
    jail.tmp = Some(super::registry::sandbox_tmp(&root));
    jail.allow_network = allow_network;
    jail.limits = config.limits.clone();
    jail.run_as = lease.as_ref().map(UidLease::user);
    config.runtime.apply(&mut jail);
    let mut kernel_config = KernelConfig::new(jail);
    kernel_config.python = config.runtime.python().to_string_lossy().into_owned();
    kernel_config.start_timeout = config.start_timeout;
    kernel_config.uid_pool = None;
    match Kernel::start(kernel_config).await {
        Ok(kernel) => Ok(Warm {
            kernel,
            root,
            lease,
        }),
        Err(error) => {
            super::registry::remove_root(root).await;
            Err(error)
        }
    }
}

fn running_as_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}
