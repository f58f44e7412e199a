//! The ZMQ side of a kernel: its connection file and the shell, iopub and control channels.
//!
//! Transport is `ipc`: the jail has no network namespace in common with us (not even
//! loopback), but it shares the bound [`RUN`](crate::jail::RUN) directory, and a Unix socket
//! file there is reachable from both sides. The kernel sees `/run/sandbox/kernel-<n>`, we see
//! the same files under the sandbox's host `run` directory; only the path prefix differs
//! between its connection file and ours.
//!
//! Each receiving socket gets a task that forwards messages into an mpsc channel, because a
//! ZMQ read dropped half-way (as in `select!` or `timeout`) may lose a message, while
//! `mpsc::Receiver::recv` is cancel-safe.

use std::path::Path;
use std::time::Duration;

use jupyter_protocol::connection_info::{ConnectionInfo, Transport};
use jupyter_zmq_client::{
    ClientControlConnection, ClientIoPubConnection, DealerRecvConnection, DealerSendConnection,
    JupyterMessage, RuntimeError,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};

/// Suffixes of the five sockets (the "ports" of an ipc connection file).
const SHELL: u16 = 1;
const IOPUB: u16 = 2;
const STDIN: u16 = 3;
const CONTROL: u16 = 4;
const HB: u16 = 5;

/// Messages queued per channel before the reader task waits for us.
const QUEUE: usize = 1024;

/// A connection description with socket files under `prefix`.
pub(super) fn connection_info(prefix: &Path, key: &str) -> ConnectionInfo {
    ConnectionInfo {
        ip: prefix.to_string_lossy().into_owned(),
        transport: Transport::IPC,
        shell_port: SHELL,
        iopub_port: IOPUB,
        stdin_port: STDIN,
        control_port: CONTROL,
        hb_port: HB,
        key: key.to_owned(),
        signature_scheme: "hmac-sha256".to_owned(),
        kernel_name: Some("python3".to_owned()),
    }
}

/// The socket files the kernel must have bound before we connect (zeromq's ipc connect does
/// not retry a missing path the way libzmq does).
pub(super) fn socket_files(prefix: &Path) -> [std::path::PathBuf; 3] {
    [SHELL, IOPUB, CONTROL].map(|n| {
        let mut name = prefix.as_os_str().to_owned();
        name.push(format!("-{n}"));
        name.into()
    })
}

/// Live channels to one kernel.
pub(super) struct Channels {
    pub(super) shell: DealerSendConnection,
    pub(super) shell_rx: mpsc::Receiver<JupyterMessage>,
    pub(super) iopub_rx: mpsc::Receiver<JupyterMessage>,
    pub(super) control: DealerSendConnection,
    pub(super) control_rx: mpsc::Receiver<JupyterMessage>,
    readers: Vec<JoinHandle<()>>,
}

impl Channels {
    /// Connects shell (with a peer identity derived from the session), iopub (all topics)
    /// and control.
    pub(super) async fn connect(info: &ConnectionInfo, session: &str) -> Result<Channels> {
        let identity = jupyter_zmq_client::peer_identity_for_session(session)?;
        let shell = jupyter_zmq_client::create_client_shell_connection_with_identity(
            info, session, identity,
        )
        .await?;
        let iopub = jupyter_zmq_client::create_client_iopub_connection(info, "", session).await?;
        let control: ClientControlConnection =
            jupyter_zmq_client::create_client_control_connection(info, session).await?;

        let (shell, shell_recv) = shell.split();
        let (control, control_recv) = control.split();
        let (shell_tx, shell_rx) = mpsc::channel(QUEUE);
        let (iopub_tx, iopub_rx) = mpsc::channel(QUEUE);
        let (control_tx, control_rx) = mpsc::channel(QUEUE);
        let readers = vec![
            tokio::spawn(forward("shell", Reader::Dealer(shell_recv), shell_tx)),
            tokio::spawn(forward("iopub", Reader::Sub(iopub), iopub_tx)),
            tokio::spawn(forward("control", Reader::Dealer(control_recv), control_tx)),
        ];
        Ok(Channels {
            shell,
            shell_rx,
            iopub_rx,
            control,
            control_rx,
            readers,
        })
    }

    /// Discards whatever arrived on iopub for `quiet` without anything new (late status
    /// messages of earlier requests), giving up after `max`.
    pub(super) async fn drain_iopub(&mut self, quiet: Duration, max: Duration) {
        let deadline = tokio::time::Instant::now() + max;
        while tokio::time::Instant::now() < deadline {
            match tokio::time::timeout(quiet, self.iopub_rx.recv()).await {
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => return,
            }
        }
    }
}

impl Drop for Channels {
    fn drop(&mut self) {
        for reader in &self.readers {
            reader.abort();
        }
    }
}

/// The receiving half of a channel.
enum Reader {
    Dealer(DealerRecvConnection),
    Sub(ClientIoPubConnection),
}

impl Reader {
    async fn read(&mut self) -> jupyter_zmq_client::Result<JupyterMessage> {
        match self {
            Reader::Dealer(connection) => connection.read().await,
            Reader::Sub(connection) => connection.read().await,
        }
    }
}

/// Reads messages forever and forwards them; stops when the socket fails or nobody listens.
/// Messages that fail to parse or verify are skipped: one bad message must not cut the channel.
async fn forward(name: &'static str, mut reader: Reader, tx: mpsc::Sender<JupyterMessage>) {
    loop {
        match reader.read().await {
            Ok(message) => {
                if tx.send(message).await.is_err() {
                    return;
                }
            }
            Err(RuntimeError::ZmqError(error)) => {
                tracing::debug!(channel = name, %error, "kernel channel closed");
                return;
            }
            Err(error) => {
                tracing::debug!(channel = name, %error, "skipping unreadable kernel message")
            }
        }
    }
}

/// Whether `message` answers the request with id `msg_id`.
pub(super) fn is_reply_to(message: &JupyterMessage, msg_id: &str) -> bool {
    message
        .parent_header
        .as_ref()
        .is_some_and(|parent| parent.msg_id == msg_id)
}

/// Error for a closed channel, by name.
pub(super) fn closed(name: &'static str) -> Error {
    Error::ChannelClosed(name)
}
