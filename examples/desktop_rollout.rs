//! A desktop rollout loop against a running `mcpgym desktop` server: start an episode on the
//! control plane, play it through MCP with a scripted policy, and write its trajectory with
//! every screenshot the episode returned.
//!
//! The policy is scripted: it looks at the screen first, then plays the task's keyboard-only
//! reference solution one tool call at a time (a trainer puts its model there). Output, in
//! `--out DIR/<episode>/`: `steps.jsonl` (tool, arguments, text, reward, done per step),
//! `step-NNN.png` for every screenshot, and `trajectory.jsonl` as the server recorded it.
//!
//! ```text
//! target/release/mcpgym desktop --http 127.0.0.1:8000 &
//! cargo run --release --example desktop_rollout -- --url http://127.0.0.1:8000 --task desktop-train-000
//! ```

use std::io::Write;

use anyhow::Context;
use base64::Engine;
use clap::Parser;
use mcpgym_desktop::tasks::{DemoCall, task};
use mcpgym_shared::client::{ControlClient, NewEpisode};
use rmcp::model::{CallToolRequestParams, ContentBlock, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};

#[derive(Debug, Parser)]
struct Args {
    /// The server's base URL.
    #[arg(long, default_value = "http://127.0.0.1:8000")]
    url: String,
    /// The task to play.
    #[arg(long, default_value = "desktop-train-000")]
    task: String,
    /// Where to write the trajectory and screenshots.
    #[arg(long, default_value = "desktop-rollouts")]
    out: std::path::PathBuf,
}

/// The scripted policy: a screenshot first, then the task's reference solution, then
/// `terminate`.
fn policy(task_id: &str) -> anyhow::Result<Vec<(&'static str, Value)>> {
    let task = task(task_id).with_context(|| format!("unknown desktop task {task_id:?}"))?;
    let mut calls = vec![("screenshot", json!({}))];
    for step in task.demo() {
        calls.push(match step.call() {
            DemoCall::Tool(tool, arguments) => (tool, arguments),
            // Observing the condition takes run_command, which a server lists only with
            // --allow-shell (the tests play demos so); here a pause stands in for it.
            DemoCall::Until(..) => ("wait", json!({ "duration": 2.0 })),
        });
    }
    calls.push(("terminate", json!({"status": "success"})));
    Ok(calls)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let calls = policy(&args.task)?;
    let control = ControlClient::new(&args.url, None)?;
    let created = control
        .create_episode(&NewEpisode::default().env("desktop").task(&args.task))
        .await?;
    let id = created.id.as_str();
    let mcp_url = control.url(&created.mcp_url);
    let dir = args.out.join(id);
    std::fs::create_dir_all(&dir)?;
    let mut steps = std::fs::File::create(dir.join("steps.jsonl"))?;

    let client = ()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(mcp_url),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await?;
    let mut episode_return = 0.0;
    for (n, (tool, arguments)) in calls.into_iter().enumerate() {
        let result = client
            .call_tool(
                CallToolRequestParams::new(tool)
                    .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
            )
            .await?;
        let step = result
            .meta
            .as_ref()
            .and_then(|meta| meta.get("mcpgym/step"))
            .cloned()
            .context("no step information")?;
        let mut text = String::new();
        let mut screenshot = None;
        for block in &result.content {
            match block {
                ContentBlock::Text(t) => text.push_str(&t.text),
                ContentBlock::Image(image) => {
                    let png = base64::engine::general_purpose::STANDARD.decode(&image.data)?;
                    let name = format!("step-{n:03}.png");
                    std::fs::write(dir.join(&name), png)?;
                    screenshot = Some(name);
                }
                _ => {}
            }
        }
        episode_return += step["reward"].as_f64().unwrap_or(0.0);
        writeln!(
            steps,
            "{}",
            json!({
                "step": n, "tool": tool, "arguments": arguments, "text": text,
                "screenshot": screenshot, "is_error": result.is_error.unwrap_or(false),
                "reward": step["reward"], "done": step["done"],
            })
        )?;
        println!(
            "{n:>3} {tool:<10} reward {:>4} {}",
            step["reward"],
            text.lines().next().unwrap_or("")
        );
        if step["done"] == true {
            break;
        }
    }
    client.cancel().await?;

    let trajectory = control.trajectory(id).await?;
    std::fs::write(dir.join("trajectory.jsonl"), trajectory)?;
    let status = control.status(id).await?;
    control.close(id).await?;
    println!(
        "episode {id} ({}): return {episode_return:.1}; graded: {}; written to {}",
        args.task,
        json!({"passed": status.revealed.get("passed"), "checks": status.revealed.get("checks")}),
        dir.display()
    );
    Ok(())
}
