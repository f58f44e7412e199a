//! The code interpreter: running a cell (`/execute`, streamed JSON lines) and kernel
//! contexts.

use std::time::Duration;

use mcpgym_e2b::interpreter::{ExecuteRequest, OutputLine};
use mcpgym_e2b::lines::{Line, LineReader};
use mcpgym_e2b::{INTERPRETER_PORT, files::encode_query, paths};

use super::{E2bError, MAX_MESSAGE_BYTES, Sandbox};
use crate::cap::CellCapture;
use crate::notebook::{CellOutput, StreamName};

/// A kernel context.
pub use mcpgym_e2b::interpreter::ContextInfo;

/// How long past a cell's deadline the client waits for the service to say how the cell
/// ended (the interrupt's grace period, and a kernel restart when it ignored the interrupt).
pub const TIMEOUT_SLACK: Duration = Duration::from_secs(45);

/// One cell's execution, as the code interpreter reported it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Execution {
    /// The kernel's execution count, when reported.
    pub execution_count: Option<u32>,
    /// The outputs in order (stdout and stderr pieces, results, the error).
    pub outputs: Vec<CellOutput>,
    /// Whether the cell raised (an error output).
    pub raised: bool,
    /// Whether the cell ran past its deadline (the service stopped it, or the client stopped
    /// waiting and dropped the request, which makes the service interrupt it).
    pub timed_out: bool,
}

impl Sandbox {
    /// Runs `code` in the default Python context (or `context_id`), with `timeout` as its
    /// deadline. The service interrupts the cell at the deadline (and restarts the kernel if
    /// it ignores the interrupt) and says which in a closing `TimeoutError`; the client waits
    /// [`TIMEOUT_SLACK`] longer for that line, then drops the request itself and says it
    /// cannot tell.
    ///
    /// Output is capped while it arrives (see [`crate::cap`]): the client keeps at most a few
    /// tens of KiB of text and [`MAX_RICH_BYTES`](crate::cap::MAX_RICH_BYTES) of rich results
    /// per cell, however much the cell prints.
    pub async fn execute(
        &self,
        code: &str,
        context_id: Option<&str>,
        timeout: Duration,
    ) -> Result<Execution, E2bError> {
        let body = ExecuteRequest {
            code: Some(code.to_owned()),
            context_id: context_id.map(str::to_owned),
            timeout: Some(timeout.as_secs_f64()),
            ..ExecuteRequest::default()
        };
        let mut state = LineState::default();
        let run = async {
            let mut response = self
                .data(http::Method::POST, INTERPRETER_PORT, paths::EXECUTE)
                .json(&body)
                .send()
                .await?
                .success()
                .await?;
            let mut lines = LineReader::new(MAX_MESSAGE_BYTES);
            let mut ended = false;
            while let Some(chunk) = response.chunk().await? {
                for line in lines.push(&chunk) {
                    match line {
                        Line::Whole(line) => ended |= apply_line(&line, &mut state)?,
                        Line::Dropped(bytes) => state.capture.stream(
                            StreamName::Stdout,
                            &format!("\n{}\n", crate::cap::cut_marker(bytes as u64)),
                        ),
                    }
                }
            }
            if let Some(Line::Whole(rest)) = lines.finish()
                && apply_line(&rest, &mut state)?
            {
                ended = true;
            }
            if ended {
                Ok(())
            } else {
                Err(E2bError::Protocol(
                    "the execution stream ended without end_of_execution".into(),
                ))
            }
        };
        let result = tokio::time::timeout(timeout + TIMEOUT_SLACK, run).await;
        let mut execution = Execution {
            execution_count: state.execution_count,
            raised: state.raised,
            timed_out: state.timed_out,
            outputs: Vec::new(),
        };
        match result {
            Ok(Ok(())) => {
                execution.outputs = state.capture.finish();
                Ok(execution)
            }
            Ok(Err(error)) => Err(error),
            Err(_) => {
                // What arrived before the deadline stays; the dropped request interrupts it.
                execution.timed_out = true;
                execution.raised = true;
                state.capture.error(
                    "TimeoutError",
                    &format!(
                        "the cell ran longer than {} s and the sandbox did not stop it in time, so the request was dropped: the cell is interrupted, and if it ignores the interrupt the kernel is restarted and its variables are lost",
                        timeout.as_secs()
                    ),
                    "",
                );
                execution.outputs = state.capture.finish();
                Ok(execution)
            }
        }
    }

