//! `demand-forecast`: a shop's daily unit sales over a year or two; the agent forecasts the
//! next four weeks, scored by mean absolute error from that of repeating the last four weeks'
//! mean (0) to that of the demand rule itself without its noise (1).
//!
//! Demand follows a rule the history reveals: a level with a trend, a weekly pattern, a
//! yearly swing, and (medium and hard) a lift on promotion days, which `future.csv` announces
//! for the forecast weeks. A regression on the trend, the weekday, the season and the promotion
//! flag recovers it; a flat forecast misses the weekly pattern.
//!
//! Levels: easy is a clean year; medium adds promotions and a second year; hard also leaves
//! days out of the history, lists some days twice, and records the first months in dozens
//! (a `unit` column says which).

use mcpgym_env::generate::date_of;

use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes};
use crate::predictions::{Metric, PredictionGrader, Truth};
use crate::tasks::{Grader, TaskKind};

use super::{PREDICTIONS, closing};

pub(super) const FAMILY: Family = Family {
    name: "demand-forecast",
    kind: TaskKind::Modelling,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "forecast four weeks of a shop's daily sales from its history (MAE, partial credit)",
    generate,
};

/// The share of the score scale a forecast must reach to succeed.
const THRESHOLD: f64 = 0.7;

/// Days forecast.
const HORIZON: i64 = 28;

fn generate(g: &mut Gen) -> Instance {
    // Four weeks measure a forecast well only when the rule beats the flat forecast clearly;
    // draws where noise would swamp the difference are drawn again (from the same stream).
    let mut drawn = attempt(g);
    for _ in 0..50 {
        if drawn.1 {
            break;
        }
        drawn = attempt(g);
    }
    drawn.0
}

/// One draw, and whether the flat forecast's error is at least twice the rule's.
fn attempt(g: &mut Gen) -> (Instance, bool) {
    let level = g.level();
    let hard = level == Level::Hard;
    let promotions = level != Level::Easy;
    let history = level.pick(365, 730, 730);
    let start = g.int(0, 3 * 365);
    let base = g.float(120.0, 400.0);
    let trend = g.float(-0.08, 0.15) * base / 200.0;
    let weekly: Vec<f64> = (0..7).map(|_| g.float(-0.25, 0.3) * base).collect();
    let swing = g.float(0.05, 0.2) * base;
    let phase = g.float(0.0, std::f64::consts::TAU);
    let lift = g.float(0.2, 0.5) * base;
    let noise = g.float(0.03, 0.06) * base;
    // The expected demand of day `t` (counted from the history's start).
    let demand = |t: i64, promo: bool| {
        let day = start + t;
        // 2020-01-01 was a Wednesday: weekday 0 is Monday.
        let weekday = ((day + 2) % 7) as usize;
        base + trend * t as f64
            + weekly[weekday]
            + swing * (std::f64::consts::TAU * day as f64 / 365.25 + phase).sin()
            + if promo { lift } else { 0.0 }
    };
    let in_dozens = if hard { g.int(60, 120) } else { 0 };
    let mut rows = Vec::new();
    let mut recent = 0.0;
    for t in 0..history {
        let promo = promotions && g.chance(0.08);
        let sold = (demand(t, promo) + g.normal(0.0, noise)).round().max(0.0);
        if t >= history - HORIZON {
            recent += sold / HORIZON as f64;
        }
        // Gaps fall before the last four weeks, whose mean the flat forecast repeats.
        if hard && g.chance(0.03) && t < history - HORIZON {
            continue;
        }
        let (units, unit) = if t < in_dozens {
            (format!("{:.2}", sold / 12.0), "dozen")
        } else {
            (format!("{sold}"), "each")
        };
        let fields = vec![
            date_of(start + t),
            units,
            unit.to_owned(),
            u8::from(promo).to_string(),
        ];
        if hard && g.chance(0.02) {
            rows.push(fields.clone());
        }
        rows.push(fields);
    }
    let (mut future, mut ids, mut truth) = (Vec::new(), Vec::new(), Vec::new());
    let (mut flat, mut rule) = (0.0, 0.0);
    for t in history..history + HORIZON {
        let promo = promotions && g.chance(0.1);
        let expected = demand(t, promo);
        let sold = (expected + g.normal(0.0, noise)).round().max(0.0);
        let date = date_of(start + t);
        future.push(vec![date.clone(), u8::from(promo).to_string()]);
        ids.push(date);
        truth.push(sold);
        flat += (recent - sold).abs();
        rule += (expected - sold).abs();
    }
    let promo_text = if promotions {
        " promo is 1 on promotion days; future.csv lists the forecast days and which of them \
         have a promotion."
    } else {
        " future.csv lists the forecast days (promo is always 0)."
    };
    let dirty = if hard {
        " The history is careless: some days are missing, some are listed twice, and the \
         first months were recorded in dozens (unit says dozen or each)."
    } else {
        ""
    };
    let opening = match g.index(4) {
        0 => "Your home directory holds sales_history.csv: a shop's units sold per day",
        1 => "In your home directory, sales_history.csv lists a shop's units sold per day",
        2 => "The file sales_history.csv in your home directory records a shop's daily sales",
        _ => "A shop's daily sales are in sales_history.csv, in your home directory",
    };
    let task = match g.index(3) {
        0 => format!(
            "Forecast the units sold (each) on each day of future.csv, the {HORIZON} days after \
             the history."
        ),
        1 => format!(
            "Predict how many units (each) will sell on each day of future.csv, the {HORIZON} \
             days after the history."
        ),
        _ => format!(
            "future.csv lists the {HORIZON} days after the history: forecast the units sold \
             (each) on each of them."
        ),
    };
    let prompt = format!(
        "{opening}, with date (YYYY-MM-DD), units, unit and promo.{promo_text}{dirty} {task} \
         Write predictions.csv with a header and the columns id (the date) and prediction, one \
         row per day. It is scored by mean absolute error on the true sales (which only the \
         grader has): 0 at the error of repeating the mean of the last {HORIZON} days, 1 at \
         that of the demand rule behind the data; {THRESHOLD} or more is a success. {}",
        closing(g)
    );
    let grader = PredictionGrader {
        file: PREDICTIONS.into(),
        ids,
        truth: Truth::Numbers(truth),
        metric: Metric::Mae,
        baseline: flat / HORIZON as f64,
        reference: rule / HORIZON as f64,
        threshold: THRESHOLD,
    };
    let clear = grader.baseline >= 2.0 * grader.reference;
    let instance = Instance::new(prompt, Grader::Predictions(Box::new(grader)))
        .file(
            "sales_history.csv",
            csv_bytes(&["date", "units", "unit", "promo"], &rows),
        )
        .file("future.csv", csv_bytes(&["date", "promo"], &future));
    (instance, clear)
}
