//! A rollout loop against a running mcpgym server, as a trainer would write it: start
//! episodes on the control plane, play each through MCP at its own URL with a policy, collect
//! the reward from every step's `_meta`, then read the trajectory and close the episode.
//!
//! The policy here is scripted (it keeps the answers still consistent with the feedback and
//! guesses the first); a trainer puts its model there.
//!
//! ```text
//! target/release/mcpgym wordle --http 127.0.0.1:8000 &
//! cargo run --release --example wordle_rollout -- --url http://127.0.0.1:8000 --episodes 8
//! ```

use anyhow::Context;
use clap::Parser;
use mcpgym_shared::client::{ControlClient, NewEpisode};
use mcpgym_shared::task::Split;
use mcpgym_wordle::WordList;
use mcpgym_wordle::feedback::{Mark, score};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};

#[derive(Debug, Parser)]
struct Args {
    /// The server's base URL.
    #[arg(long, default_value = "http://127.0.0.1:8000")]
    url: String,
    /// Episodes to play, one after another, seeds 0..N.
    #[arg(long, default_value_t = 8)]
    episodes: u64,
    /// Split to draw tasks from.
    #[arg(long, default_value = "test")]
    split: Split,
    /// Write each trajectory to DIR/<episode>.jsonl.
    #[arg(long)]
    trajectory_dir: Option<std::path::PathBuf>,
}

/// Candidate answers consistent with everything seen so far.
struct Policy {
    candidates: Vec<[u8; 5]>,
}

impl Policy {
    fn new() -> Self {
        Self {
            candidates: WordList::original().answers().to_vec(),
        }
    }

    fn next_guess(&self) -> String {
        let word = self.candidates.first().copied().unwrap_or(*b"slate");
        String::from_utf8_lossy(&word).into_owned()
    }

    fn observe(&mut self, guess: &str, feedback: &[Mark]) {
        let Ok(guess) = <[u8; 5]>::try_from(guess.as_bytes()) else {
            return;
        };
        self.candidates
            .retain(|candidate| score(&guess, candidate).as_slice() == feedback);
    }
}

fn parse_marks(value: &Value) -> Vec<Mark> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|mark| match mark.as_str() {
            Some("green") => Some(Mark::Green),
            Some("yellow") => Some(Mark::Yellow),
            Some("gray") => Some(Mark::Gray),
            _ => None,
        })
        .collect()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let control = ControlClient::new(&args.url, None)?;
    let mut total_return = 0.0;
    println!(
        "{:<34} {:<10} {:<7} {:>7} {:>8}",
        "episode", "task", "answer", "turns", "return"
    );
    for seed in 0..args.episodes {
        let created = control
            .create_episode(
                &NewEpisode::default()
                    .env("wordle")
                    .split(args.split)
                    .seed(seed),
            )
            .await?;
        let id = created.id.as_str();
        let mcp_url = control.url(&created.mcp_url);

        let client = ()
            .serve_with_lifecycle(
                StreamableHttpClientTransport::from_uri(mcp_url),
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await?;
        let mut policy = Policy::new();
        let mut rewards = Vec::new();
        loop {
            let guess = policy.next_guess();
            let arguments = json!({"word": guess})
                .as_object()
                .cloned()
                .unwrap_or_default();
            let result = client
                .call_tool(CallToolRequestParams::new("guess").with_arguments(arguments))
                .await?;
            let step = result
                .meta
                .as_ref()
                .and_then(|meta| meta.get("mcpgym/step"))
                .cloned()
                .context("no step information")?;
            rewards.push(step["reward"].as_f64().unwrap_or(0.0));
            if let Some(observation) = &result.structured_content {
                policy.observe(&guess, &parse_marks(&observation["feedback"]));
            }
            if step["done"] == true {
                break;
            }
        }
        client.cancel().await?;

        let status = control.status(id).await?;
        let trajectory = control.trajectory(id).await?;
        if let Some(dir) = &args.trajectory_dir {
            std::fs::create_dir_all(dir)?;
            std::fs::write(dir.join(format!("{id}.jsonl")), &trajectory)?;
        }
        control.close(id).await?;
        let episode_return: f64 = rewards.iter().sum();
        total_return += episode_return;
        println!(
            "{:<34} {:<10} {:<7} {:>7} {:>8.3}",
            id,
            created.task,
            status
                .revealed
                .get("answer")
                .and_then(Value::as_str)
                .unwrap_or("?"),
            trajectory.lines().count(),
            episode_return
        );
    }
    println!(
        "mean return over {} episodes: {:.3}",
        args.episodes,
        total_return / args.episodes.max(1) as f64
    );
    Ok(())
}
