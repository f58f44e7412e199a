//! envd's process API: running a command as its own process (`process.Process/Start`, a
//! Connect stream), listing and killing such processes.

use std::time::Duration;

use mcpgym_e2b::connect::{self, EndOfStream, FrameReader, Read};
use mcpgym_e2b::process::{
    ListResponse, ProcessConfig, ProcessMessage, ProcessSelector, SIGKILL, SignalRequest,
    StartRequest,
};
use mcpgym_e2b::{ENVD_PORT, headers, paths};

use super::{E2bError, MAX_MESSAGE_BYTES, Sandbox};
use crate::cap::HeadTail;

/// A command's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
    /// The exit code; `None` when the command did not exit normally (killed, deadline).
    pub exit_code: Option<i32>,
    /// The reason the command did not exit normally, if it did not.
    pub error: Option<String>,
}

impl Sandbox {
    /// Runs `cmd` with `args` as its own process (envd `process.Process/Start`) in `cwd`,
    /// collecting its output until it exits. The client waits at most `timeout`, then drops
    /// the stream (which ends the process) and reports it in [`CommandOutput::error`].
    pub async fn run(
        &self,
        cmd: &str,
        args: &[&str],
        cwd: &str,
        timeout: Duration,
    ) -> Result<CommandOutput, E2bError> {
        let request = StartRequest {
            process: Some(ProcessConfig {
                cmd: Some(cmd.to_owned()),
                args: args.iter().map(|a| (*a).to_owned()).collect(),
                envs: Default::default(),
                cwd: Some(cwd.to_owned()),
            }),
            tag: None,
        };
        let body = connect::encode_json(0, &request)
            .map_err(|e| E2bError::Protocol(format!("cannot encode the command: {e}")))?;
        let mut output = CommandOutput::default();
        let mut stdout = HeadTail::default();
        let mut stderr = HeadTail::default();
        let run = async {
            let mut response = self
                .data(http::Method::POST, ENVD_PORT, paths::PROCESS_START)
                .header("content-type", connect::CONTENT_TYPE)
                .header(headers::CONNECT_PROTOCOL_VERSION, connect::PROTOCOL_VERSION)
                .body(body)
                .send()
                .await?
                .success()
                .await?;
            let mut frames = FrameReader::new(MAX_MESSAGE_BYTES);
            while let Some(chunk) = response.chunk().await? {
                for read in frames.push(&chunk) {
                    let (flags, message) = match read {
                        Read::Frame { flags, message } => (flags, message),
                        Read::Skipped { length, .. } => {
                            tracing::warn!(length, "skipping an overlong Connect frame");
                            continue;
                        }
                    };
                    let bad = |e: serde_json::Error| {
                        E2bError::Protocol(format!("bad Connect frame: {e}"))
                    };
                    if flags & connect::END_STREAM != 0 {
                        let end: EndOfStream = serde_json::from_slice(&message).map_err(bad)?;
                        if let Some(error) = end.error {
                            output.error = Some(if error.message.is_empty() {
                                "the command failed".to_owned()
                            } else {
                                error.message
                            });
                        }
                        return Ok(());
                    }
                    let message: ProcessMessage = serde_json::from_slice(&message).map_err(bad)?;
                    apply_message(message, &mut stdout, &mut stderr, &mut output);
                }
            }
            Err(E2bError::Protocol(
                "the process stream ended without an end-of-stream frame".into(),
            ))
        };
        let result = tokio::time::timeout(timeout, run).await;
        output.stdout = stdout.text();
        output.stderr = stderr.text();
        match result {
            Ok(Ok(())) => Ok(output),
            Ok(Err(error)) => Err(error),
            Err(_) => {
                output.exit_code = None;
                output.error = Some(format!(
                    "the command ran longer than {} s and was killed",
                    timeout.as_secs()
                ));
                Ok(output)
            }
        }
    }

    /// The pids of the processes started with [`Sandbox::run`] that still run.
    pub async fn processes(&self) -> Result<Vec<u32>, E2bError> {
        let listed: ListResponse<serde::de::IgnoredAny> = self
            .data(http::Method::POST, ENVD_PORT, paths::PROCESS_LIST)
            .header("content-type", "application/json")
            .body("{}")
            .timeout(Duration::from_secs(30))
            .send()
            .await?
            .success()
            .await?
            .json()
            .await?;
        Ok(listed.processes.iter().map(|p| p.pid).collect())
    }

    /// Kills a process started with [`Sandbox::run`].
    pub async fn kill_process(&self, pid: u32) -> Result<(), E2bError> {
        let body = SignalRequest {
            process: Some(ProcessSelector {
                pid: Some(pid),
                tag: None,
            }),
            signal: Some(SIGKILL.into()),
        };
        let response = self
            .data(http::Method::POST, ENVD_PORT, paths::PROCESS_SEND_SIGNAL)
            .header("content-type", "application/json")
            .json(&body)
            .timeout(Duration::from_secs(30))
            .send()
            .await?;
        // Gone already: the process (404), or the whole sandbox (502, as E2B's proxy says).
        if matches!(
            response.status(),
            http::StatusCode::NOT_FOUND | http::StatusCode::BAD_GATEWAY
        ) {
            return Ok(());
        }
        response.success().await.map(drop)
    }
}

/// Applies one message of the process stream.
fn apply_message(
    message: ProcessMessage,
    stdout: &mut HeadTail,
    stderr: &mut HeadTail,
    output: &mut CommandOutput,
) {
    let event = message.event;
    if let Some(data) = &event.data {
        if let Some(bytes) = data.stdout_bytes() {
            stdout.push(&bytes);
        }
        if let Some(bytes) = data.stderr_bytes() {
            stderr.push(&bytes);
        }
    }
    if let Some(end) = event.end {
        output.exit_code = end.exited.then_some(end.exit_code);
        if end.signalled() {
            output.exit_code = None;
            output.error = Some(format!(
                "the command was stopped ({})",
                end.status.as_deref().unwrap_or_default()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpgym_e2b::process::{DataEvent, EndEvent, ProcessEvent};

    #[test]
    fn events_become_output() {
        let mut output = CommandOutput::default();
        let (mut out, mut err) = (HeadTail::default(), HeadTail::default());
        let messages = [
            ProcessEvent::start(4),
            ProcessEvent::data(DataEvent::output(false, b"hi")),
            ProcessEvent::data(DataEvent::output(true, b"oops")),
            ProcessEvent::keepalive(),
            ProcessEvent::end(EndEvent {
                exit_code: 3,
                exited: true,
                status: Some("exit status 3".into()),
                error: None,
            }),
        ];
        for event in messages {
            apply_message(event.into(), &mut out, &mut err, &mut output);
        }
        assert_eq!((out.text().as_str(), err.text().as_str()), ("hi", "oops"));
        assert_eq!(output.exit_code, Some(3));
        assert_eq!(output.error, None);
        // Connect leaves a zero exit code out; a signal is no exit code.
        let message: ProcessMessage =
            serde_json::from_str(r#"{"event": {"end": {"exited": true}}}"#).unwrap();
        apply_message(message, &mut out, &mut err, &mut output);
        assert_eq!(output.exit_code, Some(0));
        let message: ProcessMessage = serde_json::from_str(
            r#"{"event": {"end": {"exitCode": -1, "exited": true, "status": "signal: 9"}}}"#,
        )
        .unwrap();
        apply_message(message, &mut out, &mut err, &mut output);
        assert_eq!(output.exit_code, None);
        assert_eq!(
            output.error.as_deref(),
            Some("the command was stopped (signal: 9)")
        );
    }
}
