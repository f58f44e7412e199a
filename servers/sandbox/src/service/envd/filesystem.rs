//! `filesystem.Filesystem/{ListDir,Stat,MakeDir,Move,Remove}`: unary Connect calls with JSON
//! messages, on paths under the sandbox's home.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::Extension;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::ConnectError;
use super::paths::{SandboxPath, as_user, create_dirs, resolve};
use crate::service::api_error::{ApiError, parse_json};
use crate::service::registry::Sandbox;
use crate::service::time::rfc3339;

#[derive(Debug, Deserialize)]
struct PathBody {
    #[serde(default)]
    path: String,
    depth: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct MoveBody {
    #[serde(default)]
    source: String,
    #[serde(default)]
    destination: String,
}

type RpcResult = Result<Response, ConnectError>;

fn io_error(action: &str, path: &SandboxPath, error: std::io::Error) -> ConnectError {
    let status = match error.kind() {
        std::io::ErrorKind::NotFound => StatusCode::NOT_FOUND,
        std::io::ErrorKind::AlreadyExists => StatusCode::CONFLICT,
        std::io::ErrorKind::PermissionDenied => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_REQUEST,
    };
    ConnectError(ApiError::new(
        status,
        format!("cannot {action} {:?}: {error}", path.inside),
    ))
}

/// The EntryInfo message of a host file, named by its path inside.
fn entry_info(inside: &str, host: &Path) -> std::io::Result<Value> {
    // Never follow a link: its target may be outside the sandbox, and its size or mode
    // would tell the sandbox's code about a host file.
    let link = std::fs::symlink_metadata(host)?;
    let metadata = link.clone();
    let kind = if metadata.is_dir() {
        "FILE_TYPE_DIRECTORY"
    } else {
        "FILE_TYPE_FILE"
    };
    let mode = metadata.permissions().mode() & 0o777;
    let modified = metadata.modified().ok().map(rfc3339);
    let mut entry = json!({
        "name": inside.rsplit('/').next().unwrap_or(""),
        "type": kind,
        "path": inside,
        "size": metadata.size().to_string(),
        "mode": mode,
        "permissions": permissions(metadata.is_dir(), mode),
        "owner": "user",
        "group": "user",
        "isSymlink": link.file_type().is_symlink(),
    });
    if let Some(modified) = modified {
        entry["modifiedTime"] = modified.into();
    }
    if link.file_type().is_symlink()
        && let Ok(target) = std::fs::read_link(host)
    {
        entry["symlinkTarget"] = target.to_string_lossy().into_owned().into();
    }
    Ok(entry)
}

fn permissions(dir: bool, mode: u32) -> String {
    let mut text = String::from(if dir { "d" } else { "-" });
    for shift in [6, 3, 0] {
        let bits = (mode >> shift) & 7;
        text.push(if bits & 4 != 0 { 'r' } else { '-' });
        text.push(if bits & 2 != 0 { 'w' } else { '-' });
        text.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    text
}

/// Runs file work on a blocking thread as the sandbox's user (see [`as_user`]).
async fn blocking<T: Send + 'static>(
    sandbox: &Sandbox,
    work: impl FnOnce() -> Result<T, ConnectError> + Send + 'static,
) -> Result<T, ConnectError> {
    let user = sandbox.user;
    tokio::task::spawn_blocking(move || as_user(user, work))
        .await
        .map_err(|_| ConnectError(ApiError::internal("filesystem call panicked")))?
}

pub(crate) async fn list_dir(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: PathBody = parse_json(body)?;
    let dir = resolve(&sandbox, &body.path).await?;
    let depth = body.depth.unwrap_or(1).max(1);
    let entries = blocking(&sandbox, move || {
        let mut entries = Vec::new();
        let mut queue = vec![(dir.inside.clone(), dir.host.clone(), 1)];
        while let Some((inside, host, level)) = queue.pop() {
            let listing = std::fs::read_dir(&host).map_err(|e| io_error("list", &dir, e))?;
            for item in listing.flatten() {
                let name = item.file_name().to_string_lossy().into_owned();
                let child_inside = format!("{}/{name}", inside.trim_end_matches('/'));
                let child_host = item.path();
                if let Ok(entry) = entry_info(&child_inside, &child_host) {
                    // Never descend through a symlink: it may lead out of the sandbox.
                    let is_real_dir = item.file_type().is_ok_and(|t| t.is_dir());
                    if is_real_dir && level < depth {
                        queue.push((child_inside, child_host, level + 1));
                    }
                    entries.push(entry);
                }
            }
        }
        Ok(entries)
    })
    .await?;
    Ok(Json(json!({ "entries": entries })).into_response())
}

pub(crate) async fn stat(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: PathBody = parse_json(body)?;
    let path = resolve(&sandbox, &body.path).await?;
    let entry = blocking(&sandbox, move || {
        entry_info(&path.inside, &path.host).map_err(|e| io_error("stat", &path, e))
    })
    .await?;
    Ok(Json(json!({ "entry": entry })).into_response())
}

pub(crate) async fn make_dir(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: PathBody = parse_json(body)?;
    let path = resolve(&sandbox, &body.path).await?;
    let home = sandbox.home.clone();
    let entry = blocking(&sandbox, move || {
        if path.host.exists() {
            return Err(ConnectError(ApiError::new(
                StatusCode::CONFLICT,
                format!("{:?} already exists", path.inside),
            )));
        }
        create_dirs(&home, &path.host).map_err(|e| io_error("create", &path, e))?;
        entry_info(&path.inside, &path.host).map_err(|e| io_error("stat", &path, e))
    })
    .await?;
    Ok(Json(json!({ "entry": entry })).into_response())
}

pub(crate) async fn move_entry(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: MoveBody = parse_json(body)?;
    let source = resolve(&sandbox, &body.source).await?;
    let destination = resolve(&sandbox, &body.destination).await?;
    let home = sandbox.home.clone();
    let entry = blocking(&sandbox, move || {
        if let Some(parent) = destination.host.parent() {
            create_dirs(&home, parent).map_err(|e| io_error("create", &destination, e))?;
        }
        std::fs::rename(&source.host, &destination.host)
            .map_err(|e| io_error("move", &source, e))?;
        entry_info(&destination.inside, &destination.host)
            .map_err(|e| io_error("stat", &destination, e))
    })
    .await?;
    Ok(Json(json!({ "entry": entry })).into_response())
}

pub(crate) async fn remove(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: PathBody = parse_json(body)?;
    let path = resolve(&sandbox, &body.path).await?;
    if path.host == sandbox.home {
        return Err(ConnectError(ApiError::new(
            StatusCode::FORBIDDEN,
            "the home directory itself cannot be removed; remove what is in it",
        )));
    }
    blocking(&sandbox, move || {
        let metadata =
            std::fs::symlink_metadata(&path.host).map_err(|e| io_error("remove", &path, e))?;
        let removed = if metadata.is_dir() {
            std::fs::remove_dir_all(&path.host)
        } else {
            std::fs::remove_file(&path.host)
        };
        removed.map_err(|e| io_error("remove", &path, e))
    })
    .await?;
    Ok(Json(json!({})).into_response())
}
