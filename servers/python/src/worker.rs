//! One worker process (`python -m mcpgym._worker SPEC`) and the task that speaks to it.
//!
//! The worker answers one JSON line per request, in the order they were sent, so the oldest
//! unanswered request is the one it is running. That is what lets a failure be pinned on one
//! episode: when the worker hangs past the step timeout or exits, the request at the head of
//! the queue caused it ([`Failure::Hung`], [`Failure::Exited`]); every request behind it never
//! ran ([`Failure::Lost`]) and its episode can be rebuilt on a new worker.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// The longest answer line a worker may write (a screenshot or two, base64): a longer one is
/// the environment misbehaving, and ends the episode that asked.
const MAX_ANSWER_BYTES: u64 = 64 << 20;

/// How a worker is started.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The Python interpreter (it must import `mcpgym`).
    pub python: PathBuf,
    /// `module:Class` or `path/to/file.py:Class`.
    pub spec: String,
    /// Longest one request may run before the worker is stopped.
    pub step_timeout: Duration,
    /// Longest a new worker may take to import the class and say it is ready.
    pub start_timeout: Duration,
}

impl Launch {
    /// The worker's command line, with `extra` arguments after the spec.
    pub(crate) fn command(&self, extra: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(&self.python);
        command
            .args(["-m", "mcpgym._worker", &self.spec])
            .args(extra)
            // Unbuffered stderr, so a traceback reaches the log before a crash.
            .env("PYTHONUNBUFFERED", "1");
        command
    }
}

/// Why a request got no answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Failure {
    /// It was running when the step timeout passed; the worker was stopped.
    #[error("the step ran longer than {0:?}, so the environment's worker was stopped")]
    Hung(Duration),
    /// It was running when the worker exited.
    #[error("the environment's worker exited during this step ({0})")]
    Exited(String),
    /// The worker died while it waited behind another episode's request: it never ran.
    #[error("the environment's worker stopped before this request ran")]
    Lost,
    /// The worker broke the protocol (a line that is not an answer, or far too long).
    #[error("the environment's worker answered out of turn: {0}")]
    Broken(String),
}

/// Why a worker could not start.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The interpreter could not be run.
    #[error("cannot run {python}: {error}")]
    Run {
        /// The interpreter.
        python: String,
        /// Why.
        error: std::io::Error,
    },
    /// It ran but did not say it was ready.
    #[error("the worker for {spec} did not start ({why}); its error is in the server's log")]
    NotReady {
        /// The class.
        spec: String,
        /// What was seen instead.
        why: String,
    },
}

struct Request {
    body: Value,
    reply: oneshot::Sender<Result<Value, Failure>>,
}

/// A handle on a running worker: cheap to clone; the process stops when every handle is gone.
#[derive(Clone)]
pub(crate) struct Worker {
    requests: mpsc::UnboundedSender<Request>,
}

impl Worker {
    /// Starts a worker and waits until it has imported the class.
    pub(crate) async fn spawn(launch: &Launch) -> Result<Self, SpawnError> {
        let mut command = Command::from(launch.command(&[]));
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            // Its own process group, so stopping it stops whatever it started too.
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|error| SpawnError::Run {
            python: launch.python.display().to_string(),
            error,
        })?;
        let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            unreachable!("both pipes were asked for");
        };
        let mut stdout = BufReader::new(stdout);
        let not_ready = |why: String| SpawnError::NotReady {
            spec: launch.spec.clone(),
            why,
        };
        let mut first = Vec::new();
        match tokio::time::timeout(launch.start_timeout, read_line(&mut stdout, &mut first)).await {
            Err(_) => {
                stop(&mut child);
                return Err(not_ready(format!(
                    "not ready after {:?}",
                    launch.start_timeout
                )));
            }
            Ok(Ok(true)) if first.starts_with(br#"{"ready": true}"#) => {}
            Ok(_) => {
                let status = child.wait().await.map_or_else(|e| e.to_string(), describe);
                return Err(not_ready(status));
            }
        }
        let (requests, queue) = mpsc::unbounded_channel();
        tokio::spawn(supervise(child, stdin, stdout, queue, launch.step_timeout));
        Ok(Self { requests })
    }

    /// Whether the worker has stopped (its episodes must move to another).
    pub(crate) fn is_stopped(&self) -> bool {
        self.requests.is_closed()
    }

    /// Sends one request and waits for its answer.
    pub(crate) async fn ask(&self, body: Value) -> Result<Value, Failure> {
        let (reply, answer) = oneshot::channel();
        if self.requests.send(Request { body, reply }).is_err() {
            return Err(Failure::Lost);
        }
        answer.await.unwrap_or(Err(Failure::Lost))
    }
}

/// The worker's exit status in words.
fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

