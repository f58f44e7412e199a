//! `strongest-correlation` (held out): several numeric columns under random names; which one
//! correlates most strongly (Pearson) with the target column.
//!
//! Levels: easy is one clean CSV of numeric columns; medium has more columns and rows, an id
//! and a text column to leave aside, and blank cells (each correlation uses the rows where
//! both columns have a value); hard also puts the target in a second file joined by id (some
//! ids in one file only, some rows repeated) and writes missing readings as -999 as well.

use super::draw::{Attempt, draw};
use super::stats::pearson;
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, round};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "strongest-correlation",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TestOnly,
    levelled: true,
    about: "which column's Pearson correlation with a target is strongest",
    generate,
};

const TARGETS: &[&str] = &["target", "outcome", "score", "response", "label_value", "y"];
const FILES: &[&str] = &["features.csv", "table.csv", "dataset.csv", "columns.csv"];
const GROUPS: &[&str] = &["north", "south", "east", "west", "central"];

/// How far the winner's correlation must lead the runner-up's.
const LEAD: f64 = 0.08;

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

/// Pearson's correlation of two columns over the rows where both have a value.
fn pairwise(x: &[Option<f64>], y: &[Option<f64>]) -> f64 {
    let (a, b): (Vec<f64>, Vec<f64>) = x
        .iter()
        .zip(y)
        .filter_map(|(a, b)| Some(((*a)?, (*b)?)))
        .unzip();
    pearson(&a, &b)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (gappy, hard) = (level != Level::Easy, level == Level::Hard);
    let target = *g.pick(TARGETS);
    let file = *g.pick(FILES);
    let k = level.pick(g.int(4, 7), g.int(7, 10), g.int(9, 13)) as usize;
    let mut names: Vec<String> = Vec::new();
    while names.len() < k {
        let name = format!("{}_{}", g.word(), g.letters(2));
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let n = level.pick(g.int(40, 200), g.int(150, 400), g.int(300, 700)) as usize;
    let weights: Vec<(f64, f64, f64, f64)> = (0..k)
        .map(|_| {
            (
                g.float(-1.0, 1.0),
                g.float(0.3, 2.0),
                g.float(-100.0, 100.0),
                g.float(0.5, 30.0),
            )
        })
        .collect();
    let (centre, scale) = (g.float(-50.0, 200.0), g.float(1.0, 40.0));
    let gap = if gappy { 0.05 } else { 0.0 };
    let mut columns: Vec<Vec<Option<f64>>> = vec![Vec::with_capacity(n); k];
    let mut y = Vec::with_capacity(n);
    // Each row as written: its id, its group and the feature cells.
    let mut rows: Vec<(String, String, Vec<String>)> = Vec::with_capacity(n);
    let mut id = g.int(100, 9000);
    // A blank cell, or (hard) now and then -999.
    let missing = |g: &mut Gen| if hard && g.chance(0.4) { "-999" } else { "" }.to_owned();
    for _ in 0..n {
        id += g.int(1, 3);
        let t = g.normal(0.0, 1.0);
        let mut cells = Vec::with_capacity(k);
        for (j, &(weight, noise, shift, stretch)) in weights.iter().enumerate() {
            let x = round(shift + stretch * (weight * t + g.normal(0.0, noise)), 2);
            if g.chance(gap) {
                columns[j].push(None);
                cells.push(missing(g));
            } else {
                columns[j].push(Some(x));
                cells.push(format!("{x:.2}"));
            }
        }
        let value = round(centre + scale * t, 2);
        if g.chance(gap) {
            y.push(None);
            cells.push(missing(g));
        } else {
            y.push(Some(value));
            cells.push(format!("{value:.2}"));
        }
        rows.push((format!("R{id}"), (*g.pick(GROUPS)).to_owned(), cells));
    }
    let absolute = g.chance(0.6);
    let mut scores: Vec<(f64, &str)> = columns
        .iter()
        .zip(&names)
        .map(|(x, name)| {
            let r = pairwise(x, &y);
            (if absolute { r.abs() } else { r }, name.as_str())
        })
        .collect();
    scores.sort_by(|a, b| b.0.total_cmp(&a.0));
    let sound = scores[0].0 - scores[1].0 >= LEAD;
    let winner = scores[0].1.to_owned();

    // The target sits at a random position among the feature columns (in its own file, hard).
    let position = g.index(k + 1);
    let mut header: Vec<String> = names.clone();
    if !hard {
        header.insert(position, target.to_owned());
    }
    if gappy {
        header.insert(0, "id".to_owned());
        header.insert(1 + g.index(header.len()), "region".to_owned());
    }
    let region_at = header.iter().position(|h| h == "region");
    let mut feature_rows = Vec::with_capacity(n);
    let mut target_rows = Vec::new();
    for (row_id, group, cells) in &rows {
        let mut line: Vec<String> = cells[..k].to_vec();
        if hard {
            target_rows.push(vec![row_id.clone(), cells[k].clone()]);
            if g.chance(0.04) {
                target_rows.push(vec![row_id.clone(), cells[k].clone()]);
            }
        } else {
            line.insert(position, cells[k].clone());
        }
        if gappy {
            line.insert(0, row_id.clone());
            if let Some(at) = region_at {
                line.insert(at, group.clone());
            }
        }
        feature_rows.push(line);
    }
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut instance_files = vec![(file.to_owned(), csv_bytes(&header_refs, &feature_rows))];
    let layout = if hard {
        // Ids scored that the features file does not have: left out by the match.
        for _ in 0..g.int(3, 8) {
            id += g.int(1, 3);
            target_rows.push(vec![
                format!("R{id}"),
                format!("{:.2}", g.float(-50.0, 200.0)),
            ]);
        }
        g.shuffle(&mut target_rows);
        instance_files.push((
            format!("{target}s.csv"),
            csv_bytes(&["id", target], &target_rows),
        ));
        format!(
            "The file {file} in your home directory has {k} numeric columns besides id and \
             region; {target}s.csv holds {target} by id (id, {target}). Match the rows by id: an \
             id in only one file is left out, and a row listed twice counts once. A cell that \
             is blank or -999 is a missing value; each correlation uses the rows where both \
             columns have a value."
        )
    } else if gappy {
        format!(
            "The file {file} in your home directory has {} numeric columns besides id and \
             region. A blank cell is a missing value; each correlation uses the rows where both \
             columns have a value.",
            k + 1
        )
    } else {
        match g.index(3) {
            0 => format!(
                "The file {file} in your home directory has {} numeric columns.",
                k + 1
            ),
            1 => format!(
                "Your home directory holds {file}, a table of {} numeric columns.",
                k + 1
            ),
            _ => format!(
                "In your home directory, {file} has {} columns of numbers.",
                k + 1
            ),
        }
    };
    let how = if absolute {
        "most strongly in either direction (the largest absolute value of the Pearson \
         correlation coefficient)"
    } else {
        "most positively (the largest Pearson correlation coefficient, sign included)"
    };
    let question = match g.index(3) {
        0 => {
            format!("Of the columns other than {target}, which one correlates with {target} {how}?")
        }
        1 => format!("Which column, other than {target}, correlates with {target} {how}?"),
        _ => wording::question(
            g,
            &format!("the column, other than {target}, that correlates with {target} {how}"),
        ),
    };
    let answer = match g.index(2) {
        0 => "Answer with the column name exactly as written in the header.",
        _ => wording::name_only(g),
    };
    // The answer is one of the column names the file shows, so nothing is marked secret.
    let mut instance = Instance::new(
        format!("{layout} {question} {answer}"),
        Grader::OneOf(vec![winner]),
    );
    for (path, bytes) in instance_files {
        instance = instance.file(path, bytes);
    }
    Attempt::new(instance, sound)
}
