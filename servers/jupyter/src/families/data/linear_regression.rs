//! `linear-regression`: noisy linear data with one to four features; an ordinary least
//! squares fit's slope, intercept or prediction.
//!
//! Levels: easy is one clean CSV with one feature; medium has two or three features, more
//! rows, columns the model does not use, and blank or `NA` cells (the fit uses the complete
//! rows only); hard has three or four features split over two files joined by `id` (some ids
//! in only one of them, some rows of a file repeated), and one feature recorded in two units
//! (a `unit` column says which; the prompt gives the conversion).

use super::draw::{Attempt, draw};
use super::stats::ols;
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, round};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "linear-regression",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "fit ordinary least squares; a coefficient, the intercept or a prediction",
    generate,
};

const FEATURES: &[&str] = &[
    "temperature",
    "pressure",
    "humidity",
    "speed",
    "dose",
    "age",
    "hours",
    "distance",
    "weight",
    "price",
    "rainfall",
    "depth",
];
const TARGETS: &[&str] = &["yield", "output", "score", "cost", "demand", "response"];
const FILES: &[&str] = &[
    "data.csv",
    "experiment.csv",
    "observations.csv",
    "trials.csv",
];
/// Columns a medium or hard file carries that the model leaves out.
const EXTRAS: &[&str] = &["batch", "operator", "site", "shift"];

/// Hard: the measured feature recorded in two units, the second so many times the first.
const UNITS: &[(&str, &str, f64)] = &[
    ("m", "cm", 100.0),
    ("kg", "g", 1000.0),
    ("h", "min", 60.0),
    ("l", "ml", 1000.0),
];

/// One row as the files write it.
struct Written {
    id: i64,
    /// The features' cells (blank or `NA` where not recorded).
    features: Vec<String>,
    /// The last feature's unit (hard only; else empty).
    unit: String,
    /// The target's cell.
    target: String,
    /// The cells of the columns the model leaves out.
    extras: Vec<String>,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (easy, hard) = (level == Level::Easy, level == Level::Hard);
    let k = level.pick(1, g.int(2, 3), g.int(3, 4)) as usize;
    let features = g.sample(FEATURES, k);
    let target = *g.pick(TARGETS);
    let file = *g.pick(FILES);
    let n = level.pick(g.int(25, 100), g.int(100, 300), g.int(300, 700)) as usize;
    let extras = if easy {
        Vec::new()
    } else {
        g.subset(EXTRAS, 1, 2)
    };
    let ranges: Vec<(f64, f64)> = (0..k)
        .map(|_| {
            let low = g.float(-20.0, 50.0).round();
            (low, low + g.float(10.0, 100.0).round())
        })
        .collect();
    let intercept = g.float(-50.0, 50.0);
    let slopes: Vec<f64> = (0..k)
        .map(|_| {
            let sign = if g.chance(0.5) { 1.0 } else { -1.0 };
            sign * g.float(0.2, 5.0)
        })
        .collect();
    let noise = g.float(0.5, 10.0);
    // Hard: the last feature, made positive, is the one recorded in two units.
    let unit = hard.then(|| *g.pick(UNITS));
    let mut ranges = ranges;
    if unit.is_some() {
        let last = &mut ranges[k - 1];
        *last = (last.0.abs() + 1.0, last.0.abs() + 1.0 + (last.1 - last.0));
    }
    let gap = if easy { 0.0 } else { 0.03 };
    // The complete rows' columns, as the fit sees them.
    let mut columns: Vec<Vec<f64>> = vec![Vec::new(); k];
    let mut y = Vec::new();
    let mut written: Vec<Written> = Vec::new();
    let mut id = g.int(100, 5000);
    for _ in 0..n {
        id += g.int(1, 4);
        let mut texts = Vec::with_capacity(k);
        let mut xs = Vec::with_capacity(k);
        let mut value = intercept;
        let mut unit_text = String::new();
        for j in 0..k {
            let x = g.money(ranges[j].0, ranges[j].1, 2);
            value += slopes[j] * x;
            xs.push(x);
            let text = match unit {
                Some((base, small, factor)) if j == k - 1 => {
                    if g.chance(0.3) {
                        unit_text = small.to_owned();
                        // Exact: x has two decimals, and the factors are whole.
                        format!("{}", round(x * factor, 2))
                    } else {
                        unit_text = base.to_owned();
                        format!("{x:.2}")
                    }
                }
                _ => format!("{x:.2}"),
            };
            texts.push(text);
        }
        let value = round(value + g.normal(0.0, noise), 2);
        let mut target_text = format!("{value:.2}");
        // A blank or NA cell leaves the row out of the fit.
        let mut complete = true;
        if g.chance(gap * (k + 1) as f64) {
            complete = false;
            let blank = if g.chance(0.5) { "" } else { "NA" }.to_owned();
            let cell = g.index(k + 1);
            if cell == k {
                target_text = blank;
            } else {
                texts[cell] = blank;
            }
        }
        let extra_texts: Vec<String> = extras
            .iter()
            .map(|_| format!("{}{}", g.letters(1).to_uppercase(), g.int(1, 9)))
            .collect();
        if complete {
            for (column, x) in columns.iter_mut().zip(&xs) {
                column.push(*x);
            }
            y.push(value);
        }
        written.push(Written {
            id,
            features: texts,
            unit: unit_text,
            target: target_text,
            extras: extra_texts,
        });
    }
    let fit = ols(&columns, &y);
    let model = if k == 1 {
        format!("{target} = a + b × {}", features[0])
    } else {
        format!(
            "{target} = a + {}",
            features
                .iter()
                .enumerate()
                .map(|(j, f)| format!("b{} × {f}", j + 1))
                .collect::<Vec<_>>()
                .join(" + ")
        )
    };
    let (asked, value) = match g.index(3) {
        0 => {
            let j = g.index(k);
            let name = if k == 1 {
                "the slope b".to_owned()
            } else {
                format!("the coefficient of {}", features[j])
            };
            (name, fit[j + 1])
        }
        1 => ("the intercept a".to_owned(), fit[0]),
        _ => {
            let at: Vec<f64> = ranges
                .iter()
                .map(|&(low, high)| round(g.float(low, high), 1))
                .collect();
            let point = features
                .iter()
                .zip(&at)
                .map(|(f, x)| format!("{f} = {x:.1}"))
                .collect::<Vec<_>>()
                .join(", ");
            let value = fit[0] + fit[1..].iter().zip(&at).map(|(b, x)| b * x).sum::<f64>();
            (
                format!("the fitted model's prediction for {target} at {point}"),
                value,
            )
        }
    };

