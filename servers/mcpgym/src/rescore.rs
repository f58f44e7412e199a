//! `mcpgym rescore PATH…`: grades every recorded episode again, offline, and reports any
//! reward that differs from the one paid online.
//!
//! Each environment says how ([`Environment::rescore`]): by playing the calls again on a new
//! episode (Wordle, Hi-Lo, environments written in Python), comparing every component; or from
//! what its grader read when the episode ended, kept in the end record (Jupyter's answer and
//! home folder, the desktop's graded files, window titles and clipboard), comparing the
//! terminal components. Episodes that did not finish, or that ended aborted, paid no grade
//! and are counted apart.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use mcpgym_shared::Environment;
use mcpgym_shared::hub::Hub;
use mcpgym_shared::rescore::{EpisodeRecord, RecordedCall, Rescored};
use mcpgym_shared::trajectory::file::{RecordedEpisode, recording_folders};
use serde_json::Value;

use crate::jails::QuotaArgs;
use crate::registry::Built;
use crate::replay::{environment, play_again, settings_for};

/// Rewards closer than this agree.
const TOLERANCE: f64 = 1e-9;

/// What rescoring one file found.
#[derive(Debug)]
enum Finding {
    /// The grade again equals the one paid.
    Agrees { return_: f64 },
    /// A component differs: its name, what was paid, what grading again gives.
    Differs(String),
    /// Not graded online (unfinished or aborted): nothing to compare.
    Ungraded(&'static str),
    /// It could not be graded again; the sentence says why.
    Cannot(String),
}

/// The trajectory files under `paths`: each file given, and in each folder given its
/// `*.jsonl` files and those of the sub-folders an eval run wrote (holding `eval.json`).
fn files_of(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_file() {
            files.push(path.clone());
            continue;
        }
        anyhow::ensure!(
            path.is_dir(),
            "{} is neither a trajectory file nor a folder of them",
            path.display()
        );
        let folders = recording_folders(path);
        for folder in folders {
            let mut found: Vec<PathBuf> = std::fs::read_dir(&folder)
                .with_context(|| format!("cannot read {}", folder.display()))?
                .flatten()
                .map(|entry| entry.path())
                .filter(|p| p.extension().is_some_and(|ext| ext == "jsonl") && p.is_file())
                .collect();
            found.sort();
            files.extend(found);
        }
    }
    Ok(files)
}

/// Rescores every trajectory under `paths` with at most `concurrency` at once; `Ok(true)` when
/// none differs. Prints a line per file and a count.
pub fn run(
    paths: &[PathBuf],
    concurrency: usize,
    quotas: &QuotaArgs,
    python: &[Arc<dyn Environment>],
) -> anyhow::Result<bool> {
    let files = files_of(paths)?;
    anyhow::ensure!(
        !files.is_empty(),
        "no trajectory files (*.jsonl) under {}",
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut by_env: BTreeMap<String, Vec<(PathBuf, RecordedEpisode)>> = BTreeMap::new();
    let mut findings: Vec<(PathBuf, Finding)> = Vec::new();
    for file in files {
        match RecordedEpisode::read(&file) {
            Ok(recorded) => match &recorded.header {
                Some(header) => by_env
                    .entry(header.env.clone())
                    .or_default()
                    .push((file, recorded)),
                None => findings.push((
                    file,
                    Finding::Cannot("the file has no header record".into()),
                )),
            },
            Err(error) => findings.push((file, Finding::Cannot(error.to_string()))),
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(concurrency.clamp(1, 8))
        .enable_all()
        .build()?;
    for (env_name, recorded) in by_env {
        let Built { env, backing } = environment(&env_name, &recorded[0].0, quotas, python)?;
        let found = runtime.block_on(rescore_all(env, recorded, concurrency.max(1)));
        findings.extend(found);
        Built::release(backing);
    }
    findings.sort_by(|a, b| a.0.cmp(&b.0));
    let (mut agree, mut differ, mut ungraded, mut cannot) = (0, 0, 0, 0);
    for (file, finding) in &findings {
        let name = file.display();
        match finding {
            Finding::Agrees { return_ } => {
                agree += 1;
                println!("{name}: agrees (return {return_})");
            }
            Finding::Differs(what) => {
                differ += 1;
                println!("{name}: DIFFERS: {what}");
            }
            Finding::Ungraded(why) => {
                ungraded += 1;
                println!("{name}: not graded online ({why})");
            }
            Finding::Cannot(why) => {
                cannot += 1;
                println!("{name}: cannot be rescored: {why}");
            }
        }
    }
    println!(
        "{} episodes: {agree} agree, {differ} differ, {ungraded} were not graded online, {cannot} could not be rescored",
        findings.len()
    );
    Ok(differ == 0)
}

async fn rescore_all(
    env: Arc<dyn Environment>,
    recorded: Vec<(PathBuf, RecordedEpisode)>,
    concurrency: usize,
) -> Vec<(PathBuf, Finding)> {
    let limit = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let mut tasks = tokio::task::JoinSet::new();
    for (file, episode) in recorded {
        let (env, limit) = (env.clone(), limit.clone());
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let finding = rescore_one(env, &episode)
                .await
                .unwrap_or_else(|error| Finding::Cannot(format!("{error:#}")));
            (file, finding)
        });
    }
    let mut findings = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let Ok(found) = joined {
            findings.push(found);
        }
    }
    findings
}

