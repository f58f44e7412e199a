//! `mcpgym replay FILE`: plays a recorded episode again from its header and its actions, and
//! says whether every observation and reward came out the same.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use mcpgym_shared::Environment;
use mcpgym_shared::episode::EpisodeStatus;
use mcpgym_shared::hub::{CreateEpisode, Hub, HubSettings};
use mcpgym_shared::step::StepRecord;
use mcpgym_shared::trajectory::TrajectoryHeader;
use mcpgym_shared::trajectory::file::{RecordedEpisode, RecordedStep};
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
    let Built { env, backing } = environment(&header.env, file, quotas, python)?;
    let settings = settings_for(&header);
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let hub = Hub::new(vec![env], settings)?;
            let played = play_again(&hub, &header, &recorded, &steps, first_difference).await;
            hub.close_all().await;
            let (mut mismatch, status) = played?;
            if mismatch.is_none()
                && let Some(end) = &recorded.end
            {
                mismatch = end_difference(end, &serde_json::to_value(status)?);
            }
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

/// The hub settings an episode is played again under: its own turn limit.
pub fn settings_for(header: &TrajectoryHeader) -> HubSettings {
    HubSettings {
        max_turns: Some(header.max_turns),
        ..HubSettings::default()
    }
}

/// Starts the recorded episode again on `hub` and makes its calls, handing the prompt over
/// where the recorded client fetched it; `compare` is asked after each call and the first
/// difference it names stops the play (turn and tool prefixed). The difference, if any, and
/// the new episode's final status.
pub async fn play_again(
    hub: &Hub,
    header: &TrajectoryHeader,
    recorded: &RecordedEpisode,
    steps: &[RecordedStep],
    compare: impl Fn(&RecordedStep, &StepRecord) -> Option<String>,
) -> anyhow::Result<(Option<String>, EpisodeStatus)> {
    let created = hub
        .create(CreateEpisode {
            env: Some(header.env.clone()),
            task: Some(header.task.clone()),
            seed: Some(header.seed),
            split: None,
            levels: None,
            options: Some(header.options.clone()),
            session: None,
        })
        .await
        .context("cannot start the recorded episode again")?;
    let mut mismatch = None;
    // An environment leaves the task out of the first observation once the prompt has been
    // handed over.
    for step in steps {
        if recorded.prompt_after == Some(step.turn.saturating_sub(1)) {
            hub.prompt(&created.id).await?;
        }
        let replayed = hub
            .step(&created.id, &step.tool, step.arguments.clone())
            .await
            .with_context(|| format!("turn {} ({}) failed on replay", step.turn, step.tool))?;
        if let Some(difference) = compare(step, &replayed) {
            mismatch = Some(format!("turn {} ({}): {difference}", step.turn, step.tool));
            break;
        }
    }
    Ok((mismatch, hub.status(&created.id).await?))
}

/// The environment `env` a file was recorded in: one written in Python among `python`, else
/// the registered one built with its default flags.
pub fn environment(
    env: &str,
    file: &Path,
    quotas: &QuotaArgs,
    python: &[Arc<dyn Environment>],
) -> anyhow::Result<Built> {
    if let Some(env) = python.iter().find(|e| e.name() == env) {
        return Ok(Built::alone(env.clone()));
    }
    let registration = ENVIRONMENTS
        .iter()
        .find(|r| r.name == env)
        .with_context(|| {
            let names: Vec<&str> = ENVIRONMENTS.iter().map(|r| r.name).collect();
            format!(
                "{} was recorded in environment {env:?}, which this binary does not have (it has {}; an environment written in Python is named with --python MODULE:CLASS)",
                file.display(),
                names.join(", ")
            )
        })?;
    registration
        .build_default(quotas)
        .with_context(|| format!("cannot start {env}"))
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
