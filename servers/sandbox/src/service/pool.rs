//! The warm pool: jailed kernels started ahead of demand, so a create only hands one over.
//!
//! Each warm kernel has its own sandbox root (fresh home, fresh uid) and goes to exactly one
//! sandbox; it is never given back. Taking one wakes the refiller, which starts replacements
//! one at a time in the background (on two cores, starting several at once only slows the
//! sandboxes that are already running).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::jail::{JailConfig, UidLease, UidPool};
use crate::kernel::{Kernel, KernelConfig};

use super::ServiceConfig;

/// A started kernel in its own sandbox root, not yet given to a sandbox.
pub(crate) struct Warm {
    pub(crate) kernel: Kernel,
    pub(crate) root: PathBuf,
    pub(crate) lease: Option<UidLease>,
}

/// Pre-started kernels, refilled in the background up to the configured size.
pub(crate) struct Pool {
    ready: Mutex<VecDeque<Warm>>,
    wanted: Notify,
    config: Arc<ServiceConfig>,
}

impl Pool {
    /// An empty pool; [`Pool::spawn_refiller`] fills it.
    pub(crate) fn new(config: Arc<ServiceConfig>) -> Arc<Pool> {
        Arc::new(Pool {
            ready: Mutex::new(VecDeque::new()),
            wanted: Notify::new(),
            config,
        })
    }

    /// Starts the background task that keeps the pool full.
    pub(crate) fn spawn_refiller(self: &Arc<Self>) {
        if self.config.pool_size == 0 {
            return;
        }
        // The pool lives as long as the service; the task ends with the runtime.
        let this = self.clone();
        tokio::spawn(async move {
            loop {
                if this.len() >= this.config.pool_size {
                    this.wanted.notified().await;
                    continue;
                }
                match start_kernel(&this.config, false).await {
                    Ok(warm) => this.ready.lock().expect("pool lock").push_back(warm),
                    Err(error) => {
                        tracing::warn!(%error, "cannot start a warm kernel; retrying in 5 s");
                        tokio::time::sleep(Duration::from_secs(5)).await;
                    }
                }
            }
        });
    }

    /// A warm kernel if one is ready (the pool then refills).
    pub(crate) fn take(&self) -> Option<Warm> {
        let warm = self.ready.lock().expect("pool lock").pop_front();
        self.wanted.notify_one();
        warm
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
    jail.allow_network = allow_network;
    jail.limits = config.limits.clone();
    jail.run_as = lease.as_ref().map(UidLease::user);
    let mut kernel_config = KernelConfig::new(jail);
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
