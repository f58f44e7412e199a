//! `linear-regression`: noisy linear data with one to three features; an ordinary least
//! squares fit's slope, intercept or prediction.

use super::draw::{Attempt, draw};
use super::stats::ols;
use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes, round};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "linear-regression",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: false,
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

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let k = g.int(1, 3) as usize;
    let features = g.sample(FEATURES, k);
    let target = *g.pick(TARGETS);
    let file = *g.pick(FILES);
    let n = g.int(25, 200) as usize;
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
    let mut columns: Vec<Vec<f64>> = vec![Vec::with_capacity(n); k];
    let mut y = Vec::with_capacity(n);
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let mut row = Vec::with_capacity(k + 1);
        let mut value = intercept;
        for j in 0..k {
            let x = g.money(ranges[j].0, ranges[j].1, 2);
            value += slopes[j] * x;
            columns[j].push(x);
            row.push(format!("{x:.2}"));
        }
        let value = round(value + g.normal(0.0, noise), 2);
        y.push(value);
        row.push(format!("{value:.2}"));
        rows.push(row);
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
    let (question, value) = match g.index(3) {
        0 => {
            let j = g.index(k);
            let name = if k == 1 {
                "the slope b".to_owned()
            } else {
                format!("the coefficient of {}", features[j])
            };
            (format!("What is {name}?"), fit[j + 1])
        }
        1 => ("What is the intercept a?".to_owned(), fit[0]),
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
                format!("What does the fitted model predict for {target} at {point}?"),
                value,
            )
        }
    };
    let mut header: Vec<&str> = features.clone();
    header.push(target);
    Attempt::new(
        Instance::new(
            format!(
                "The file {file} in your home directory has the columns {}. Fit the linear model \
             {model} by ordinary least squares (with an intercept, on all rows). {question} \
             Give the number rounded to 3 decimal places.",
                header.join(", ")
            ),
            Grader::Numeric {
                value,
                rel_tol: 0.0,
                abs_tol: half_unit(3),
            },
        )
        .file(file, csv_bytes(&header, &rows))
        .secret(format!("{value:.3}")),
        true,
    )
}
