//! Every desktop task family through the real binary: on each of 20 seeds (instances spread
//! over both splits) the family's scripted solution, played through the MCP tools, passes its
//! grader (a demo that misses a key on a loaded machine gets a second try on a fresh desktop),
//! and on the first three the untouched desktop fails it (a grader that passes an
//! untouched desktop does so on every seed: the checks do not depend on the numbers drawn).
//!
//! `MCPGYM_FAMILIES=a,b` runs only those families; `MCPGYM_FAMILY_SEEDS=N` plays N instances
//! of each instead of 20 (for working on one family).

use std::sync::Arc;

use crate::common::*;
use crate::desktop_tasks::{check_demo, check_untouched};
use mcpgym_desktop::families::{FAMILIES, Family, TEST};
use mcpgym_desktop::tasks::DesktopTask;

/// The instances played: the first `seeds`, spread over the train and test ranges.
fn instances(family: &Family, seeds: u64) -> Vec<Arc<DesktopTask>> {
    let ranges = family.ranges();
    (0..seeds)
        .map(|i| {
            // Every third instance from the test range; a held-out family has only that.
            let n = if ranges.train.is_empty() || i % 3 == 2 {
                TEST.start + i
            } else {
                ranges.train.start + i
            };
            Arc::new(family.task(n).expect("in range"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_fails_untouched_and_passes_after_its_demo() {
    let only: Option<Vec<String>> = std::env::var("MCPGYM_FAMILIES")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    let seeds: u64 = std::env::var("MCPGYM_FAMILY_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let families: Vec<&Family> = FAMILIES
        .iter()
        .filter(|f| only.as_ref().is_none_or(|o| o.iter().any(|n| n == f.name)))
        .collect();
    if only.is_none() {
        assert!(families.len() >= 25, "{} families", families.len());
    }
    let server = Arc::new(HttpServer::start(&[
        "desktop",
        "--max-turns",
        "1000",
        "--no-action-screenshots",
    ]));
    // (task, whether its untouched desktop is checked too)
    let tasks: Vec<(Arc<DesktopTask>, bool)> = families
        .iter()
        .flat_map(|f| {
            instances(f, seeds)
                .into_iter()
                .enumerate()
                .map(|(i, task)| (task, i < 3))
        })
        .collect();
    // A few desktops at a time: enough to overlap start-up, few enough for two cores.
    let (mut failures, mut retried) = (Vec::new(), Vec::new());
    for chunk in tasks.chunks(3) {
        let runs: Vec<_> = chunk
            .iter()
            .map(|(task, untouched)| {
                let (server, task, untouched) = (server.clone(), task.clone(), *untouched);
                tokio::spawn(async move {
                    if untouched {
                        check_untouched(&server, &task).await?;
                    }
                    // A demo is a fixed script of keys and waits: on a loaded machine an
                    // application can miss one. A grader or demo that is wrong fails the
                    // same way twice; a missed key, almost never.
                    match check_demo(&server, &task).await {
                        Ok(()) => Ok(None),
                        Err(first) => match check_demo(&server, &task).await {
                            Ok(()) => Ok(Some(first)),
                            Err(second) => Err(format!("{first}\nand again: {second}")),
                        },
                    }
                })
            })
            .collect();
        for run in runs {
            // A desktop that did not start fails its instance, not the whole run.
            match run.await {
                Ok(Ok(None)) => {}
                Ok(Ok(Some(first))) => retried.push(first),
                Ok(Err(message)) => failures.push(message),
                Err(panicked) => failures.push(panicked.to_string()),
            }
        }
    }
    // Shown with --nocapture: how often a demo needed its second try.
    println!(
        "{} of {} demos passed on their second try:\n{}",
        retried.len(),
        tasks.len(),
        retried.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} of {} instances failed:\n{}",
        failures.len(),
        tasks.len(),
        failures.join("\n")
    );
}
