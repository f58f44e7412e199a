//! `sensor-exceedance`: temperature readings of two or three weather stations, each in a
//! file of its own convention; hourly means in °C on the UTC clock, then a count of the hours
//! above a threshold, the longest such run, a date's highest hourly mean or the largest
//! difference between two stations in the same hour.
//!
//! - a station in local time: `<station>.csv`, `local_time,utc_offset,temp_f` (°F, local
//!   `YYYY-MM-DD HH:MM` and an offset such as `+05:30`, so local hours need not be UTC hours);
//! - a station in UTC: `<station>.csv`, `timestamp,temp_c` (ISO 8601 with `Z`, °C);
//! - from medium on, a station in Parquet: `<station>.parquet`, `epoch_s,kelvin` (Unix
//!   seconds, kelvin), written by the setup.
//!
//! Levels: easy has two stations over two days, every reading present; medium adds the
//! Parquet station, empty readings, readings listed twice and hours with no reading at all
//! (they have no mean, and break a run); hard has eight days, rows out of time order, a
//! change of UTC offset in the local file, some UTC timestamps written `+00:00`, and error
//! readings of -999 (the prompt says each is to be handled).

use std::collections::BTreeMap;

use super::draw::{Attempt, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, date_of};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "sensor-exceedance",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "weather stations' readings in three conventions (°F local time, °C UTC, kelvin \
            Parquet); hourly means above a threshold, a run, a peak or a difference",
    generate,
};

const STATIONS: &[&str] = &[
    "harbor", "ridge", "meadow", "quarry", "orchard", "summit", "delta", "canyon", "marsh",
    "glacier",
];

/// UTC offsets of the local-time station, in minutes.
const OFFSETS: &[i64] = &[-420, -300, -240, 60, 120, 330, 540];

/// Day number (since 2020-01-01) of 1 June 2024.
const JUNE_1_2024: i64 = 1613;

#[derive(Clone, Copy, PartialEq)]
enum Convention {
    Local,
    Utc,
    Parquet,
}

/// `HH:MM` of a minute of the day.
fn clock(minute: i64) -> String {
    format!("{:02}:{:02}", minute / 60, minute % 60)
}