async fn rescore_one(
    env: Arc<dyn Environment>,
    recorded: &RecordedEpisode,
) -> anyhow::Result<Finding> {
    let Some(header) = recorded.header.clone() else {
        return Ok(Finding::Cannot("the file has no header record".into()));
    };
    // A test task's files and answer come from the secret it was played under: graded under
    // another, it would be another task.
    let held = mcpgym_shared::generate::test_secret_fingerprint();
    if let Some(played) = header.test_secret.as_deref()
        && played != held
    {
        return Ok(Finding::Cannot(format!(
            "it was played under the test secret with fingerprint {played}, and this process holds {held}: pass that server's secret file with --test-secret"
        )));
    }
    let status = recorded.status();
    let flag = |name: &str| status.get(name).and_then(Value::as_bool).unwrap_or(false);
    if !flag("done") {
        return Ok(Finding::Ungraded("it did not finish"));
    }
    if flag("aborted") {
        return Ok(Finding::Ungraded("it was aborted"));
    }
    let paid: BTreeMap<String, f64> = status
        .get("reward_components")
        .and_then(|c| serde_json::from_value(c.clone()).ok())
        .unwrap_or_default();
    let return_ = status.get("return").and_then(Value::as_f64).unwrap_or(0.0);
    let steps = recorded.typed_steps();
    let record = EpisodeRecord {
        task: header.task.clone(),
        seed: header.seed,
        options: header.options.clone(),
        calls: steps
            .iter()
            .map(|step| RecordedCall {
                tool: step.tool.clone(),
                arguments: step.arguments.clone(),
                arguments_cut: step.cut_bytes.contains_key("arguments"),
                is_error: step.is_error,
            })
            .collect(),
        truncated: flag("truncated"),
        graded: recorded.graded.clone(),
    };
    let graded_again: BTreeMap<String, f64> = match env.rescore(&record).await {
        Err(error) => return Ok(Finding::Cannot(error.to_string())),
        Ok(Rescored::Terminal(rewards)) => {
            let mut terminal = BTreeMap::new();
            for reward in rewards {
                *terminal.entry(reward.name.to_string()).or_default() += reward.value;
            }
            terminal
        }
        Ok(Rescored::ByReplay) => {
            if let Some(step) = record.calls.iter().find(|call| call.arguments_cut) {
                return Ok(Finding::Cannot(format!(
                    "a call to {} was recorded with its arguments cut to fit, so it cannot be made again",
                    step.tool
                )));
            }
            let hub = Hub::new(vec![env.clone()], settings_for(&header))?;
            let played = play_again(&hub, &header, recorded, &steps, |_, _| None).await;
            hub.close_all().await;
            let (_, replayed) = played?;
            // Every component the record or the replay has.
            let mut all = replayed.reward_components.clone();
            for name in paid.keys() {
                all.entry(name.clone()).or_insert(0.0);
            }
            all
        }
    };
    for (name, again) in &graded_again {
        let online = paid.get(name).copied().unwrap_or(0.0);
        if (online - again).abs() > TOLERANCE {
            return Ok(Finding::Differs(format!(
                "component {name} was {online} online and is {again} graded again"
            )));
        }
    }
    Ok(Finding::Agrees { return_ })
}
