//! `mcpgym replay FILE`: plays a recorded episode again from its header and its actions, and
//! says whether every observation and reward came out the same.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use mcpgym_shared::Environment;
use mcpgym_shared::hub::{CreateEpisode, Hub, HubSettings};
use mcpgym_shared::trajectory::file::RecordedEpisode;
use mcpgym_shared::trajectory::replay::first_difference;

use crate::envs::ENVIRONMENTS;
use crate::jails::QuotaArgs;
use crate::registry::Built;

/// Environments whose observations depend on more than the seed and the actions.
const NOT_REPLAYABLE: &[(&str, &str)] = &[(
    "desktop",
    "desktop episodes cannot be replayed: their observations are screenshots of real applications, whose timing and rendering vary from run to run; watch them with `mcpgym view` instead",
)];

/// Replays `file`, recorded in one of the registered environments or of `python`; `Ok(true)`
/// when everything matches. Prints what it finds.
pub fn run(
    file: &Path,
    quotas: &QuotaArgs,
    python: &[Arc<dyn Environment>],
) -> anyhow::Result<bool> {
    let recorded = RecordedEpisode::read(file)?;
    let header = recorded.header.clone().with_context(|| {
        format!(
            "{} has no header record: it was written before trajectories named their env, task, seed and options, so there is nothing to replay it from",
            file.display()
        )
    })?;
    if let Some((_, why)) = NOT_REPLAYABLE.iter().find(|(env, _)| *env == header.env) {
        anyhow::bail!("{why}");
    }
    let steps = recorded.typed_steps();
    if let Some(step) = steps.iter().find(|s| s.cut_bytes.contains_key("arguments")) {
        anyhow::bail!(
            "turn {} ({}) was recorded with its arguments cut to fit the record, so it cannot be sent again",
            step.turn,
            step.tool
        );
    }
    let Built { env, backing } = match python.iter().find(|env| env.name() == header.env) {
        Some(env) => Built::alone(env.clone()),
        None => {
            let registration = ENVIRONMENTS
                .iter()
                .find(|r| r.name == header.env)
                .with_context(|| {
                    let names: Vec<&str> = ENVIRONMENTS.iter().map(|r| r.name).collect();
                    format!(
                        "{} was recorded in environment {:?}, which this binary does not have (it has {}; an environment written in Python is named with --python MODULE:CLASS)",
                        file.display(),
                        header.env,
                        names.join(", ")
                    )
                })?;
            registration
                .build_default(quotas)
                .with_context(|| format!("cannot start {}", header.env))?
        }
    };
    let settings = HubSettings {
        max_turns: Some(header.max_turns),
        ..HubSettings::default()
    };
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let hub = Hub::new(vec![env], settings)?;
            let created = hub
                .create(CreateEpisode {
                    env: Some(header.env.clone()),
                    task: Some(header.task.clone()),
                    seed: Some(header.seed),
                    split: None,
                    options: Some(header.options.clone()),
                    session: None,
                })
                .await
                .context("cannot start the recorded episode again")?;
            let mut mismatch = None;
            // The prompt is handed over where the recorded client fetched it: an environment
            // leaves the task out of the first observation once it has been.
            let hand_prompt = |turn: u32| recorded.prompt_after == Some(turn);
            for step in &steps {
                if hand_prompt(step.turn.saturating_sub(1)) {
                    hub.prompt(&created.id).await?;
                }
                let replayed = hub
                    .step(&created.id, &step.tool, step.arguments.clone())
                    .await
                    .with_context(|| {
                        format!("turn {} ({}) failed on replay", step.turn, step.tool)
                    })?;
                if let Some(difference) = first_difference(step, &replayed) {
                    mismatch = Some(format!("turn {} ({}): {difference}", step.turn, step.tool));
                    break;
                }
            }
            if mismatch.is_none()
                && let Some(end) = &recorded.end
            {
                let status = serde_json::to_value(hub.status(&created.id).await?)?;
                mismatch = end_difference(end, &status);
            }
            hub.close_all().await;
            anyhow::Ok(mismatch)
        });
    Built::release(backing);
    let what = format!(
        "{} ({} task {}, seed {}, {} steps)",
        file.display(),
        header.env,
        header.task,
        header.seed,
        steps.len()
    );
    match result? {
        None => {
            println!("{what}: every observation and reward matches");
            Ok(true)
        }
        Some(mismatch) => {
            println!("{what}: differs at {mismatch}");
            Ok(false)
        }
    }
}

/// How the replayed episode's final status differs from the end record: return, end flags
/// and everything the environment revealed.
fn end_difference(
    recorded: &serde_json::Map<String, serde_json::Value>,
    replayed: &serde_json::Value,
) -> Option<String> {
    let skip = ["id", "reward_components"];
    for (key, value) in recorded {
        if skip.contains(&key.as_str()) {
            continue;
        }
        let other = replayed.get(key).unwrap_or(&serde_json::Value::Null);
        let same = match (value.as_f64(), other.as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-9,
            _ => value == other,
        };
        if !same {
            return Some(format!(
                "the end: {key} was {value} in the record and {other} on replay"
            ));
        }
    }
    None
}
