//! envd's `process.Process` service (port [`ENVD_PORT`](crate::ENVD_PORT)): Connect messages
//! with JSON bodies. `Start` streams [`ProcessMessage`]s in Connect frames (see
//! [`crate::connect`]); `List` and `SendSignal` are unary.
//!
//! Connect's JSON mapping of protobuf leaves zero values out, so a reader takes absent
//! numbers as 0 and absent lists and maps as empty.

use std::collections::BTreeMap;

use base64::Engine;
use serde::{Deserialize, Serialize};

/// The signal that kills a process.
pub const SIGKILL: &str = "SIGNAL_SIGKILL";

/// The command a process runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessConfig {
    /// The program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables added to the sandbox's.
    #[serde(default)]
    pub envs: BTreeMap<String, String>,
    /// Its working directory (the home directory if none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// `process.Process/Start`. `P` is the config's type: the service reads it as raw JSON first,
/// to list it back as it was sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartRequest<P = ProcessConfig> {
    /// What to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<P>,
    /// A name to find the process by later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// One message of the `Start` stream: `{"event": {...}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessMessage {
    /// What happened.
    #[serde(default)]
    pub event: ProcessEvent,
}

impl From<ProcessEvent> for ProcessMessage {
    fn from(event: ProcessEvent) -> Self {
        ProcessMessage { event }
    }
}

/// What happened to a process: one of its fields is set (a protobuf `oneof`; kinds this
/// crate does not know are ignored when read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessEvent {
    /// The process started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartEvent>,
    /// Output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataEvent>,
    /// The process ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<EndEvent>,
    /// Nothing to say yet: sent after a quiet while so connections stay open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keepalive: Option<Keepalive>,
}

impl ProcessEvent {
    /// A start event.
    pub fn start(pid: u32) -> Self {
        ProcessEvent {
            start: Some(StartEvent { pid }),
            ..ProcessEvent::default()
        }
    }

    /// An output event.
    pub fn data(data: DataEvent) -> Self {
        ProcessEvent {
            data: Some(data),
            ..ProcessEvent::default()
        }
    }

    /// An end event.
    pub fn end(end: EndEvent) -> Self {
        ProcessEvent {
            end: Some(end),
            ..ProcessEvent::default()
        }
    }

    /// A keepalive event.
    pub fn keepalive() -> Self {
        ProcessEvent {
            keepalive: Some(Keepalive {}),
            ..ProcessEvent::default()
        }
    }
}

/// The process started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartEvent {
    /// Its id, for `List` and `SendSignal`.
    #[serde(default)]
    pub pid: u32,
}

/// A piece of output, base64-encoded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataEvent {
    /// Standard output bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// Standard error bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}

impl DataEvent {
    /// Output of standard output (`stderr: false`) or standard error.
    pub fn output(stderr: bool, bytes: &[u8]) -> Self {
        let encoded = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
        if stderr {
            DataEvent {
                stderr: encoded,
                ..DataEvent::default()
            }
        } else {
            DataEvent {
                stdout: encoded,
                ..DataEvent::default()
            }
        }
    }

    /// The standard output bytes, if any (`None` also when they are not valid base64).
    pub fn stdout_bytes(&self) -> Option<Vec<u8>> {
        decode(self.stdout.as_deref())
    }

    /// The standard error bytes, if any (`None` also when they are not valid base64).
    pub fn stderr_bytes(&self) -> Option<Vec<u8>> {
        decode(self.stderr.as_deref())
    }
}

fn decode(text: Option<&str>) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(text?).ok()
}

/// The process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndEvent {
    /// Its exit code (0 when absent, as Connect leaves zeros out).
    #[serde(default)]
    pub exit_code: i32,
    /// Whether it exited by itself (rather than by a signal).
    #[serde(default = "yes")]
    pub exited: bool,
    /// How it ended: `exit status N`, or `signal: ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// An error of envd's, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn yes() -> bool {
    true
}

impl EndEvent {
    /// Whether a signal ended the process (its status says `signal...`).
    pub fn signalled(&self) -> bool {
        self.status
            .as_deref()
            .is_some_and(|status| status.starts_with("signal"))
    }
}

/// Sent after a quiet while; empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keepalive {}

/// The answer to `process.Process/List`. `C` is the config's type: the service sends back
/// the JSON each process was started with; a client that needs only pids reads it as
/// [`serde::de::IgnoredAny`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound(deserialize = "C: Deserialize<'de> + Default"))]
pub struct ListResponse<C = ProcessConfig> {
    /// The processes still running.
    #[serde(default = "Vec::new")]
    pub processes: Vec<ProcessInfo<C>>,
}

