//! Every desktop task family through the real binary, one test per family (named as the
//! family, so a failure names it and `cargo nextest run -E 'test(=desktop_families::calc_chart)'`
//! runs one alone): the family's scripted solution, played through the MCP tools, passes its
//! grader (a demo that misses a key on a loaded machine gets a second try on a fresh desktop),
//! and the untouched desktop fails it (a grader that passes an untouched desktop does so on
//! every seed: the checks do not depend on the numbers drawn).
//!
//! The fast tier plays two instances of each family (one of each split it serves) and one
//! untouched desktop, all at once; the full tier (`./.ci/test --full`) plays 20 instances and
//! three untouched desktops. `MCPGYM_FAMILY_SEEDS=N` plays N instances instead (for working on
//! one family).

use std::sync::Arc;

use crate::common::*;
use crate::desktop_tasks::{DEMO_SERVER, check_demo_twice, check_hacks, check_untouched};
use mcpgym_desktop::families::{FAMILIES, Family, TEST};
use mcpgym_desktop::tasks::DesktopTask;
use tokio::sync::Semaphore;

/// The instances played: the first `seeds`, alternating between the train and test ranges.
fn instances(family: &Family, seeds: u64) -> Vec<Arc<DesktopTask>> {
    let ranges = family.ranges();
    (0..seeds)
        .map(|i| {
            // Every second instance from the test range; a held-out family has only that.
            let n = if ranges.train.is_empty() || i % 2 == 1 {
                TEST.start + i
            } else {
                ranges.train.start + i
            };
            Arc::new(family.task(n).expect("in range"))
        })
        .collect()
}

/// Desktops one family test runs at once: its whole fast-tier set, and in the full tier as
/// many as two per core (starting an application is what loads the machine; the demos
/// mostly wait on it).
fn desktops_at_once() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    by_tier(3, 2 * cores)
}

/// Plays `name`'s instances: untouched desktops and scripted hacks must fail, demos must pass.
async fn play_family(name: &str) {
    let family = FAMILIES
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no family {name}"));
    let seeds: u64 = std::env::var("MCPGYM_FAMILY_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(by_tier(2, 20));
    let untouched_count = by_tier(1, 3);
    // The instances are generated here and on the server: the same secret for both.
    let server_args = [DEMO_SERVER, &["--test-secret", shared_test_secret()]].concat();
    let server = Arc::new(HttpServer::start(&server_args));
    let places = Arc::new(Semaphore::new(desktops_at_once()));
    let tasks = instances(family, seeds);
    let mut runs = Vec::new();
    for (i, task) in tasks.iter().enumerate() {
        if i < untouched_count {
            let (server, task, places) = (server.clone(), task.clone(), places.clone());
            runs.push(tokio::spawn(async move {
                let _place = places.acquire_owned().await.unwrap();
                check_untouched(&server, &task).await.map(|()| None)
            }));
        }
        if i < untouched_count && !task.hacks().is_empty() {
            let (server, task, places) = (server.clone(), task.clone(), places.clone());
            runs.push(tokio::spawn(async move {
                let _place = places.acquire_owned().await.unwrap();
                check_hacks(&server, &task).await.map(|()| None)
            }));
        }
        let (server, task, places) = (server.clone(), task.clone(), places.clone());
        runs.push(tokio::spawn(async move {
            let _place = places.acquire_owned().await.unwrap();
            check_demo_twice(&server, &task).await
        }));
    }
    let (mut failures, mut retried) = (Vec::new(), Vec::new());
    for run in runs {
        // A desktop that did not start fails its instance, not the others.
        match run.await {
            Ok(Ok(None)) => {}
            Ok(Ok(Some(first))) => retried.push(first),
            Ok(Err(message)) => failures.push(message),
            Err(panicked) => failures.push(panicked.to_string()),
        }
    }
    // Shown with --nocapture (and by nextest on failure): demos that needed a second try.
    if !retried.is_empty() {
        println!(
            "{name}: {} of {} demos passed on their second try:\n{}",
            retried.len(),
            tasks.len(),
            retried.join("\n")
        );
    }
    assert!(
        failures.is_empty(),
        "{name}: {} of {} instances failed:\n{}",
        failures.len(),
        tasks.len(),
        failures.join("\n")
    );
}

/// One test per family; [`every_family_has_a_test`] keeps the list complete.
macro_rules! family_tests {
    ($($family:ident)*) => {
        /// The families tested here, by name.
        const TESTED: &[&str] = &[$(stringify!($family)),*];
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $family() {
                play_family(stringify!($family)).await;
            }
        )*
    };
}

family_tests! {
    web_form_from_file web_search_filter web_download_file web_form_submit web_find_fact
    web_bookmark_page
    writer_replace_sentence writer_bold_word writer_export_pdf writer_replace_word
    calc_column_total calc_sort_rows calc_chart calc_save_csv calc_delete_rows impress_add_slide
    terminal_window_title terminal_rename_file terminal_folder_tree terminal_count_lines
    terminal_append_line terminal_clipboard_line
    calculator_result_file calculator_arithmetic
    editor_replace_all editor_delete_line editor_write_save
    files_delete files_rename files_new_folder files_move_into_folder
    sheet_product_column sheet_column_total
}

#[test]
fn every_family_has_a_test() {
    let mut families: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
    let mut tested = TESTED.to_vec();
    families.sort_unstable();
    tested.sort_unstable();
    assert_eq!(
        tested, families,
        "each desktop family needs its line in family_tests! (tests/desktop_families.rs)"
    );
    assert!(families.len() >= 25, "{} families", families.len());
}

#[test]
fn the_fast_tier_plays_both_splits_of_every_family() {
    for family in FAMILIES.iter() {
        let splits: std::collections::BTreeSet<String> = instances(family, 2)
            .iter()
            .map(|task| task.split.to_string())
            .collect();
        let expected = if family.ranges().train.is_empty() {
            1
        } else {
            2
        };
        assert_eq!(splits.len(), expected, "{}: {splits:?}", family.name);
    }
}
