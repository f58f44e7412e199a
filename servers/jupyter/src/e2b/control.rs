//! The control plane: the client, and a sandbox's create, kill and timeout.

use std::time::Duration;

use mcpgym_e2b::control::{NewSandbox, SandboxCreated, SetTimeout};
use mcpgym_e2b::{E2B_CLOUD_DOMAIN, headers, paths, routing};

use super::transport::{HttpClient, Request, check_url, http_client};
use super::{E2bConfig, E2bError};

/// A client for one sandbox service; cheap to clone.
#[derive(Clone)]
pub struct E2bClient {
    http: HttpClient,
    config: E2bConfig,
}

impl std::fmt::Debug for E2bClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("E2bClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl E2bClient {
    /// A client for `config`. Fails for malformed URLs, and when a URL is `https` and no CA
    /// certificates can be found.
    pub fn new(config: E2bConfig) -> Result<Self, E2bError> {
        // The first https URL, if any: TLS (and the CA certificates) are set up only then.
        let mut tls_url = check_url(&config.api_url)?.then(|| config.api_url.clone());
        match &config.sandbox_url {
            Some(url) => {
                if check_url(url)? && tls_url.is_none() {
                    tls_url = Some(url.clone());
                }
            }
            // The data plane is https://<port>-<id>.<domain>.
            None => {
                tls_url.get_or_insert_with(|| format!("https://*.{E2B_CLOUD_DOMAIN}"));
            }
        }
        let http = http_client(tls_url.as_deref())?;
        Ok(Self { http, config })
    }

    /// The configuration.
    pub fn config(&self) -> &E2bConfig {
        &self.config
    }

    fn request(&self, method: http::Method, url: String) -> Request {
        Request::new(self.http.clone(), method, url)
    }

    fn control(&self, method: http::Method, path: &str) -> Request {
        let mut request = self.request(method, format!("{}{path}", self.config.api_url));
        if let Some(key) = &self.config.api_key {
            request = request.header(headers::API_KEY, key);
        }
        request
    }

    /// Creates a sandbox that lives `lifetime` unless refreshed ([`Sandbox::set_timeout`]).
    pub async fn create(&self, lifetime: Duration) -> Result<Sandbox, E2bError> {
        let body = NewSandbox {
            template_id: Some(self.config.template.clone()),
            timeout: Some(lifetime.as_secs().max(1)),
            ..NewSandbox::default()
        };
        let created: SandboxCreated = self
            .control(http::Method::POST, paths::SANDBOXES)
            .json(&body)
            // A service may queue a create behind the kernels it is starting (an `mcpgym
            // sandbox` up to its --start-timeout): the service says when it gives up.
            .timeout(Duration::from_secs(600))
            .send()
            .await?
            .success()
            .await?
            .json()
            .await?;
        Ok(Sandbox {
            client: self.clone(),
            id: created.sandbox_id,
            access_token: created.envd_access_token,
            domain: created.domain,
        })
    }
}

/// One live sandbox. Not killed on drop: call [`Sandbox::kill`].
#[derive(Debug, Clone)]
pub struct Sandbox {
    client: E2bClient,
    id: String,
    access_token: Option<String>,
    domain: Option<String>,
}

impl Sandbox {
    /// The sandbox's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A request to `path` on `port` of this sandbox's data plane.
    pub(super) fn data(&self, method: http::Method, port: u16, path: &str) -> Request {
        let config = &self.client.config;
        let url = match &config.sandbox_url {
            Some(base) => format!("{base}{path}"),
            None => {
                let domain = self.domain.as_deref().unwrap_or(E2B_CLOUD_DOMAIN);
                format!(
                    "https://{}{path}",
                    routing::sandbox_host(port, &self.id, domain)
                )
            }
        };
        let mut request = self
            .client
            .request(method, url)
            .header(headers::SANDBOX_ID, &self.id)
            .header(headers::SANDBOX_PORT, port.to_string());
        if let Some(token) = &self.access_token {
            request = request.header(headers::ACCESS_TOKEN, token);
        }
        request
    }