    let unit_text = unit.map_or(String::new(), |(base, small, factor)| {
        format!(
            " {0} is recorded in {base} or in {small}, as the column {0}_unit says \
             ({factor:.0} {small} = 1 {base}); the model takes it in {base}.",
            features[k - 1]
        )
    });
    let (files, layout) = if hard {
        // Features in one file, the target in another, joined by id.
        let (first, second) = ("features.csv", "outcomes.csv");
        let mut header: Vec<String> = vec!["id".to_owned()];
        header.extend(features.iter().map(|f| f.to_string()));
        header.push(format!("{}_unit", features[k - 1]));
        header.extend(extras.iter().map(|e| e.to_string()));
        let mut feature_rows = Vec::new();
        let mut outcome_rows = Vec::new();
        for Written {
            id,
            features: texts,
            unit,
            target: target_text,
            extras: extra,
        } in &written
        {
            let mut row = vec![id.to_string()];
            row.extend(texts.iter().cloned());
            row.push(unit.clone());
            row.extend(extra.iter().cloned());
            if g.chance(0.04) {
                feature_rows.push(row.clone());
            }
            feature_rows.push(row);
            let outcome = vec![id.to_string(), target_text.clone()];
            if g.chance(0.04) {
                outcome_rows.push(outcome.clone());
            }
            outcome_rows.push(outcome);
        }
        // Ids in one file only: rows that were never measured in full, not part of the fit.
        for _ in 0..g.int(3, 10) {
            id += g.int(1, 4);
            let mut row = vec![id.to_string()];
            row.extend(
                ranges
                    .iter()
                    .map(|r| format!("{:.2}", g.money(r.0, r.1, 2))),
            );
            row.push(unit.map_or(String::new(), |u| u.0.to_owned()));
            row.extend(extras.iter().map(|_| "X1".to_owned()));
            feature_rows.push(row);
            id += g.int(1, 4);
            outcome_rows.push(vec![id.to_string(), format!("{:.2}", g.float(-50.0, 50.0))]);
        }
        g.shuffle(&mut outcome_rows);
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let files = vec![
            (first.to_owned(), csv_bytes(&header, &feature_rows)),
            (second.to_owned(), csv_bytes(&["id", target], &outcome_rows)),
        ];
        let layout = format!(
            "Your home directory holds the results of an experiment in two files: {first} has \
             the columns {}, and {second} has id and {target}. Match them by id; a row that \
             is repeated counts once, and an id found in only one file is left out.",
            header.join(", ")
        );
        (files, layout)
    } else {
        let mut header: Vec<&str> = vec!["id"];
        header.extend(&features);
        header.extend(&extras);
        header.push(target);
        let rows: Vec<Vec<String>> = written
            .iter()
            .map(|row| {
                let Written {
                    id,
                    features: texts,
                    target: target_text,
                    extras: extra,
                    ..
                } = row;
                let mut row = vec![id.to_string()];
                row.extend(texts.iter().cloned());
                row.extend(extra.iter().cloned());
                row.push(target_text.clone());
                row
            })
            .collect();
        let listed = header.join(", ");
        let layout = match g.index(4) {
            0 => format!("The file {file} in your home directory has the columns {listed}."),
            1 => format!("Your home directory holds {file}, with the columns {listed}."),
            2 => format!("In your home directory, {file} records one trial a row: {listed}."),
            _ => format!("{file} (in your home directory) has one observation a row: {listed}."),
        };
        (vec![(file.to_owned(), csv_bytes(&header, &rows))], layout)
    };
    let missing = if easy {
        ""
    } else {
        " A blank or NA cell is a value not recorded; fit on the rows that have every value \
         the model uses."
    };
    let fit_text = match g.index(3) {
        0 => format!("Fit the linear model {model} by ordinary least squares (with an intercept)."),
        1 => format!(
            "Fit {target} by the linear model {model}, by ordinary least squares with an intercept."
        ),
        _ => {
            format!("Using ordinary least squares with an intercept, fit the linear model {model}.")
        }
    };
    let question = wording::question(g, &asked);
    let precision = wording::precision(g, 3);
    let mut instance = Instance::new(
        format!("{layout}{unit_text}{missing} {fit_text} {question} {precision}"),
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(3),
        },
    );
    for (path, bytes) in files {
        instance = instance.file(path, bytes);
    }
    let instance = instance.secret(format!("{value:.3}"));
    Attempt::new(instance, y.len() >= 20)
}
