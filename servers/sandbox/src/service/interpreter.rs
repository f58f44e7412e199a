//! The code interpreter (port 49999): `/execute` streaming JSON lines, and `/contexts`.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, Path};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcpgym_e2b::interpreter::{
    ContextInfo, ContextRequest, ErrorLine, ExecuteRequest, OutputLine, ResultLine, StreamLine,
};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::kernel::valid_env_name;
use crate::kernel::{Event, Execution, ExecutionStatus, Language, Output, StreamName};

use super::api_error::{ApiError, parse_json};
use super::registry::{Context, Sandbox, env_from_json, killed, prepare_kernel};
use mcpgym_serve::{Fraction, rfc3339};

/// What a cell says when its kernel was found dead and replaced before the cell ran.
const KERNEL_DIED_BEFORE: &str = "the kernel had died since the last cell (killed from outside, or by a thread of an earlier cell) and was restarted before this cell ran: all variables and imports are gone (files in /home/user stay)";

/// Quiet time after which a `keepalive` line is sent.
const KEEPALIVE: Duration = Duration::from_secs(5);

/// The language a request names (Python when it names none).
fn parse_language(language: Option<&str>) -> Result<Language, ApiError> {
    let Some(name) = language else {
        return Ok(Language::Python);
    };
    Language::parse(name).ok_or_else(|| {
        ApiError::bad_request(format!(
            "language {name:?} is not known; use python, javascript (js), typescript (ts), r or bash"
        ))
    })
}

pub(crate) async fn health() -> Response {
    Json("OK").into_response()
}

/// `POST /execute`: runs a cell and streams its outputs as they come.
pub(crate) async fn execute(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    // `timeout`, an mcpgym extension, is the cell's deadline: at most the service's own.
    let body: ExecuteRequest = parse_json(body)?;
    let env = env_from_json("env_vars", body.env_vars)?;
    if let Some((name, _)) = env.iter().find(|(name, _)| !valid_env_name(name)) {
        return Err(ApiError::bad_request(format!(
            "env_vars has an invalid name {name:?}: use letters, digits and _, not starting with a digit"
        )));
    }
    let timeout = match body.timeout {
        None => sandbox.execution_timeout(),
        Some(secs) if secs.is_finite() && secs > 0.0 => {
            Duration::from_secs_f64(secs.min(1e9)).min(sandbox.execution_timeout())
        }
        Some(secs) => {
            return Err(ApiError::bad_request(format!(
                "timeout {secs} must be a positive number of seconds"
            )));
        }
    };
    let Some(code) = body.code else {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "missing \"code\": send {\"code\": \"...\"} with the Python source to run",
        ));
    };
    let context = match (body.context_id, body.language) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "Only one of context_id or language can be provided",
            ));
        }
        (Some(id), None) => sandbox.context(&id)?,
        (None, None) => sandbox.default_context()?,
        (None, Some(language)) => {
            let language = parse_language(Some(&language))?;
            if language == Language::Python {
                sandbox.default_context()?
            } else {
                sandbox.language_context(language)?
            }
        }
    };
    let (lines, rx) = mpsc::channel::<Chunk>(64);
    tokio::spawn(run_cell(sandbox, context, code, env, timeout, lines));
    // An `Err` item aborts the response: the client sees the connection cut, not an end.
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(stream),
    )
        .into_response())
}

/// One piece of the `/execute` response: a JSON line, or the reason to cut the connection.
type Chunk = Result<Bytes, std::io::Error>;

/// Writes the JSON lines of one execution.
struct Lines {
    tx: mpsc::Sender<Chunk>,
    sent_error: bool,
}

impl Lines {
    /// `false` once the client has gone.
    async fn send(&mut self, line: OutputLine) -> bool {
        let line = line.to_line().expect("output lines always serialize");
        self.tx.send(Ok(Bytes::from(line))).await.is_ok()
    }

    /// Cuts the response off without an end, as a sandbox that died mid-request does in E2B:
    /// its SDK then finds the sandbox gone and raises "the sandbox was killed while the
    /// request was in progress".
    async fn cut(&mut self, why: &str) {
        let _ = self
            .tx
            .send(Err(std::io::Error::other(why.to_owned())))
            .await;
    }

