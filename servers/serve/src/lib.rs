//! How mcpgym's HTTP servers hold connections, written once for the environment server and the
//! sandbox service: HTTP/1.1 over hyper, with
//!
//! - `TCP_NODELAY` on every connection (Nagle and delayed ACKs add ~20–40 ms to small replies);
//! - a **header timeout**: a connection that does not finish a request's head this long after
//!   it opened, or after the first byte of its next request, is closed (a half-sent request
//!   cannot hold a connection); so is one whose request body stalls this long while its
//!   handler waits for it;
//! - an **idle timeout**: a keep-alive connection with no request for this long is closed;
//! - a **connection limit**: past it, new connections wait in the listen backlog until one
//!   closes;
//! - a **shutdown with a deadline**: on shutdown the server stops accepting, closes every
//!   connection with no request being answered, lets requests in flight finish for at most
//!   [`ServeConfig::shutdown_timeout`], then drops every connection, so shutting down always
//!   completes, whatever clients do.
//!
//! A request being answered (a long cell, a streamed response) is never timed out here; its
//! handler bounds it.
//!
//! Which requests a server answers at all (Host and Origin allow-lists, its token) is
//! [`Guard`]'s: one set of rules for every server. Both also write their timestamps with one
//! formatter, [`rfc3339`].

mod auth;
mod body;
mod guard;
mod time;
mod watch;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Body;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

pub use auth::{bearer_token, constant_time_eq};
pub use body::RequestBody;
use body::TrackedService;
pub use guard::{Guard, Origins, Refusal, TOKEN_COOKIE};
pub use time::{Fraction, parse_rfc3339, rfc3339};
use watch::{ConnState, WatchedStream};

/// Connection limits and timeouts. [`ServeConfig::default`] gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    /// Longest a client may take to send a request's head (request line and headers), from the
    /// moment its connection opens or the first byte of a later request arrives; also the
    /// longest a request body may stall while its handler waits for it. Default 10 s.
    pub header_timeout: Duration,
    /// Longest a keep-alive connection may wait for its next request. Default 60 s.
    pub idle_timeout: Duration,
    /// Most connections served at once, across every listener of the server; further
    /// connections wait in the listen backlog (each listener holds one of them accepted but
    /// unserved). Keep it below the open-file limit (`ulimit -n`). Default 512.
    pub max_connections: usize,
    /// How long requests in flight may run on after shutdown begins before their connections
    /// are dropped. Default 5 s.
    pub shutdown_timeout: Duration,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
            shutdown_timeout: Duration::from_secs(5),
        }
    }
}

/// The connections of one server: its configuration and the connection limit every listener
/// of the server shares (clones share it, across threads and runtimes).
#[derive(Debug, Clone)]
pub struct Connections {
    config: Arc<ServeConfig>,
    permits: Arc<Semaphore>,
}

impl Connections {
    /// Connections held to `config`.
    pub fn new(config: ServeConfig) -> Self {
        let permits = Arc::new(Semaphore::new(
            config.max_connections.clamp(1, Semaphore::MAX_PERMITS),
        ));
        Connections {
            config: Arc::new(config),
            permits,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ServeConfig {
        &self.config
    }

    /// Serves `listener` with `service` until `until` resolves; then stops accepting, lets
    /// requests in flight finish for at most [`ServeConfig::shutdown_timeout`], and drops every
    /// connection this call accepted before returning.
    ///
    /// Spawns a task per connection on the current runtime. Fails only when accepting fails
    /// for a reason other than a resource shortage or a client's reset.
    pub async fn serve<S, B>(
        &self,
        listener: TcpListener,
        service: S,
        until: impl Future<Output = ()>,
    ) -> std::io::Result<()>
    where
        S: tower::Service<Request<RequestBody>, Response = Response<B>, Error = Infallible>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        B: Body + Send + Unpin + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let mut builder = http1::Builder::new();
        // hyper's own header timer runs from the moment a connection waits for a head, idle
        // time included; the watch in `watch` applies the two timeouts separately, so hyper's
        // is only a backstop that can never fire first.
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.config.header_timeout + self.config.idle_timeout);
        // Tells connections waiting for a request (no answer to finish) to close at once, and
        // those answering one to close once it is answered.
        let (drain, draining) = tokio::sync::watch::channel(false);
        let mut connections = JoinSet::new();
        let mut until = std::pin::pin!(until);
        let outcome = loop {
            let stream = tokio::select! {
                () = &mut until => break Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(error) if is_transient(&error) => {
                        // Out of file descriptors or memory: wait rather than spin, and let
                        // the waiting connections sit in the backlog meanwhile.
                        tracing::warn!(%error, "cannot accept a connection; retrying in 100 ms");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                    Err(error) if is_per_connection(&error) => continue,
                    Err(error) => break Err(error),
                },
            };
            // Accepted first, then held unserved until a place frees: the limit is exact
            // across listeners, and further connections wait in the backlog meanwhile.
            let permit = tokio::select! {
                () = &mut until => break Ok(()),
                permit = self.permits.clone().acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => break Ok(()), // never closed
                },
            };
            if let Err(error) = stream.set_nodelay(true) {
                tracing::warn!(%error, "cannot set TCP_NODELAY");
            }
            let state = Arc::new(ConnState::new(
                self.config.header_timeout,
                self.config.idle_timeout,
            ));
            let io = TokioIo::new(WatchedStream::new(stream, state.clone()));
            let connection = builder
                .serve_connection(io, TrackedService::new(service.clone(), state.clone()))
                // A WebSocket (OpenEnv's `/ws`) takes the connection over after its `101`.
                .with_upgrades();
            let draining = draining.clone();
            connections.spawn(async move {
                let _permit = permit;
                let mut connection = std::pin::pin!(connection);
                let mut stop = draining.clone();
                let served = async {
                    tokio::select! {
                        served = connection.as_mut() => return served,
                        _ = stop.wait_for(|stop| *stop) => connection.as_mut().graceful_shutdown(),
                    }
                    connection.await
                };
                tokio::select! {
                    served = served => {
                        if let Err(error) = served {
                            tracing::debug!(%error, "connection ended with an error");
                        }
                    }
                    why = state.expired(draining) => tracing::debug!("closing a connection: {why}"),
                }
            });
            // Forget finished connections, so the set holds only live ones.
            while connections.try_join_next().is_some() {}
        };
        drop(listener);
        let _ = drain.send(true);
        let deadline = self.config.shutdown_timeout;
        let finished = async { while connections.join_next().await.is_some() {} };
        if tokio::time::timeout(deadline, finished).await.is_err() {
            tracing::info!(
                "requests still running {deadline:?} after shutdown began; closing their connections"
            );
        }
        connections.shutdown().await;
        outcome
    }
}

/// An accept error that a short wait may cure (out of descriptors or memory).
fn is_transient(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// An accept error about one connection only (reset or aborted before it was accepted).
fn is_per_connection(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        error.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused | Interrupted
    ) || matches!(error.raw_os_error(), Some(libc::EPROTO | libc::EPERM))
}