/// `+HH:MM` of an offset in minutes.
fn offset_text(offset: i64) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    format!("{sign}{:02}:{:02}", offset.abs() / 60, offset.abs() % 60)
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let easy = level == Level::Easy;
    let hard = level == Level::Hard;
    let conventions: Vec<Convention> = if easy {
        vec![Convention::Local, Convention::Utc]
    } else {
        vec![Convention::Local, Convention::Utc, Convention::Parquet]
    };
    let names: Vec<&str> = g.sample(STATIONS, conventions.len());
    let first_day = JUNE_1_2024 + g.int(0, 80);
    let days = level.pick(2, g.int(3, 4), g.int(7, 9));
    let start = first_day * 1440;
    let end = (first_day + days) * 1440;
    let offset = *g.pick(OFFSETS);
    // Hard: the offset changes by an hour part way (a clock change).
    let shift_at = hard.then(|| g.int(start + 1440, end - 1440));
    let shift = if g.chance(0.5) { 60 } else { -60 };

    // Hourly sums and counts in °C, per station, keyed by the UTC hour number.
    let mut hourly: Vec<BTreeMap<i64, (f64, usize)>> = vec![BTreeMap::new(); names.len()];
    let mut files: Vec<(String, String)> = Vec::new();
    let mut setup = String::new();
    for (s, &convention) in conventions.iter().enumerate() {
        let interval = *g.pick(&[10, 12, 15, 20, 30]);
        let base = g.float(14.0, 26.0);
        let amplitude = g.float(3.0, 8.0);
        let mut drift = 0.0;
        // Offline stretches (medium on): hours with no reading at all.
        let outages: Vec<(i64, i64)> = (0..if easy { 0 } else { g.int(1, 3) })
            .map(|_| {
                let from = g.int(start, end - 300) / 60 * 60;
                (from, from + 60 * g.int(1, 4))
            })
            .collect();
        let mut rows: Vec<String> = Vec::new();
        let mut minute = start + g.int(0, interval - 1);
        while minute < end {
            let at = minute;
            minute += interval;
            if hard && interval <= 15 && g.chance(0.1) {
                // Irregular: a reading a few minutes late or early.
                minute += g.int(-3, 3);
            }
            if outages.iter().any(|&(from, to)| (from..to).contains(&at)) {
                continue;
            }
            drift += g.normal(0.0, 0.05);
            let hour_of_day = (at % 1440) as f64 / 60.0;
            let celsius = base
                + drift
                + amplitude * (std::f64::consts::TAU * (hour_of_day - 9.0) / 24.0).sin()
                + g.normal(0.0, 0.4);
            let missing = !easy && g.chance(0.03);
            let error = hard && !missing && g.chance(0.02);
            // The value as written, and what it is in °C.
            let (text, value) = match convention {
                Convention::Local => {
                    let f = (10.0 * (celsius * 9.0 / 5.0 + 32.0)).round() / 10.0;
                    (format!("{f:.1}"), (f - 32.0) * 5.0 / 9.0)
                }
                Convention::Utc => {
                    let c = (10.0 * celsius).round() / 10.0;
                    (format!("{c:.1}"), c)
                }
                Convention::Parquet => {
                    let k = (100.0 * (celsius + 273.15)).round() / 100.0;
                    (format!("{k:.2}"), k - 273.15)
                }
            };
            let text = if missing {
                String::new()
            } else if error {
                "-999".to_owned()
            } else {
                let hour = hourly[s].entry(at.div_euclid(60)).or_insert((0.0, 0));
                hour.0 += value;
                hour.1 += 1;
                text
            };
            let row = match convention {
                Convention::Local => {
                    let offset = match shift_at {
                        Some(t) if at >= t => offset + shift,
                        _ => offset,
                    };
                    let local = at + offset;
                    format!(
                        "{} {},{},{text}",
                        date_of(local.div_euclid(1440)),
                        clock(local.rem_euclid(1440)),
                        offset_text(offset)
                    )
                }
                Convention::Utc => {
                    let zone = if hard && g.chance(0.2) { "+00:00" } else { "Z" };
                    format!(
                        "{}T{}:00{zone},{text}",
                        date_of(at / 1440),
                        clock(at % 1440)
                    )
                }
                // Unix time: 2020-01-01 is day 18,262 since 1970.
                Convention::Parquet => format!("{},{text}", (at + 18_262 * 1440) * 60),
            };
            if !easy && g.chance(0.03) {
                rows.push(row.clone());
            }
            rows.push(row);
        }
        if hard && convention != Convention::Local {
            g.shuffle(&mut rows);
        }
        let (header, file) = match convention {
            Convention::Local => ("local_time,utc_offset,temp_f", format!("{}.csv", names[s])),
            Convention::Utc => ("timestamp,temp_c", format!("{}.csv", names[s])),
            Convention::Parquet => {
                setup.push_str(&format!("STATION = {:?}\n{SETUP}", names[s]));
                ("epoch_s,kelvin", format!("{}.csv", names[s]))
            }
        };
        let mut text = format!("{header}\n");
        for row in rows {
            text.push_str(&row);
            text.push('\n');
        }
        files.push((file, text));
    }
    let means: Vec<BTreeMap<i64, f64>> = hourly
        .iter()
        .map(|h| {
            h.iter()
                .map(|(&k, &(sum, n))| (k, sum / n as f64))
                .collect()
        })
        .collect();

    let s = g.index(names.len());
    let station = names[s];
    let site_means: Vec<f64> = means[s].values().copied().collect();
    let mut sorted = site_means.clone();
    sorted.sort_by(f64::total_cmp);
    let quantile = sorted[((sorted.len() - 1) as f64 * g.float(0.4, 0.85)) as usize];
    let threshold = (2.0 * quantile).round() / 2.0;
    // No hourly mean so close to the threshold that rounding decides it.
    let clear = site_means.iter().all(|m| (m - threshold).abs() > 0.05);
    let above: Vec<i64> = means[s]
        .iter()
        .filter(|(_, m)| **m > threshold)
        .map(|(&k, _)| k)
        .collect();
    let (question, value, decimals, sound) = match g.index(4) {
        0 => (
            format!(
                "In how many UTC clock hours did the {station} station's hourly mean \
                 temperature exceed {threshold:.1} °C? Give the count."
            ),
            above.len() as f64,
            0,
            clear && above.len() >= 3 && above.len() < site_means.len(),
        ),
        1 => {
            let mut longest = 0;
            let mut run = 0;
            let mut last = i64::MIN;
            for &k in &above {
                run = if k == last + 1 { run + 1 } else { 1 };
                last = k;
                longest = longest.max(run);
            }
            (
                format!(
                    "What was the longest run of consecutive UTC clock hours in which the \
                     {station} station's hourly mean temperature exceeded {threshold:.1} °C \
                     (an hour with no reading has no mean and ends a run)? Give the number of \
                     hours."
                ),
                longest as f64,
                0,
                clear && longest >= 2,
            )
        }
        2 => {
            let day = first_day + g.int(0, days - 1);
            let peak = means[s]
                .iter()
                .filter(|(k, _)| k.div_euclid(24) == day)
                .map(|(_, m)| *m)
                .fold(f64::NEG_INFINITY, f64::max);
            (
                format!(
                    "What was the {station} station's highest hourly mean temperature on {} \
                     (UTC), in °C? Give the number rounded to 2 decimal places.",
                    date_of(day)
                ),
                peak,
                2,
                peak.is_finite(),
            )
        }
        _ => {
            let t = (s + 1 + g.index(names.len() - 1)) % names.len();
            let widest = means[s]
                .iter()
                .filter_map(|(k, m)| means[t].get(k).map(|n| (m - n).abs()))
                .fold(0.0, f64::max);
            (
                format!(
                    "Over the UTC clock hours in which both the {station} and the {} stations \
                     have an hourly mean temperature, what was the largest absolute difference \
                     between the two, in °C? Give the number rounded to 2 decimal places.",
                    names[t]
                ),
                widest,
                2,
                widest > 0.0,
            )
        }
    };

    let mut described = Vec::new();
    for (s, convention) in conventions.iter().enumerate() {
        described.push(match convention {
            Convention::Local => format!(
                "{}.csv has local_time (the station's local time, YYYY-MM-DD HH:MM), \
                 utc_offset (the local time's offset from UTC, like +02:00) and temp_f (°F)",
                names[s]
            ),
            Convention::Utc => format!(
                "{}.csv has timestamp (UTC, ISO 8601) and temp_c (°C)",
                names[s]
            ),
            Convention::Parquet => format!(
                "{}.parquet has epoch_s (Unix time in seconds) and kelvin (the temperature in \
                 kelvin)",
                names[s]
            ),
        });
    }
    let stations = if easy { "two" } else { "three" };
    let gaps = if easy {
        ""
    } else {
        " A reading may be empty (it is missing) or listed twice (count it once), and a \
         station may have hours with no reading at all."
    };
    let dirty = if hard {
        " The files are careless: rows are not always in time order, the utc_offset changes \
         part way (each row's own offset applies), some UTC timestamps end in +00:00 instead \
         of Z, and a reading of -999 is a sensor error, to be ignored."
    } else {
        ""
    };
    let prompt = format!(
        "Your home directory holds the temperature readings of {stations} weather stations, \
         one file each: {}. A station's hourly mean for a UTC clock hour (such as 13:00 to \
         13:59) is the mean, in °C, of its readings taken in that hour.{gaps}{dirty} \
         {question}",
        described.join("; ")
    );
    let mut instance = Instance::new(
        prompt,
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: if decimals == 0 {
                0.0
            } else {
                half_unit(decimals)
            },
        },
    );
    for (path, text) in files {
        instance = instance.file(path, text);
    }
    if decimals > 0 {
        instance = instance.secret(format!("{value:.2}"));
    }
    Attempt::new(instance.setup(setup), sound)
}

/// Turns `STATION`.csv into `STATION`.parquet (Unix seconds, kelvin, nulls for empty
/// readings), then removes the CSV.
const SETUP: &str = r#"import pyarrow as pa
import pyarrow.csv as pv
import pyarrow.parquet as pq

_types = {"epoch_s": pa.int64(), "kelvin": pa.float64()}
_table = pv.read_csv(STATION + ".csv", convert_options=pv.ConvertOptions(column_types=_types))
pq.write_table(_table, STATION + ".parquet")
os.remove(STATION + ".csv")
"#;