    async fn event(&mut self, event: Event) -> bool {
        match event {
            Event::Started { execution_count } => {
                self.send(OutputLine::NumberOfExecutions {
                    execution_count: Some(execution_count),
                })
                .await
            }
            Event::KernelRestarted => {
                self.send(OutputLine::Stderr(StreamLine {
                    text: format!("[{KERNEL_DIED_BEFORE}]\n"),
                    timestamp: Some(rfc3339(SystemTime::now(), Fraction::Micros)),
                }))
                .await
            }
            Event::Output(output) => match output_line(output) {
                Some(line @ OutputLine::Error(_)) => {
                    // E2B reports only the first error of a cell.
                    if self.sent_error {
                        return true;
                    }
                    self.sent_error = true;
                    self.send(line).await
                }
                Some(line) => self.send(line).await,
                None => true,
            },
        }
    }

    async fn error(&mut self, name: &str, value: String) -> bool {
        self.sent_error = true;
        self.send(OutputLine::Error(ErrorLine {
            name: name.to_owned(),
            value,
            traceback: String::new(),
        }))
        .await
    }

    async fn end(&mut self) {
        self.send(OutputLine::EndOfExecution).await;
    }
}

/// How a streamed execution ended.
enum Ended {
    Done(crate::Result<Execution>),
    ClientGone,
    SandboxKilled,
}

/// Runs one cell on its context's kernel (waiting for earlier cells of the context first)
/// and streams it.
async fn run_cell(
    sandbox: Arc<Sandbox>,
    context: Arc<Context>,
    code: String,
    env: Vec<(String, String)>,
    timeout: Duration,
    tx: mpsc::Sender<Chunk>,
) {
    let mut closed = sandbox.closed();
    let gone = tx.clone();
    let mut lines = Lines {
        tx,
        sent_error: false,
    };
    let mut guard = tokio::select! {
        guard = context.kernel.lock() => guard,
        _ = gone.closed() => return,
        _ = killed(&mut closed) => {
            lines.cut("the sandbox was killed before this cell could run").await;
            return;
        }
    };
    if guard.is_none() && !context.deleted() {
        // A context whose kernel starts with its first cell (a language's default context).
        match sandbox
            .start_context_kernel(context.language, &context.cwd)
            .await
        {
            Ok(kernel) => *guard = Some(kernel),
            Err(error) => {
                lines.error("KernelStartError", error.message).await;
                lines.end().await;
                return;
            }
        }
    }
    let Some(kernel) = guard.as_mut() else {
        if *closed.borrow() {
            lines
                .cut("the sandbox was killed before this cell could run")
                .await;
            return;
        }
        lines
            .error(
                "ContextDeleted",
                "the context was deleted before this cell could run; create a new one with POST /contexts".into(),
            )
            .await;
        lines.end().await;
        return;
    };
    if !env.is_empty()
        && let Err(error) = set_env_for_cell(kernel, &env).await
    {
        lines.error("EnvVarsError", error.message).await;
        lines.end().await;
        return;
    }
    let (events, mut received) = mpsc::unbounded_channel();
    let ended = {
        let execution = kernel.execute_streaming(&code, timeout, events);
        tokio::pin!(execution);
        let keepalive = tokio::time::sleep(KEEPALIVE);
        tokio::pin!(keepalive);
        loop {
            tokio::select! {
                biased;
                Some(event) = received.recv() => {
                    if !lines.event(event).await {
                        break Ended::ClientGone;
                    }
                    keepalive.as_mut().reset(tokio::time::Instant::now() + KEEPALIVE);
                }
                result = &mut execution => break Ended::Done(result),
                _ = &mut keepalive => {
                    if !lines.send(OutputLine::Keepalive).await {
                        break Ended::ClientGone;
                    }
                    keepalive.as_mut().reset(tokio::time::Instant::now() + KEEPALIVE);
                }
                _ = gone.closed() => break Ended::ClientGone,
                _ = killed(&mut closed) => break Ended::SandboxKilled,
            }
        }
    };
    match ended {
        Ended::Done(result) => {
            while let Ok(event) = received.try_recv() {
                lines.event(event).await;
            }
            match result {
                Ok(execution) => {
                    if execution.restarted {
                        // A fresh kernel: give it the sandbox's variables and the context's cwd.
                        if let Err(error) =
                            prepare_kernel(kernel, &context.cwd, &sandbox.env_vars).await
                        {
                            tracing::warn!(message = %error.message, "cannot prepare a restarted kernel");
                        }
                    } else if !env.is_empty()
                        && let Err(error) =
                            restore_env_after_cell(kernel, &env, &sandbox.base_env()).await
                    {
                        tracing::warn!(message = %error.message, "cannot restore the environment");
                    }
                    report_end(&mut lines, &execution, timeout).await
                }
                Err(error) => {
                    lines
                        .error(
                            "SandboxError",
                            format!("the kernel could not be reached or restarted: {error}"),
                        )
                        .await;
                }
            }
            lines.end().await;
        }
        Ended::ClientGone => {
            // Nobody reads the outputs any more: stop the cell now rather than let it run.
            if let Err(error) = kernel.settle_abandoned().await {
                tracing::warn!(%error, "cannot stop an abandoned execution");
            }
        }
        Ended::SandboxKilled => {
            lines
                .cut("the sandbox was killed while this cell ran")
                .await
        }
    }
}