    /// The kernel contexts.
    pub async fn contexts(&self) -> Result<Vec<ContextInfo>, E2bError> {
        self.data(http::Method::GET, INTERPRETER_PORT, paths::CONTEXTS)
            .timeout(Duration::from_secs(30))
            .send()
            .await?
            .success()
            .await?
            .json()
            .await
    }

    /// Deletes a context, shutting its kernel down.
    pub async fn delete_context(&self, id: &str) -> Result<(), E2bError> {
        self.data(
            http::Method::DELETE,
            INTERPRETER_PORT,
            &format!("{}/{}", paths::CONTEXTS, encode_query(id)),
        )
        .timeout(Duration::from_secs(30))
        .send()
        .await?
        .success()
        .await
        .map(drop)
    }
}

/// What the lines of one execution said so far.
#[derive(Debug, Default)]
struct LineState {
    execution_count: Option<u32>,
    raised: bool,
    timed_out: bool,
    capture: CellCapture,
}

/// Applies one JSON line of `/execute`; `true` at `end_of_execution`.
fn apply_line(line: &[u8], state: &mut LineState) -> Result<bool, E2bError> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return Ok(false);
    }
    let line: OutputLine = serde_json::from_str(text).map_err(|e| {
        let start: String = text.chars().take(200).collect();
        E2bError::Protocol(format!("bad execution line ({e}): {start}"))
    })?;
    match line {
        OutputLine::EndOfExecution => return Ok(true),
        OutputLine::NumberOfExecutions { execution_count } => {
            state.execution_count = execution_count;
        }
        OutputLine::Stdout(line) => state.capture.stream(StreamName::Stdout, &line.text),
        OutputLine::Stderr(line) => state.capture.stream(StreamName::Stderr, &line.text),
        OutputLine::Error(error) => {
            state.raised = true;
            state.timed_out |= error.name == "TimeoutError";
            state
                .capture
                .error(&error.name, &error.value, &error.traceback);
        }
        OutputLine::Result(result) => {
            let is_main = result.is_main_result;
            state.capture.result(is_main, (*result).into_bundle());
        }
        // Keepalives, and kinds newer than this client.
        OutputLine::Keepalive | OutputLine::Unknown => {}
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_lines_become_outputs() {
        let mut state = LineState::default();
        for line in [
            r#"{"type":"number_of_executions","execution_count":3}"#,
            r#"{"type":"stdout","text":"hi\n","timestamp":"x"}"#,
            r#"{"type":"result","text":"2","png":"AAAA","is_main_result":true}"#,
            r#"{"type":"keepalive"}"#,
            r#"{"type":"error","name":"ValueError","value":"bad","traceback":"a\nb"}"#,
        ] {
            assert!(!apply_line(line.as_bytes(), &mut state).unwrap());
        }
        assert!(apply_line(br#"{"type":"end_of_execution"}"#, &mut state).unwrap());
        assert_eq!(state.execution_count, Some(3));
        assert!(state.raised);
        let outputs = state.capture.finish();
        assert_eq!(outputs.len(), 3);
        let CellOutput::Result { data, is_main } = &outputs[1] else {
            panic!()
        };
        assert!(is_main);
        assert_eq!(data["image/png"], "AAAA");
    }

    #[test]
    fn bad_lines_are_protocol_errors() {
        let mut state = LineState::default();
        assert!(!apply_line(b"  ", &mut state).unwrap());
        let error = apply_line(b"{not json", &mut state).unwrap_err();
        assert!(error.to_string().contains("bad execution line"), "{error}");
    }
}
