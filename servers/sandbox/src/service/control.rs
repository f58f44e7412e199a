//! The control plane: create, get, list, kill, set timeout, connect, health.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mcpgym_e2b::DEFAULT_TEMPLATE;
use mcpgym_e2b::control::{
    NewSandbox, Refresh, SandboxCreated, SandboxDetail, ServiceHealth, SetTimeout,
};
use serde::Deserialize;
use serde_json::Value;

use super::api_error::{ApiError, parse_json};
use super::registry::{CreateSpec, Registry, Sandbox, env_from_json};
use mcpgym_serve::{Fraction, rfc3339};

/// The envd version we claim: the envd routes served here are those of envd 0.2 (multipart
/// uploads, no stdin streaming), and the SDKs need at least 0.1.0.
pub(crate) const ENVD_VERSION: &str = "0.2.0";

fn timeout_from(seconds: Option<u64>, registry: &Registry) -> Result<Duration, ApiError> {
    let max = registry.config().max_timeout;
    match seconds {
        None => Ok(Duration::from_secs(300).min(max)),
        Some(0) => Err(ApiError::bad_request(
            "timeout must be at least 1 second; give the sandbox's lifetime in seconds",
        )),
        Some(s) if Duration::from_secs(s) > max => Err(ApiError::bad_request(format!(
            "timeout {s} s is longer than this service allows ({} s); ask for less",
            max.as_secs()
        ))),
        Some(s) => Ok(Duration::from_secs(s)),
    }
}

/// The 201 body of create and the 200 body of connect.
fn created(sandbox: &Sandbox) -> SandboxCreated {
    SandboxCreated {
        template_id: sandbox.template_id.clone(),
        sandbox_id: sandbox.id.clone(),
        alias: Some(sandbox.template_id.clone()),
        client_id: "local".into(),
        envd_version: ENVD_VERSION.into(),
        envd_access_token: Some(sandbox.access_token.clone()),
        traffic_access_token: None,
        domain: None,
    }
}

fn detail(sandbox: &Sandbox) -> SandboxDetail {
    SandboxDetail {
        template_id: sandbox.template_id.clone(),
        sandbox_id: sandbox.id.clone(),
        alias: Some(sandbox.template_id.clone()),
        client_id: "local".into(),
        started_at: rfc3339(sandbox.started_at, Fraction::Micros),
        end_at: rfc3339(sandbox.end_at(), Fraction::Micros),
        cpu_count: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
        memory_mb: 2048,
        disk_size_mb: 1024,
        metadata: sandbox.metadata.clone(),
        state: "running".into(),
        envd_version: ENVD_VERSION.into(),
        envd_access_token: Some(sandbox.access_token.clone()),
        domain: None,
    }
}

/// `GET /health`: up, with how many sandboxes run and how many warm kernels wait.
pub(crate) async fn health(State(registry): State<Arc<Registry>>) -> Response {
    Json(ServiceHealth {
        status: "ok".into(),
        sandboxes: registry.len(),
        warm_kernels: registry.warm_kernels(),
        max_sandboxes: Some(registry.config().max_sandboxes),
    })
    .into_response()
}

pub(crate) async fn create(
    State(registry): State<Arc<Registry>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    // Other fields E2B defines (`secure`, `autoPause`, `network`, `mcp`, ...) are ignored:
    // every local sandbox is already private, and none is ever paused.
    let body: NewSandbox = parse_json(body)?;
    let template_id = body
        .template_id
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_TEMPLATE.to_owned());
    let spec = CreateSpec {
        template_id,
        timeout: timeout_from(body.timeout, &registry)?,
        metadata: body.metadata.unwrap_or_default(),
        allow_network: body.allow_internet_access.unwrap_or(false),
        env_vars: env_from_json("envVars", body.env_vars)?,
    };
    let sandbox = registry.create(spec).await?;
    Ok((StatusCode::CREATED, Json(created(&sandbox))).into_response())
}

pub(crate) async fn get(
    State(registry): State<Arc<Registry>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let sandbox = registry.get(&id)?;
    Ok(Json(detail(&sandbox)).into_response())
}

#[derive(Debug, Deserialize)]
pub(crate) struct ListQuery {
    metadata: Option<String>,
    state: Option<String>,
    limit: Option<usize>,
}

pub(crate) async fn list(
    State(registry): State<Arc<Registry>>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| {
        ApiError::bad_request(format!(
            "bad query string ({}); use metadata=key%3Dvalue&state=running&limit=N",
            e.body_text()
        ))
    })?;
    // `metadata=k1=v1&k2=v2`, URL-encoded as one parameter.
    let wanted: Vec<(String, String)> = query
        .metadata
        .as_deref()
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k.to_owned(), v.to_owned())
        })
        .collect();
    let running_wanted = query
        .state
        .as_deref()
        .is_none_or(|s| s.split(',').any(|s| s.trim() == "running"));
    let limit = query.limit.unwrap_or(usize::MAX);
    let listed: Vec<SandboxDetail> = registry
        .list()
        .into_iter()
        .filter(|_| running_wanted)
        .filter(|s| {
            wanted
                .iter()
                .all(|(k, v)| s.metadata.get(k).and_then(Value::as_str) == Some(v.as_str()))
        })
        .take(limit)
        .map(|s| detail(&s))
        .collect();
    Ok(Json(listed).into_response())
}

pub(crate) async fn kill(
    State(registry): State<Arc<Registry>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    if registry.kill(&id).await {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(ApiError::unknown_sandbox(&id))
    }
}

pub(crate) async fn set_timeout(
    State(registry): State<Arc<Registry>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body: SetTimeout = parse_json(body)?;
    let sandbox = registry.get(&id)?;
    let Some(seconds) = body.timeout else {
        return Err(ApiError::bad_request(
            "missing \"timeout\": send {\"timeout\": SECONDS}",
        ));
    };
    sandbox.set_timeout(timeout_from(Some(seconds), &registry)?);
    Ok(StatusCode::NO_CONTENT.into_response())
}

pub(crate) async fn connect(
    State(registry): State<Arc<Registry>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body: SetTimeout = parse_json(body)?;
    let sandbox = registry.get(&id)?;
    if let Some(seconds) = body.timeout {
        let wanted = timeout_from(Some(seconds), &registry)?;
        // Connecting never shortens a sandbox's life.
        let remaining = sandbox
            .end_at()
            .duration_since(std::time::SystemTime::now())
            .unwrap_or_default();
        if wanted > remaining {
            sandbox.set_timeout(wanted);
        }
    }
    Ok(Json(created(&sandbox)).into_response())
}

/// `POST /sandboxes/{id}/refreshes {"duration": s}`: the sandbox lives at least that much
/// longer (never shorter than it already would).
pub(crate) async fn refresh(
    State(registry): State<Arc<Registry>>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body: Refresh = parse_json(body)?;
    let sandbox = registry.get(&id)?;
    let wanted = timeout_from(Some(body.duration.unwrap_or(60)), &registry)?;
    let remaining = sandbox
        .end_at()
        .duration_since(std::time::SystemTime::now())
        .unwrap_or_default();
    if wanted > remaining {
        sandbox.set_timeout(wanted);
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}
