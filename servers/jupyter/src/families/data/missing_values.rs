//! `missing-values`: a CSV with blanks and NA tokens; clean it by a stated rule (drop rows,
//! or fill with a median or mean), then a statistic of one column.
//!
//! Levels: easy is as described; medium has more rows, the missing-value tokens in other
//! capitals too (`N/A` for `n/a`), large numbers written with thousands separators, and a
//! mean-filling rule besides; hard also lists some rows twice (one `id`, to be counted once)
//! and may ask to fill a value with the median of its own city's values.

use super::draw::{Attempt, draw};
use super::stats::{mean, median, sd, sum};
use crate::families::money::thousands;
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, round, words};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "missing-values",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
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

/// One row as it is (before the file writes it): the city's index, then each numeric value,
/// `None` where missing.
struct Row {
    city: Option<usize>,
    values: Vec<Option<f64>>,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (messy, hard) = (level != Level::Easy, level == Level::Hard);
    let file = *g.pick(FILES);
    let columns = g.subset(COLUMNS, 3, 5);
    let tokens = g.subset(TOKENS, level.pick(1, 2, 2), level.pick(3, 4, 4));
    let cities = g.subset(words::CITIES, 3, 5);
    let n = level.pick(g.int(40, 250), g.int(250, 600), g.int(600, 1200)) as usize;
    let gaps: Vec<f64> = (0..=columns.len()).map(|_| g.float(0.03, 0.15)).collect();
    let shapes: Vec<(f64, f64)> = columns
        .iter()
        .map(|&(_, low, high)| {
            let centre = g.float(low, high);
            (centre, centre * g.float(0.05, 0.3))
        })
        .collect();
    let columns: Vec<&str> = columns.iter().map(|c| c.0).collect();
    let mut table: Vec<Row> = Vec::with_capacity(n);
    let mut lines = Vec::with_capacity(n);
    for i in 0..n {
        let mut line = vec![(i + 1).to_string()];
        let city = g.index(cities.len());
        let city = if g.chance(gaps[0]) {
            line.push(token(g, &tokens, messy));
            None
        } else {
            line.push(cities[city].to_owned());
            Some(city)
        };
        let mut values = Vec::with_capacity(shapes.len());
        for (c, &(centre, spread)) in shapes.iter().enumerate() {
            if g.chance(gaps[c + 1]) {
                line.push(token(g, &tokens, messy));
                values.push(None);
            } else {
                let value = round(g.normal(centre, spread).abs(), 2);
                line.push(if messy && value >= 1000.0 && g.chance(0.3) {
                    thousands(value, 2)
                } else {
                    format!("{value:.2}")
                });
                values.push(Some(value));
            }
        }
        // A row exported twice (hard): the same line again, counted once.
        if hard && g.chance(0.05) {
            lines.push(line.clone());
        }
        table.push(Row { city, values });
        lines.push(line);
    }
    let target = g.index(columns.len());
    let name = columns[target];
    let present = |keep: &dyn Fn(&Row) -> bool| -> Vec<f64> {
        table
            .iter()
            .filter(|r| keep(r))
            .filter_map(|r| r.values[target])
            .collect()
    };
    let rules = level.pick(3, 4, 5);
    let (rule, values) = match g.index(rules) {
        0 => (
            "Drop every row that has a missing value in any column (city included).".to_owned(),
            present(&|r| r.city.is_some() && r.values.iter().all(Option::is_some)),
        ),
        1 => {
            let other = (target + 1 + g.index(columns.len() - 1)) % columns.len();
            (
                format!(
                    "Drop the rows where {name} or {} is missing (keep the others).",
                    columns[other]
                ),
                present(&|r| r.values[other].is_some()),
            )
        }
        2 => {
            let fill = median(&present(&|_| true));
            (
                format!(
                    "Fill the missing values of {name} with the median of its present values \
                     (keep every row)."
                ),
                table
                    .iter()
                    .map(|r| r.values[target].unwrap_or(fill))
                    .collect(),
            )
        }
        3 => {
            let fill = mean(&present(&|_| true));
            (
                format!(
                    "Fill the missing values of {name} with the mean of its present values \
                     (keep every row)."
                ),
                table
                    .iter()
                    .map(|r| r.values[target].unwrap_or(fill))
                    .collect(),
            )
        }
        _ => {
            let fills: Vec<f64> = (0..cities.len())
                .map(|c| median(&present(&|r| r.city == Some(c))))
                .collect();
            (
                format!(
                    "Drop the rows whose city is missing, then fill each missing value of \
                     {name} with the median of the present {name} values of the same city."
                ),
                table
                    .iter()
                    .filter_map(|r| r.city.map(|c| r.values[target].unwrap_or(fills[c])))
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
    let listed = header.join(", ");
    let intro = match g.index(4) {
        0 => format!("The file {file} in your home directory has the columns {listed}."),
        1 => format!("Your home directory holds {file}, with the columns {listed}."),
        2 => format!("In your home directory, {file} has one record a row: {listed}."),
        _ => format!("{file} (in your home directory) has the columns {listed}, with gaps."),
    };
    let tokens_text = if messy {
        format!(
            " A missing value is written as an empty field or as one of {spelled} (without \
             the quotes, in any capitals)."
        )
    } else {
        format!(
            " A missing value is written as an empty field or as one of {spelled} (without \
             the quotes)."
        )
    };
    let dirty = match level {
        Level::Easy => "",
        Level::Medium => " A large number may be written with thousands separators (\"1,250.00\").",
        Level::Hard => {
            " A large number may be written with thousands separators (\"1,250.00\"), and a \
             row may be listed twice (count each id once)."
        }
    };
    let question = wording::question(g, &format!("{statistic} of {name}"));
    let precision = wording::precision(g, 2);
    let instance = Instance::new(
        format!("{intro}{tokens_text}{dirty} {rule} Then: {question} {precision}"),
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file(file, csv_bytes(&header, &lines))
    .secret(format!("{value:.2}"));
    Attempt::new(instance, values.len() >= 5 && value.is_finite())
}

/// How one missing cell is written: empty, or one of the instance's tokens (in other
/// capitals now and then, when `messy`).
fn token(g: &mut Gen, tokens: &[&str], messy: bool) -> String {
    if g.chance(0.35) {
        return String::new();
    }
    let token = *g.pick(tokens);
    if messy && g.chance(0.3) {
        if token.chars().any(char::is_lowercase) {
            token.to_uppercase()
        } else {
            token.to_lowercase()
        }
    } else {
        token.to_owned()
    }
}
