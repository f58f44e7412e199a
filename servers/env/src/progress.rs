//! Progress notifications from inside an environment's tool call.
//!
//! When a client sends a progress token with a call, the MCP handler makes a reporter
//! available to everything that call awaits (a task-local), so an environment reports progress
//! with [`report`] or [`while_running`] without any handle in its signatures. Without a token
//! (or outside MCP, e.g. `POST /episodes`), reporting does nothing.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::env::BoxFuture;

/// Where the current call's progress goes. The transport that carries a call (MCP, with the
/// client's progress token) provides one; environments only call [`report`].
pub trait ProgressSink: Send + Sync + 'static {
    /// Sends one notification: `progress` so far, out of `total` when known.
    fn notify(&self, progress: f64, total: Option<f64>, message: String) -> BoxFuture<'_, ()>;
}

/// The current call's reporter.
pub type Reporter = Arc<dyn ProgressSink>;

tokio::task_local! {
    static REPORTER: Reporter;
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
    reporter.notify(progress, total, message.into()).await;
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
