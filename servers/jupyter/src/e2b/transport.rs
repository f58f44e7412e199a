//! HTTP/1.1 requests over hyper's pooled client, plain or TLS by the URL's scheme.
//!
//! HTTP/1.1 only, so a request dropped on a client-side timeout closes its connection and the
//! server notices (and interrupts the cell). `https` URLs use rustls with the `ring` provider
//! and the system's CA certificates (what `rustls-native-certs` finds: `/etc/ssl/certs`, or
//! `SSL_CERT_FILE` / `SSL_CERT_DIR`); they are loaded only when a URL is `https`, so an
//! `http://` service needs none. The TLS client lives here rather than in reqwest so that no
//! other HTTP client in the process needs a process-wide rustls provider (reqwest's
//! `rustls-no-provider` panics without one).

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde::Serialize;

use super::E2bError;

/// The HTTP/1.1 client (plain or TLS by the URL's scheme).
pub(super) type HttpClient = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

/// Whether `url` is `https` (`Ok(true)`), `http` (`Ok(false)`), or unusable.
pub(super) fn check_url(url: &str) -> Result<bool, E2bError> {
    let invalid = || E2bError::InvalidUrl(url.to_owned());
    let uri: http::Uri = url.parse().map_err(|_| invalid())?;
    match (uri.scheme_str(), uri.host()) {
        (Some("https"), Some(host)) if !host.is_empty() => Ok(true),
        (Some("http"), Some(host)) if !host.is_empty() => Ok(false),
        _ => Err(invalid()),
    }
}

/// A pooled client; TLS (and the CA certificates) are set up only when `tls_url`, the first
/// `https` URL it will reach (named in errors), is given.
pub(super) fn http_client(tls_url: Option<&str>) -> Result<HttpClient, E2bError> {
    let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
    connector.enforce_http(false);
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(Duration::from_secs(10)));
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls_config(tls_url)?)
        .https_or_http()
        .enable_http1()
        .wrap_connector(connector);
    Ok(
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .pool_timer(hyper_util::rt::TokioTimer::new())
            // Below the servers' keep-alive timeout (60 s by default), so a pooled
            // connection is never reused just as the server closes it.
            .pool_idle_timeout(Duration::from_secs(50))
            .build(connector),
    )
}

/// The rustls configuration: `ring`, safe default protocol versions, and the system's CA
/// certificates when some URL (`tls_url`, named in errors) is `https`; else no roots at all,
/// as no request will need them.
fn tls_config(tls_url: Option<&str>) -> Result<rustls::ClientConfig, E2bError> {
    use hyper_rustls::ConfigBuilderExt;
    let setup = |message: String| E2bError::TlsSetup {
        url: tls_url.unwrap_or_default().to_owned(),
        message,
    };
    let builder = rustls::ClientConfig::builder_with_provider(
        rustls::crypto::ring::default_provider().into(),
    )
    .with_safe_default_protocol_versions()
    .map_err(|e| setup(e.to_string()))?;
    Ok(match tls_url {
        Some(_) => builder
            .with_native_roots()
            .map_err(|e| {
                setup(format!(
                    "{e} (install the ca-certificates package, or point SSL_CERT_FILE at a PEM bundle)"
                ))
            })?
            .with_no_client_auth(),
        None => builder
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
    })
}

/// `error` and its causes, joined with `: `, without repeats.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

