//! Several replicas behind nginx, configured from the shipped files (`manifests/nginx/`):
//! episodes spread over the replicas, every request reaches the replica holding its episode
//! (control plane, both MCP eras, OpenEnv, ORS), a replica that dies answers through the proxy
//! with a sentence naming the episode, and one Jupyter server spreads its sandboxes over two
//! sandbox hosts and aborts the episodes of the one that dies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::*;

const REPLICAS: usize = 3;
/// Episodes created and played: 60 in the fast tier, 300 in the full tier.
fn episode_count() -> usize {
    by_tier(60, 300)
}
/// Tool calls per episode: guesses the game refuses (each a turn), so no episode ends.
const CALLS_PER_EPISODE: usize = 10;
/// Episodes played at once.
const CONCURRENCY: usize = 16;

/// nginx in front of the replicas, from `manifests/nginx/`: its routing and location files as
/// shipped, and its deployment file with the replicas' and its own addresses put in.
struct Proxy {
    child: Child,
    base: String,
    dir: PathBuf,
}

fn manifests() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../manifests/nginx")
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Whether nginx answers on `port`: another server may have taken a port between the test
/// picking it and nginx binding it.
fn nginx_answers(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.write_all(b"GET /healthz HTTP/1.0\r\n\r\n");
    let mut head = String::new();
    let _ = stream.read_to_string(&mut head);
    head.to_ascii_lowercase().contains("\nserver: nginx")
}

impl Proxy {
    fn start(replicas: &[std::net::SocketAddr]) -> Self {
        for _ in 0..5 {
            if let Some(proxy) = Self::try_start(replicas, free_port()) {
                return proxy;
            }
        }
        panic!("nginx did not start on any of five ports");
    }

