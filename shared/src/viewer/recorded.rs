//! `mcpgym view DIR`: the viewer over a folder of recorded trajectories, with no environment
//! running. It answers the control plane's read routes from the files (`GET /episodes`,
//! `/episodes/{id}`, `/episodes/{id}/trajectory`, `/episodes/{id}/images/NAME`), so the
//! pages are the live viewer's own; nothing can be played.
//!
//! A folder `mcpgym eval` wrote holds an [`EVAL_SUMMARY`] beside its trajectories; so may each
//! sub-folder of the folder given (one per run, `mcpgym eval -o runs/NAME`). `GET /evals`
//! answers those runs' tables, and their episodes are listed and shown with the rest.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::model::JsonObject;
use serde_json::{Value, json};

use super::{AfterQuery, ListQuery, PAGE_ROUTES, error, pages, unknown_route};
use crate::episode::passed;
use crate::http::{HttpOptions, ServeError, bind, guard_layer};
use crate::hub::{is_episode_id, is_image_name, steps_after};
use crate::trajectory::file::{RecordedEpisode, recording_folders};
use crate::trajectory::mime_type_of;

pub use crate::trajectory::file::EVAL_SUMMARY;

/// A folder of trajectory files, with each file's summary kept until the file changes.
#[derive(Debug)]
pub struct RecordedDir {
    dir: PathBuf,
    summaries: Mutex<HashMap<PathBuf, Summary>>,
}

/// What the list shows of one file, and the size and time it was read at.
#[derive(Debug, Clone)]
struct Summary {
    len: u64,
    modified: SystemTime,
    started: String,
    status: JsonObject,
}

/// A recording's status as the viewer answers it: `ended` says whether the file has its end
/// record, so an episode closed (deleted, reaped when idle, its server stopped) before it was
/// done reads as closed, not as still running.
fn status_of(episode: &RecordedEpisode) -> JsonObject {
    let mut status = episode.status();
    status.insert("ended".into(), json!(episode.end.is_some()));
    status
}

impl RecordedDir {
    /// The folder `dir` (which `--trajectory-dir` wrote).
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            summaries: Mutex::new(HashMap::new()),
        }
    }

    /// The folders whose recordings are served: the folder itself, then (by name) each
    /// sub-folder holding an eval run's summary.
    fn folders(&self) -> Vec<PathBuf> {
        recording_folders(&self.dir)
    }

    /// The file episode `id` was recorded in: in the folder, else in the first run folder
    /// holding it (the folder's own path when none does, for the error to name).
    fn path_of(&self, id: &str) -> Option<PathBuf> {
        if !is_episode_id(id) {
            return None;
        }
        let name = format!("{id}.jsonl");
        let own = self.dir.join(&name);
        if own.is_file() {
            return Some(own);
        }
        Some(
            self.folders()
                .into_iter()
                .map(|folder| folder.join(&name))
                .find(|path| path.is_file())
                .unwrap_or(own),
        )
    }

    /// Every recording's summary, newest first; files that cannot be read are left out (and
    /// logged).
    fn list(&self) -> Vec<Summary> {
        let mut cache = self.summaries.lock().unwrap_or_else(|e| e.into_inner());
        let mut found = Vec::new();
        let entries = self
            .folders()
            .into_iter()
            .filter_map(|folder| std::fs::read_dir(folder).ok())
            .flatten();
        for entry in entries.flatten() {
            let path = entry.path();
            let named = path.extension().is_some_and(|ext| ext == "jsonl")
                && path
                    .file_stem()
                    .and_then(|stem| stem.to_str())
                    .is_some_and(is_episode_id);
            let Ok(meta) = entry.metadata() else { continue };
            if !named || !meta.is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let fresh = cache
                .get(&path)
                .is_some_and(|s| s.len == meta.len() && s.modified == modified);
            if !fresh {
                match RecordedEpisode::read(&path) {
                    Ok(episode) => {
                        let started = episode
                            .header
                            .as_ref()
                            .map(|h| h.time.clone())
                            .unwrap_or_default();
                        cache.insert(
                            path.clone(),
                            Summary {
                                len: meta.len(),
                                modified,
                                started,
                                status: status_of(&episode),
                            },
                        );
                    }
                    Err(error) => {
                        tracing::warn!(%error, "skipping a trajectory file");
                        continue;
                    }
                }
            }
            if let Some(summary) = cache.get(&path) {
                found.push(summary.clone());
            }
        }
        found.sort_by(|a, b| b.started.cmp(&a.started));
        found
    }
}

