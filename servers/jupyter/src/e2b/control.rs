//! The control plane: the client, its sandbox hosts, and a sandbox's create, kill and
//! timeout.
//!
//! A client reaches one sandbox service or spreads sandboxes over several ([`E2bClient::pool`]):
//! each create goes to the host with the most free places by its last health reading (read
//! again when older than [`HEALTH_EVERY`]), passing over hosts that do not answer or are full.
//! A sandbox stays on its host for life; when that host stops answering, the sandbox is lost
//! ([`Sandbox::host_answers`] tells a dead host from a passing error).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpgym_e2b::control::{NewSandbox, SandboxCreated, ServiceHealth, SetTimeout};
use mcpgym_e2b::{E2B_CLOUD_DOMAIN, headers, paths, routing};

use super::transport::{HttpClient, Request, check_url, http_client};
use super::{E2bConfig, E2bError};

/// How old a host's health reading may be when a create chooses a host.
pub const HEALTH_EVERY: Duration = Duration::from_secs(2);
/// How long a health check waits for its answer.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// A client for one sandbox service or a pool of them; cheap to clone.
#[derive(Clone)]
pub struct E2bClient {
    hosts: Arc<[Host]>,
}

/// One sandbox service of a client.
struct Host {
    http: HttpClient,
    config: E2bConfig,
    health: Mutex<Health>,
}

/// What a client knows of a host's load.
#[derive(Debug, Default)]
struct Health {
    /// When it was last read; `None` before the first reading.
    read: Option<Instant>,
    /// Whether the host answered then (a failed create also clears it).
    answering: bool,
    /// Its sandboxes then, plus those this client created since.
    sandboxes: usize,
    /// Its most sandboxes, when it says.
    max: Option<usize>,
}

impl Health {
    /// Free places by the last reading: hosts that do not say their limit count as roomy
    /// but rank by their load among themselves.
    fn free(&self) -> usize {
        self.max
            .unwrap_or(usize::MAX / 2)
            .saturating_sub(self.sandboxes)
    }
}

impl std::fmt::Debug for E2bClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let configs: Vec<_> = self.hosts.iter().map(|host| &host.config).collect();
        f.debug_struct("E2bClient")
            .field("hosts", &configs)
            .finish_non_exhaustive()
    }
}

impl E2bClient {
    /// A client for `config`. Fails for malformed URLs, and when a URL is `https` and no CA
    /// certificates can be found.
    pub fn new(config: E2bConfig) -> Result<Self, E2bError> {
        Self::pool(vec![config])
    }

    /// A client spreading sandboxes over these services by their free places. Fails for an
    /// empty list and as [`E2bClient::new`] does for any of them.
    pub fn pool(configs: Vec<E2bConfig>) -> Result<Self, E2bError> {
        if configs.is_empty() {
            return Err(E2bError::InvalidUrl(
                "no sandbox service given: name at least one URL".into(),
            ));
        }
        let hosts = configs
            .into_iter()
            .map(Host::new)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            hosts: hosts.into(),
        })
    }

    /// Creates a sandbox that lives `lifetime` unless refreshed ([`Sandbox::set_timeout`]),
    /// on the host with the most free places; a host that does not answer or is full passes
    /// the create on to the next.
    pub async fn create(&self, lifetime: Duration) -> Result<Sandbox, E2bError> {
        if self.hosts.len() == 1 {
            return self.create_on(0, lifetime).await;
        }
        let mut refused = Vec::new();
        for host in self.ranked_hosts().await {
            match self.create_on(host, lifetime).await {
                Ok(sandbox) => {
                    self.hosts[host].lock_health().sandboxes += 1;
                    return Ok(sandbox);
                }
                Err(error) if error.is_transport() => {
                    self.hosts[host].lock_health().answering = false;
                    refused.push(error.to_string());
                }
                Err(
                    error @ E2bError::Status {
                        status: 429 | 503, ..
                    },
                ) => {
                    refused.push(error.to_string());
                }
                Err(error) => return Err(error),
            }
        }
        Err(E2bError::NoHost(refused.join("; ")))
    }

    /// The hosts in the order a create tries them: answering ones by free places (then by
    /// fewest sandboxes), then the others, whose reading may be stale.
    async fn ranked_hosts(&self) -> Vec<usize> {
        let stale: Vec<usize> = (0..self.hosts.len())
            .filter(|&host| {
                self.hosts[host]
                    .lock_health()
                    .read
                    .is_none_or(|read| read.elapsed() >= HEALTH_EVERY)
            })
            .collect();
        // All at once: a host that does not answer costs one health timeout, not one each.
        let checks: Vec<_> = stale
            .into_iter()
            .map(|host| {
                let hosts = self.hosts.clone();
                tokio::spawn(async move { hosts[host].check().await })
            })
            .collect();
        for check in checks {
            let _ = check.await;
        }
        let readings: Vec<_> = self
            .hosts
            .iter()
            .map(|host| {
                let health = host.lock_health();
                (health.answering, health.free(), health.sandboxes)
            })
            .collect();
        rank(&readings)
    }

    fn request(&self, host: usize, method: http::Method, url: String) -> Request {
        Request::new(self.hosts[host].http.clone(), method, url)
    }

    fn control(&self, host: usize, method: http::Method, path: &str) -> Request {
        let config = &self.hosts[host].config;
        let mut request = self.request(host, method, format!("{}{path}", config.api_url));
        if let Some(key) = &config.api_key {
            request = request.header(headers::API_KEY, key);
        }
        request
    }

    async fn create_on(&self, host: usize, lifetime: Duration) -> Result<Sandbox, E2bError> {
        let body = NewSandbox {
            template_id: Some(self.hosts[host].config.template.clone()),
            timeout: Some(lifetime.as_secs().max(1)),
            ..NewSandbox::default()
        };
        let created: SandboxCreated = self
            .control(host, http::Method::POST, paths::SANDBOXES)
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
            host,
            id: created.sandbox_id,
            access_token: created.envd_access_token,
            domain: created.domain,
        })
    }
}