/// Whether the TLS layer (rustls) caused `error`: a `rustls::Error` among its causes, where
/// an `io::Error`'s cause is the error it wraps (tokio-rustls and hyper-rustls wrap rustls'
/// errors in `io::Error`s, whose `source` skips the wrapped error itself).
fn is_tls(error: &(dyn std::error::Error + 'static)) -> bool {
    if error.is::<rustls::Error>() {
        return true;
    }
    let next = match error.downcast_ref::<std::io::Error>() {
        Some(io) => io
            .get_ref()
            .map(|inner| inner as &(dyn std::error::Error + 'static)),
        None => error.source(),
    };
    next.is_some_and(is_tls)
}

/// One request being built (the subset of a request builder this client needs).
pub(super) struct Request {
    http: HttpClient,
    method: http::Method,
    url: String,
    headers: http::HeaderMap,
    body: Bytes,
    timeout: Option<Duration>,
    /// A header value that cannot be sent (from a service's odd sandbox id or token), or a
    /// body that could not be serialized.
    error: Option<E2bError>,
}

impl Request {
    /// A request with no headers and an empty body.
    pub(super) fn new(http: HttpClient, method: http::Method, url: String) -> Self {
        Request {
            http,
            method,
            url,
            headers: http::HeaderMap::new(),
            body: Bytes::new(),
            timeout: None,
            error: None,
        }
    }

    /// Sets a header; `name` is lowercase.
    pub(super) fn header(mut self, name: &'static str, value: impl AsRef<str>) -> Self {
        match http::HeaderValue::from_str(value.as_ref()) {
            Ok(value) => {
                self.headers
                    .insert(http::HeaderName::from_static(name), value);
            }
            Err(_) => {
                self.error.get_or_insert_with(|| {
                    E2bError::Protocol(format!(
                        "the {name} value {:?} cannot be sent in an HTTP header",
                        value.as_ref()
                    ))
                });
            }
        }
        self
    }

    /// A JSON body (and its content type, unless one is set).
    pub(super) fn json(mut self, value: &impl Serialize) -> Self {
        self.headers
            .entry(http::header::CONTENT_TYPE)
            .or_insert(http::HeaderValue::from_static("application/json"));
        match serde_json::to_vec(value) {
            Ok(json) => self.body = Bytes::from(json),
            Err(e) => {
                self.error.get_or_insert_with(|| {
                    E2bError::Protocol(format!("cannot encode the request body: {e}"))
                });
            }
        }
        self
    }

    pub(super) fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// A deadline for the whole exchange: sending, and reading the response body.
    pub(super) fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    pub(super) async fn send(self) -> Result<Response, E2bError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let mut request = http::Request::builder()
            .method(self.method)
            .uri(&self.url)
            .body(Full::new(self.body))
            .map_err(|e| E2bError::InvalidUrl(format!("{}: {e}", self.url)))?;
        *request.headers_mut() = self.headers;
        let deadline = self.timeout.map(|t| (tokio::time::Instant::now() + t, t));
        let sent = self.http.request(request);
        let response = match deadline {
            Some((at, timeout)) => tokio::time::timeout_at(at, sent)
                .await
                .map_err(|_| E2bError::Timeout(timeout))?,
            None => sent.await,
        };
        let response = response.map_err(|e| {
            let message = chain(&e);
            if is_tls(&e) {
                E2bError::Tls {
                    url: self.url.clone(),
                    message,
                }
            } else {
                E2bError::Http {
                    url: self.url.clone(),
                    message,
                }
            }
        })?;
        Ok(Response {
            status: response.status(),
            body: response.into_body(),
            url: self.url,
            deadline,
        })
    }
}

/// A response whose body is read as it arrives.
pub(super) struct Response {
    status: http::StatusCode,
    body: hyper::body::Incoming,
    url: String,
    deadline: Option<(tokio::time::Instant, Duration)>,
}

impl Response {
    pub(super) fn status(&self) -> http::StatusCode {
        self.status
    }

    /// The next piece of the body; `None` at its end.
    pub(super) async fn chunk(&mut self) -> Result<Option<Bytes>, E2bError> {
        loop {
            let frame = self.body.frame();
            let frame = match self.deadline {
                Some((at, timeout)) => tokio::time::timeout_at(at, frame)
                    .await
                    .map_err(|_| E2bError::Timeout(timeout))?,
                None => frame.await,
            };
            match frame {
                None => return Ok(None),
                Some(Err(e)) => {
                    return Err(E2bError::Http {
                        url: self.url.clone(),
                        message: chain(&e),
                    });
                }
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }

    /// The whole body.
    pub(super) async fn bytes(mut self) -> Result<Vec<u8>, E2bError> {
        let mut all = Vec::new();
        while let Some(chunk) = self.chunk().await? {
            all.extend_from_slice(&chunk);
        }
        Ok(all)
    }

    pub(super) async fn json<T: serde::de::DeserializeOwned>(self) -> Result<T, E2bError> {
        let url = self.url.clone();
        let bytes = self.bytes().await?;
        serde_json::from_slice(&bytes)
            .map_err(|e| E2bError::Protocol(format!("bad JSON from {url}: {e}")))
    }

    /// The response if its status is a success, else its error: the body's `message` (or
    /// the body itself).
    pub(super) async fn success(self) -> Result<Response, E2bError> {
        let status = self.status();
        if status.is_success() {
            return Ok(self);
        }
        let body = self.bytes().await.unwrap_or_default();
        let message = mcpgym_e2b::error::error_message(&body)
            .unwrap_or_else(|| String::from_utf8_lossy(&body).into_owned());
        Err(E2bError::Status {
            status: status.as_u16(),
            message,
        })
    }
}
