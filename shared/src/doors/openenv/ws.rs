//! OpenEnv's WebSocket, `/<env>/ws`: one session per connection (or the session named by
//! `?session_id=`), one episode at a time.
//!
//! Client → server text frames: `{"type": "reset", "data": {…}}`, `{"type": "step", "data":
//! <action>}`, `{"type": "state"}`, `{"type": "mcp", "data": <JSON-RPC>}`, `{"type":
//! "close"}`. Each but `close` gets exactly one reply, in order: `{"type": "observation",
//! "data": <envelope>}`, `{"type": "state", "data": …}`, `{"type": "mcp", "data": …}` or
//! `{"type": "error", "data": {"message", "code"}}`. `close`, or the connection ending,
//! closes the episode of the connection's own session; a named session's episode outlives the
//! connection (attach again with `?session_id=` and go on), until `openenv/session/close` or
//! the idle TTL. A WebSocket attaching to a named session takes it over from one attached
//! before (closed with code 1008 and a reason), which may be a connection that dropped
//! without the server seeing it go.
//!
//! Messages run one at a time. The socket is read meanwhile, so pings are answered during a
//! long step; a few messages sent ahead wait their turn.

use std::collections::VecDeque;
use std::sync::Arc;

use axum::extract::ws::{CloseFrame, Message, WebSocket, close_code};
use serde_json::{Value, json};

use super::rpc::{self, Channel};
use super::session::{Session, Sessions};
use super::wire::{Action, DoorError, ResetParams};
use crate::env::{BoxFuture, Environment};
use crate::http::MCP_BODY_LIMIT;
use crate::hub::Hub;

/// The largest message answered: MCP's request limit (a long cell). A larger one gets an
/// error reply and the connection goes on.
pub const MESSAGE_LIMIT: usize = MCP_BODY_LIMIT;
/// The largest message read at all; a larger one ends the connection (close code 1009).
pub const FRAME_LIMIT: usize = 4 * MESSAGE_LIMIT;
/// Messages read ahead of the one running; past this, reading pauses.
const READ_AHEAD: usize = 8;
/// How long a connection ended by a read error stays open for its close frame to arrive.
const CLOSE_LINGER: std::time::Duration = std::time::Duration::from_millis(500);

fn error(message: impl Into<String>, code: &str) -> Value {
    json!({ "type": "error", "data": { "message": message.into(), "code": code } })
}

fn door_error(hub: &Hub, failure: &DoorError) -> Value {
    let mut reply = error(failure.to_string(), failure.ws_code());
    if failure.ws_code() == "CAPACITY_REACHED" {
        reply["data"]["active_sessions"] = json!(hub.live_episodes());
        reply["data"]["max_sessions"] = json!(hub.settings().max_episodes);
    }
    reply
}

