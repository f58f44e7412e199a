//! `outliers`: sensor readings; the values a stated rule flags (a z-score above a threshold
//! with a stated standard deviation, or the IQR rule with stated quartiles), counted or
//! summed, or the mean of the values the rule keeps.
//!
//! Levels: easy is one clean CSV; medium has more readings and sensor faults (readings of
//! -999 or empty ones, to be left out of everything before the rule is applied); hard also
//! lists some readings twice (one `reading_id`, counted once) and records each reading in
//! one of two units (a `unit` column; the prompt gives the conversion), so that values must
//! be converted before they are compared.

use super::draw::{Attempt, draw};
use super::stats::{mean, quantile, sd, sum};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, round};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "outliers",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "flag outliers by a stated z-score or IQR rule; count, sum or mean of the rest",
    generate,
};

const FILES: &[&str] = &[
    "readings.csv",
    "measurements.csv",
    "sensor_log.csv",
    "samples.csv",
];
/// Quantities: the column's name, its unit, and a smaller unit so many times finer (what a
/// hard instance records some readings in).
const QUANTITIES: &[(&str, &str, &str, f64)] = &[
    ("pressure", "kPa", "Pa", 1000.0),
    ("voltage", "V", "mV", 1000.0),
    ("flow", "l/min", "ml/min", 1000.0),
    ("level", "m", "cm", 100.0),
    ("load", "kN", "N", 1000.0),
    ("current", "A", "mA", 1000.0),
];

