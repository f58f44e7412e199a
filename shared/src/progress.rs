//! Progress notifications from inside an environment's tool call.
//!
//! When a client sends a progress token with a call, the MCP handler makes a reporter
//! available to everything that call awaits (a task-local), so an environment reports progress
//! with [`report`] or [`while_running`] without any handle in its signatures. Without a token
//! (or outside MCP, e.g. `POST /episodes`), reporting does nothing.

use std::future::Future;
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;

tokio::task_local! {
    static REPORTER: Reporter;
}

/// Where the current call's progress goes.
#[derive(Clone)]
pub struct Reporter {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporter").finish_non_exhaustive()
    }
}

impl Reporter {
    /// A reporter for the call that carried `token`.
    pub fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        Self { peer, token }
    }
}

/// Runs `future` with `reporter` (if any) as the current call's progress reporter.
pub async fn with_reporter<F: Future>(reporter: Option<Reporter>, future: F) -> F::Output {
    match reporter {
        Some(reporter) => REPORTER.scope(reporter, future).await,
        None => future.await,
    }
}

/// Reports progress on the current call; does nothing when the client asked for none.
pub async fn report(progress: f64, total: Option<f64>, message: impl Into<String>) {
    let Ok(reporter) = REPORTER.try_with(Reporter::clone) else {
        return;
    };
    let mut param =
        ProgressNotificationParam::new(reporter.token, progress).with_message(message.into());
    if let Some(total) = total {
        param = param.with_total(total);
    }
    if let Err(error) = reporter.peer.notify_progress(param).await {
        tracing::debug!(%error, "cannot send a progress notification");
    }
}

/// Awaits `future`, reporting "`what`: N s" every `every` while it runs.
pub async fn while_running<F: Future>(what: &str, every: Duration, future: F) -> F::Output {
    if REPORTER.try_with(|_| ()).is_err() {
        return future.await;
    }
    let started = Instant::now();
    let mut future = std::pin::pin!(future);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            output = &mut future => return output,
            _ = ticker.tick() => {
                let seconds = started.elapsed().as_secs_f64();
                report(seconds, None, format!("{what}: {seconds:.0} s")).await;
            }
        }
    }
}
