//! `GET /files` and `POST /files`: raw file transfer under the sandbox's home.

use std::io::Write;
use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Extension, FromRequest, Multipart, Query, Request};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use mcpgym_e2b::files::WrittenFile;
use serde::Deserialize;

use tokio::io::AsyncReadExt;

use super::beneath::Home;
use super::paths::{SandboxPath, as_user, fs_error, resolve};
use crate::service::api_error::ApiError;
use crate::service::registry::Sandbox;

#[derive(Debug, Deserialize)]
pub(crate) struct FileQuery {
    path: Option<String>,
    #[allow(dead_code)] // every sandbox has the one user `user`
    username: Option<String>,
}

fn query(
    query: Result<Query<FileQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<FileQuery, ApiError> {
    query.map(|Query(q)| q).map_err(|e| {
        ApiError::bad_request(format!(
            "bad query string ({}); use ?path=/home/user/FILE",
            e.body_text()
        ))
    })
}

/// `GET /files?path=`: the file's bytes, streamed from the open file (never held whole).
pub(crate) async fn read(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    params: Result<Query<FileQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let params = query(params)?;
    let path = resolve(params.path.as_deref().unwrap_or(""))?;
    let home = sandbox.home.clone();
    let user = sandbox.user;
    let relative = path.relative.clone();
    let file = tokio::task::spawn_blocking(move || {
        as_user(user, || Home::open(&home)?.open_read(&relative))
    })
    .await
    .map_err(|_| ApiError::internal("file read panicked"))?
    .map_err(|error| match error.kind() {
        std::io::ErrorKind::IsADirectory => ApiError::bad_request(format!(
            "{:?} is a directory; name a file (list directories with filesystem.Filesystem/ListDir)",
            path.inside
        )),
        _ => fs_error("read", &path, error),
    })?;
    let file = tokio::fs::File::from_std(file);
    let chunks = futures::stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let mut buffer = vec![0u8; 64 * 1024];
        match file.read(&mut buffer).await {
            Ok(0) => None,
            Ok(n) => {
                buffer.truncate(n);
                Some((Ok(Bytes::from(buffer)), Some(file)))
            }
            Err(error) => Some((Err(error), None)),
        }
    });
    Ok((
        [(header::CONTENT_TYPE, "application/octet-stream")],
        Body::from_stream(chunks),
    )
        .into_response())
}

/// `POST /files?path=`: multipart field(s) `file`, or the raw body as one file.
pub(crate) async fn write(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    params: Result<Query<FileQuery>, axum::extract::rejection::QueryRejection>,
    request: Request,
) -> Result<Response, ApiError> {
    let params = query(params)?;
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let mut written: Vec<WrittenFile> = Vec::new();
    if content_type.starts_with("multipart/form-data") {
        let mut multipart = Multipart::from_request(request, &()).await.map_err(|e| {
            ApiError::new(
                e.status(),
                format!("cannot read the multipart body: {}", e.body_text()),
            )
        })?;
        while let Some(field) = multipart.next_field().await.map_err(|e| {
            ApiError::new(e.status(), format!("bad multipart body: {}", e.body_text()))
        })? {
            if field.name() != Some("file") {
                continue;
            }
            // Without ?path=, each part names its own file (how SDKs write several at once).
            let target = params
                .path
                .clone()
                .or_else(|| field.file_name().map(str::to_owned))
                .unwrap_or_default();
            let data = field.bytes().await.map_err(|e| {
                ApiError::new(e.status(), format!("bad multipart body: {}", e.body_text()))
            })?;
            let path = resolve(&target)?;
            store(&sandbox, &path, data).await?;
            written.push(entry(&path));
        }
        if written.is_empty() {
            return Err(ApiError::bad_request(
                "no multipart field named \"file\": send the content as form field \"file\"",
            ));
        }
    } else {
        let data = Bytes::from_request(request, &())
            .await
            .map_err(ApiError::from_body)?;
        let path = resolve(params.path.as_deref().unwrap_or(""))?;
        store(&sandbox, &path, data).await?;
        written.push(entry(&path));
    }
    Ok(Json(written).into_response())
}

fn entry(path: &SandboxPath) -> WrittenFile {
    let name = path.inside.rsplit('/').next().unwrap_or("");
    WrittenFile {
        path: path.inside.clone(),
        name: name.to_owned(),
        kind: "file".to_owned(),
    }
}

/// Writes a file as the sandbox's user would, creating its folders.
async fn store(sandbox: &Sandbox, path: &SandboxPath, data: Bytes) -> Result<(), ApiError> {
    let home = sandbox.home.clone();
    let relative = path.relative.clone();
    let user = sandbox.user;
    tokio::task::spawn_blocking(move || {
        as_user(user, || -> std::io::Result<()> {
            let mut file = Home::open(&home)?.create(&relative, 0o644)?;
            file.write_all(&data)
        })
    })
    .await
    .map_err(|_| ApiError::internal("file write panicked"))?
    .map_err(|error| fs_error("write", path, error))
}