    fn try_start(replicas: &[std::net::SocketAddr], port: u16) -> Option<Self> {
        let dir = std::env::temp_dir().join(format!("mcpgym-nginx-{}-{port}", std::process::id()));
        std::fs::create_dir_all(dir.join("mcpgym")).unwrap();
        for file in ["routing.conf", "locations.conf"] {
            std::fs::copy(manifests().join(file), dir.join("mcpgym").join(file)).unwrap();
        }
        let mut deployment = std::fs::read_to_string(manifests().join("mcpgym.conf")).unwrap();
        for (index, addr) in replicas.iter().enumerate() {
            let shipped = format!("10.0.0.{}:8080", index + 1);
            assert!(deployment.contains(&shipped), "mcpgym.conf names {shipped}");
            deployment = deployment.replace(&shipped, &addr.to_string());
        }
        assert!(deployment.contains("listen 8000;"));
        let deployment = deployment.replace("listen 8000;", &format!("listen 127.0.0.1:{port};"));
        std::fs::write(dir.join("mcpgym.conf"), deployment).unwrap();
        // The test's own main file: what a distribution's nginx.conf holds around conf.d/.
        let d = dir.display();
        std::fs::write(
            dir.join("nginx.conf"),
            format!(
                "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
                 events {{ worker_connections 4096; }}\n\
                 http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
                 \x20 include mcpgym.conf;\n}}\n"
            ),
        )
        .unwrap();
        let child = Command::new("nginx")
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx is installed (.ci/setup installs it)");
        let mut proxy = Proxy {
            child,
            base: format!("http://127.0.0.1:{port}"),
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !nginx_answers(port) {
            let log = std::fs::read_to_string(proxy.dir.join("error.log")).unwrap_or_default();
            if matches!(proxy.child.try_wait(), Ok(Some(_))) {
                // Most likely the port was taken: the caller tries another.
                eprintln!("nginx exited: {log}");
                return None;
            }
            assert!(Instant::now() < deadline, "nginx did not answer: {log}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(proxy)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn control(&self) -> ControlClient {
        ControlClient::new(&self.base, None).unwrap()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The replica an episode id or session id names.
fn owner(id: &str) -> &str {
    mcpgym_shared::replica::owner_of_episode(id)
        .or_else(|| mcpgym_shared::replica::owner_of_session(id))
        .unwrap_or_else(|| panic!("{id:?} names no replica"))
}

fn replica(index: usize) -> String {
    format!("mcpgym-{index}")
}

fn start_replica(index: usize, addr: &str) -> HttpServer {
    let mut command = Command::new(BIN);
    command.env("RUST_LOG", "warn").args([
        "wordle",
        "--replica",
        &replica(index),
        "--max-turns",
        "1000",
    ]);
    HttpServer::spawn_at(command, addr)
}

/// A stateless (2026-07-28) tool call as a harness sends it through a proxy: the episode in
/// `_meta` and in the `Mcpgym-Episode` header, which is what the proxy can read.
async fn stateless_call(url: &str, episode: &str, word: &str) -> (StatusCode, Value) {
    let response = stateless_request(
        url,
        "guess",
        json!({ "word": word }),
        json!({ "mcpgym/episode": episode }),
    )
    .header("mcpgym-episode", episode)
    .send()
    .await
    .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The episode and turn of one tool call, however it went; `Err` with what came back when it
/// did not reach its episode.
type Landed = Result<(String, u64), String>;

fn from_step(step: &Value) -> Landed {
    match (step["episode"].as_str(), step["turn"].as_u64()) {
        (Some(episode), Some(turn)) => Ok((episode.to_owned(), turn)),
        _ => Err(format!("no step in {step}")),
    }
}

/// One tool call on `episode` through the proxy, by the `n`th of five ways in turn.
async fn call_by_way(
    proxy: &Proxy,
    legacy: &Client,
    episode: &str,
    n: usize,
    word: &str,
) -> Landed {
    match n % 5 {
        // The control plane, by the path.
        0 => proxy
            .control()
            .call(episode, "guess", json!({ "word": word }))
            .await
            .map(|step| (step.episode, u64::from(step.turn)))
            .map_err(|e| e.to_string()),
        // Stateless MCP on the environment's endpoint: the header routes it.
        1 => {
            let (status, body) = stateless_call(&proxy.url("/wordle/mcp"), episode, word).await;
            if status != StatusCode::OK {
                return Err(format!("{status}: {body}"));
            }
            from_step(&body["result"]["_meta"]["mcpgym/step"])
        }
        // Stateless MCP on the episode's own endpoint: the path routes it.
        2 => {
            let url = proxy.url(&format!("/episodes/{episode}/mcp"));
            let (status, body) = stateless_call(&url, episode, word).await;
            if status != StatusCode::OK {
                return Err(format!("{status}: {body}"));
            }
            from_step(&body["result"]["_meta"]["mcpgym/step"])
        }
        // A legacy MCP session on the episode's endpoint: the path, then its session id.
        3 => match legacy.call_tool(call("guess", word_args(word))).await {
            Ok(result) => from_step(&step(&result)),
            Err(error) => Err(error.to_string()),
        },
        // OpenEnv's stateless HTTP step: the episode is in the body, so the header routes it.
        _ => {
            let response = http()
                .post(proxy.url("/wordle/step"))
                .header("mcpgym-episode", episode)
                .json(&json!({
                    "episode_id": episode,
                    "action": {"type": "call_tool", "tool_name": "guess", "arguments": {"word": word}}
                }))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            if status != StatusCode::OK {
                return Err(format!("{status}: {body}"));
            }
            match body["metadata"]["episode_id"].as_str() {
                Some(id) => Ok((
                    id.to_owned(),
                    body["metadata"]["turn"].as_u64().unwrap_or(0),
                )),
                None => Err(format!("no episode in {body}")),
            }
        }
    }
}

/// A legacy exchange through the proxy: the JSON-RPC message of its event stream.
async fn legacy_post(proxy: &Proxy, session: Option<&str>, body: Value) -> (StatusCode, String) {
    let mut request = http()
        .post(proxy.url("/wordle/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    let message = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|data| !data.is_empty())
        .unwrap_or_default()
        .to_owned();
    (status, session.unwrap_or(message))
}

async fn rmcp_session_plays_through_the_proxy(proxy: &Proxy) {
    let (status, session) = legacy_post(
        proxy,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}, "_meta": {"note": "rmcp's to open"}
        }}),
    )
    .await;
    assert_eq!(status, 200);
    let named = owner(&session).to_owned();
    let (status, _) = legacy_post(
        proxy,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);
    for turn in 1..=2 {
        let (status, message) = legacy_post(
            proxy,
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "guess", "arguments": {"word": "zzzzz"}}}),
        )
        .await;
        assert_eq!(status, 200, "{message}");
        let message: Value = serde_json::from_str(&message).unwrap();
        let step = &message["result"]["_meta"]["mcpgym/step"];
        assert_eq!(step["turn"], turn, "{message}");
        assert_eq!(owner(step["episode"].as_str().unwrap()), named, "{message}");
    }
}

