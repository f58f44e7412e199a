//! `parquet-filter` (held out): a Parquet file of taxi trips; the count of the trips that
//! match a condition on several columns, or the sum or mean of one column over them.

use super::draw::{Attempt, draw};
use super::stats::{mean, sum};
use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes, round};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "parquet-filter",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TestOnly,
    levelled: false,
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

/// Turns trips.csv into trips.parquet with fixed column types, then removes the CSV.
const SETUP: &str = r#"import pyarrow as pa
import pyarrow.csv as pv
import pyarrow.parquet as pq

_types = {
    "trip_id": pa.string(), "vendor": pa.string(), "zone": pa.string(),
    "passengers": pa.int64(), "distance_km": pa.float64(), "fare": pa.float64(),
    "payment": pa.string(),
}
_table = pv.read_csv("trips.csv", convert_options=pv.ConvertOptions(column_types=_types))
pq.write_table(_table, "trips.parquet")
os.remove("trips.csv")
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
    let zones = g.subset(ZONES, 4, 8);
    let vendors = g.subset(VENDORS, 2, 4);
    let mut trips = Vec::new();
    let mut rows = Vec::new();
    let mut id = g.int(1000, 90_000);
    for _ in 0..g.int(300, 1200) {
        id += g.int(1, 4);
        let distance = round(g.float(0.5, 30.0), 1);
        let fare = round(3.0 + distance * g.float(1.2, 2.6) + g.float(0.0, 6.0), 2);
        let (vendor, zone) = (*g.pick(&vendors), *g.pick(&zones));
        let passengers = *g.pick(&[1, 1, 1, 2, 2, 3, 4, 5, 6]);
        let payment = *g.pick(PAYMENTS);
        let trip = Trip {
            vendor,
            zone,
            passengers,
            distance,
            fare,
            payment,
        };
        rows.push(vec![
            format!("T{id}"),
            trip.vendor.to_owned(),
            trip.zone.to_owned(),
            trip.passengers.to_string(),
            format!("{distance:.1}"),
            format!("{fare:.2}"),
            trip.payment.to_owned(),
        ]);
        trips.push(trip);
    }
    let mut clauses: Vec<Clause> = Vec::new();
    let count = g.int(2, 3) as usize;
    for kind in g.sample(&[0, 1, 2, 3, 4, 5], count) {
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
                let over = g.int(3, 15) as f64;
                (
                    format!("distance_km is greater than {over:.1}"),
                    Box::new(move |t: &Trip| t.distance > over),
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
    let (question, grader, secret) = match g.index(3) {
        // A count is a small integer that any file of numbers holds somewhere, so it is not
        // marked secret; the other variants are.
        0 => (
            "How many trips match? Give the whole number.".to_owned(),
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
                "What is the sum of fare over the matching trips? Give it rounded to 2 decimal \
                 places."
                    .to_owned(),
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
                "What is the mean distance_km of the matching trips? Give it rounded to 3 \
                 decimal places."
                    .to_owned(),
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
            "The Parquet file trips.parquet in your home directory has one row per taxi trip: \
             trip_id, vendor, zone, passengers, distance_km, fare, payment. Consider the trips \
             whose {condition}. {question}"
        ),
        grader,
    )
    .file(
        "trips.csv",
        csv_bytes(
            &[
                "trip_id",
                "vendor",
                "zone",
                "passengers",
                "distance_km",
                "fare",
                "payment",
            ],
            &rows,
        ),
    )
    .setup(SETUP);
    if let Some(secret) = secret {
        instance = instance.secret(secret);
    }
    Attempt::new(instance, matched.len() >= 3)
}
