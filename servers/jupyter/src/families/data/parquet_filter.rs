//! `parquet-filter` (held out): Parquet files of taxi trips; the count of the trips that
//! match a condition on several columns, or the sum or mean of one column over them.
//!
//! Levels: easy is one Parquet file; medium splits the trips over several part files in
//! `trips/` and writes zone names in any capitals; hard has more parts whose schemas differ
//! (the older parts record the fare in cents, as `fare_cents`), trips exported in two parts
//! (one `trip_id`, counted once), and zones given by id, named in a second file,
//! `zones.parquet`.

use super::draw::{Attempt, draw};
use super::stats::{mean, sum};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, round};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "parquet-filter",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TestOnly,
    levelled: true,
    about: "filter a Parquet file on several columns; a count, sum or mean",
    generate,
};

const ZONES: &[&str] = &[
    "airport",
    "harbour",
    "midtown",
    "uptown",
    "old-town",
    "campus",
    "stadium",
    "riverside",
    "market",
    "station",
];
const PAYMENTS: &[&str] = &["card", "cash", "app"];
const VENDORS: &[&str] = &["Arrow", "Bolt", "Comet", "Dash"];

/// Turns every CSV the instance wrote (trips.csv, or the parts in trips/, and zones.csv) into
/// a Parquet file with fixed column types, then removes the CSVs.
const SETUP: &str = r#"import glob
import pyarrow as pa
import pyarrow.csv as pv
import pyarrow.parquet as pq

_types = {
    "trip_id": pa.string(), "vendor": pa.string(), "zone": pa.string(), "zone_id": pa.int64(),
    "passengers": pa.int64(), "distance_km": pa.float64(), "fare": pa.float64(),
    "fare_cents": pa.int64(), "payment": pa.string(),
}
for _csv in sorted(glob.glob("*.csv") + glob.glob("trips/*.csv")):
    _table = pv.read_csv(_csv, convert_options=pv.ConvertOptions(column_types=_types))
    pq.write_table(_table, _csv[:-4] + ".parquet")
    os.remove(_csv)
"#;

struct Trip {
    vendor: &'static str,
    zone: &'static str,
    passengers: i64,
    distance: f64,
    fare: f64,
    payment: &'static str,
}

