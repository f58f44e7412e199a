//! `process.Process/Start`: a command in its own jail of the sandbox (same home and user,
//! same network choice), streamed back as Connect JSON frames.
//!
//! Each frame is one flag byte, a 4-byte big-endian length and a JSON message; the last frame
//! has flag `0x02` (end of stream) and carries `{}` or `{"error": ...}`.
//!
//! Output is streamed as it comes, through a short queue (the server holds a few frames, never
//! the output). A command's first [`HEAD_BYTES`] of output are sent as they come; past them,
//! each stream keeps only its last [`TAIL_BYTES`], sent at the end after a line
//! `[... N characters cut ...]` (N in bytes), so a command printing gigabytes costs neither
//! memory nor a client reading it all.

use std::convert::Infallible;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Extension;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcpgym_e2b::connect::{self, ConnectErrorBody, END_STREAM, EndOfStream, FrameError};
use mcpgym_e2b::process::{
    DataEvent, EndEvent, ListResponse, ProcessConfig, ProcessEvent, ProcessInfo, ProcessMessage,
    SignalRequest, StartRequest,
};
use serde::Serialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use super::{ConnectError, connect_code};
use crate::jail::Jail;
use crate::service::api_error::ApiError;
use crate::service::registry::{RunningCommand, Sandbox, killed, remove_root};

/// Quiet time after which a keepalive event is sent.
const KEEPALIVE: Duration = Duration::from_secs(5);
/// Bytes of a command's output (both streams) sent as they come.
pub(crate) const HEAD_BYTES: usize = 4 << 20;
/// Bytes of the end of each stream kept once the head is spent.
pub(crate) const TAIL_BYTES: usize = 512 * 1024;

/// The head and tail of a command's output. See the module documentation.
#[derive(Default)]
struct OutputCap {
    sent: usize,
    /// Per stream (stdout, stderr): the kept end, and how many bytes were dropped.
    tails: [(std::collections::VecDeque<u8>, u64); 2],
}

impl OutputCap {
    /// Takes `bytes` of stream `index` (0 stdout, 1 stderr); returns what to send now.
    fn take<'a>(&mut self, index: usize, bytes: &'a [u8]) -> &'a [u8] {
        let room = HEAD_BYTES - self.sent;
        let now = bytes.len().min(room);
        self.sent += now;
        let (tail, cut) = &mut self.tails[index];
        let rest = &bytes[now..];
        if rest.len() >= TAIL_BYTES {
            *cut += (tail.len() + rest.len() - TAIL_BYTES) as u64;
            tail.clear();
            tail.extend(&rest[rest.len() - TAIL_BYTES..]);
        } else {
            tail.extend(rest);
            let excess = tail.len().saturating_sub(TAIL_BYTES);
            *cut += excess as u64;
            tail.drain(..excess);
        }
        &bytes[..now]
    }

    /// The frames that end the output: per stream that went past the head, the marker and
    /// the tail.
    fn finish(&mut self) -> Vec<Bytes> {
        let mut frames = Vec::new();
        for index in 0..2 {
            let (tail, cut) = &mut self.tails[index];
            if tail.is_empty() && *cut == 0 {
                continue;
            }
            let mut bytes = Vec::new();
            if *cut > 0 {
                bytes.extend_from_slice(
                    format!("\n{}\n", crate::kernel::cut_marker(*cut)).as_bytes(),
                );
            }
            bytes.extend(tail.drain(..));
            *cut = 0;
            for piece in bytes.chunks(32 * 1024) {
                frames.push(event_frame(ProcessEvent::data(DataEvent::output(
                    index == 1,
                    piece,
                ))));
            }
        }
        frames
    }
}

/// One Connect frame.
fn frame(flags: u8, message: &impl Serialize) -> Bytes {
    // Messages are small (output goes in pieces of at most 32 KiB) and always serialize.
    Bytes::from(connect::encode_json(flags, message).expect("a process message always encodes"))
}

