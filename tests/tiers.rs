//! The fast tier keeps every surface covered: each environment and each door a user reaches
//! has at least one test that runs without `--full` (the full tier's own tests are
//! `#[ignore]`d; see [`crate::common::full_tier`]). The families and fixed tasks are held
//! to the same by their own modules (`desktop_families::every_family_has_a_test`,
//! `desktop_tasks::the_fast_tier_plays_a_fixed_task_of_every_application`, and
//! `servers/jupyter/tests/families.rs`).

use std::process::Command;

use crate::common::{HttpServer, NewEpisode};

/// This binary's tests, as `libtest --list` names them (`module::test`), ignored or not.
fn listed(ignored: bool) -> Vec<String> {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--list", "--format", "terse"]);
    if ignored {
        command.arg("--ignored");
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

/// What a user reaches, and the tests (by name prefix) that reach it.
const SURFACES: &[(&str, &[&str])] = &[
    // Environments.
    ("environment wordle", &["wordle_stdio::", "wordle_http::"]),
    ("environment jupyter", &["jupyter_mcp::"]),
    (
        "environment desktop",
        &["desktop_mcp::", "desktop_tasks::", "desktop_families::"],
    ),
    ("environment hilo", &["ors::several_environments"]),
    ("environments written in Python", &["python_env::"]),
    ("new environments from templates", &["new::"]),
    // Doors.
    ("MCP over stdio", &["wordle_stdio::", "jupyter_mcp::stdio_"]),
    ("MCP legacy sessions over HTTP", &["legacy_sessions::"]),
    ("control plane", &["control_plane::"]),
    ("OpenEnv", &["openenv::"]),
    ("Open Reward Standard", &["ors::"]),
    ("viewer", &["viewer::"]),
    ("sandbox service (E2B protocol)", &["sandbox_http::"]),
    (
        "the official E2B SDK",
        &["sandbox_e2b_sdk::", "sandbox_e2b_suites::"],
    ),
    ("replicas behind a proxy", &["cluster::"]),
    ("client manifests", &["manifests::"]),
    ("Kubernetes manifests", &["kubernetes::"]),
    ("container profiles", &["container::"]),
    ("benchmarks", &["bench::"]),
    ("task and trajectory exports", &["exports::"]),
    (
        "evaluation of models and baselines (mcpgym eval)",
        &["eval::"],
    ),
    ("restarts on a trajectory directory", &["restart::"]),
    ("replaying recorded episodes (mcpgym replay)", &["replay::"]),
    ("the sandboxes' runtime (mcpgym runtime)", &["runtime::"]),
    // The escape battery, as root and as an ordinary user.
    ("jails as root", &["escape::jupyter_jail_holds_as_root"]),
    (
        "jails as an ordinary user",
        &["escape::desktop_jail_holds_as_an_ordinary_user"],
    ),
];

#[test]
fn every_environment_and_door_has_a_test_in_the_fast_tier() {
    let ignored = listed(true);
    let fast: Vec<String> = listed(false)
        .into_iter()
        .filter(|name| !ignored.contains(name))
        .collect();
    assert!(fast.len() > 100, "{} tests in the fast tier", fast.len());
    let uncovered: Vec<&str> = SURFACES
        .iter()
        .filter(|(_, prefixes)| {
            !fast
                .iter()
                .any(|name| prefixes.iter().any(|p| name.starts_with(p)))
        })
        .map(|(surface, _)| *surface)
        .collect();
    assert!(
        uncovered.is_empty(),
        "no fast-tier test reaches: {}",
        uncovered.join(", ")
    );
}

#[tokio::test]
async fn every_environment_the_server_hosts_is_a_surface() {
    // `serve` names every environment it hosts when asked for one it does not.
    let server = HttpServer::start(&["serve"]);
    let refused = server
        .control()
        .create_episode(&NewEpisode::default().env("chess"))
        .await
        .unwrap_err()
        .to_string();
    let (_, hosted) = refused
        .split_once("this server hosts: ")
        .unwrap_or_else(|| panic!("{refused}"));
    let hosted: Vec<&str> = hosted
        .split(|c: char| c == ',' || c.is_whitespace() || c == '"' || c == '}')
        .filter(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase()))
        .collect();
    assert!(hosted.len() >= 4, "{refused}");
    for env in hosted {
        let surface = format!("environment {env}");
        assert!(
            SURFACES.iter().any(|(name, _)| *name == surface),
            "{env} is hosted but not listed in SURFACES"
        );
    }
}
