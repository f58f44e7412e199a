//! The service wrapper that marks a connection busy from a request's head to the end of its
//! response body, and the request body that says when a handler waits for bytes.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use hyper::body::{Body, Frame, Incoming, SizeHint};

use crate::watch::ConnState;

/// Marks the connection busy while the request lasts; dropped with the response body (or with
/// the request's future, when the connection goes first).
#[derive(Debug)]
struct Busy(Arc<ConnState>);

impl Busy {
    fn start(state: Arc<ConnState>) -> Self {
        state.request_started();
        Busy(state)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

/// A response body that keeps its connection marked busy until it is dropped.
#[derive(Debug)]
pub(crate) struct TrackedBody<B> {
    body: B,
    _busy: Busy,
}

impl<B: Body + Unpin> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A request's body as handlers receive it: hyper's body, telling the connection when the
/// handler waits for bytes that have not arrived (a stalled upload is timed out).
#[derive(Debug)]
pub struct RequestBody {
    body: Incoming,
    state: Arc<ConnState>,
}

impl Body for RequestBody {
    type Data = hyper::body::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if polled.is_pending() {
            self.state.body_waiting();
        } else {
            self.state.body_flowing();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for RequestBody {
    /// A handler that drops the body no longer waits for it.
    fn drop(&mut self) {
        self.state.body_flowing();
    }
}

/// A tower service as hyper calls it, marking the connection busy per request.
#[derive(Debug)]
pub(crate) struct TrackedService<S> {
    inner: S,
    state: Arc<ConnState>,
}

impl<S> TrackedService<S> {
    pub(crate) fn new(inner: S, state: Arc<ConnState>) -> Self {
        TrackedService { inner, state }
    }
}

impl<S, B> hyper::service::Service<Request<Incoming>> for TrackedService<S>
where
    S: tower::Service<Request<RequestBody>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Body + Unpin,
{
    type Response = Response<TrackedBody<B>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let busy = Busy::start(self.state.clone());
        let state = self.state.clone();
        let request = request.map(|body| RequestBody { body, state });
        let mut service = self.inner.clone();
        Box::pin(async move {
            std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
            let response = service.call(request).await?;
            Ok(response.map(|body| TrackedBody { body, _busy: busy }))
        })
    }
}
