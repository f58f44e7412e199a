//! The sandboxes' runtime as a user without a checkout meets it: `mcpgym runtime install`
//! into the per-user cache, found from then on, and without one, Jupyter (only) refusing to
//! start with the sentence naming the command.
//!
//! Each test runs a link to the binary in a folder of its own, so the `target/runtime`
//! beside the real one is not found, with `XDG_CACHE_HOME` pointing at an empty folder and no
//! `MCPGYM_RUNTIME`. The full build is played by `python/tests/test_wheel.py` (minutes).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::json;

use crate::common::{BIN, HttpServer, NewEpisode, http, status_and_json};

/// The sentence everything that needs a runtime says without one.
const INSTALL: &str = "run `mcpgym runtime install`";

/// A folder with `bin/mcpgym` (the binary under test, linked) and an empty `cache/`.
struct Place {
    root: PathBuf,
}

impl Place {
    fn new(name: &str) -> Self {
        let root =
            std::env::temp_dir().join(format!("mcpgym-runtime-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(root.join("cache")).unwrap();
        let binary = root.join("bin/mcpgym");
        if std::fs::hard_link(BIN, &binary).is_err() {
            std::fs::copy(BIN, &binary).unwrap();
        }
        Self { root }
    }

    fn cache(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// `mcpgym <args…>` from this folder, finding no runtime but what the cache holds.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(self.root.join("bin/mcpgym"));
        command
            .args(args)
            .env_remove("MCPGYM_RUNTIME")
            .env("XDG_CACHE_HOME", self.cache())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn without_a_runtime_serve_hosts_the_rest_and_a_jupyter_episode_says_how_to_install() {
    let place = Place::new("missing");
    let server = HttpServer::spawn(place.command(&["serve"]));

    for env in ["wordle", "hilo"] {
        let episode = server
            .control()
            .create_episode(&NewEpisode::default().env(env))
            .await
            .unwrap_or_else(|error| panic!("{env}: {error}"));
        assert_eq!(episode.env, env);
    }
    // Jupyter's tasks are listed as ever; only its episodes cannot start.
    let (status, tasks) = status_and_json(http().get(server.url("/tasks?env=jupyter"))).await;
    assert_eq!(status, 200, "{tasks}");
    assert!(tasks.to_string().contains("classic/0"), "{tasks}");
    let (status, refused) = status_and_json(
        http()
            .post(server.url("/episodes"))
            .json(&json!({"env": "jupyter", "task": "classic/0"})),
    )
    .await;
    assert_eq!(status, 503, "{refused}");
    let said = refused["error"].as_str().unwrap_or_default();
    assert!(said.contains(INSTALL), "{refused}");
    assert!(
        said.contains("--runtime DIR or MCPGYM_RUNTIME"),
        "{refused}"
    );

    // What has nothing to do but Jupyter refuses to start, with the same sentence.
    for args in [
        &["jupyter"][..],
        &["jupyter", "--http", "127.0.0.1:0"],
        &["sandbox", "--http", "127.0.0.1:0"],
        &["runtime", "path"],
    ] {
        let output = place.run(args);
        assert!(!output.status.success(), "{args:?} started");
        assert!(
            stderr(&output).contains(INSTALL),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // A runtime somewhere else is used when named.
    let named = place.run(&["runtime", "path", "--runtime", "/nonexistent/runtime"]);
    assert!(!named.status.success());
    assert!(
        stderr(&named).contains("/nonexistent/runtime"),
        "{}",
        stderr(&named)
    );
}

/// The stamp `manifests/container/install` gives a runtime of this checkout's lock.
fn script_stamp() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../manifests/container/install");
    let output = Command::new(script).arg("runtime-stamp").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let stamp = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    assert_eq!(stamp.len(), 64, "{stamp}");
    stamp
}

#[test]
fn a_runtime_the_install_script_stamped_is_complete_for_the_binary() {
    let place = Place::new("stamped");
    let stamp = script_stamp();
    // In the cache, where the binary looks first: under the stamp's first 16 hex digits.
    let cached = place.cache().join("mcpgym/runtime").join(&stamp[..16]);
    std::fs::create_dir_all(&cached).unwrap();
    std::fs::write(cached.join(".requirements-sha256"), format!("{stamp}\n")).unwrap();
    let output = place.run(&["runtime", "install"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("already installed"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        cached.to_str().unwrap()
    );
    // Anywhere else, named.
    let elsewhere = place.root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join(".requirements-sha256"), &stamp).unwrap();
    let output = place.run(&["runtime", "install", "--dir", elsewhere.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("already installed"),
        "{}",
        stderr(&output)
    );
    // Nothing was built.
    let mut names: Vec<_> = std::fs::read_dir(place.cache().join("mcpgym/runtime"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, [std::ffi::OsString::from(&stamp[..16])]);
}

#[test]
fn an_install_without_npm_or_the_package_index_says_what_to_do() {
    let place = Place::new("offline");
    let target = place.root.join("rt");
    let dir = target.to_str().unwrap();

    let output = place
        .command(&["runtime", "install", "--dir", dir])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("npm is not on PATH"),
        "{}",
        stderr(&output)
    );
    assert!(!target.exists());

    // A folder that holds something else is never replaced.
    let taken = place.root.join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("notes.txt"), "mine").unwrap();
    let output = place.run(&["runtime", "install", "--dir", taken.to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("holds something that is not a runtime"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(taken.join("notes.txt")).unwrap(),
        "mine"
    );

    // A package index that refuses every connection (a port nothing listens on).
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let output = place
        .command(&["runtime", "install", "--dir", dir])
        .env("PIP_INDEX_URL", format!("http://127.0.0.1:{port}/simple"))
        .env_remove("PIP_EXTRA_INDEX_URL")
        .env_remove("PIP_FIND_LINKS")
        .env("PIP_RETRIES", "0")
        .env("PIP_NO_CACHE_DIR", "1")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = stderr(&output);
    assert!(
        said.contains("pip cannot get the runtime's wheels from the package index"),
        "{said}"
    );
    assert!(said.contains(INSTALL.trim_start_matches("run ")), "{said}");
    // Nothing that looks like a runtime, nor a half-built one, is left.
    assert!(!target.exists(), "{said}");
    assert!(!place.root.join("rt.build").exists(), "{said}");
}
