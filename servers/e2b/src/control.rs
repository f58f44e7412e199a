//! The control plane's bodies: create, set timeout, connect, refresh, detail, health.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `POST /sandboxes` (and `/v2/sandboxes`). Other fields E2B defines (`secure`, `autoPause`,
/// `network`, ...) are ignored when read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewSandbox {
    /// The template to start from ([`DEFAULT_TEMPLATE`](crate::DEFAULT_TEMPLATE) if none).
    #[serde(
        rename = "templateID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub template_id: Option<String>,
    /// The sandbox's lifetime in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Labels to list sandboxes by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Whether the sandbox may reach the network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_internet_access: Option<bool>,
    /// Environment variables of every process in the sandbox.
    #[serde(rename = "envVars", default, skip_serializing_if = "Option::is_none")]
    pub env_vars: Option<Map<String, Value>>,
}

/// `POST /sandboxes/{id}/timeout` and `POST /sandboxes/{id}/connect`: `{"timeout": s}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetTimeout {
    /// The lifetime from now, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
}

/// `POST /sandboxes/{id}/refreshes`: `{"duration": s}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refresh {
    /// Seconds the sandbox should live at least from now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<u64>,
}

/// The answer to create (201) and connect (200).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxCreated {
    /// The template it started from.
    #[serde(rename = "templateID", default)]
    pub template_id: String,
    /// The sandbox's id.
    #[serde(rename = "sandboxID")]
    pub sandbox_id: String,
    /// The template's alias.
    #[serde(default)]
    pub alias: Option<String>,
    /// The client (cluster node) it runs on.
    #[serde(rename = "clientID", default)]
    pub client_id: String,
    /// The envd version its data plane speaks.
    #[serde(default)]
    pub envd_version: String,
    /// The token its data plane accepts as `X-Access-Token`.
    #[serde(default)]
    pub envd_access_token: Option<String>,
    /// E2B's token for public traffic (never set by the local service).
    #[serde(default)]
    pub traffic_access_token: Option<String>,
    /// The domain of its per-port hosts (`<port>-<id>.<domain>`), if not the default.
    #[serde(default)]
    pub domain: Option<String>,
}

/// One sandbox, as get and list describe it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxDetail {
    /// The template it started from.
    #[serde(rename = "templateID")]
    pub template_id: String,
    /// The sandbox's id.
    #[serde(rename = "sandboxID")]
    pub sandbox_id: String,
    /// The template's alias.
    pub alias: Option<String>,
    /// The client (cluster node) it runs on.
    #[serde(rename = "clientID")]
    pub client_id: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ends unless refreshed (RFC 3339).
    pub end_at: String,
    /// CPUs it may use.
    pub cpu_count: u64,
    /// Memory it may use, in MiB.
    #[serde(rename = "memoryMB")]
    pub memory_mb: u64,
    /// Disk it may use, in MiB.
    #[serde(rename = "diskSizeMB")]
    pub disk_size_mb: u64,
    /// The labels it was created with.
    pub metadata: Map<String, Value>,
    /// `running` (or `paused` on E2B's cloud).
    pub state: String,
    /// The envd version its data plane speaks.
    pub envd_version: String,
    /// The token its data plane accepts as `X-Access-Token`.
    pub envd_access_token: Option<String>,
    /// The domain of its per-port hosts, if not the default.
    pub domain: Option<String>,
}

/// `GET /health` of the control plane.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServiceHealth {
    /// `ok`.
    pub status: String,
    /// Sandboxes alive.
    pub sandboxes: usize,
    /// Kernels started ahead of demand.
    pub warm_kernels: usize,
    /// The most sandboxes the service holds at once (an mcpgym extension: a client spreading
    /// sandboxes over several services reads their free places from it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sandboxes: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_create_sends_only_what_is_set() {
        let body = NewSandbox {
            template_id: Some(crate::DEFAULT_TEMPLATE.into()),
            timeout: Some(60),
            ..NewSandbox::default()
        };
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            json!({"templateID": "code-interpreter-v1", "timeout": 60})
        );
        let read: NewSandbox = serde_json::from_str(
            r#"{"templateID": "t", "envVars": {"A": "1"}, "allow_internet_access": true, "secure": true}"#,
        )
        .unwrap();
        assert_eq!(read.template_id.as_deref(), Some("t"));
        assert_eq!(read.allow_internet_access, Some(true));
        assert_eq!(read.env_vars.unwrap()["A"], "1");
        assert_eq!(
            serde_json::from_str::<SetTimeout>("{}").unwrap(),
            SetTimeout::default()
        );
    }

    #[test]
    fn created_keeps_its_nulls_and_reads_leniently() {
        let created = SandboxCreated {
            template_id: "t".into(),
            sandbox_id: "i1".into(),
            alias: Some("t".into()),
            client_id: "local".into(),
            envd_version: "0.2.0".into(),
            envd_access_token: Some("tok".into()),
            traffic_access_token: None,
            domain: None,
        };
        assert_eq!(
            serde_json::to_value(&created).unwrap(),
            json!({
                "templateID": "t", "sandboxID": "i1", "alias": "t", "clientID": "local",
                "envdVersion": "0.2.0", "envdAccessToken": "tok",
                "trafficAccessToken": null, "domain": null,
            })
        );
        // E2B's cloud may leave fields out; only the id is needed.
        let read: SandboxCreated =
            serde_json::from_str(r#"{"sandboxID": "x", "domain": "e2b.app", "new": 1}"#).unwrap();
        assert_eq!(read.sandbox_id, "x");
        assert_eq!(read.domain.as_deref(), Some("e2b.app"));
        assert!(serde_json::from_str::<SandboxCreated>("{}").is_err());
    }

    #[test]
    fn detail_and_health_use_e2b_names() {
        let detail = SandboxDetail {
            memory_mb: 2048,
            disk_size_mb: 1024,
            ..SandboxDetail::default()
        };
        let value = serde_json::to_value(&detail).unwrap();
        for key in [
            "templateID",
            "sandboxID",
            "clientID",
            "startedAt",
            "endAt",
            "cpuCount",
            "memoryMB",
            "diskSizeMB",
            "envdVersion",
            "envdAccessToken",
            "domain",
        ] {
            assert!(value.get(key).is_some(), "{key}");
        }
        let health = ServiceHealth {
            status: "ok".into(),
            sandboxes: 1,
            warm_kernels: 2,
            max_sandboxes: None,
        };
        assert_eq!(
            serde_json::to_value(&health).unwrap(),
            json!({"status": "ok", "sandboxes": 1, "warmKernels": 2})
        );
        let full = ServiceHealth {
            max_sandboxes: Some(64),
            ..health.clone()
        };
        assert_eq!(
            serde_json::to_value(&full).unwrap()["maxSandboxes"],
            json!(64)
        );
    }
}