/// What to do with one message.
enum Next {
    /// Reply at once.
    Reply(Value),
    /// Reply with what this yields.
    Run(BoxFuture<'static, Value>),
    /// Close the episode and the connection.
    Close,
}

/// One connection's loop.
pub async fn serve(
    mut socket: WebSocket,
    hub: Arc<Hub>,
    env: Arc<dyn Environment>,
    sessions: Arc<Sessions>,
    session_id: Option<String>,
) {
    let (session, attachment) = match session_id {
        None => (
            Session::new(env.clone(), hub.settings().replica.as_ref()),
            None,
        ),
        Some(id) => match sessions.get(&id) {
            Some(session) if session.env().name() != env.name() => {
                let message = format!(
                    "session {id} is a {} session; connect to /{}/ws",
                    session.env().name(),
                    session.env().name()
                );
                refuse(socket, error(message, "SESSION_ERROR")).await;
                return;
            }
            Some(session) => {
                let attachment = session.attach();
                (session, Some(attachment))
            }
            None => {
                let message = format!(
                    "Unknown session_id: {id}; create one with openenv/session/create or connect without session_id"
                );
                refuse(socket, error(message, "SESSION_ERROR")).await;
                return;
            }
        },
    };
    let (number, mut taken_over) = match attachment {
        Some((number, taken_over)) => (Some(number), Some(taken_over)),
        None => (None, None),
    };
    let unfinished = run(&mut socket, &hub, &env, &session, taken_over.as_mut()).await;
    if let Some(number) = number
        && !session.close_pending()
    {
        // A named session outlives its WebSocket, so that a client whose connection dropped
        // attaches again and goes on (a keyed step it resends gets the answer it missed): the
        // operation under way runs to its end, and the episode stays the session's until
        // `openenv/session/close` or the idle TTL.
        if let Some(unfinished) = unfinished {
            unfinished.await;
        }
        if session.detach(number) {
            session.end_episode(&hub).await;
            sessions.forget(session.id());
        }
    } else {
        // The connection's own session is over: so is its episode (and a session whose close
        // was pending). Closing the episode stops a step running on it; a reset under way is
        // let finish, so the episode it starts is closed too rather than left to the reaper.
        session.end_episode(&hub).await;
        if let Some(unfinished) = unfinished {
            unfinished.await;
            session.end_episode(&hub).await;
        }
        if let Some(number) = number
            && session.detach(number)
        {
            sessions.forget(session.id());
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}

/// Sends one error and closes.
async fn refuse(mut socket: WebSocket, reply: Value) {
    let _ = socket.send(Message::Text(reply.to_string().into())).await;
    let _ = socket.send(Message::Close(None)).await;
}

/// Serves messages until the connection ends; answers the operation still running then.
async fn run(
    socket: &mut WebSocket,
    hub: &Arc<Hub>,
    env: &Arc<dyn Environment>,
    session: &Arc<Session>,
    mut taken_over: Option<&mut tokio::sync::watch::Receiver<u64>>,
) -> Option<BoxFuture<'static, Value>> {
    let mut queue: VecDeque<Message> = VecDeque::new();
    let mut running: Option<BoxFuture<'static, Value>> = None;
    // A socket that says nothing for the hub's idle TTL is closed, as its episode would be.
    let idle_ttl = hub.settings().idle_ttl;
    loop {
        if running.is_none()
            && let Some(message) = queue.pop_front()
        {
            match begin(message, hub, env, session) {
                Next::Reply(reply) => {
                    if send(socket, &reply).await.is_err() {
                        return None;
                    }
                }
                Next::Run(future) => running = Some(future),
                Next::Close => return None,
            }
            continue;
        }
        tokio::select! {
            incoming = socket.recv(), if queue.len() < READ_AHEAD => match incoming {
                Some(Ok(Message::Close(_))) | None => return running,
                Some(Err(error)) => {
                    let _ = socket.send(Message::Close(Some(close_frame(&error)))).await;
                    // The client may still be sending what was refused; closing at once would
                    // reset the connection and lose the close frame that says why.
                    tokio::time::sleep(CLOSE_LINGER).await;
                    return running;
                }
                // Pings are answered by the socket itself.
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(message)) => queue.push_back(message),
            },
            reply = async {
                match running.as_mut() {
                    Some(future) => future.await,
                    None => std::future::pending().await,
                }
            }, if running.is_some() => {
                running = None;
                if send(socket, &reply).await.is_err() {
                    return None;
                }
            }
            // A newer WebSocket attached to this session: it goes on from here.
            Ok(()) = async {
                match taken_over.as_mut() {
                    Some(receiver) => receiver.changed().await,
                    None => std::future::pending().await,
                }
            } => {
                let frame = CloseFrame {
                    code: close_code::POLICY,
                    reason: format!("another WebSocket attached to session {}", session.id()).into(),
                };
                let _ = socket.send(Message::Close(Some(frame))).await;
                return running;
            }
            () = tokio::time::sleep(idle_ttl), if running.is_none() && queue.is_empty() => {
                let frame = CloseFrame {
                    code: close_code::AWAY,
                    reason: format!("idle for {} s (--idle-ttl)", idle_ttl.as_secs()).into(),
                };
                let _ = socket.send(Message::Close(Some(frame))).await;
                return None;
            }
        }
    }
}

/// Why the connection ends after a read error: a message over the limit (1009), or a
/// protocol violation (1002).
fn close_frame(error: &axum::Error) -> CloseFrame {
    let text = error.to_string();
    if text.contains("Space limit exceeded") || text.contains("Message too long") {
        CloseFrame {
            code: close_code::SIZE,
            reason: format!("a message may hold at most {FRAME_LIMIT} bytes").into(),
        }
    } else {
        CloseFrame {
            code: close_code::PROTOCOL,
            reason: "WebSocket protocol error".into(),
        }
    }
}

async fn send(socket: &mut WebSocket, reply: &Value) -> Result<(), axum::Error> {
    socket.send(Message::Text(reply.to_string().into())).await
}

/// Reads one message and says what to do with it.
fn begin(
    message: Message,
    hub: &Arc<Hub>,
    env: &Arc<dyn Environment>,
    session: &Arc<Session>,
) -> Next {
    let size = match &message {
        Message::Text(text) => text.len(),
        Message::Binary(bytes) => bytes.len(),
        _ => 0,
    };
    if size > MESSAGE_LIMIT {
        return Next::Reply(error(
            format!("the message holds {size} bytes; a message may hold at most {MESSAGE_LIMIT}"),
            "VALIDATION_ERROR",
        ));
    }
    let text = match message {
        Message::Text(text) => text,
        _ => {
            return Next::Reply(error(
                "Invalid JSON: send each message as a text frame holding JSON",
                "INVALID_JSON",
            ));
        }
    };
    let value: Value = match serde_json::from_str(text.as_str()) {
        Ok(value) => value,
        Err(e) => return Next::Reply(error(format!("Invalid JSON: {e}"), "INVALID_JSON")),
    };
    let Value::Object(mut message) = value else {
        return Next::Reply(error(
            "a message is a JSON object such as {\"type\": \"reset\", \"data\": {}}",
            "VALIDATION_ERROR",
        ));
    };
    let kind = match message.remove("type") {
        Some(Value::String(kind)) => kind,
        _ => String::new(),
    };
    let data = message.remove("data");
    if let Some(extra) = message.keys().next() {
        return Next::Reply(error(
            format!(
                "Invalid message: unexpected key {extra:?}; a message has only \"type\" and \"data\""
            ),
            "VALIDATION_ERROR",
        ));
    }
    let (hub, session) = (hub.clone(), session.clone());
    match kind.as_str() {
        "reset" => {
            let params = match data {
                None | Some(Value::Null) => Ok(ResetParams::default()),
                Some(data @ Value::Object(_)) => ResetParams::parse(data),
                Some(_) => Err(DoorError::Invalid(
                    "a reset's data must be an object such as {\"seed\": 7}".into(),
                )),
            };
            match params {
                Err(e) => Next::Reply(door_error(&hub, &e)),
                Ok(params) => Next::Run(Box::pin(async move {
                    match session.reset(&hub, params).await {
                        Ok(envelope) => json!({ "type": "observation", "data": envelope }),
                        Err(e) => door_error(&hub, &e),
                    }
                })),
            }
        }
        "step" => {
            let Some(data @ Value::Object(_)) = data else {
                return Next::Reply(error(
                    "a step's data must be an action object such as {\"type\": \"call_tool\", \"tool_name\": …, \"arguments\": {…}}",
                    "VALIDATION_ERROR",
                ));
            };
            match Action::parse(data, env.as_ref()) {
                Err(e) => Next::Reply(door_error(&hub, &e)),
                Ok(action) => Next::Run(Box::pin(async move {
                    match session.step(&hub, action).await {
                        Ok(envelope) => json!({ "type": "observation", "data": envelope }),
                        Err(e) => door_error(&hub, &e),
                    }
                })),
            }
        }
        "state" | "close" if data.is_some() => Next::Reply(error(
            format!("Invalid message: a {kind} message has no data"),
            "VALIDATION_ERROR",
        )),
        "state" => Next::Reply(match session.state(&hub) {
            Ok(state) => json!({ "type": "state", "data": state }),
            Err(e) => door_error(&hub, &e),
        }),
        "close" => Next::Close,
        "mcp" => {
            let Some(request) = data else {
                return Next::Reply(error(
                    "an mcp message's data is a JSON-RPC request",
                    "VALIDATION_ERROR",
                ));
            };
            let env = env.clone();
            Next::Run(Box::pin(async move {
                let reply =
                    rpc::handle(&hub, &env, request, Some(&session), Channel::WebSocket).await;
                json!({ "type": "mcp", "data": reply })
            }))
        }
        other => Next::Reply(error(
            format!("Unknown message type: {other:?}; send reset, step, state, mcp or close"),
            "UNKNOWN_TYPE",
        )),
    }
}