type Clause = (String, Box<dyn Fn(&Trip) -> bool>);

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (split, hard) = (level != Level::Easy, level == Level::Hard);
    let zones = g.subset(ZONES, 4, 8);
    let vendors = g.subset(VENDORS, 2, 4);
    let parts = level.pick(1, g.int(3, 5), g.int(4, 7)) as usize;
    // Hard: the parts before this one record the fare in cents.
    let first_in_dollars = if hard {
        g.int(1, parts as i64 - 2) as usize
    } else {
        0
    };
    let zone_ids: Vec<i64> = {
        let mut id = g.int(1, 20);
        zones
            .iter()
            .map(|_| {
                id += g.int(1, 9);
                id
            })
            .collect()
    };
    let mut trips = Vec::new();
    let mut part_rows: Vec<Vec<Vec<String>>> = vec![Vec::new(); parts];
    let mut id = g.int(1000, 90_000);
    let count = level.pick(g.int(300, 1200), g.int(800, 2000), g.int(1500, 3000));
    for i in 0..count {
        id += g.int(1, 4);
        let distance = round(g.float(0.5, 30.0), 1);
        let fare = round(3.0 + distance * g.float(1.2, 2.6) + g.float(0.0, 6.0), 2);
        let (vendor, zone) = (*g.pick(&vendors), g.index(zones.len()));
        let passengers = *g.pick(&[1, 1, 1, 2, 2, 3, 4, 5, 6]);
        let payment = *g.pick(PAYMENTS);
        let trip = Trip {
            vendor,
            zone: zones[zone],
            passengers,
            distance,
            fare,
            payment,
        };
        // The parts are consecutive stretches of the trips, as monthly exports would be.
        let part = (i as usize * parts) / count as usize;
        let zone_text = if hard {
            zone_ids[zone].to_string()
        } else if split && g.chance(0.2) {
            capitalised(trip.zone, g.chance(0.5))
        } else {
            trip.zone.to_owned()
        };
        // The row as part `part` writes it (its schema fixes the fare's unit).
        let row = |part: usize| {
            let fare_text = if part < first_in_dollars {
                format!("{}", (fare * 100.0).round() as i64)
            } else {
                format!("{fare:.2}")
            };
            vec![
                format!("T{id}"),
                vendor.to_owned(),
                zone_text.clone(),
                passengers.to_string(),
                format!("{distance:.1}"),
                fare_text,
                payment.to_owned(),
            ]
        };
        // An export that overlaps the next: the trip again in the next part.
        if hard && part + 1 < parts && g.chance(0.03) {
            part_rows[part + 1].push(row(part + 1));
        }
        part_rows[part].push(row(part));
        trips.push(trip);
    }
    let mut clauses: Vec<Clause> = Vec::new();
    let clause_count = level.pick(g.int(2, 3), g.int(2, 3), 3) as usize;
    for kind in g.sample(&[0, 1, 2, 3, 4, 5], clause_count) {
        clauses.push(match kind {
            0 => {
                let zone = *g.pick(&zones);
                (
                    format!("zone is {zone:?}"),
                    Box::new(move |t: &Trip| t.zone == zone),
                )
            }
            1 => {
                let pair = g.sample(&zones, 2);
                let (a, b) = (pair[0], pair[1]);
                (
                    format!("zone is {a:?} or {b:?}"),
                    Box::new(move |t: &Trip| t.zone == a || t.zone == b),
                )
            }
            2 => {
                let least = g.int(2, 4);
                (
                    format!("passengers is at least {least}"),
                    Box::new(move |t: &Trip| t.passengers >= least),
                )
            }
            3 => {
                // A whole number of km, so that the condition holds no full stop.
                let over = g.int(3, 15);
                (
                    format!("distance_km is greater than {over}"),
                    Box::new(move |t: &Trip| t.distance > over as f64),
                )
            }
            4 => {
                let payment = *g.pick(PAYMENTS);
                (
                    format!("payment is {payment:?}"),
                    Box::new(move |t: &Trip| t.payment == payment),
                )
            }
            _ => {
                let vendor = *g.pick(&vendors);
                (
                    format!("vendor is not {vendor:?}"),
                    Box::new(move |t: &Trip| t.vendor != vendor),
                )
            }
        });
    }
    let matched: Vec<&Trip> = trips
        .iter()
        .filter(|t| clauses.iter().all(|c| (c.1)(t)))
        .collect();
    let condition = clauses
        .iter()
        .map(|c| c.0.as_str())
        .collect::<Vec<_>>()
        .join(", and ");
    let fares: Vec<f64> = matched.iter().map(|t| t.fare).collect();
    let distances: Vec<f64> = matched.iter().map(|t| t.distance).collect();

    let zone_column = if hard { "zone_id" } else { "zone" };
    let columns = [
        "trip_id",
        "vendor",
        zone_column,
        "passengers",
        "distance_km",
        "fare",
        "payment",
    ];
    let listed = columns.join(", ");
    let layout = if split {
        let many = match g.index(3) {
            0 => format!(
                "The folder trips in your home directory holds {parts} Parquet files \
                 (part-01.parquet and on), each a stretch of taxi trips, one row per trip: \
                 {listed}."
            ),
            1 => format!(
                "Your home directory has a folder trips of {parts} Parquet part files \
                 (part-01.parquet and on); together they list taxi trips, one a row: {listed}."
            ),
            _ => format!(
                "Taxi trips are exported in {parts} Parquet files in the folder trips of your \
                 home directory (part-01.parquet and on), one trip a row: {listed}."
            ),
        };
        if hard {
            format!(
                "{many} The parts before part-{:02} are of an older schema: they record the \
                 fare in cents, in a column fare_cents, instead of fare in dollars. A trip may \
                 be in two parts (count each trip_id once). zones.parquet names each zone_id \
                 (zone_id, zone); a trip's zone is the name of its zone_id.",
                first_in_dollars + 1
            )
        } else {
            format!("{many} A zone name may be written in any capitals (\"Airport\" is airport).")
        }
    } else {
        match g.index(3) {
            0 => format!(
                "The Parquet file trips.parquet in your home directory has one row per taxi \
                 trip: {listed}."
            ),
            1 => format!(
                "Your home directory holds trips.parquet, a Parquet file of taxi trips, one a \
                 row: {listed}."
            ),
            _ => format!(
                "In your home directory, trips.parquet (Parquet) lists taxi trips with the \
                 columns {listed}."
            ),
        }
    };
    let consider = match g.index(4) {
        0 => "Consider the trips",
        1 => "Take only the trips",
        2 => "Look at the trips",
        _ => "Keep the trips",
    };
    let (question, grader, secret) = match g.index(3) {
        // A count is a small integer that any file of numbers holds somewhere, so it is not
        // marked secret; the other variants are.
        0 => (
            format!(
                "{} {}",
                wording::question(g, "the number of matching trips"),
                wording::precision(g, 0)
            ),
            Grader::Numeric {
                value: matched.len() as f64,
                rel_tol: 0.0,
                abs_tol: 0.0,
            },
            None,
        ),
        1 => {
            let total = sum(&fares);
            (
                format!(
                    "{} {}",
                    wording::question(g, "the sum of fare over the matching trips, in dollars"),
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
            let average = mean(&distances);
            (
                format!(
                    "{} {}",
                    wording::question(g, "the mean distance_km of the matching trips"),
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
    let mut instance = Instance::new(
        format!("{layout} {consider} whose {condition}. {question}"),
        grader,
    );
    for (part, rows) in part_rows.iter().enumerate() {
        let mut header = columns;
        if part < first_in_dollars {
            header[5] = "fare_cents";
        }
        let path = if split {
            format!("trips/part-{:02}.csv", part + 1)
        } else {
            "trips.csv".to_owned()
        };
        instance = instance.file(path, csv_bytes(&header, rows));
    }
    if hard {
        let rows: Vec<Vec<String>> = zones
            .iter()
            .zip(&zone_ids)
            .map(|(zone, id)| vec![id.to_string(), (*zone).to_owned()])
            .collect();
        instance = instance.file("zones.csv", csv_bytes(&["zone_id", "zone"], &rows));
    }
    let mut instance = instance.setup(SETUP);
    if let Some(secret) = secret {
        instance = instance.secret(secret);
    }
    Attempt::new(instance, matched.len() >= 3)
}

/// `zone` in capitals (`AIRPORT`) or with each word's first letter so (`Old-Town`).
fn capitalised(zone: &str, all: bool) -> String {
    if all {
        return zone.to_uppercase();
    }
    zone.split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect::<Vec<_>>()
        .join("-")
}
