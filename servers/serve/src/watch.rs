//! The phase of one connection and the timer that closes it when a phase lasts too long.
//!
//! A connection is always in one of three phases:
//!
//! - **head**: it opened, or bytes of a new request arrived, and the request's head is not
//!   complete yet: closed after the header timeout;
//! - **busy**: a request is being answered (hyper called the service, and the response body
//!   has not been dropped): timed out only while the handler waits for request body bytes
//!   that do not come (a stalled upload), after the header timeout;
//! - **idle**: between requests, nothing received: closed after the idle timeout.
//!
//! The stream wrapper sees bytes arrive (idle → head), the service wrapper sees requests start
//! and end (→ busy → idle), the request body wrapper sees the handler wait for the body.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for the rest of a request's head, since this instant.
    Head(Instant),
    /// This many requests are being answered; since when a handler waits for body bytes.
    Busy {
        requests: usize,
        stalled: Option<Instant>,
    },
    /// Waiting for a next request, since this instant.
    Idle(Instant),
}

/// Why a connection was closed by its timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expired {
    /// No complete request head within the header timeout.
    Head(Duration),
    /// No request within the idle timeout.
    Idle(Duration),
    /// A request body stalled for the header timeout while the handler waited for it.
    Body(Duration),
    /// The server is shutting down and the connection has no request being answered.
    Shutdown,
}

impl std::fmt::Display for Expired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expired::Head(after) => write!(f, "no complete request head within {after:?}"),
            Expired::Idle(after) => write!(f, "idle for {after:?}"),
            Expired::Body(after) => write!(f, "the request body stalled for {after:?}"),
            Expired::Shutdown => f.write_str("the server is shutting down"),
        }
    }
}

/// The phase of one connection, shared by its stream, its service and its timer.
#[derive(Debug)]
pub(crate) struct ConnState {
    phase: Mutex<Phase>,
    /// Wakes the timer when the phase changes.
    changed: Notify,
    header_timeout: Duration,
    idle_timeout: Duration,
}

impl ConnState {
    /// A connection that just opened: its first head is due within the header timeout.
    pub(crate) fn new(header_timeout: Duration, idle_timeout: Duration) -> Self {
        ConnState {
            phase: Mutex::new(Phase::Head(Instant::now())),
            changed: Notify::new(),
            header_timeout,
            idle_timeout,
        }
    }

    fn update(&self, change: impl FnOnce(Phase) -> Option<Phase>) {
        // A panic cannot leave a `Copy` phase half-written.
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(next) = change(*phase) {
            *phase = next;
            drop(phase);
            self.changed.notify_one();
        }
    }

    /// Bytes arrived: an idle connection starts receiving a request.
    fn received(&self) {
        self.update(|phase| match phase {
            Phase::Idle(_) => Some(Phase::Head(Instant::now())),
            Phase::Head(_) | Phase::Busy { .. } => None,
        });
    }

    /// A request's head is complete and its answer begins.
    pub(crate) fn request_started(&self) {
        self.update(|phase| match phase {
            Phase::Busy { requests, stalled } => Some(Phase::Busy {
                requests: requests + 1,
                stalled,
            }),
            Phase::Head(_) | Phase::Idle(_) => Some(Phase::Busy {
                requests: 1,
                stalled: None,
            }),
        });
    }

    /// A request's answer ended (its response body was sent or dropped).
    pub(crate) fn request_ended(&self) {
        self.update(|phase| match phase {
            Phase::Busy { requests, stalled } if requests > 1 => Some(Phase::Busy {
                requests: requests - 1,
                stalled,
            }),
            _ => Some(Phase::Idle(Instant::now())),
        });
    }

    /// A handler waits for request body bytes that have not arrived.
    pub(crate) fn body_waiting(&self) {
        self.update(|phase| match phase {
            Phase::Busy {
                requests,
                stalled: None,
            } => Some(Phase::Busy {
                requests,
                stalled: Some(Instant::now()),
            }),
            _ => None,
        });
    }

    /// Request body bytes arrived, or the handler stopped waiting for them.
    pub(crate) fn body_flowing(&self) {
        self.update(|phase| match phase {
            Phase::Busy {
                requests,
                stalled: Some(_),
            } => Some(Phase::Busy {
                requests,
                stalled: None,
            }),
            _ => None,
        });
    }

    /// When the current phase runs out, and why, if it can.
    fn deadline(&self) -> Option<(Instant, Expired)> {
        match *self.phase.lock().unwrap_or_else(|e| e.into_inner()) {
            Phase::Head(since) => Some((
                since + self.header_timeout,
                Expired::Head(self.header_timeout),
            )),
            Phase::Idle(since) => {
                Some((since + self.idle_timeout, Expired::Idle(self.idle_timeout)))
            }
            Phase::Busy {
                stalled: Some(since),
                ..
            } => Some((
                since + self.header_timeout,
                Expired::Body(self.header_timeout),
            )),
            Phase::Busy { stalled: None, .. } => None,
        }
    }