/// The body of a response, as text.
async fn text_of(request: reqwest::RequestBuilder) -> String {
    request.send().await.unwrap().text().await.unwrap()
}

fn word_args(word: &str) -> rmcp::model::JsonObject {
    args(json!({ "word": word }))
}

/// Plays one episode's calls through the proxy; the errors met.
async fn play(proxy: &Proxy, episode: &str) -> Vec<String> {
    let legacy = {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(
            proxy.url(&format!("/episodes/{episode}/mcp")),
        );
        use rmcp::ServiceExt;
        ().serve(transport)
            .await
            .expect("legacy session through the proxy")
    };
    let mut errors = Vec::new();
    for n in 0..CALLS_PER_EPISODE {
        // Not in the word list, or not a word: refused, and a turn all the same.
        let word = if n % 2 == 0 { "zzzzz" } else { "12345" };
        match call_by_way(proxy, &legacy, episode, n, word).await {
            Ok((landed, turn)) if landed == episode && turn == n as u64 + 1 => {}
            Ok((landed, turn)) => errors.push(format!(
                "{episode} call {n}: landed on {landed} at turn {turn}, not turn {}",
                n + 1
            )),
            Err(error) => errors.push(format!("{episode} call {n} (way {}): {error}", n % 5)),
        }
    }
    let _ = legacy.cancel().await;
    errors
}