/// Host indexes in the order a create tries them, from each host's (answering, free places,
/// sandboxes): answering hosts first, the most free places first, then the fewest sandboxes,
/// then the order given.
fn rank(readings: &[(bool, usize, usize)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..readings.len()).collect();
    order.sort_by_key(|&index| {
        let (answering, free, sandboxes) = readings[index];
        (!answering, std::cmp::Reverse(free), sandboxes, index)
    });
    order
}

impl Host {
    fn new(config: E2bConfig) -> Result<Self, E2bError> {
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
        Ok(Self {
            http,
            config,
            health: Mutex::default(),
        })
    }

    fn lock_health(&self) -> std::sync::MutexGuard<'_, Health> {
        self.health.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the service answers its health check; keeps the reading.
    async fn check(&self) -> bool {
        let url = format!("{}/health", self.config.api_url);
        let reading = async {
            let response = Request::new(self.http.clone(), http::Method::GET, url)
                .timeout(HEALTH_TIMEOUT)
                .send()
                .await?
                .success()
                .await?;
            response.json::<ServiceHealth>().await
        }
        .await;
        let mut health = self.lock_health();
        health.read = Some(Instant::now());
        health.answering = reading.is_ok();
        if let Ok(reading) = reading {
            health.sandboxes = reading.sandboxes;
            health.max = reading.max_sandboxes;
        }
        health.answering
    }
}

/// One live sandbox. Not killed on drop: call [`Sandbox::kill`].
#[derive(Debug, Clone)]
pub struct Sandbox {
    client: E2bClient,
    /// Its host among the client's.
    host: usize,
    id: String,
    access_token: Option<String>,
    domain: Option<String>,
}

impl Sandbox {
    /// The sandbox's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The control plane URL of the service holding it.
    pub fn host_url(&self) -> &str {
        &self.client.hosts[self.host].config.api_url
    }

    /// Whether the service holding it answers its health check now: after a request failed
    /// in transport, tells a host that is gone (with its sandboxes) from a passing fault.
    pub async fn host_answers(&self) -> bool {
        self.client.hosts[self.host].check().await
    }

    /// A request to `path` on `port` of this sandbox's data plane.
    pub(super) fn data(&self, method: http::Method, port: u16, path: &str) -> Request {
        let config = &self.client.hosts[self.host].config;
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
            .request(self.host, method, url)
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
                self.host,
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
                self.host,
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
    fn creates_go_to_answering_hosts_with_the_most_free_places() {
        // Free places first, whatever the load.
        assert_eq!(rank(&[(true, 2, 0), (true, 4, 0)]), [1, 0]);
        // Equal room: the emptier host, then the first named.
        assert_eq!(rank(&[(true, 2, 5), (true, 2, 1)]), [1, 0]);
        assert_eq!(rank(&[(true, 3, 1), (true, 3, 1)]), [0, 1]);
        // A host that does not answer comes last, however roomy it looked.
        assert_eq!(
            rank(&[(false, 90, 0), (true, 1, 7), (true, 0, 2)]),
            [1, 2, 0]
        );
        // A host that does not say its limit is roomy but ranks by its load among such.
        let unknown = |sandboxes| {
            Health {
                sandboxes,
                ..Health::default()
            }
            .free()
        };
        assert!(unknown(3) > 1_000_000);
        assert_eq!(
            rank(&[(true, unknown(3), 3), (true, 64, 0), (true, unknown(1), 1)]),
            [2, 0, 1]
        );
    }

    #[test]
    fn a_pool_needs_a_host() {
        let error = E2bClient::pool(Vec::new()).unwrap_err();
        assert!(
            error.to_string().contains("name at least one URL"),
            "{error}"
        );
    }

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
