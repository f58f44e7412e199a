//! Where the sandbox service is, and how to authenticate.

use mcpgym_e2b::{DEFAULT_TEMPLATE, E2B_CLOUD_API};

/// Where the sandbox service is, and how to authenticate.
#[derive(Debug, Clone)]
pub struct E2bConfig {
    /// The control plane's base URL.
    pub api_url: String,
    /// One base URL serving every sandbox's data plane (routed by headers); `None` for the
    /// per-port host form `https://<port>-<sandboxID>.<domain>`.
    pub sandbox_url: Option<String>,
    /// Sent as `X-API-Key` on the control plane (E2B's key, or a remote service's token).
    pub api_key: Option<String>,
    /// The template to create sandboxes from.
    pub template: String,
}

impl E2bConfig {
    /// A service serving control and data plane on one URL (the local service, or a remote
    /// `mcpgym sandbox`).
    pub fn single_url(url: impl Into<String>, api_key: Option<String>) -> Self {
        let url = url.into().trim_end_matches('/').to_owned();
        Self {
            api_url: url.clone(),
            sandbox_url: Some(url),
            api_key,
            template: DEFAULT_TEMPLATE.into(),
        }
    }

    /// E2B's cloud with an API key.
    pub fn cloud(api_key: impl Into<String>) -> Self {
        Self {
            api_url: E2B_CLOUD_API.into(),
            sandbox_url: None,
            api_key: Some(api_key.into()),
            template: DEFAULT_TEMPLATE.into(),
        }
    }
}
