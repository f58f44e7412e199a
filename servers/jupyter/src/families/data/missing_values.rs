//! `missing-values`: a CSV with blanks and NA tokens; clean it by a stated rule (drop rows,
//! or fill with the column's median), then a statistic of one column.

use super::draw::{Attempt, draw};
use super::stats::{mean, median, sd, sum};
use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes, round, words};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "missing-values",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "clean missing values by a stated rule, then a column statistic",
    generate,
};

/// Numeric columns: name, and the range their typical value is drawn from.
const COLUMNS: &[(&str, f64, f64)] = &[
    ("height", 150.0, 190.0),
    ("weight", 55.0, 95.0),
    ("income", 20_000.0, 90_000.0),
    ("score", 40.0, 90.0),
    ("age", 25.0, 65.0),
    ("duration", 20.0, 120.0),
    ("spend", 40.0, 500.0),
    ("visits", 20.0, 60.0),
    ("balance", 500.0, 9000.0),
];
const TOKENS: &[&str] = &["NA", "n/a", "?", "-", "missing", "null", "none"];
const FILES: &[&str] = &["survey.csv", "records.csv", "raw_data.csv", "patients.csv"];

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let file = *g.pick(FILES);
    let columns = g.subset(COLUMNS, 3, 5);
    let tokens = g.subset(TOKENS, 1, 3);
    let cities = g.subset(words::CITIES, 3, 5);
    let n = g.int(40, 250) as usize;
    let gaps: Vec<f64> = (0..=columns.len()).map(|_| g.float(0.03, 0.15)).collect();
    let shapes: Vec<(f64, f64)> = columns
        .iter()
        .map(|&(_, low, high)| {
            let centre = g.float(low, high);
            (centre, centre * g.float(0.05, 0.3))
        })
        .collect();
    let columns: Vec<&str> = columns.iter().map(|c| c.0).collect();
    // Every cell: `None` when missing. Column 0 is the city, then the numeric columns.
    let mut table: Vec<Vec<Option<f64>>> = Vec::with_capacity(n);
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let mut cells = Vec::new();
        let mut row = vec![(i + 1).to_string()];
        let city = g.index(cities.len());
        let missing = |g: &mut Gen, column: usize| g.chance(gaps[column]);
        if missing(g, 0) {
            row.push(token(g, &tokens));
            cells.push(None);
        } else {
            row.push(cities[city].to_owned());
            cells.push(Some(city as f64));
        }
        for (c, &(centre, spread)) in shapes.iter().enumerate() {
            if missing(g, c + 1) {
                row.push(token(g, &tokens));
                cells.push(None);
            } else {
                let value = round(g.normal(centre, spread).abs(), 2);
                row.push(format!("{value:.2}"));
                cells.push(Some(value));
            }
        }
        table.push(cells);
        rows.push(row);
    }
    let target = g.index(columns.len());
    let name = columns[target];
    let present = |rows: &dyn Fn(&Vec<Option<f64>>) -> bool| -> Vec<f64> {
        table
            .iter()
            .filter(|r| rows(r))
            .filter_map(|r| r[target + 1])
            .collect()
    };
    let (rule, values) = match g.index(3) {
        0 => (
            "Drop every row that has a missing value in any column (city included).".to_owned(),
            present(&|r| r.iter().all(Option::is_some)),
        ),
        1 => {
            let other = (target + 1 + g.index(columns.len() - 1)) % columns.len();
            (
                format!(
                    "Drop the rows where {name} or {} is missing (keep the others).",
                    columns[other]
                ),
                present(&|r| r[other + 1].is_some()),
            )
        }
        _ => {
            let known = present(&|_| true);
            let fill = median(&known);
            (
                format!(
                    "Fill the missing values of {name} with the median of its present values \
                     (keep every row)."
                ),
                table
                    .iter()
                    .map(|r| r[target + 1].unwrap_or(fill))
                    .collect(),
            )
        }
    };
    let (statistic, value) = match g.index(3) {
        0 => ("the mean", mean(&values)),
        1 => ("the sum", sum(&values)),
        _ => (
            "the sample standard deviation (dividing by n - 1)",
            sd(&values, 1),
        ),
    };
    let spelled = tokens
        .iter()
        .map(|t| format!("{t:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut header = vec!["id", "city"];
    header.extend(&columns);
    let instance = Instance::new(
        format!(
            "The file {file} in your home directory has the columns {}. A missing value is \
             written as an empty field or as one of {spelled} (without the quotes). {rule} \
             Then what is {statistic} of {name}? Give the number rounded to 2 decimal places.",
            header.join(", ")
        ),
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file(file, csv_bytes(&header, &rows))
    .secret(format!("{value:.2}"));
    Attempt::new(instance, values.len() >= 5)
}

/// How one missing cell is written: empty, or one of the instance's tokens.
fn token(g: &mut Gen, tokens: &[&str]) -> String {
    if g.chance(0.35) {
        String::new()
    } else {
        (*g.pick(tokens)).to_owned()
    }
}