/// Sets the request's `env_vars` for one cell; a Python kernel remembers what they replace.
async fn set_env_for_cell(
    kernel: &mut crate::Kernel,
    env: &[(String, String)],
) -> Result<(), ApiError> {
    let language = kernel.config().language;
    if language != Language::Python {
        return silently(kernel, &language.set_env_code(env)).await;
    }
    let vars: Map<String, Value> = env
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    // A JSON object of strings is also a Python dict literal.
    let code = format!(
        "import os as __os\n__mcpgym_env = {vars}\n__mcpgym_saved_env = {{k: __os.environ.get(k) for k in __mcpgym_env}}\n__os.environ.update(__mcpgym_env)\ndel __os, __mcpgym_env\n",
        vars = Value::Object(vars)
    );
    silently(kernel, &code).await
}

/// Puts back what [`set_env_for_cell`] replaced: a Python kernel its saved values, other
/// kernels the sandbox's own environment (`base`), as E2B's server does.
async fn restore_env_after_cell(
    kernel: &mut crate::Kernel,
    env: &[(String, String)],
    base: &[(String, String)],
) -> Result<(), ApiError> {
    let language = kernel.config().language;
    if language != Language::Python {
        let (set, unset): (Vec<_>, Vec<_>) = env
            .iter()
            .map(|(name, _)| (name, base.iter().find(|(k, _)| k == name)))
            .partition(|(_, base)| base.is_some());
        let set: Vec<(String, String)> = set
            .into_iter()
            .filter_map(|(_, base)| base.cloned())
            .collect();
        let unset: Vec<&str> = unset.into_iter().map(|(name, _)| name.as_str()).collect();
        let code = language.set_env_code(&set) + &language.unset_env_code(&unset);
        return silently(kernel, &code).await;
    }
    let code = "import os as __os\nfor __k, __v in __mcpgym_saved_env.items():\n    if __v is None:\n        __os.environ.pop(__k, None)\n    else:\n        __os.environ[__k] = __v\ndel __os, __mcpgym_saved_env\n";
    silently(kernel, code).await
}

async fn silently(kernel: &mut crate::Kernel, code: &str) -> Result<(), ApiError> {
    let run = kernel
        .execute_silently(code, Duration::from_secs(10))
        .await
        .map_err(|error| ApiError::internal(format!("cannot reach the kernel: {error}")))?;
    if run.status == ExecutionStatus::Ok {
        Ok(())
    } else {
        Err(ApiError::internal(format!(
            "cannot set the environment variables: {:?}",
            run.error()
        )))
    }
}

/// The closing error line for executions the server had to stop.
async fn report_end(lines: &mut Lines, execution: &Execution, timeout: Duration) {
    let secs = timeout.as_secs_f64();
    match execution.status {
        ExecutionStatus::TimedOut if execution.restarted => {
            lines
                .error(
                    "TimeoutError",
                    format!(
                        "the cell ran past its {secs} s deadline and ignored the interrupt, so the kernel was killed and restarted: all variables and imports are gone (files in /home/user stay)"
                    ),
                )
                .await;
        }
        ExecutionStatus::TimedOut => {
            lines
                .error(
                    "TimeoutError",
                    format!(
                        "the cell ran past its {secs} s deadline and was interrupted (KeyboardInterrupt): the kernel is the same and keeps its variables"
                    ),
                )
                .await;
        }
        ExecutionStatus::KernelDied => {
            lines
                .error(
                    "KernelDied",
                    "the kernel died while running this cell (killed, or over the memory or process limit) and was restarted: all variables and imports are gone (files in /home/user stay)".into(),
                )
                .await;
        }
        ExecutionStatus::Ok | ExecutionStatus::Error | ExecutionStatus::Aborted => {}
    }
}