    /// Resolves once a phase outlasts its timeout, or, once `draining` turns true, as soon as
    /// no request is being answered (a connection waiting for a head has nothing to finish).
    pub(crate) async fn expired(&self, mut draining: watch::Receiver<bool>) -> Expired {
        let mut shutting_down = false;
        loop {
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            // Registered before reading the phase, so a change in between still wakes us.
            changed.as_mut().enable();
            shutting_down = shutting_down || *draining.borrow_and_update();
            let deadline = self.deadline();
            if shutting_down && !matches!(deadline, None | Some((_, Expired::Body(_)))) {
                return Expired::Shutdown;
            }
            let sleep = async {
                match deadline {
                    None => std::future::pending().await,
                    Some((deadline, _)) => tokio::time::sleep_until(deadline).await,
                }
            };
            if let Some((deadline, why)) = deadline
                && Instant::now() >= deadline
            {
                return why;
            }
            tokio::select! {
                () = sleep => {}
                () = changed => {}
                // A closed channel (the server is gone) counts as shutting down.
                result = draining.changed(), if !shutting_down => {
                    shutting_down = result.is_err();
                }
            }
        }
    }
}

/// A TCP stream that tells its connection's state when bytes arrive.
#[derive(Debug)]
pub(crate) struct WatchedStream {
    stream: TcpStream,
    state: Arc<ConnState>,
}

impl WatchedStream {
    pub(crate) fn new(stream: TcpStream, state: Arc<ConnState>) -> Self {
        WatchedStream { stream, state }
    }
}

impl AsyncRead for WatchedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.state.received();
        }
        polled
    }
}

impl AsyncWrite for WatchedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: Duration = Duration::from_secs(10);

    /// A shutdown signal that never comes.
    fn never() -> watch::Receiver<bool> {
        let (sender, receiver) = watch::channel(false);
        std::mem::forget(sender);
        receiver
    }
    const IDLE: Duration = Duration::from_secs(60);

    #[tokio::test(start_paused = true)]
    async fn a_silent_new_connection_gets_the_header_timeout() {
        let state = ConnState::new(HEADER, IDLE);
        let started = Instant::now();
        assert_eq!(state.expired(never()).await, Expired::Head(HEADER));
        assert_eq!(started.elapsed(), HEADER);
    }

    #[tokio::test(start_paused = true)]
    async fn busy_connections_never_expire_and_idle_ones_do() {
        let state = Arc::new(ConnState::new(HEADER, IDLE));
        state.request_started();
        let timer = tokio::spawn({
            let state = state.clone();
            async move { state.expired(never()).await }
        });
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(
            !timer.is_finished(),
            "a request being answered is not timed out"
        );
        let ended = Instant::now();
        state.request_ended();
        assert_eq!(timer.await.unwrap(), Expired::Idle(IDLE));
        assert_eq!(ended.elapsed(), IDLE);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_request_body_gets_the_header_timeout() {
        let state = ConnState::new(HEADER, IDLE);
        state.request_started();
        state.body_waiting();
        tokio::time::sleep(HEADER / 2).await;
        // Bytes came, then the handler waits again: the timeout starts over.
        state.body_flowing();
        let waiting = Instant::now();
        state.body_waiting();
        assert_eq!(state.expired(never()).await, Expired::Body(HEADER));
        assert_eq!(waiting.elapsed(), HEADER);
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_closes_waiting_connections_at_once_and_leaves_busy_ones() {
        let (drain, draining) = watch::channel(false);
        let waiting = ConnState::new(HEADER, IDLE);
        let busy = Arc::new(ConnState::new(HEADER, IDLE));
        busy.request_started();
        let busy_timer = tokio::spawn({
            let (busy, draining) = (busy.clone(), draining.clone());
            async move { busy.expired(draining).await }
        });
        let started = Instant::now();
        let _ = drain.send(true);
        assert_eq!(waiting.expired(draining).await, Expired::Shutdown);
        assert_eq!(started.elapsed(), Duration::ZERO);
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(
            !busy_timer.is_finished(),
            "a request being answered may finish"
        );
        busy.request_ended();
        assert_eq!(busy_timer.await.unwrap(), Expired::Shutdown);
    }

    #[tokio::test(start_paused = true)]
    async fn bytes_on_an_idle_connection_start_the_header_timeout() {
        let state = ConnState::new(HEADER, IDLE);
        state.request_started();
        state.request_ended();
        tokio::time::sleep(Duration::from_secs(30)).await;
        let first_byte = Instant::now();
        state.received();
        assert_eq!(state.expired(never()).await, Expired::Head(HEADER));
        assert_eq!(first_byte.elapsed(), HEADER);
        // More bytes of the same head do not extend it.
        state.received();
        assert_eq!(state.deadline().unwrap().0, first_byte + HEADER);
    }
}