/// How far every value must stay from the rule's threshold, so that float rounding in another
/// implementation cannot flip a verdict.
const MARGIN: f64 = 1e-6;

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (faulty, hard) = (level != Level::Easy, level == Level::Hard);
    let file = *g.pick(FILES);
    let (quantity, unit, small, factor) = *g.pick(QUANTITIES);
    let sensors: Vec<String> = (0..level.pick(g.int(2, 5), g.int(3, 6), g.int(4, 8)))
        .map(|i| format!("{}{}", char::from(b'A' + i as u8), g.int(10, 99)))
        .collect();
    let typical = g.float(5.0, 900.0);
    let mut values: Vec<(usize, f64)> = Vec::new();
    let mut rows = Vec::new();
    let mut id = g.int(1, 5000);
    let centres: Vec<(f64, f64)> = sensors
        .iter()
        .map(|_| (typical * g.float(0.8, 1.2), typical * g.float(0.02, 0.1)))
        .collect();
    let count = level.pick(g.int(60, 300), g.int(300, 700), g.int(700, 1500));
    for _ in 0..count {
        let s = g.index(sensors.len());
        let (centre, spread) = centres[s];
        let value = if g.chance(0.03) {
            let sign = if g.chance(0.5) { 1.0 } else { -1.0 };
            centre + sign * spread * g.float(3.0, 8.0)
        } else {
            g.normal(centre, spread)
        };
        let value = round(value, 2);
        id += g.int(1, 3);
        // A fault (medium on): a reading that is not one, left out of everything.
        let fault = faulty && g.chance(0.03);
        let finer = !fault && hard && g.chance(0.3);
        let text = if fault {
            if g.chance(0.5) { "-999" } else { "" }.to_owned()
        } else if finer {
            // Exact: the value has two decimals and the factor is whole.
            format!("{}", round(value * factor, 2))
        } else {
            format!("{value:.2}")
        };
        let mut row = vec![format!("R{id}"), sensors[s].clone(), text];
        if hard {
            row.push(if finer { small } else { unit }.to_owned());
            if g.chance(0.04) {
                rows.push(row.clone());
            }
        }
        rows.push(row);
        if !fault {
            values.push((s, value));
        }
    }
    let per_sensor = g.chance(0.5);
    let groups: Vec<Vec<usize>> = if per_sensor {
        (0..sensors.len())
            .map(|s| (0..values.len()).filter(|&i| values[i].0 == s).collect())
            .collect()
    } else {
        vec![(0..values.len()).collect()]
    };
    let scope = if per_sensor {
        "computed separately for each sensor over that sensor's readings"
    } else {
        "computed over the whole column"
    };
    let mut flagged = vec![false; values.len()];
    let mut sound = groups.iter().all(|group| group.len() >= 5);
    let rule = if g.chance(0.5) {
        let k = *g.pick(&[2.0, 2.5, 3.0]);
        let ddof = g.index(2);
        for group in groups.iter().filter(|group| group.len() > 1) {
            let column: Vec<f64> = group.iter().map(|&i| values[i].1).collect();
            let (m, s) = (mean(&column), sd(&column, ddof));
            for &i in group {
                let z = (values[i].1 - m).abs() / s;
                flagged[i] = z > k;
                sound &= (z - k).abs() > MARGIN;
            }
        }
        let deviation = if ddof == 0 {
            "the population standard deviation (dividing by n)"
        } else {
            "the sample standard deviation (dividing by n - 1)"
        };
        format!(
            "A reading is an outlier when its z-score |x - mean| / sd is greater than {k:.1}, \
             where sd is {deviation} and mean and sd are {scope}."
        )
    } else {
        let iqr_factor = *g.pick(&[1.5, 1.5, 2.0]);
        for group in &groups {
            let column: Vec<f64> = group.iter().map(|&i| values[i].1).collect();
            let (q1, q3) = (quantile(&column, 0.25), quantile(&column, 0.75));
            let (low, high) = (q1 - iqr_factor * (q3 - q1), q3 + iqr_factor * (q3 - q1));
            for &i in group {
                let x = values[i].1;
                flagged[i] = x < low || x > high;
                sound &= (x - low).abs() > MARGIN && (x - high).abs() > MARGIN;
            }
        }
        format!(
            "A reading is an outlier when it is below Q1 - {iqr_factor:.1} × IQR or above Q3 + \
             {iqr_factor:.1} × IQR (IQR = Q3 - Q1), where Q1 and Q3 are the 25th and 75th \
             percentiles by linear interpolation (numpy.percentile's default method), {scope}."
        )
    };
    let outliers: Vec<f64> = (0..values.len())
        .filter(|&i| flagged[i])
        .map(|i| values[i].1)
        .collect();
    let kept: Vec<f64> = (0..values.len())
        .filter(|&i| !flagged[i])
        .map(|i| values[i].1)
        .collect();

    let mut header = vec!["reading_id", "sensor", quantity];
    if hard {
        header.push("unit");
    }
    let listed = header.join(", ");
    let intro = match g.index(4) {
        0 => format!("The file {file} in your home directory has one row per reading: {listed}."),
        1 => format!("Your home directory holds {file}, one sensor reading a row ({listed})."),
        2 => format!(
            "In your home directory, {file} logs the readings of several sensors: {listed}."
        ),
        _ => {
            format!("{file}, in your home directory, has the columns {listed}, one reading a row.")
        }
    };
    let units = if hard {
        format!(
            " Each {quantity} is in the unit its unit column names, {unit} or {small} (1 {unit} \
             = {factor:.0} {small}); work in {unit}. A reading may be listed twice (count each \
             reading_id once)."
        )
    } else {
        format!(" The {quantity} values are in {unit}.")
    };
    let faults = if faulty {
        " A reading of -999 or an empty one is a sensor fault, not a reading: leave it out of \
         everything, before the rule below."
    } else {
        ""
    };
    let (question, grader, secret) = match g.index(3) {
        // A count is a small integer that any file of numbers holds somewhere, so it is not
        // marked secret; the other variants are.
        0 => (
            format!(
                "{} {}",
                wording::question(g, "the number of readings that are outliers"),
                wording::precision(g, 0)
            ),
            Grader::Numeric {
                value: outliers.len() as f64,
                rel_tol: 0.0,
                abs_tol: 0.0,
            },
            None,
        ),
        1 => {
            sound &= !outliers.is_empty();
            let total = sum(&outliers);
            (
                format!(
                    "{} {}",
                    wording::question(
                        g,
                        &format!("the sum of the {quantity} values of the outliers, in {unit}")
                    ),
                    wording::precision(g, 2)
                ),
                Grader::Numeric {
                    value: total,
                    rel_tol: 0.0,
                    abs_tol: half_unit(2),
                },
                Some(format!("{total:.2}")),
            )
        }
        _ => {
            let average = mean(&kept);
            (
                format!(
                    "Remove the outliers. {} {}",
                    wording::question(
                        g,
                        &format!("the mean {quantity} of the remaining readings, in {unit}")
                    ),
                    wording::precision(g, 3)
                ),
                Grader::Numeric {
                    value: average,
                    rel_tol: 0.0,
                    abs_tol: half_unit(3),
                },
                Some(format!("{average:.3}")),
            )
        }
    };
    let mut instance = Instance::new(format!("{intro}{units}{faults} {rule} {question}"), grader)
        .file(file, csv_bytes(&header, &rows));
    if let Some(secret) = secret {
        instance = instance.secret(secret);
    }
    Attempt::new(instance, sound)
}