/// The frame of one process event.
fn event_frame(event: ProcessEvent) -> Bytes {
    frame(0, &ProcessMessage::from(event))
}

/// The JSON message of a request: enveloped for `application/connect+json`, bare otherwise.
fn request_message<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    body: &[u8],
) -> Result<T, ApiError> {
    let streaming = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(connect::is_enveloped);
    let json = if streaming {
        // The body limit already bounds the frame.
        match connect::decode(body, usize::MAX) {
            Ok((frame, _rest)) => frame.message,
            Err(FrameError::MissingHeader(_)) => {
                return Err(ApiError::bad_request(
                    "the Connect request has no message frame; send one enveloped JSON message",
                ));
            }
            Err(_) => {
                return Err(ApiError::bad_request(
                    "the Connect request frame is shorter than its length prefix",
                ));
            }
        }
    } else {
        body
    };
    serde_json::from_slice(json).map_err(|error| {
        ApiError::bad_request(format!(
            "the request body is not valid JSON for this call ({error}); for Start send {{\"process\": {{\"cmd\": \"/bin/bash\", \"args\": [\"-c\", \"...\"]}}}}"
        ))
    })
}

/// An error as the end-of-stream frame of a streaming response.
fn stream_error(error: ApiError) -> Response {
    let end = frame(
        END_STREAM,
        &EndOfStream {
            error: Some(ConnectErrorBody {
                code: connect_code(error.status).to_owned(),
                message: error.message,
            }),
        },
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, connect::CONTENT_TYPE)],
        Body::from(end),
    )
        .into_response()
}

/// `POST /process.Process/Start`.
pub(crate) async fn start(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return ConnectError(ApiError::from_body(rejection)).into_response(),
    };
    match spawn(&sandbox, &headers, &body).await {
        Ok(response) => response,
        Err(error) => stream_error(error),
    }
}

async fn spawn(
    sandbox: &Arc<Sandbox>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    // The config is kept as sent, to list it back.
    let request: StartRequest<Value> = request_message(headers, body)?;
    let raw_config = request.process.ok_or_else(|| {
        ApiError::bad_request("missing \"process\": send {\"process\": {\"cmd\": ...}}")
    })?;
    let process: ProcessConfig = serde_json::from_value(raw_config.clone()).map_err(|error| {
        ApiError::bad_request(format!(
            "\"process\" is not a valid ProcessConfig ({error}); send {{\"cmd\": ..., \"args\": [...], \"envs\": {{}}, \"cwd\": ...}}"
        ))
    })?;
    let cmd = process.cmd.filter(|c| !c.is_empty()).ok_or_else(|| {
        ApiError::bad_request("missing \"process.cmd\": name the program to run, e.g. /bin/bash")
    })?;
    let cwd = process
        .cwd
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| crate::jail::HOME.to_owned());
    if !cwd.starts_with('/') {
        return Err(ApiError::bad_request(format!(
            "cwd {cwd:?} must be an absolute path inside the sandbox, e.g. /home/user"
        )));
    }
    let mut config = sandbox.jail_config("p");
    for (key, value) in process.envs {
        config.env.retain(|(k, _)| *k != key);
        config.env.push((key, value));
    }
    // env(1) changes directory inside the jail, so a missing cwd fails like a shell would.
    let mut command: Vec<OsString> = ["/usr/bin/env", "-C", &cwd, "--", &cmd]
        .map(OsString::from)
        .to_vec();
    command.extend(process.args.into_iter().map(OsString::from));
    let mut jail = Jail::spawn_piped(&config, &command)
        .await
        .map_err(|error| ApiError::internal(format!("cannot start the command: {error}")))?;
    let (stdout, stderr) = jail
        .take_output()
        .ok_or_else(|| ApiError::internal("the command's output pipes are missing"))?;
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let pid = jail.pid().unwrap_or(0);
    let kill = Arc::new(tokio::sync::Notify::new());
    sandbox.commands.lock().expect("sandbox lock").insert(
        pid,
        RunningCommand {
            config: raw_config,
            tag: request.tag,
            kill: kill.clone(),
        },
    );
    let _ = tx.send(event_frame(ProcessEvent::start(pid))).await;
    tokio::spawn(stream_command(
        sandbox.clone(),
        pid,
        kill,
        jail,
        config.root.clone(),
        stdout,
        stderr,
        tx,
    ));
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<_, Infallible>(chunk), rx))
    });
    Ok((
        [(header::CONTENT_TYPE, connect::CONTENT_TYPE)],
        Body::from_stream(stream),
    )
        .into_response())
}