impl RecordedDir {
    /// The eval runs in the folder: each summary's name (its folder, `.` for the folder
    /// itself), settings, table and episodes; a summary that cannot be read is answered as its
    /// name and the reason.
    fn evals(&self) -> Vec<Value> {
        let mut runs = Vec::new();
        for folder in self.folders() {
            let path = folder.join(EVAL_SUMMARY);
            let name = folder
                .strip_prefix(&self.dir)
                .ok()
                .and_then(|rel| rel.to_str())
                .filter(|rel| !rel.is_empty())
                .unwrap_or(".")
                .to_owned();
            let bytes = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => {
                    runs.push(json!({"name": name, "error": format!("cannot read {}: {error}", path.display())}));
                    continue;
                }
            };
            let run = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .filter(|v| v["table"].is_array() && v["episodes"].is_array());
            let Some(mut run) = run else {
                runs.push(json!({
                    "name": name,
                    "error": format!("{} is not a summary mcpgym eval wrote (no table and episodes)", path.display()),
                }));
                continue;
            };
            // The list needs each episode's place in the table and its outcome, not its
            // timings and tokens (the table holds those).
            let episodes: Vec<Value> = run["episodes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| {
                    json!({
                        "episode": e["episode"], "task": e["task"], "family": e["family"],
                        "level": e["level"], "seed": e["seed"], "sample": e["sample"],
                        "return": e["return"], "passed": e["passed"], "error": e["error"],
                    })
                })
                .collect();
            runs.push(json!({
                "name": name,
                "config": run["config"].take(),
                "table": run["table"].take(),
                "episodes": episodes,
            }));
        }
        runs
    }
}

/// The viewer's routes over a folder of recordings.
pub fn router(dir: PathBuf) -> Router {
    Router::new()
        .merge(pages())
        .route("/episodes", get(list))
        .route("/evals", get(evals))
        .route("/episodes/{id}", get(status))
        .route("/episodes/{id}/trajectory", get(trajectory))
        .route("/episodes/{id}/images/{name}", get(image))
        .fallback(recorded_unknown_route)
        .with_state(Arc::new(RecordedDir::new(dir)))
}

/// Serves the viewer over `dir` on `addr` until `shutdown` resolves, behind the same Host,
/// Origin and token checks as a live server.
pub async fn serve_dir(
    dir: PathBuf,
    addr: SocketAddr,
    mut options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let listener = bind(addr, &mut options)?;
    let local = listener.local_addr()?;
    let app = router(dir).layer(middleware::from_fn_with_state(
        guard_layer(&options),
        crate::http::guard,
    ));
    eprintln!("mcpgym: listening on http://{local}");
    let connections = mcpgym_serve::Connections::new(options.connections.clone());
    connections.serve(listener, app, shutdown).await?;
    Ok(())
}

/// The routes `mcpgym view` serves, as a 404 names them.
const RECORDED_ROUTES: &str = "GET /episodes, /evals, /episodes/{id}, /episodes/{id}/trajectory?after=N and /episodes/{id}/images/NAME (read only: a recording cannot be played)";

async fn recorded_unknown_route(uri: Uri) -> Response {
    unknown_route(&uri, &format!("{PAGE_ROUTES}; {RECORDED_ROUTES}"))
}

fn unknown(id: &str) -> Response {
    if id.is_empty() {
        return error(
            StatusCode::NOT_FOUND,
            format!("no episode id in the path: this folder's routes are {RECORDED_ROUTES}"),
        );
    }
    error(
        StatusCode::NOT_FOUND,
        format!(
            "no recorded episode {id:?} in this folder: the list at / shows the ones there are"
        ),
    )
}

