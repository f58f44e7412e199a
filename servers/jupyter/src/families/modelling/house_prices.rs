//! `house-prices`: past sales of houses (area, rooms, age, district, garden) and their prices;
//! the agent predicts the prices of held-out houses, scored by RMSE from the training mean's
//! (0) to that of the pricing rule itself without its noise (1).
//!
//! The price follows a rule the data reveals: a district's rate per m², worn down by age, plus
//! a premium per room and for a garden, with noise of a few percent. A per-district model of
//! area and area × age recovers it; a constant or a model that ignores the district does not.
//!
//! Levels: easy is a few hundred clean sales; medium leaves some ages blank (in training and
//! held-out rows alike) and adds districts; hard has more data written carelessly: areas in
//! square feet for some rows (an `area_unit` column says which), sales listed twice, and a few
//! training prices typed with an extra zero (the prompt says so).

use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes};
use crate::predictions::{Metric, PredictionGrader, Truth};
use crate::tasks::{Grader, TaskKind};

use super::{PREDICTIONS, closing, rmse};

pub(super) const FAMILY: Family = Family {
    name: "house-prices",
    kind: TaskKind::Modelling,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "train a model on past house sales; predict held-out prices (RMSE, partial credit)",
    generate,
};

const DISTRICTS: &[&str] = &[
    "Harbour",
    "Old Town",
    "Riverside",
    "Hillcrest",
    "Meadows",
    "Station",
    "Northgate",
    "Parkside",
];

/// The share of the score scale a model must reach to succeed.
const THRESHOLD: f64 = 0.8;

struct House {
    area: f64,
    rooms: i64,
    age: i64,
    district: usize,
    garden: bool,
}

fn generate(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let districts = g.sample(
        &(0..DISTRICTS.len()).collect::<Vec<_>>(),
        level.pick(3, 5, 6),
    );
    let rate: Vec<f64> = (0..DISTRICTS.len())
        .map(|_| g.float(1800.0, 6500.0).round())
        .collect();
    let wear = g.float(0.002, 0.006);
    let per_room = g.float(5000.0, 20000.0).round();
    let garden_premium = g.float(8000.0, 40000.0).round();
    let price = |h: &House| {
        h.area * rate[h.district] * (1.0 - wear * h.age as f64)
            + per_room * h.rooms as f64
            + if h.garden { garden_premium } else { 0.0 }
    };
    let noise = g.float(0.03, 0.06);
    let train_count = level.pick(g.int(300, 500), g.int(500, 900), g.int(1000, 1600));
    let test_count = g.int(150, 250) as usize;
    let house = |g: &mut Gen| {
        let area = g.float(35.0, 220.0).round();
        House {
            area,
            rooms: ((area / 30.0).round() as i64 + g.int(-1, 1)).clamp(1, 8),
            age: g.int(0, 90),
            district: *g.pick(&districts),
            garden: g.chance(0.4),
        }
    };
    let missing_ages = level != Level::Easy;
    let header = [
        "id",
        "area",
        "area_unit",
        "rooms",
        "age",
        "district",
        "garden",
        "price",
    ];
    let row = |g: &mut Gen, id: usize, h: &House, price: Option<f64>| {
        let (area, unit) = if hard && g.chance(0.25) {
            (format!("{:.1}", h.area * 10.763_910_4), "sqft")
        } else {
            (format!("{}", h.area), "m2")
        };
        let age = if missing_ages && g.chance(0.08) {
            String::new()
        } else {
            h.age.to_string()
        };
        let mut fields = vec![
            id.to_string(),
            area,
            unit.to_owned(),
            h.rooms.to_string(),
            age,
            DISTRICTS[h.district].to_owned(),
            if h.garden { "yes" } else { "no" }.to_owned(),
        ];
        if let Some(price) = price {
            fields.push(format!("{price:.0}"));
        }
        fields
    };
    let mut train_rows = Vec::new();
    let mut train_prices = Vec::new();
    let mut id = g.int(1000, 9000) as usize;
    for _ in 0..train_count {
        id += 1;
        let h = house(g);
        let mut y = price(&h) * (1.0 + g.normal(0.0, noise));
        train_prices.push(y);
        if hard && g.chance(0.01) {
            y *= 10.0;
        }
        let fields = row(g, id, &h, Some(y));
        if hard && g.chance(0.04) {
            train_rows.push(fields.clone());
        }
        train_rows.push(fields);
    }
    let mut test_rows = Vec::new();
    let mut ids = Vec::new();
    let mut truth = Vec::new();
    let mut clean = Vec::new();
    for _ in 0..test_count {
        id += 1;
        let h = house(g);
        let f = price(&h);
        let y = (f * (1.0 + g.normal(0.0, noise))).round();
        test_rows.push(row(g, id, &h, None));
        ids.push(id.to_string());
        truth.push(y);
        clean.push(f);
    }
    let mean = train_prices.iter().sum::<f64>() / train_prices.len() as f64;
    let baseline = rmse(std::iter::repeat(mean), &truth);
    let reference = rmse(clean.into_iter(), &truth);
    let missing = if missing_ages {
        " Some ages were not recorded (blank)."
    } else {
        ""
    };
    let dirty = if hard {
        " The records are careless: some areas are in square feet (area_unit says sqft; 1 m² is \
         10.7639 sq ft), some sales are listed twice, and a few training prices were typed with \
         an extra zero."
    } else {
        ""
    };
    let opening = match g.index(4) {
        0 => "Your home directory holds sales.csv: past house sales",
        1 => "In your home directory, sales.csv lists past house sales",
        2 => "The file sales.csv in your home directory records past house sales",
        _ => "An estate agent's past sales are in sales.csv, in your home directory",
    };
    let task = match g.index(3) {
        0 => "Train a model on the sales and predict the price of every house in held_out.csv.",
        1 => "Fit a model to the sales, then predict the price of each house in held_out.csv.",
        _ => "Using the sales, predict what every house in held_out.csv sold for.",
    };
    let prompt = format!(
        "{opening}, with id, area (see area_unit), area_unit, rooms, age (years), district, \
         garden (yes/no) and price. held_out.csv has the same columns for other houses, without \
         the price.{missing}{dirty} {task} Write predictions.csv with a header and the columns \
         id and prediction, one row per held-out house. It is scored by root mean squared error \
         on the true prices (which only the grader has): 0 at the error of predicting the \
         average sale price, 1 at the error of the pricing rule behind the data; {THRESHOLD} or \
         more is a success. {}",
        closing(g)
    );
    let grader = PredictionGrader {
        file: PREDICTIONS.into(),
        ids,
        truth: Truth::Numbers(truth),
        metric: Metric::Rmse,
        baseline,
        reference,
        threshold: THRESHOLD,
    };
    let mut test_header = header.to_vec();
    test_header.pop();
    Instance::new(prompt, Grader::Predictions(Box::new(grader)))
        .file("sales.csv", csv_bytes(&header, &train_rows))
        .file("held_out.csv", csv_bytes(&test_header, &test_rows))
}