/// The JSON line of one output.
fn output_line(output: Output) -> Option<OutputLine> {
    match output {
        Output::Stream { name, text } => {
            let line = StreamLine {
                text,
                timestamp: Some(rfc3339(SystemTime::now(), Fraction::Micros)),
            };
            Some(match name {
                StreamName::Stdout => OutputLine::Stdout(line),
                StreamName::Stderr => OutputLine::Stderr(line),
            })
        }
        Output::Result { data, .. } => Some(result_line(data, true)),
        Output::Display { data, .. } => Some(result_line(data, false)),
        Output::Error {
            ename,
            evalue,
            traceback,
        } => Some(OutputLine::Error(ErrorLine {
            name: ename,
            value: evalue,
            traceback: traceback.join("\n"),
        })),
    }
}

/// A `result` line: well-known MIME types get their own field, the rest go to `extra`.
fn result_line(data: Map<String, Value>, is_main_result: bool) -> OutputLine {
    let data = data.into_iter().map(|(mime, value)| {
        let value = match (mime.as_str(), value) {
            ("text/plain", Value::String(text)) => Value::String(strip_quotes(&text).to_owned()),
            // Base64 images may arrive wrapped in lines.
            ("image/png" | "image/jpeg", Value::String(b64)) => {
                Value::String(b64.replace('\n', ""))
            }
            (_, value) => value,
        };
        (mime, value)
    });
    OutputLine::Result(Box::new(ResultLine::from_bundle(data, is_main_result)))
}

/// One pair of matching quotes around a repr'd string goes, as E2B's server does.
fn strip_quotes(text: &str) -> &str {
    for quote in ['\'', '"'] {
        if text.len() >= 2 && text.starts_with(quote) && text.ends_with(quote) {
            return &text[1..text.len() - 1];
        }
    }
    text
}

fn context_info(context: &Context) -> ContextInfo {
    ContextInfo {
        id: context.id.clone(),
        language: context.language.as_str().to_owned(),
        cwd: context.cwd.clone(),
    }
}

pub(crate) async fn create_context(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body: ContextRequest = parse_json(body)?;
    let language = parse_language(body.language.as_deref())?;
    let cwd = body.cwd.unwrap_or_else(|| crate::jail::HOME.to_owned());
    if !cwd.starts_with('/') || cwd.split('/').any(|part| part == "..") {
        return Err(ApiError::bad_request(format!(
            "cwd {cwd:?} must be an absolute path without \"..\", e.g. /home/user/project"
        )));
    }
    let context = sandbox.add_context(language, cwd).await?;
    Ok(Json(context_info(&context)).into_response())
}

pub(crate) async fn list_contexts(
    Extension(sandbox): Extension<Arc<Sandbox>>,
) -> Result<Response, ApiError> {
    let all: Vec<ContextInfo> = sandbox.contexts().iter().map(|c| context_info(c)).collect();
    Ok(Json(all).into_response())
}

pub(crate) async fn restart_context(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let context = sandbox.context(&id)?;
    let mut guard = context.kernel.lock().await;
    let Some(kernel) = guard.as_mut() else {
        if context.deleted() {
            return Err(ApiError::not_found(format!("Context {id} not found")));
        }
        // Listed but not started yet (a language's default context): already fresh.
        return Ok(Json(Value::Null).into_response());
    };
    kernel
        .restart()
        .await
        .map_err(|error| ApiError::internal(format!("cannot restart the kernel: {error}")))?;
    // A restarted kernel starts in the home directory with the jail's environment: put the
    // context's cwd back (the sandbox's variables are in the jail's environment already).
    prepare_kernel(kernel, &context.cwd, &sandbox.env_vars).await?;
    Ok(Json(Value::Null).into_response())
}

pub(crate) async fn delete_context(
    Extension(sandbox): Extension<Arc<Sandbox>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    sandbox.remove_context(&id).await?;
    Ok(Json(Value::Null).into_response())
}