/// Kills the worker's whole process group.
fn stop(child: &mut Child) {
    if let Some(pid) = child.id() {
        // SAFETY: signals the group the worker leads (it was started in a group of its own).
        unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGKILL) };
    }
    let _ = child.start_kill();
}

/// Reads one line into `line` (cleared first), refusing lines over [`MAX_ANSWER_BYTES`].
/// `Ok(false)` at end of stream.
async fn read_line(
    stdout: &mut BufReader<ChildStdout>,
    line: &mut Vec<u8>,
) -> std::io::Result<bool> {
    line.clear();
    let read = (&mut *stdout)
        .take(MAX_ANSWER_BYTES + 1)
        .read_until(b'\n', line)
        .await?;
    if read as u64 > MAX_ANSWER_BYTES {
        return Err(std::io::Error::other(format!(
            "an answer longer than {} MiB",
            MAX_ANSWER_BYTES >> 20
        )));
    }
    Ok(read > 0)
}

/// Reads answers on a task of their own (so the supervisor's select never cancels a
/// half-read line).
async fn read_answers(
    mut stdout: BufReader<ChildStdout>,
    answers: mpsc::Sender<Result<Vec<u8>, String>>,
) {
    loop {
        let mut line = Vec::new();
        let next = match read_line(&mut stdout, &mut line).await {
            Ok(true) => Ok(line),
            Ok(false) => return,
            Err(error) => Err(error.to_string()),
        };
        let failed = next.is_err();
        if answers.send(next).await.is_err() || failed {
            return;
        }
    }
}

/// Writes requests on a task of their own: a worker that stops reading fills its pipe, and
/// the supervisor must still see the clock.
async fn write_requests(mut stdin: ChildStdin, mut lines: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

/// Runs the worker: sends requests in order, matches answers to them, and stops the worker
/// when one runs past the timeout or the worker exits.
async fn supervise(
    mut child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    mut queue: mpsc::UnboundedReceiver<Request>,
    timeout: Duration,
) {
    let (to_worker, lines) = mpsc::unbounded_channel();
    tokio::spawn(write_requests(stdin, lines));
    let (answers_in, mut answers) = mpsc::channel(16);
    tokio::spawn(read_answers(stdout, answers_in));
    let mut pending: VecDeque<(u64, oneshot::Sender<Result<Value, Failure>>)> = VecDeque::new();
    let mut next_id = 0_u64;
    // When the request at the head of the queue started to run: when the one before it was
    // answered, or when it was sent to an idle worker.
    let mut head_since = Instant::now();
    let (head, rest) = loop {
        tokio::select! {
            request = queue.recv() => {
                let Some(Request { mut body, reply }) = request else {
                    // Every handle is gone: nobody can ask again.
                    stop(&mut child);
                    return;
                };
                next_id += 1;
                body["id"] = next_id.into();
                let mut line = serde_json::to_vec(&body).unwrap_or_default();
                line.push(b'\n');
                if to_worker.send(line).is_err() {
                    let _ = reply.send(Err(Failure::Lost));
                    continue;
                }
                if pending.is_empty() {
                    head_since = Instant::now();
                }
                pending.push_back((next_id, reply));
            }
            answer = answers.recv() => {
                let line = match answer {
                    Some(Ok(line)) => line,
                    Some(Err(why)) => break (Failure::Broken(why), Failure::Lost),
                    None => {
                        let status = match child.wait().await {
                            Ok(status) => describe(status),
                            Err(error) => error.to_string(),
                        };
                        break (Failure::Exited(status), Failure::Lost);
                    }
                };
                let parsed: Option<Value> = serde_json::from_slice(&line).ok();
                let id = parsed.as_ref().and_then(|answer| answer["id"].as_u64());
                match (parsed, pending.front()) {
                    (Some(answer), Some((expected, _))) if id == Some(*expected) => {
                        if let Some((_, reply)) = pending.pop_front() {
                            let _ = reply.send(Ok(answer));
                        }
                        head_since = Instant::now();
                    }
                    _ => {
                        let text = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
                        break (Failure::Broken(text), Failure::Lost);
                    }
                }
            }
            () = tokio::time::sleep_until(head_since + timeout), if !pending.is_empty() => {
                break (Failure::Hung(timeout), Failure::Lost);
            }
        }
    };
    stop(&mut child);
    let _ = child.wait().await;
    // Close the queue first: a request sent from now on fails at once instead of waiting.
    queue.close();
    if let Some((_, reply)) = pending.pop_front() {
        let _ = reply.send(Err(head));
    }
    for (_, reply) in pending {
        let _ = reply.send(Err(rest.clone()));
    }
    while let Ok(Request { reply, .. }) = queue.try_recv() {
        let _ = reply.send(Err(Failure::Lost));
    }
}