/// Forwards output until the command exits, the client goes, the deadline passes or the
/// sandbox is killed; then kills the jail and removes its private directory.
#[allow(clippy::too_many_arguments)] // one task's whole state, handed over once
async fn stream_command(
    sandbox: Arc<Sandbox>,
    pid: u32,
    kill: Arc<tokio::sync::Notify>,
    mut jail: Jail,
    root: std::path::PathBuf,
    mut stdout: tokio::process::ChildStdout,
    mut stderr: tokio::process::ChildStderr,
    tx: mpsc::Sender<Bytes>,
) {
    let deadline = tokio::time::Instant::now() + sandbox.execution_timeout();
    let mut closed = sandbox.closed();
    let (mut out_buf, mut err_buf) = (vec![0u8; 32 * 1024], vec![0u8; 32 * 1024]);
    let (mut out_open, mut err_open) = (true, true);
    let mut end_error: Option<ConnectErrorBody> = None;
    let mut cap = OutputCap::default();
    let keepalive = tokio::time::sleep(KEEPALIVE);
    tokio::pin!(keepalive);
    // Read both pipes to their end (the command may exit before its output is read).
    while out_open || err_open {
        let event = tokio::select! {
            read = stdout.read(&mut out_buf), if out_open => match read {
                Ok(0) | Err(_) => { out_open = false; None }
                Ok(n) => match cap.take(0, &out_buf[..n]) {
                    [] => None,
                    now => Some(ProcessEvent::data(DataEvent::output(false, now))),
                },
            },
            read = stderr.read(&mut err_buf), if err_open => match read {
                Ok(0) | Err(_) => { err_open = false; None }
                Ok(n) => match cap.take(1, &err_buf[..n]) {
                    [] => None,
                    now => Some(ProcessEvent::data(DataEvent::output(true, now))),
                },
            },
            _ = &mut keepalive => Some(ProcessEvent::keepalive()),
            _ = tx.closed() => {
                sandbox.commands.lock().expect("sandbox lock").remove(&pid);
                jail.kill().await;
                remove_root(root).await;
                return;
            }
            _ = kill.notified() => {
                // SendSignal: the whole jail goes; the end event reports the signal.
                jail.kill().await;
                None
            }
            _ = tokio::time::sleep_until(deadline) => {
                end_error = Some(ConnectErrorBody {
                    code: "deadline_exceeded".into(),
                    message: format!(
                        "the command ran past the server's {} s deadline and was killed",
                        sandbox.execution_timeout().as_secs()
                    ),
                });
                break;
            }
            _ = killed(&mut closed) => {
                end_error = Some(ConnectErrorBody {
                    code: "canceled".into(),
                    message: "the sandbox was killed while the command ran".into(),
                });
                break;
            }
        };
        keepalive
            .as_mut()
            .reset(tokio::time::Instant::now() + KEEPALIVE);
        if let Some(happened) = event
            && tx.send(event_frame(happened)).await.is_err()
        {
            sandbox.commands.lock().expect("sandbox lock").remove(&pid);
            jail.kill().await;
            remove_root(root).await;
            return;
        }
    }
    let status = if end_error.is_none() {
        tokio::select! {
            status = jail.wait() => status.ok(),
            _ = tokio::time::sleep_until(deadline) => None,
        }
    } else {
        None
    };
    jail.kill().await;
    sandbox.commands.lock().expect("sandbox lock").remove(&pid);
    for frame in cap.finish() {
        if tx.send(frame).await.is_err() {
            remove_root(root).await;
            return;
        }
    }
    if let Some(status) = status {
        let (code, text) = match (
            status.code(),
            std::os::unix::process::ExitStatusExt::signal(&status),
        ) {
            (Some(code), _) => (code, format!("exit status {code}")),
            (None, Some(signal)) => (-1, format!("signal: {signal}")),
            (None, None) => (-1, "unknown".to_owned()),
        };
        let end = EndEvent {
            exit_code: code,
            exited: true,
            status: Some(text),
            error: None,
        };
        let _ = tx.send(event_frame(ProcessEvent::end(end))).await;
        let _ = tx.send(frame(END_STREAM, &EndOfStream::default())).await;
    } else {
        let error = end_error.unwrap_or_else(|| ConnectErrorBody {
            code: "deadline_exceeded".into(),
            message: "the command ran past the server's deadline and was killed".into(),
        });
        let end = EndOfStream { error: Some(error) };
        let _ = tx.send(frame(END_STREAM, &end)).await;
    }
    remove_root(root).await;
}