    /// Kills the sandbox (a sandbox already gone counts as killed).
    pub async fn kill(&self) -> Result<(), E2bError> {
        let response = self
            .client
            .control(
                http::Method::DELETE,
                &format!("{}/{}", paths::SANDBOXES, self.id),
            )
            .timeout(Duration::from_secs(30))
            .send()
            .await?;
        if response.status() == http::StatusCode::NOT_FOUND {
            return Ok(());
        }
        response.success().await.map(drop)
    }

    /// Sets the sandbox to live `lifetime` from now.
    pub async fn set_timeout(&self, lifetime: Duration) -> Result<(), E2bError> {
        let body = SetTimeout {
            timeout: Some(lifetime.as_secs().max(1)),
        };
        self.client
            .control(
                http::Method::POST,
                &format!("{}/{}/timeout", paths::SANDBOXES, self.id),
            )
            .json(&body)
            .timeout(Duration::from_secs(30))
            .send()
            .await?
            .success()
            .await
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_clients_build_and_bad_urls_are_refused() {
        // E2B's cloud (https control plane, https per-port data plane) and any https service.
        E2bClient::new(E2bConfig::cloud("e2b_x")).unwrap();
        E2bClient::new(E2bConfig::single_url("https://sandbox.example.com/", None)).unwrap();
        E2bClient::new(E2bConfig::single_url("http://127.0.0.1:1/", None)).unwrap();
        for bad in [
            "ftp://x",
            "http://",
            "https://",
            "127.0.0.1:8080",
            "http:// x",
        ] {
            let error = E2bClient::new(E2bConfig::single_url(bad, None)).unwrap_err();
            assert!(matches!(error, E2bError::InvalidUrl(_)), "{bad}: {error}");
            assert!(error.to_string().contains("invalid sandbox URL"), "{error}");
        }
    }

    /// A TLS handshake with a server that answers in plain HTTP fails with a TLS error that
    /// says so (rather than hanging, or passing for an HTTP error).
    #[tokio::test]
    async fn https_to_a_plain_http_server_is_a_clear_tls_error() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buffer = [0u8; 1024];
                    let _ = socket.read(&mut buffer).await;
                    let _ = socket
                        .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                        .await;
                });
            }
        });
        let url = format!("https://127.0.0.1:{port}");
        let client = E2bClient::new(E2bConfig::single_url(&url, None)).unwrap();
        let error = client.create(Duration::from_secs(60)).await.unwrap_err();
        assert!(matches!(error, E2bError::Tls { .. }), "{error:?}");
        let text = error.to_string();
        assert!(
            text.starts_with(&format!("TLS handshake with {url}/sandboxes failed: ")),
            "{text}"
        );
        // The same service over http answers (with its error status).
        let client = E2bClient::new(E2bConfig::single_url(
            format!("http://127.0.0.1:{port}"),
            None,
        ))
        .unwrap();
        let error = client.create(Duration::from_secs(60)).await.unwrap_err();
        assert!(
            matches!(error, E2bError::Status { status: 400, .. }),
            "{error:?}"
        );
    }

    /// Nothing listening: a connect error naming the URL, not a TLS error.
    #[tokio::test]
    async fn a_refused_connection_is_an_http_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let client = E2bClient::new(E2bConfig::single_url(
            format!("https://127.0.0.1:{port}"),
            None,
        ))
        .unwrap();
        let error = client.create(Duration::from_secs(60)).await.unwrap_err();
        assert!(matches!(error, E2bError::Http { .. }), "{error:?}");
        assert!(
            error.to_string().starts_with(&format!(
                "sandbox request to https://127.0.0.1:{port}/sandboxes failed: "
            )),
            "{error}"
        );
    }
}
