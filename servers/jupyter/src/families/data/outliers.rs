//! `outliers`: sensor readings; the values a stated rule flags (a z-score above a threshold
//! with a stated standard deviation, or the IQR rule with stated quartiles), counted or
//! summed, or the mean of the values the rule keeps.

use super::draw::{Attempt, draw};
use super::stats::{mean, quantile, sd, sum};
use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes, round};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "outliers",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "flag outliers by a stated z-score or IQR rule; count, sum or mean of the rest",
    generate,
};

const FILES: &[&str] = &[
    "readings.csv",
    "measurements.csv",
    "sensor_log.csv",
    "samples.csv",
];
const QUANTITIES: &[&str] = &["value", "reading", "pressure", "voltage", "flow", "level"];

/// How far every value must stay from the rule's threshold, so that float rounding in another
/// implementation cannot flip a verdict.
const MARGIN: f64 = 1e-6;

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let file = *g.pick(FILES);
    let quantity = *g.pick(QUANTITIES);
    let sensors: Vec<String> = (0..g.int(2, 5))
        .map(|i| format!("{}{}", char::from(b'A' + i as u8), g.int(10, 99)))
        .collect();
    let level = g.float(5.0, 900.0);
    let mut values: Vec<(usize, f64)> = Vec::new();
    let mut rows = Vec::new();
    let mut id = g.int(1, 5000);
    let centres: Vec<(f64, f64)> = sensors
        .iter()
        .map(|_| (level * g.float(0.8, 1.2), level * g.float(0.02, 0.1)))
        .collect();
    for _ in 0..g.int(60, 300) {
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
        rows.push(vec![
            format!("R{id}"),
            sensors[s].clone(),
            format!("{value:.2}"),
        ]);
        values.push((s, value));
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
        let factor = *g.pick(&[1.5, 1.5, 2.0]);
        for group in &groups {
            let column: Vec<f64> = group.iter().map(|&i| values[i].1).collect();
            let (q1, q3) = (quantile(&column, 0.25), quantile(&column, 0.75));
            let (low, high) = (q1 - factor * (q3 - q1), q3 + factor * (q3 - q1));
            for &i in group {
                let x = values[i].1;
                flagged[i] = x < low || x > high;
                sound &= (x - low).abs() > MARGIN && (x - high).abs() > MARGIN;
            }
        }
        format!(
            "A reading is an outlier when it is below Q1 - {factor:.1} × IQR or above Q3 + \
             {factor:.1} × IQR (IQR = Q3 - Q1), where Q1 and Q3 are the 25th and 75th \
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
    let (question, grader, secret) = match g.index(3) {
        // A count is a small integer that any file of numbers holds somewhere, so it is not
        // marked secret; the other variants are.
        0 => (
            "How many readings are outliers? Give the whole number.".to_owned(),
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
                    "What is the sum of the {quantity} values of the outliers? Give it rounded \
                     to 2 decimal places."
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
                    "Remove the outliers. What is the mean {quantity} of the remaining \
                     readings? Give it rounded to 3 decimal places."
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
    let mut instance = Instance::new(
        format!(
            "The file {file} in your home directory has one row per reading: reading_id, \
             sensor, {quantity}. {rule} {question}"
        ),
        grader,
    )
    .file(file, csv_bytes(&["reading_id", "sensor", quantity], &rows));
    if let Some(secret) = secret {
        instance = instance.secret(secret);
    }
    Attempt::new(instance, sound)
}
