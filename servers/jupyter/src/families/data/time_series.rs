//! `time-series`: a daily series with missing days; a monthly or weekly mean, a trailing
//! seven-day mean, or the month whose mean is highest.

use mcpgym_env::answer::half_unit;
use std::collections::BTreeMap;

use super::draw::{Attempt, draw};
use super::stats::mean;
use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes, date_of, round};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "time-series",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "resample a daily series with gaps: a period's mean or the month with the highest",
    generate,
};

/// The series: its column, its file, and the range its typical level is drawn from.
const NAMES: &[(&str, &str, f64, f64)] = &[
    ("value", "readings.csv", 20.0, 500.0),
    ("visitors", "visitors.csv", 200.0, 5000.0),
    ("load_mw", "grid_load.csv", 300.0, 2000.0),
    ("temperature", "weather.csv", 8.0, 25.0),
    ("sales", "daily_sales.csv", 500.0, 8000.0),
    ("requests", "traffic.csv", 1000.0, 60_000.0),
];

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let (column, file, low, high) = *g.pick(NAMES);
    let start = g.int(0, 5 * 365);
    let length = g.int(150, 520);
    let gap = g.float(0.03, 0.12);
    let level = g.float(low, high);
    let season = level * g.float(0.05, 0.4);
    let phase = g.float(0.0, std::f64::consts::TAU);
    let trend = g.float(-0.2, 0.2) * level / 365.0;
    let noise = level * g.float(0.02, 0.15);
    // (day number, date, value) of every day the file holds.
    let mut days: Vec<(i64, String, f64)> = Vec::new();
    for d in start..start + length {
        if g.chance(gap) {
            continue;
        }
        let t = (d - start) as f64;
        let wave = (std::f64::consts::TAU * d as f64 / 365.25 + phase).sin();
        let value = round(level + season * wave + trend * t + g.normal(0.0, noise), 2);
        days.push((d, date_of(d), value));
    }
    let mut months: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (_, date, value) in &days {
        months.entry(date[..7].to_owned()).or_default().push(*value);
    }
    let monthly: Vec<(&String, f64)> = months.iter().map(|(m, v)| (m, mean(v))).collect();
    let mut sound = true;
    let (question, grader, secret) = match g.index(5) {
        0 => {
            let full: Vec<&(&String, f64)> = monthly
                .iter()
                .filter(|(m, _)| months[*m].len() >= 10)
                .collect();
            let (month, value) = **g.pick(&full);
            let value = round(value, 2);
            (
                format!(
                    "Resample the series to monthly means (the mean of the days present in each \
                     calendar month). What is the mean for {month}? Give it rounded to 2 \
                     decimal places."
                ),
                numeric(value),
                Some(format!("{value:.2}")),
            )
        }
        1 => {
            // (Monday's day number, values of that Monday-to-Sunday week)
            let mut weeks: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
            for (d, _, value) in &days {
                weeks.entry(d - (d + 2) % 7).or_default().push(*value);
            }
            let weeks: Vec<(i64, Vec<f64>)> =
                weeks.into_iter().filter(|(_, v)| v.len() >= 3).collect();
            let (monday, values) = g.pick(&weeks);
            let value = mean(values);
            (
                format!(
                    "Resample the series to weekly means over weeks running Monday to Sunday \
                     (the mean of the days present in each week). What is the mean of the week \
                     from {} (Monday) to {} (Sunday)? Give it rounded to 2 decimal places.",
                    date_of(*monday),
                    date_of(monday + 6)
                ),
                numeric(value),
                Some(format!("{value:.2}")),
            )
        }
        2 => {
            let candidates: Vec<&(i64, String, f64)> =
                days.iter().filter(|d| d.0 >= start + 6).collect();
            let (day, date, _) = *g.pick(&candidates);
            let window: Vec<f64> = days
                .iter()
                .filter(|d| d.0 > day - 7 && d.0 <= *day)
                .map(|d| d.2)
                .collect();
            let value = mean(&window);
            (
                format!(
                    "Compute the trailing 7-day rolling mean over calendar days: on a date D, \
                     the mean of the values dated D and the six days before it (days missing \
                     from the file are simply absent from the window). What is it on {date}? \
                     Give it rounded to 2 decimal places."
                ),
                numeric(value),
                Some(format!("{value:.2}")),
            )
        }
        variant => {
            let mut ranked: Vec<(&String, f64)> = monthly.clone();
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
            sound = ranked.len() >= 2 && ranked[0].1 - ranked[1].1 >= 0.01;
            let (month, value) = ranked[0];
            if variant == 3 {
                // The month is a label the file shows (in every date of it), so not secret.
                (
                    "Resample the series to monthly means (the mean of the days present in \
                     each calendar month). Which month has the highest mean? Answer with the \
                     month as YYYY-MM."
                        .to_owned(),
                    Grader::Exact(month.clone()),
                    None,
                )
            } else {
                (
                    "Resample the series to monthly means (the mean of the days present in \
                     each calendar month). What is the highest monthly mean? Give it rounded \
                     to 2 decimal places."
                        .to_owned(),
                    numeric(value),
                    Some(format!("{value:.2}")),
                )
            }
        }
    };
    let rows: Vec<Vec<String>> = days
        .iter()
        .map(|(_, date, value)| vec![date.clone(), format!("{value:.2}")])
        .collect();
    let mut instance = Instance::new(
        format!(
            "The file {file} in your home directory holds a daily series with the columns \
             date (YYYY-MM-DD) and {column}; some days are missing from it. {question}"
        ),
        grader,
    )
    .file(file, csv_bytes(&["date", column], &rows));
    if let Some(secret) = secret {
        instance = instance.secret(secret);
    }
    Attempt::new(instance, sound)
}

fn numeric(value: f64) -> Grader {
    Grader::Numeric {
        value,
        rel_tol: 0.0,
        abs_tol: half_unit(2),
    }
}