/// One running process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo<C = ProcessConfig> {
    /// Its id.
    #[serde(default)]
    pub pid: u32,
    /// What it was started with.
    #[serde(default)]
    pub config: C,
    /// Its tag, if it was given one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// `process.Process/SendSignal`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignalRequest {
    /// Which process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessSelector>,
    /// Which signal: its enum name (`SIGNAL_SIGKILL`, `SIGNAL_SIGTERM`) or, as protobuf's
    /// JSON mapping also allows, its number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<serde_json::Value>,
}

/// A process, by pid or by tag.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSelector {
    /// Its pid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Its tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn a_start_request_sends_the_whole_config() {
        let request = StartRequest {
            process: Some(ProcessConfig {
                cmd: Some("/bin/bash".into()),
                args: vec!["-c".into(), "ls".into()],
                envs: BTreeMap::new(),
                cwd: Some("/home/user".into()),
            }),
            tag: None,
        };
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"process": {"cmd": "/bin/bash", "args": ["-c", "ls"], "envs": {}, "cwd": "/home/user"}})
        );
        let raw: StartRequest<Value> =
            serde_json::from_str(r#"{"process": {"cmd": "x", "odd": 1}, "tag": "t"}"#).unwrap();
        assert_eq!(raw.process.unwrap()["odd"], 1);
        let config: ProcessConfig = serde_json::from_str(r#"{"cmd": "x"}"#).unwrap();
        assert!(config.args.is_empty() && config.cwd.is_none());
    }

    #[test]
    fn events_have_one_field_each() {
        let message =
            |event: ProcessEvent| serde_json::to_value(ProcessMessage::from(event)).unwrap();
        assert_eq!(
            message(ProcessEvent::start(7)),
            json!({"event": {"start": {"pid": 7}}})
        );
        assert_eq!(
            message(ProcessEvent::data(DataEvent::output(false, b"hi"))),
            json!({"event": {"data": {"stdout": "aGk="}}})
        );
        assert_eq!(
            message(ProcessEvent::keepalive()),
            json!({"event": {"keepalive": {}}})
        );
        let end = EndEvent {
            exit_code: 3,
            exited: true,
            status: Some("exit status 3".into()),
            error: None,
        };
        assert_eq!(
            message(ProcessEvent::end(end)),
            json!({"event": {"end": {"exitCode": 3, "exited": true, "status": "exit status 3"}}})
        );
    }

    #[test]
    fn events_read_leniently() {
        let read = |text: &str| serde_json::from_str::<ProcessMessage>(text).unwrap().event;
        // Connect leaves a zero exit code out; unknown event kinds and fields are ignored.
        let end = read(r#"{"event": {"end": {"exited": true, "status": "exit status 0"}}}"#)
            .end
            .unwrap();
        assert_eq!((end.exit_code, end.signalled()), (0, false));
        let end = read(r#"{"event": {"end": {"status": "signal: killed"}}}"#)
            .end
            .unwrap();
        assert!(end.exited && end.signalled());
        assert_eq!(read(r#"{"event": {"pty": {}}}"#), ProcessEvent::default());
        assert_eq!(read("{}"), ProcessEvent::default());
        let data = read(r#"{"event": {"data": {"stderr": "aGk=", "stdout": "%%"}}}"#)
            .data
            .unwrap();
        assert_eq!(data.stderr_bytes().unwrap(), b"hi");
        assert_eq!(data.stdout_bytes(), None);
    }

    #[test]
    fn list_and_signal_bodies() {
        let listed: ListResponse<serde::de::IgnoredAny> = serde_json::from_str(
            r#"{"processes": [{"pid": 4, "config": {"cmd": "x"}, "tag": "t"}, {"pid": 5, "config": {}}]}"#,
        )
        .unwrap();
        let pids: Vec<u32> = listed.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [4, 5]);
        let empty: ListResponse<serde::de::IgnoredAny> = serde_json::from_str("{}").unwrap();
        assert!(empty.processes.is_empty());
        let served = ListResponse {
            processes: vec![ProcessInfo {
                pid: 4,
                config: json!({"cmd": "x"}),
                tag: None,
            }],
        };
        assert_eq!(
            serde_json::to_value(&served).unwrap(),
            json!({"processes": [{"pid": 4, "config": {"cmd": "x"}}]})
        );
        let signal = SignalRequest {
            process: Some(ProcessSelector {
                pid: Some(9),
                tag: None,
            }),
            signal: Some(SIGKILL.into()),
        };
        let numbered: SignalRequest =
            serde_json::from_str(r#"{"process": {"tag": "t"}, "signal": 9}"#).unwrap();
        assert_eq!(numbered.signal, Some(9.into()));
        assert_eq!(
            serde_json::to_string(&signal).unwrap(),
            r#"{"process":{"pid":9},"signal":"SIGNAL_SIGKILL"}"#
        );
    }
}
