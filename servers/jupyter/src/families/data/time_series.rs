//! `time-series`: a daily series with missing days; a monthly or weekly mean, a trailing
//! seven-day mean, or the month whose mean is highest.
//!
//! Levels: easy is one CSV in date order; medium has its rows out of order, some days listed
//! twice and some with a blank value (a missing day); hard also continues the series in a
//! second, European export (semicolons, DD/MM/YYYY dates, decimal commas) that overlaps the
//! first by some days.

use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;
use std::collections::BTreeMap;

use super::draw::{Attempt, draw};
use super::stats::mean;
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, date_of, round};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "time-series",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
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
    let level = g.level();
    let (messy, hard) = (level != Level::Easy, level == Level::Hard);
    let (column, file, low, high) = *g.pick(NAMES);
    let start = g.int(0, 5 * 365);
    let length = level.pick(g.int(150, 520), g.int(300, 700), g.int(500, 900));
    let gap = g.float(0.03, 0.12);
    let typical = g.float(low, high);
    let season = typical * g.float(0.05, 0.4);
    let phase = g.float(0.0, std::f64::consts::TAU);
    let trend = g.float(-0.2, 0.2) * typical / 365.0;
    let noise = typical * g.float(0.02, 0.15);
    // (day number, date, value) of every day the series has.
    let mut days: Vec<(i64, String, f64)> = Vec::new();
    // Days written with a blank value (medium on): missing all the same.
    let mut blanks: Vec<i64> = Vec::new();
    for d in start..start + length {
        if g.chance(gap) {
            if messy && g.chance(0.4) {
                blanks.push(d);
            }
            continue;
        }
        let t = (d - start) as f64;
        let wave = (std::f64::consts::TAU * d as f64 / 365.25 + phase).sin();
        let value = round(
            typical + season * wave + trend * t + g.normal(0.0, noise),
            2,
        );
        days.push((d, date_of(d), value));
    }
    let mut months: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (_, date, value) in &days {
        months.entry(date[..7].to_owned()).or_default().push(*value);
    }
    let monthly: Vec<(&String, f64)> = months.iter().map(|(m, v)| (m, mean(v))).collect();
    let monthly_text = "Resample the series to monthly means (the mean of the days present in \
                        each calendar month).";
    let mut sound = true;
    // (the definition, what is asked, the grader, the secret)
    let (definition, asked, grader, secret) = match g.index(5) {
        0 => {
            let full: Vec<&(&String, f64)> = monthly
                .iter()
                .filter(|(m, _)| months[*m].len() >= 10)
                .collect();
            let (month, value) = **g.pick(&full);
            (
                monthly_text.to_owned(),
                format!("the mean for {month}"),
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
                "Resample the series to weekly means over weeks running Monday to Sunday (the \
                 mean of the days present in each week)."
                    .to_owned(),
                format!(
                    "the mean of the week from {} (Monday) to {} (Sunday)",
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
                "Take the trailing 7-day rolling mean over calendar days: on a date D, the mean \
                 of the values dated D and the six days before it (missing days are simply \
                 absent from the window)."
                    .to_owned(),
                format!("the rolling mean on {date}"),
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
                    monthly_text.to_owned(),
                    "Which month has the highest mean? Answer with the month as YYYY-MM."
                        .to_owned(),
                    Grader::Exact(month.clone()),
                    None,
                )
            } else {
                (
                    monthly_text.to_owned(),
                    "the highest monthly mean".to_owned(),
                    numeric(value),
                    Some(format!("{value:.2}")),
                )
            }
        }
    };
    let question = if secret.is_some() {
        format!(
            "{} {}",
            wording::question(g, &asked),
            wording::precision(g, 2)
        )
    } else {
        asked
    };

    // The rows as written: (day number, date text, value text), in the file's conventions.
    let iso = |d: i64, value: Option<f64>| {
        vec![
            date_of(d),
            value.map_or(String::new(), |v| format!("{v:.2}")),
        ]
    };
    let european = |d: i64, value: Option<f64>| {
        let date = date_of(d);
        let value = value.map_or(String::new(), |v| format!("{v:.2}").replace('.', ","));
        format!("{}/{}/{};{value}", &date[8..10], &date[5..7], &date[..4])
    };
    let mut entries: Vec<(i64, Option<f64>)> = days.iter().map(|d| (d.0, Some(d.2))).collect();
    entries.extend(blanks.iter().map(|&d| (d, None)));
    entries.sort_by_key(|e| e.0);
    // Hard: the second export starts at `split`, and the first runs some days past it.
    let split = if hard {
        start + length * g.int(40, 70) / 100
    } else {
        i64::MAX
    };
    let overlap = g.int(3, 10);
    let mut first: Vec<Vec<String>> = Vec::new();
    let mut second: Vec<String> = Vec::new();
    for &(d, value) in &entries {
        let copies = if messy && g.chance(0.04) { 2 } else { 1 };
        for _ in 0..copies {
            if d < split.saturating_add(overlap) {
                first.push(iso(d, value));
            }
            if d >= split {
                second.push(european(d, value));
            }
        }
    }
    if messy {
        g.shuffle(&mut first);
        g.shuffle(&mut second);
    }
    let recent = file.replace(".csv", "_recent.csv");
    let intro = match g.index(4) {
        0 => format!(
            "The file {file} in your home directory holds a daily series with the columns date \
             (YYYY-MM-DD) and {column}; some days are missing from it."
        ),
        1 => format!(
            "Your home directory holds {file}, a daily series (columns date, as YYYY-MM-DD, and \
             {column}) with some days missing."
        ),
        2 => format!(
            "In your home directory, {file} has one row per day, date (YYYY-MM-DD) and \
             {column}; a few days are missing."
        ),
        _ => format!(
            "A daily series of {column} is in {file} in your home directory (columns date, as \
             YYYY-MM-DD, and {column}); not every day is there."
        ),
    };
    let untidy = if messy {
        " The rows are not in date order, a day may be listed twice (count it once), and a day \
         whose value is blank is a missing day."
    } else {
        ""
    };
    let continued = if hard {
        format!(
            " The series goes on in {recent}, a European export: separated by semicolons, with \
             dates as DD/MM/YYYY and decimal commas; the two files overlap by some days, which \
             hold the same values in both (count each day once)."
        )
    } else {
        String::new()
    };
    let mut instance = Instance::new(
        format!("{intro}{untidy}{continued} {definition} {question}"),
        grader,
    )
    .file(file, csv_bytes(&["date", column], &first));
    if hard {
        let mut text = format!("date;{column}\n");
        for line in &second {
            text.push_str(line);
            text.push('\n');
        }
        instance = instance.file(recent, text);
    }
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
