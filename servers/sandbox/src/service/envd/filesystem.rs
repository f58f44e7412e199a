//! `filesystem.Filesystem/{ListDir,Stat,MakeDir,Move,Remove}`: unary Connect calls with JSON
//! messages, on paths under the sandbox's home.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use axum::Json;
use axum::body::Bytes;
use axum::extract::Extension;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::ConnectError;
use super::beneath::Home;
use super::paths::{SandboxPath, as_user, fs_error, resolve};
use crate::service::api_error::{ApiError, parse_json};
use crate::service::registry::Sandbox;
use mcpgym_serve::{Fraction, rfc3339};

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

/// The EntryInfo message of an entry, named by its path inside. A symlink is described as
/// itself, never as what it points to (which may be a host file).
fn entry_info(inside: &str, stat: &libc::stat, target: Option<&Path>) -> Value {
    let kind = stat.st_mode & libc::S_IFMT;
    let is_dir = kind == libc::S_IFDIR;
    let mode = stat.st_mode & 0o777;
    let modified = u64::try_from(stat.st_mtime)
        .ok()
        .map(|secs| rfc3339(UNIX_EPOCH + Duration::from_secs(secs), Fraction::Micros));
    let mut entry = json!({
        "name": inside.rsplit('/').next().unwrap_or(""),
        "type": if is_dir { "FILE_TYPE_DIRECTORY" } else { "FILE_TYPE_FILE" },
        "path": inside,
        "size": stat.st_size.to_string(),
        "mode": mode,
        "permissions": permissions(is_dir, mode),
        "owner": "user",
        "group": "user",
        "isSymlink": kind == libc::S_IFLNK,
    });
    if let Some(modified) = modified {
        entry["modifiedTime"] = modified.into();
    }
    if let Some(target) = target {
        entry["symlinkTarget"] = target.to_string_lossy().into_owned().into();
    }
    entry
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

/// Runs file work on a blocking thread as the sandbox's user (see [`as_user`]), with the
/// sandbox's home open.
async fn blocking<T: Send + 'static>(
    sandbox: &Sandbox,
    work: impl FnOnce(&Home) -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    let user = sandbox.user;
    let home = sandbox.home.clone();
    tokio::task::spawn_blocking(move || as_user(user, || work(&Home::open(&home)?)))
        .await
        .unwrap_or_else(|_| Err(std::io::Error::other("filesystem call panicked")))
}

fn rpc_error(action: &str, path: &SandboxPath, error: std::io::Error) -> ConnectError {
    ConnectError(fs_error(action, path, error))
}

pub(crate) async fn list_dir(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: PathBody = parse_json(body)?;
    let dir = resolve(&body.path)?;
    let depth = body.depth.unwrap_or(1).max(1);
    let relative = dir.relative.clone();
    let listed = blocking(&sandbox, move |home| home.list(&relative, depth))
        .await
        .map_err(|e| rpc_error("list", &dir, e))?;
    let base = dir.inside.trim_end_matches('/');
    let entries: Vec<Value> = listed
        .iter()
        .map(|entry| {
            let inside = format!("{base}/{}", entry.path.to_string_lossy());
            entry_info(&inside, &entry.stat, entry.target.as_deref())
        })
        .collect();
    Ok(Json(json!({ "entries": entries })).into_response())
}

pub(crate) async fn stat(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: PathBody = parse_json(body)?;
    let path = resolve(&body.path)?;
    let relative = path.relative.clone();
    let (stat, target) = blocking(&sandbox, move |home| home.stat(&relative))
        .await
        .map_err(|e| rpc_error("stat", &path, e))?;
    let entry = entry_info(&path.inside, &stat, target.as_deref());
    Ok(Json(json!({ "entry": entry })).into_response())
}

pub(crate) async fn make_dir(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: PathBody = parse_json(body)?;
    let path = resolve(&body.path)?;
    let relative = path.relative.clone();
    let made = blocking(&sandbox, move |home| {
        home.make_dir(&relative)?;
        home.stat(&relative)
    })
    .await;
    let (stat, target) = match made {
        Ok(made) => made,
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(ConnectError(ApiError::new(
                StatusCode::CONFLICT,
                format!("{:?} already exists", path.inside),
            )));
        }
        Err(error) => return Err(rpc_error("create", &path, error)),
    };
    let entry = entry_info(&path.inside, &stat, target.as_deref());
    Ok(Json(json!({ "entry": entry })).into_response())
}

pub(crate) async fn move_entry(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: MoveBody = parse_json(body)?;
    let source = resolve(&body.source)?;
    let destination = resolve(&body.destination)?;
    let (from, to) = (source.relative.clone(), destination.relative.clone());
    let (stat, target) = blocking(&sandbox, move |home| {
        home.rename(&from, &to)?;
        home.stat(&to)
    })
    .await
    .map_err(|e| rpc_error("move", &source, e))?;
    let entry = entry_info(&destination.inside, &stat, target.as_deref());
    Ok(Json(json!({ "entry": entry })).into_response())
}

pub(crate) async fn remove(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> RpcResult {
    let body: PathBody = parse_json(body)?;
    let path = resolve(&body.path)?;
    if path.relative.as_os_str().is_empty() {
        return Err(ConnectError(ApiError::new(
            StatusCode::FORBIDDEN,
            "the home directory itself cannot be removed; remove what is in it",
        )));
    }
    let relative = path.relative.clone();
    blocking(&sandbox, move |home| home.remove(&relative))
        .await
        .map_err(|e| rpc_error("remove", &path, e))?;
    Ok(Json(json!({})).into_response())
}