/// Creates `n` episodes through the proxy; their ids.
async fn create_all(proxy: &Proxy, n: usize) -> Vec<String> {
    let control = proxy.control();
    futures::stream::iter(0..n)
        .map(|seed| {
            let control = control.clone();
            async move {
                let episode = control
                    .create_episode(&NewEpisode::default().seed(seed as u64))
                    .await
                    .unwrap_or_else(|e| panic!("create through the proxy: {e}"));
                episode.id
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await
}

fn by_owner<'a>(ids: impl Iterator<Item = &'a str>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for id in ids {
        *counts.entry(owner(id).to_owned()).or_default() += 1;
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_behind_nginx_serve_each_episode_from_its_owner() {
    let mut replicas: Vec<Option<HttpServer>> = (0..REPLICAS)
        .map(|index| Some(start_replica(index, "127.0.0.1:0")))
        .collect();
    let addrs: Vec<_> = replicas
        .iter()
        .map(|r| r.as_ref().unwrap().addr())
        .collect();
    let proxy = Proxy::start(&addrs);

    // Episodes created through the proxy, spread over all three.
    let total = episode_count();
    let episodes = create_all(&proxy, total).await;
    let counts = by_owner(episodes.iter().map(String::as_str));
    assert_eq!(counts.len(), REPLICAS, "{counts:?}");
    for (name, count) in &counts {
        assert!(
            (total / 5..=total / 2).contains(count),
            "{name} holds {count} of {total}: {counts:?}"
        );
    }
    // Each replica says which it is.
    for (index, server) in replicas.iter().enumerate() {
        let health = json_body(http().get(server.as_ref().unwrap().url("/healthz"))).await;
        assert_eq!(health["replica"], replica(index), "{health}");
    }
    // Each is held by the replica its id names; another replica says where it is.
    let id = &episodes[0];
    let holder = owner(id)
        .trim_start_matches("mcpgym-")
        .parse::<usize>()
        .unwrap();
    let direct = |index: usize| {
        replicas[index]
            .as_ref()
            .unwrap()
            .url(&format!("/episodes/{id}"))
    };
    assert_eq!(
        http().get(direct(holder)).send().await.unwrap().status(),
        200
    );
    let (status, body) = status_and_json(http().get(direct((holder + 1) % REPLICAS))).await;
    assert_eq!(status, 421, "{body}");
    let sentence = body["error"].as_str().unwrap();
    assert!(
        sentence.contains(&format!("belongs to replica {}", owner(id)))
            && sentence.contains("Mcpgym-Episode"),
        "{sentence}"
    );

    // Every tool call, by every way of naming its episode, lands on the owner: 3,000 calls.
    let errors: Vec<String> = futures::stream::iter(&episodes)
        .map(|id| play(&proxy, id))
        .buffer_unordered(CONCURRENCY)
        .concat()
        .await;
    assert!(
        errors.is_empty(),
        "{} of {} calls went wrong, e.g. {:?}",
        errors.len(),
        total * CALLS_PER_EPISODE,
        &errors[..errors.len().min(5)]
    );

    // Legacy sessions that start their own episode stay with the replica that opened them.
    let mut session_owners = BTreeMap::<String, usize>::new();
    for _ in 0..REPLICAS * 3 {
        let transport =
            rmcp::transport::StreamableHttpClientTransport::from_uri(proxy.url("/wordle/mcp"));
        let client = {
            use rmcp::ServiceExt;
            ().serve(transport).await.unwrap()
        };
        let first = step(&act(&client, "guess", json!({"word": "zzzzz"})).await);
        let second = step(&act(&client, "guess", json!({"word": "zzzzz"})).await);
        assert_eq!(first["episode"], second["episode"], "{first} {second}");
        assert_eq!(second["turn"], 2);
        *session_owners
            .entry(owner(first["episode"].as_str().unwrap()).to_owned())
            .or_default() += 1;
        let _ = client.cancel().await;
    }
    assert_eq!(session_owners.len(), REPLICAS, "{session_owners:?}");
    // A session rmcp opens itself (here: an initialize with `_meta`) is named the same way.
    for _ in 0..REPLICAS {
        rmcp_session_plays_through_the_proxy(&proxy).await;
    }

    // OpenEnv's WebSocket: a connection is a session; its episode is on the replica behind it.
    for _ in 0..REPLICAS {
        let ws_url = proxy.url("/wordle/ws").replacen("http://", "ws://", 1);
        let mut socket = ws_connect(&ws_url).await;
        let mut ask = async |message: Value| ws_ask(&mut socket, message).await;
        let reset = ask(json!({"type": "reset", "data": {"seed": 3}})).await;
        let id = reset["data"]["metadata"]["episode_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{reset}"))
            .to_owned();
        let guess = json!({"type": "step", "data": {"type": "call_tool", "tool_name": "guess", "arguments": {"word": "zzzzz"}}});
        for _ in 0..2 {
            let reply = ask(guess.clone()).await;
            assert_eq!(
                reply["data"]["metadata"]["episode_id"],
                id.as_str(),
                "{reply}"
            );
        }
        // And the proxy finds its state by the id in the query.
        let (status, state) =
            status_and_json(http().get(proxy.url(&format!("/wordle/state?episode_id={id}")))).await;
        assert_eq!(status, 200, "{state}");
        assert_eq!(state["step_count"], 2, "{state}");
    }

    // ORS sessions: the session id names the replica that issued it.
    for _ in 0..REPLICAS {
        let events = text_of(http().post(proxy.url("/create_session"))).await;
        let sid = events
            .lines()
            .find_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .unwrap()
            .to_owned();
        let created = http()
            .post(proxy.url("/create"))
            .header("X-Session-ID", &sid)
            .json(&json!({"env_name": "wordle", "split": "train", "index": 1}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 200, "{}", created.text().await.unwrap());
        for _ in 0..2 {
            let reply = text_of(
                http()
                    .post(proxy.url("/wordle/call"))
                    .header("X-Session-ID", &sid)
                    .json(&json!({"name": "guess", "input": {"word": "zzzzz"}})),
            )
            .await;
            let episode = reply
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find_map(|end| {
                    end["output"]["metadata"]["episode_id"]
                        .as_str()
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| panic!("{reply}"));
            assert_eq!(owner(&episode), owner(&sid), "{reply}");
        }
    }

    // One replica dies: its episodes answer with a sentence naming them and the replica.
    let dead = 1;
    replicas[dead].take().unwrap().kill();
    let (lost, kept): (Vec<_>, Vec<_>) = episodes.iter().partition(|id| owner(id) == replica(dead));
    for id in &lost {
        let (status, body) = status_and_json(
            http()
                .post(proxy.url(&format!("/episodes/{id}/call")))
                .json(&json!({"tool": "guess", "arguments": {"word": "zzzzz"}})),
        )
        .await;
        assert_eq!(status, 503, "{body}");
        let sentence = body["error"].as_str().unwrap();
        assert!(
            sentence.contains(&format!(
                "episode {id} lives on replica {}, which is not answering",
                replica(dead)
            )),
            "{sentence}"
        );
    }
    // The same for a stateless MCP call naming one in its header.
    let (status, body) = stateless_call(&proxy.url("/wordle/mcp"), lost[0], "zzzzz").await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains(lost[0].as_str()),
        "{body}"
    );
    // The other two keep serving their episodes (turn 11: after the ten calls above).
    for id in kept.iter().take(30) {
        let step = proxy
            .control()
            .call(id, "guess", json!({"word": "zzzzz"}))
            .await
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!((step.episode.as_str(), step.turn), (id.as_str(), 11));
    }
    // New episodes go to the replicas that answer.
    let fresh = create_all(&proxy, 30).await;
    let counts = by_owner(fresh.iter().map(String::as_str));
    assert!(!counts.contains_key(&replica(dead)), "{counts:?}");
    assert_eq!(counts.values().sum::<usize>(), 30);

    // Restarted where it was, the replica takes new episodes again; its old ones are unknown
    // there (never a new episode in their place).
    replicas[dead] = Some(start_replica(dead, &addrs[dead].to_string()));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let fresh = create_all(&proxy, REPLICAS).await;
        if fresh.iter().any(|id| owner(id) == replica(dead)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the restarted replica took no episode"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (status, body) = status_and_json(
        http()
            .post(proxy.url(&format!("/episodes/{}/call", lost[0])))
            .json(&json!({"tool": "guess", "arguments": {"word": "zzzzz"}})),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("unknown episode"),
        "{body}"
    );
}

#[tokio::test]
async fn an_id_naming_no_replica_of_the_deployment_gets_a_sentence() {
    let replica = start_replica(0, "127.0.0.1:0");
    let proxy = Proxy::start(&[replica.addr(), replica.addr(), replica.addr()]);
    let stranger = "elsewhere-0123456789abcdef0123456789abcdef";
    let (status, body) =
        status_and_json(http().get(proxy.url(&format!("/episodes/{stranger}")))).await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("names replica elsewhere, which this deployment does not have"),
        "{body}"
    );
    // A header that is not an episode id is refused by the replica with a sentence.
    let (status, body) = status_and_json(
        http()
            .post(proxy.url("/wordle/mcp"))
            .header("mcpgym-episode", "../etc/passwd")
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("header must be an episode id"),
        "{body}"
    );
}

/// How many sandboxes a sandbox service holds (`GET /sandboxes`).
async fn sandboxes_on(host: &HttpServer) -> usize {
    let listed = json_body(http().get(host.url("/sandboxes"))).await;
    listed.as_array().map_or(0, Vec::len)
}

fn cell(code: &str) -> Value {
    json!({ "code": code })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_jupyter_server_spreads_its_sandboxes_over_two_hosts_and_outlives_one() {
    // Room for two sandboxes on the first host, four on the second.
    let hosts = [
        Some(HttpServer::start(&[
            "sandbox",
            "--pool",
            "1",
            "--max-sandboxes",
            "2",
        ])),
        Some(HttpServer::start(&[
            "sandbox",
            "--pool",
            "1",
            "--max-sandboxes",
            "4",
        ])),
    ];
    let urls = format!(
        "{},{}",
        hosts[0].as_ref().unwrap().base,
        hosts[1].as_ref().unwrap().base
    );
    let server = HttpServer::start(&["jupyter", "--sandbox", &urls]);
    let mut hosts = hosts;

    // Four episodes, each on the host with the most free places (the emptier on a tie):
    // free (2, 4) → second, (2, 3) → second, (2, 2) → first, (1, 2) → second.
    let mut episodes = Vec::new();
    for seed in 0..4 {
        episodes.push(server.create(NewEpisode::default().seed(seed)).await.id);
    }
    assert_eq!(sandboxes_on(hosts[0].as_ref().unwrap()).await, 1);
    assert_eq!(sandboxes_on(hosts[1].as_ref().unwrap()).await, 3);

    // A cell runs in every episode; the second host dies while they run.
    let control = server.control();
    let running: Vec<_> = episodes
        .iter()
        .map(|id| {
            let control = control.clone();
            let id = id.clone();
            tokio::spawn(async move {
                control
                    .call(
                        &id,
                        "add_and_execute_code_cell",
                        cell("import time; time.sleep(6); print('finished')"),
                    )
                    .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await;
    hosts[1].take().unwrap().kill();
    let mut aborted = Vec::new();
    for (id, call) in episodes.iter().zip(running) {
        let step = call.await.unwrap().unwrap_or_else(|e| panic!("{id}: {e}"));
        let text = serde_json::to_string(&step.content).unwrap();
        if step.aborted {
            assert!(step.done && step.is_error, "{step:?}");
            assert!(
                text.contains("sandbox service holding this episode")
                    && text.contains("stopped answering"),
                "{text}"
            );
            aborted.push(id.clone());
        } else {
            assert!(text.contains("finished"), "{id}: {text}");
        }
    }
    assert_eq!(
        aborted.len(),
        3,
        "the dead host's three episodes end aborted"
    );
    for id in &aborted {
        let status = server.status(id).await;
        assert!(status.aborted && status.done, "{status:?}");
    }

    // A new episode goes to the host that answers, and runs.
    let id = server.create(NewEpisode::default().seed(10)).await.id;
    let step = control
        .call(&id, "add_and_execute_code_cell", cell("print(6 * 7)"))
        .await
        .unwrap();
    assert!(!step.is_error, "{step:?}");
    assert!(serde_json::to_string(&step.content).unwrap().contains("42"));
    assert_eq!(sandboxes_on(hosts[0].as_ref().unwrap()).await, 2);
    // That host is full now and the other is gone: the create says so.
    let refused = control
        .create_episode(&NewEpisode::default().seed(11))
        .await
        .unwrap_err();
    assert_eq!(refused.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    let sentence = refused.to_string();
    assert!(
        sentence.contains("no sandbox service could take a sandbox") && sentence.contains("429"),
        "{sentence}"
    );
}
