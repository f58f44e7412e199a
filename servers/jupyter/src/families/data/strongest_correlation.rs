//! `strongest-correlation` (held out): several numeric columns under random names; which one
//! correlates most strongly (Pearson) with the target column.

use super::draw::{Attempt, draw};
use super::stats::pearson;
use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes, round};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "strongest-correlation",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TestOnly,
    levelled: false,
    about: "which column's Pearson correlation with a target is strongest",
    generate,
};

const TARGETS: &[&str] = &["target", "outcome", "score", "response", "label_value", "y"];
const FILES: &[&str] = &["features.csv", "table.csv", "dataset.csv", "columns.csv"];

/// How far the winner's correlation must lead the runner-up's.
const LEAD: f64 = 0.08;

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let target = *g.pick(TARGETS);
    let file = *g.pick(FILES);
    let k = g.int(4, 7) as usize;
    let mut names: Vec<String> = Vec::new();
    while names.len() < k {
        let name = format!("{}_{}", g.word(), g.letters(2));
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let n = g.int(40, 200) as usize;
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
    let (level, scale) = (g.float(-50.0, 200.0), g.float(1.0, 40.0));
    let mut columns: Vec<Vec<f64>> = vec![Vec::with_capacity(n); k];
    let mut y = Vec::with_capacity(n);
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let t = g.normal(0.0, 1.0);
        let mut row = Vec::with_capacity(k + 1);
        for (j, &(weight, noise, shift, stretch)) in weights.iter().enumerate() {
            let x = round(shift + stretch * (weight * t + g.normal(0.0, noise)), 2);
            columns[j].push(x);
            row.push(format!("{x:.2}"));
        }
        let value = round(level + scale * t, 2);
        y.push(value);
        rows.push(row);
    }
    // The target sits at a random position among the columns.
    let position = g.index(k + 1);
    for (row, value) in rows.iter_mut().zip(&y) {
        row.insert(position, format!("{value:.2}"));
    }
    let mut header: Vec<&str> = names.iter().map(String::as_str).collect();
    header.insert(position, target);
    let absolute = g.chance(0.6);
    let mut scores: Vec<(f64, &str)> = columns
        .iter()
        .zip(&names)
        .map(|(x, name)| {
            let r = pearson(x, &y);
            (if absolute { r.abs() } else { r }, name.as_str())
        })
        .collect();
    scores.sort_by(|a, b| b.0.total_cmp(&a.0));
    let sound = scores[0].0 - scores[1].0 >= LEAD;
    let winner = scores[0].1.to_owned();
    let how = if absolute {
        "most strongly in either direction (the largest absolute value of the Pearson \
         correlation coefficient)"
    } else {
        "most positively (the largest Pearson correlation coefficient, sign included)"
    };
    // The answer is one of the column names the file shows, so nothing is marked secret.
    let instance = Instance::new(
        format!(
            "The file {file} in your home directory has {} numeric columns. Of the columns \
             other than {target}, which one correlates with {target} {how}? Answer with the \
             column name exactly as written in the header.",
            k + 1
        ),
        Grader::OneOf(vec![winner]),
    )
    .file(file, csv_bytes(&header, &rows));
    Attempt::new(instance, sound)
}