async fn list(
    State(dir): State<Arc<RecordedDir>>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let limit = match ListQuery::limit(query) {
        Ok(limit) => limit,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let summaries: Vec<Summary> = tokio::task::spawn_blocking(move || dir.list())
        .await
        .unwrap_or_default();
    let total = summaries.len();
    let finished: Vec<Value> = summaries
        .iter()
        .rev()
        .filter(|s| s.status.get("done") == Some(&Value::Bool(true)))
        .map(|s| {
            let field = |name: &str| s.status.get(name).cloned().unwrap_or(Value::Null);
            let components = s
                .status
                .get("reward_components")
                .and_then(|c| serde_json::from_value(c.clone()).ok())
                .unwrap_or_default();
            let return_ = field("return").as_f64().unwrap_or(0.0);
            let aborted = field("aborted").as_bool().unwrap_or(false);
            json!({
                "id": field("id"),
                "env": field("env"),
                "task": field("task"),
                "return": return_,
                "passed": passed(return_, &components, aborted),
                "truncated": field("truncated"),
                "aborted": aborted,
                "turn": field("turn"),
                "time": s.started,
            })
        })
        .collect();
    let mut envs: Vec<Value> = summaries
        .iter()
        .filter_map(|s| s.status.get("env").cloned())
        .collect();
    envs.sort_by_key(|env| env.to_string());
    envs.dedup();
    let episodes: Vec<Value> = summaries
        .into_iter()
        .take(limit)
        .map(|s| {
            let mut status = s.status;
            status.insert("started".into(), json!(s.started));
            status.insert("live".into(), json!(false));
            Value::Object(status)
        })
        .collect();
    axum::Json(json!({
        "source": "recorded",
        "envs": envs,
        "total": total,
        "episodes": episodes,
        "finished": finished,
    }))
    .into_response()
}

/// `GET /evals`: the eval runs in the folder, each with its table and episodes.
async fn evals(State(dir): State<Arc<RecordedDir>>) -> Response {
    let runs = tokio::task::spawn_blocking(move || dir.evals())
        .await
        .unwrap_or_default();
    axum::Json(json!({ "runs": runs })).into_response()
}

/// [`RecordedDir::path_of`] off the async threads (it looks in the run folders).
async fn locate(dir: &Arc<RecordedDir>, id: &str) -> Option<PathBuf> {
    let (dir, id) = (Arc::clone(dir), id.to_owned());
    tokio::task::spawn_blocking(move || dir.path_of(&id))
        .await
        .ok()
        .flatten()
}

async fn read(dir: &Arc<RecordedDir>, id: &str) -> Result<RecordedEpisode, Response> {
    let path = locate(dir, id).await.ok_or_else(|| unknown(id))?;
    let owned = id.to_owned();
    match tokio::task::spawn_blocking(move || RecordedEpisode::read(&path)).await {
        Ok(Ok(episode)) => Ok(episode),
        Ok(Err(crate::trajectory::file::TrajectoryFileError::Read { .. })) | Err(_) => {
            Err(unknown(&owned))
        }
        Ok(Err(bad)) => Err(error(StatusCode::UNPROCESSABLE_ENTITY, bad.to_string())),
    }
}

async fn status(State(dir): State<Arc<RecordedDir>>, Path(id): Path<String>) -> Response {
    match read(&dir, &id).await {
        Ok(episode) => {
            let mut status = status_of(&episode);
            if let Some(header) = &episode.header {
                status.insert("options".into(), Value::Object(header.options.clone()));
                status.insert("version".into(), json!(header.version));
                status.insert("started".into(), json!(header.time));
                status
                    .entry("max_turns")
                    .or_insert_with(|| json!(header.max_turns));
            }
            status.insert("live".into(), json!(false));
            axum::Json(Value::Object(status)).into_response()
        }
        Err(response) => response,
    }
}

async fn trajectory(
    State(dir): State<Arc<RecordedDir>>,
    Path(id): Path<String>,
    query: Result<Query<AfterQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let after = match AfterQuery::turn(query) {
        Ok(after) => after,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let Some(path) = locate(&dir, &id).await else {
        return unknown(&id);
    };
    match tokio::fs::read_to_string(&path).await {
        Ok(text) => (
            [(header::CONTENT_TYPE, "application/x-ndjson")],
            steps_after(&text, after),
        )
            .into_response(),
        Err(_) => unknown(&id),
    }
}

async fn image(
    State(dir): State<Arc<RecordedDir>>,
    Path((id, name)): Path<(String, String)>,
) -> Response {
    if !is_episode_id(&id) || !is_image_name(&name) {
        return error(
            StatusCode::NOT_FOUND,
            format!("no image {name:?} for episode {id:?}: images are named <turn>-<n>.png"),
        );
    }
    // Images sit in a folder named for the episode beside its file.
    let folder = locate(&dir, &id)
        .await
        .and_then(|file| file.parent().map(FsPath::to_path_buf))
        .unwrap_or_else(|| dir.dir.clone());
    let path: PathBuf = folder.join(&id).join(&name);
    match tokio::fs::read(&path).await {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, mime_type_of(&name)),
                (header::CACHE_CONTROL, "private, max-age=3600"),
            ],
            bytes,
        )
            .into_response(),
        Err(_) => error(
            StatusCode::NOT_FOUND,
            format!(
                "episode {id:?} has no image {name:?} on disk: it was not kept (--trajectory-images) or was removed"
            ),
        ),
    }
}