/// `POST /process.Process/List`: the commands still running.
pub(crate) async fn list(Extension(sandbox): Extension<Arc<Sandbox>>) -> Response {
    let processes: Vec<ProcessInfo<Value>> = sandbox
        .commands
        .lock()
        .expect("sandbox lock")
        .iter()
        .map(|(pid, command)| ProcessInfo {
            pid: *pid,
            config: command.config.clone(),
            tag: command.tag.clone(),
        })
        .collect();
    axum::Json(ListResponse { processes }).into_response()
}

/// `POST /process.Process/SendSignal`: SIGKILL and SIGTERM both end the command's whole jail.
pub(crate) async fn send_signal(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ConnectError> {
    let body = body.map_err(ApiError::from_body)?;
    // The signal is not read: SIGKILL and SIGTERM both end the jail.
    let request: SignalRequest = request_message(&headers, &body)?;
    let selector = request.process.ok_or_else(|| {
        ApiError::bad_request(
            "missing \"process\": send {\"process\": {\"pid\": N}, \"signal\": \"SIGNAL_SIGKILL\"}",
        )
    })?;
    let commands = sandbox.commands.lock().expect("sandbox lock");
    let found = commands
        .iter()
        .find(|(pid, command)| match (&selector.pid, &selector.tag) {
            (Some(wanted), _) => *pid == wanted,
            (None, Some(tag)) => command.tag.as_ref() == Some(tag),
            (None, None) => false,
        });
    match found {
        Some((_, command)) => {
            command.kill.notify_one();
            Ok(axum::Json(serde_json::Map::new()).into_response())
        }
        None => Err(ConnectError(ApiError::not_found(format!(
            "process {:?} not found: it has ended or never ran; list running ones with process.Process/List",
            selector
                .pid
                .map(|p| p.to_string())
                .or(selector.tag)
                .unwrap_or_default()
        )))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_past_the_head_keeps_each_tail_and_says_what_was_cut() {
        let mut cap = OutputCap::default();
        let chunk = vec![b'a'; 1 << 20];
        let mut sent = 0;
        for _ in 0..10 {
            sent += cap.take(0, &chunk).len();
        }
        assert_eq!(cap.take(1, b"err"), b"");
        assert_eq!(sent, HEAD_BYTES);
        let frames = cap.finish();
        let mut out = Vec::new();
        for frame in &frames {
            let message: ProcessMessage = serde_json::from_slice(&frame[5..]).unwrap();
            if let Some(data) = message.event.data.and_then(|d| d.stdout_bytes()) {
                out.extend(data);
            }
        }
        let cut = (10 << 20) - HEAD_BYTES - TAIL_BYTES;
        let marker = format!("\n[... {cut} characters cut ...]\n");
        assert!(out.starts_with(marker.as_bytes()));
        assert_eq!(out.len(), marker.len() + TAIL_BYTES);
        assert!(cap.finish().is_empty());
    }
}
