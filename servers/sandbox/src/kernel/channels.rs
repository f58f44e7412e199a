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
//!
//! The iopub task keeps the queue small whatever the kernel prints: outputs of any request
//! but the one being collected (a background thread printing between cells, a cell whose
//! client went away) are dropped on arrival, and a stream message longer than the execution's
//! whole output budget keeps only its head and tail. A huge message is thus received whole,
//! but never queued or kept. Its socket's read buffer would keep the size it grew to, so the
//! kernel reconnects its channels after one ([`Channels::saw_big`]).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jupyter_protocol::JupyterMessageContent;
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
/// A message at least this large leaves its socket's read buffer that large: reconnect.
const BIG_MESSAGE: usize = 4 << 20;

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
    /// The request whose outputs are wanted on iopub; outputs of others are dropped.
    pub(super) current: Current,
    /// Set when a message of at least [`BIG_MESSAGE`] bytes arrived on iopub.
    big: Arc<AtomicBool>,
    /// How these channels were made, to make them again.
    info: ConnectionInfo,
    max_text: usize,
    readers: Vec<JoinHandle<()>>,
}

/// The id of the request whose outputs the iopub task queues (`None`: no outputs wanted).
pub(super) type Current = Arc<Mutex<Option<String>>>;

/// What the iopub task does to messages before queueing them.
struct IopubFilter {
    current: Current,
    big: Arc<AtomicBool>,
    /// Longest stream text queued from one message.
    max_text: usize,
}

impl Channels {
    /// Connects shell (with a peer identity derived from the session), iopub (all topics)
    /// and control.
    pub(super) async fn connect(
        info: &ConnectionInfo,
        session: &str,
        max_text: usize,
    ) -> Result<Channels> {
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
        let current: Current = Arc::new(Mutex::new(None));
        let big = Arc::new(AtomicBool::new(false));
        let filter = IopubFilter {
            current: current.clone(),
            big: big.clone(),
            max_text,
        };
        let readers = vec![
            tokio::spawn(forward("shell", Reader::Dealer(shell_recv), shell_tx, None)),
            tokio::spawn(forward("iopub", Reader::Sub(iopub), iopub_tx, Some(filter))),
            tokio::spawn(forward(
                "control",
                Reader::Dealer(control_recv),
                control_tx,
                None,
            )),
        ];
        Ok(Channels {
            shell,
            shell_rx,
            iopub_rx,
            control,
            control_rx,
            current,
            big,
            info: info.clone(),
            max_text,
            readers,
        })
    }

    /// Whether a message large enough to leave a large read buffer behind arrived.
    pub(super) fn saw_big(&self) -> bool {
        self.big.load(Ordering::Relaxed)
    }

    /// New channels to the same kernel (fresh sockets, fresh buffers), under a new session.
    pub(super) async fn reconnect(&self) -> Result<Channels> {
        let session = uuid::Uuid::new_v4().to_string();
        Channels::connect(&self.info, &session, self.max_text).await
    }

    /// From now on, queue the outputs of request `msg_id` (`None`: of no request).
    pub(super) fn want(&self, msg_id: Option<&str>) {
        *self.current.lock().expect("iopub filter lock") = msg_id.map(str::to_owned);
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
async fn forward(
    name: &'static str,
    mut reader: Reader,
    tx: mpsc::Sender<JupyterMessage>,
    filter: Option<IopubFilter>,
) {
    loop {
        match reader.read().await {
            Ok(mut message) => {
                if let Some(filter) = &filter
                    && !filter.admit(&mut message)
                {
                    continue;
                }
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

impl IopubFilter {
    /// Whether to queue `message`, after cutting an overlong stream text to its head and tail.
    fn admit(&self, message: &mut JupyterMessage) -> bool {
        let bulky = matches!(
            message.content,
            JupyterMessageContent::StreamContent(_)
                | JupyterMessageContent::ExecuteResult(_)
                | JupyterMessageContent::DisplayData(_)
                | JupyterMessageContent::UpdateDisplayData(_)
                | JupyterMessageContent::ErrorOutput(_)
        );
        if !bulky {
            return true;
        }
        if content_size(&message.content) >= BIG_MESSAGE {
            self.big.store(true, Ordering::Relaxed);
        }
        let wanted = self.current.lock().expect("iopub filter lock");
        let ours = match (wanted.as_deref(), &message.parent_header) {
            (Some(id), Some(parent)) => parent.msg_id == id,
            _ => false,
        };
        drop(wanted);
        if !ours {
            return false;
        }
        if let JupyterMessageContent::StreamContent(stream) = &mut message.content
            && stream.text.len() > self.max_text
        {
            stream.text = super::budget::head_and_tail(&stream.text, self.max_text);
        }
        true
    }
}

/// About how many bytes a message's content takes, without copying it.
fn content_size(content: &JupyterMessageContent) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    if let JupyterMessageContent::StreamContent(stream) = content {
        return stream.text.len();
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, content);
    count.0
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
