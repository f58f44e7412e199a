//! `fleet-fuel`: a fleet's vehicles in SQLite, its fuel purchases in a CSV and its odometer
//! readings in an Excel workbook; fuel consumption in litres per 100 km, which takes
//! converting gallons to litres and miles to kilometres, keeping the purchases of the period
//! and joining the three sources.
//!
//! - `fleet.db`: `vehicles(vehicle_id, make, type, odometer_unit)` (`km` or `mi`); at hard
//!   `vehicles(vehicle_id, make, type_id, odometer_unit)` and `types(id, name)`.
//! - `fuel.csv`: `purchase_id,vehicle_id,date,volume,unit,price` (`L` or `gal`, US gallons;
//!   the price paid for the purchase, in dollars).
//! - `odometer.xlsx`: `vehicle_id,date,reading` on the first of each month, in the vehicle's
//!   odometer unit; at hard one sheet per depot.
//!
//! The fuel of a period is what was bought after its first reading's date up to and including
//! its last's (each fill-up replaces fuel already used); its distance is the difference of the
//! two readings.
//!
//! Levels: easy has a few vehicles and the whole period between two readings; medium has more
//! vehicles, monthly readings and a period inside them (purchases outside it do not count),
//! and prices written with a `$` or a decimal comma; hard has several times the vehicles, the
//! type in a table of its own, a sheet per depot, purchases listed twice, vehicle ids in
//! lower case or padded with spaces, and purchases of vehicles not in the fleet (ignored).
//!
//! Questions: a vehicle's consumption, a type's (its vehicles' litres over their kilometres),
//! the consumption of the least efficient vehicle, (medium on) the difference between two
//! types, or a type's fuel cost per 100 km. Every instance is drawn so that leaving out any
//! one of its cleaning steps (a [`Skip`]) gives a wrong answer.

use super::draw::{Attempt, Database, Sql, draw, save_workbook};
use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "fleet-fuel",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "join a fleet's vehicles (SQLite), fuel purchases in litres and gallons (CSV) and \
            odometer readings in km and miles (Excel); litres per 100 km",
    generate,
};

/// Vehicle types and their usual consumption (litres per 100 km).
const TYPES: &[(&str, f64, f64)] = &[
    ("car", 5.5, 9.0),
    ("van", 8.5, 13.0),
    ("truck", 22.0, 36.0),
    ("pickup", 10.0, 15.0),
    ("minibus", 11.0, 17.0),
];

const MAKES: &[&str] = &[
    "Ford", "Toyota", "Renault", "Iveco", "Volvo", "Fiat", "Mercedes",
];

const DEPOTS: &[&str] = &["north", "south", "east", "west"];

/// Litres in a US gallon.
const LITRES_PER_GALLON: f64 = 3.785_411_784;

/// Kilometres in a mile.
const KM_PER_MILE: f64 = 1.609_344;

/// A cleaning step a careless solution leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skip {
    /// Every step done.
    None,
    /// Gallons read as litres.
    Gallons,
    /// Miles read as kilometres.
    Miles,
    /// Every purchase counted, whatever its date.
    Period,
    /// Purchases listed twice counted twice.
    Duplicates,
    /// Vehicle ids not trimmed and upper-cased (those purchases match no vehicle).
    Ids,
    /// Only the workbook's first sheet read.
    Sheets,
}

/// The steps whose traps a level sets.
fn skips(level: Level) -> &'static [Skip] {
    match level {
        Level::Easy => &[Skip::Gallons, Skip::Miles],
        Level::Medium => &[Skip::Gallons, Skip::Miles, Skip::Period],
        Level::Hard => &[
            Skip::Gallons,
            Skip::Miles,
            Skip::Period,
            Skip::Duplicates,
            Skip::Ids,
            Skip::Sheets,
        ],
    }
}

struct Vehicle {
    id: String,
    kind: usize,
    miles: bool,
    sheet: usize,
    /// The readings on the first of each month, as written (whole units).
    readings: Vec<i64>,
}

struct Purchase {
    /// Index into the vehicles, `None` for a vehicle not in the fleet.
    vehicle: Option<usize>,
    /// Month index (0 for January 2024) and day of the month.
    month: usize,
    day: i64,
    /// The volume as written, in hundredths of its unit.
    volume: i64,
    gallons: bool,
    cents: i64,
    twice: bool,
    dirty_id: bool,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (medium_on, hard) = (level != Level::Easy, level == Level::Hard);
    let kinds: Vec<usize> = g.sample(&(0..TYPES.len()).collect::<Vec<_>>(), level.pick(2, 3, 5));
    // Readings on the first of months 0..=months (January 2024 on).
    let months = level.pick(g.int(2, 4), g.int(5, 7), g.int(6, 9)) as usize;
    let sheets = if hard { g.int(2, 4) as usize } else { 1 };
    let mut vehicles = Vec::new();
    let mut consumption = Vec::new();
    let mut number = g.int(100, 700);
    let vehicle_count = level.pick(g.int(4, 6), g.int(8, 14), g.int(20, 32)) as usize;
    for i in 0..vehicle_count {
        number += g.int(1, 9);
        // Every type has a vehicle; the first vehicles cover them.
        let kind = if i < kinds.len() {
            kinds[i]
        } else {
            *g.pick(&kinds)
        };
        let miles = g.chance(0.4);
        let mut km = g.float(5_000.0, 150_000.0);
        let mut readings = Vec::new();
        for _ in 0..=months {
            let unit = if miles { km / KM_PER_MILE } else { km };
            readings.push(unit.round() as i64);
            km += g.float(600.0, 4_000.0) * if TYPES[kind].0 == "car" { 0.6 } else { 1.0 };
        }
        consumption.push(g.float(TYPES[kind].1, TYPES[kind].2));
        vehicles.push(Vehicle {
            id: format!("FL-{number}"),
            kind,
            miles,
            sheet: g.index(sheets),
            readings,
        });
    }
    // Each month's fuel, in fill-ups of a tank's size or so, in litres or gallons.
    let mut purchases = Vec::new();
    for (v, vehicle) in vehicles.iter().enumerate() {
        for month in 0..months {
            let unit = if vehicle.miles { KM_PER_MILE } else { 1.0 };
            let km = (vehicle.readings[month + 1] - vehicle.readings[month]) as f64 * unit;
            let mut litres = km * consumption[v] / 100.0;
            let tank = if TYPES[vehicle.kind].0 == "truck" {
                250.0
            } else {
                55.0
            };
            while litres > 1.0 {
                let fill = litres.min(tank * g.float(0.5, 1.0));
                litres -= fill;
                let gallons = g.chance(0.35);
                let volume = if gallons {
                    fill / LITRES_PER_GALLON
                } else {
                    fill
                };
                let per_litre = g.float(1.45, 1.95);
                purchases.push(Purchase {
                    vehicle: Some(v),
                    month,
                    day: g.int(2, 28),
                    volume: (volume * 100.0).round() as i64,
                    gallons,
                    cents: (fill * per_litre * 100.0).round() as i64,
                    twice: hard && g.chance(0.05),
                    dirty_id: hard && g.chance(0.12),
                });
            }
        }
    }
    if hard {
        for _ in 0..g.int(3, 8) {
            purchases.push(Purchase {
                vehicle: None,
                month: g.index(months),
                day: g.int(2, 28),
                volume: g.int(2_000, 6_000),
                gallons: false,
                cents: g.int(3_000, 9_000),
                twice: false,
                dirty_id: false,
            });
        }
    }
    purchases.sort_by_key(|p| (p.month, p.day));

    // The period: the whole span at easy, some months inside it from medium on.
    let (first, last) = if medium_on {
        let first = g.int(0, months as i64 - 2) as usize;
        (first, g.int(first as i64 + 1, months as i64 - 1) as usize)
    } else {
        (0, months)
    };
    // (litres, dollars, km) of each vehicle under a skipped step; `None` for a vehicle a
    // careless solution loses.
    let usage = |skip: Skip| -> Vec<Option<(f64, f64, f64)>> {
        vehicles
            .iter()
            .enumerate()
            .map(|(v, vehicle)| {
                if skip == Skip::Sheets && vehicle.sheet != 0 {
                    return None;
                }
                let mut litres = 0.0;
                let mut dollars = 0.0;
                for p in &purchases {
                    if p.vehicle != Some(v) || (p.dirty_id && skip == Skip::Ids) {
                        continue;
                    }
                    if skip != Skip::Period && !(first..last).contains(&p.month) {
                        continue;
                    }
                    let copies = if p.twice && skip == Skip::Duplicates {
                        2.0
                    } else {
                        1.0
                    };
                    let volume = p.volume as f64 / 100.0;
                    let factor = if p.gallons && skip != Skip::Gallons {
                        LITRES_PER_GALLON
                    } else {
                        1.0
                    };
                    litres += copies * volume * factor;
                    dollars += copies * p.cents as f64 / 100.0;
                }
                let unit = if vehicle.miles && skip != Skip::Miles {
                    KM_PER_MILE
                } else {
                    1.0
                };
                let km = (vehicle.readings[last] - vehicle.readings[first]) as f64 * unit;
                Some((litres, dollars, km))
            })
            .collect()
    };
    let shapes = level.pick(3, 5, 5);
    let shape = g.index(shapes);
    let asked = g.index(vehicles.len());
    let pair = g.sample(&kinds, 2);
    let of_type = |use_: &[Option<(f64, f64, f64)>], kind: usize, cost: bool| -> f64 {
        let (mut top, mut km) = (0.0, 0.0);
        for (v, u) in use_.iter().enumerate() {
            if let Some((litres, dollars, distance)) = u
                && vehicles[v].kind == kind
            {
                top += if cost { dollars } else { litres };
                km += distance;
            }
        }
        100.0 * top / km
    };
    let answer = |skip: Skip| -> f64 {
        let use_ = usage(skip);
        match shape {
            0 => use_[asked].map_or(f64::NAN, |(litres, _, km)| 100.0 * litres / km),
            1 => of_type(&use_, pair[0], false),
            2 => use_
                .iter()
                .flatten()
                .map(|(litres, _, km)| 100.0 * litres / km)
                .fold(f64::NAN, f64::max),
            3 => of_type(&use_, pair[0], false) - of_type(&use_, pair[1], false),
            _ => of_type(&use_, pair[0], true),
        }
    };
    let value = answer(Skip::None);
    let mut sound = value.is_finite() && clear_of_edge(value);
    for &skip in skips(level) {
        let careless = answer(skip);
        sound &= !careless.is_finite() || (careless - value).abs() > 0.02;
    }

    let period = format!(
        "between the odometer readings of 2024-{:02}-01 and 2024-{:02}-01",
        first + 1,
        last + 1
    );
    let what = match shape {
        0 => format!(
            "the fuel consumption, in litres per 100 km, of vehicle {} {period}",
            vehicles[asked].id
        ),
        1 => format!(
            "the fuel consumption, in litres per 100 km, of the vehicles of type {} together \
             {period}",
            TYPES[pair[0]].0
        ),
        2 => format!(
            "the fuel consumption, in litres per 100 km, of the least efficient vehicle (the \
             one with the highest consumption) {period}"
        ),
        3 => format!(
            "how many litres per 100 km more the vehicles of type {} used than the vehicles \
             of type {} {period} (each type's litres over its kilometres; negative if less)",
            TYPES[pair[0]].0, TYPES[pair[1]].0
        ),
        _ => format!(
            "the fuel cost, in dollars per 100 km, of the vehicles of type {} together {period}",
            TYPES[pair[0]].0
        ),
    };
    let intro = *g.pick(&[
        "Your home directory holds a delivery fleet's records.",
        "A fleet manager has left the fleet's records in your home directory.",
        "The files in your home directory describe a fleet of vehicles and its fuel.",
        "In your home directory are a company fleet's vehicle list, fuel purchases and odometer readings.",
    ]);
    let vehicles_text = if hard {
        "fleet.db is a SQLite database: vehicles(vehicle_id, make, type_id, odometer_unit) \
         and types(id, name)"
    } else {
        "fleet.db is a SQLite database: vehicles(vehicle_id, make, type, odometer_unit)"
    };
    let sheets_text = if hard {
        "odometer.xlsx has one sheet per depot, each with vehicle_id, date and reading"
    } else {
        "odometer.xlsx has vehicle_id, date and reading"
    };
    let files = format!(
        "{vehicles_text}; odometer_unit is km or mi (miles), the unit the vehicle's odometer \
         reads in. fuel.csv has purchase_id, vehicle_id, date, volume, unit (L for litres, \
         gal for US gallons) and price (dollars paid). {sheets_text}, one reading a vehicle \
         on the first of each month."
    );
    let method = *g.pick(&[
        "The fuel used between two readings is the fuel bought after the first reading's \
         date, up to and including the last reading's date; the distance is the difference \
         of the two readings.",
        "Between two readings, a vehicle used the fuel it bought after the first reading's \
         date and up to and including the second's, over the distance between the readings.",
    ]);
    let mut rules = String::new();
    if medium_on {
        rules.push_str(" A price may carry a $ or use a decimal comma.");
    }
    if hard {
        rules.push_str(
            " The purchase log is careless: a purchase may be listed twice (count each \
             purchase_id once), a vehicle_id may be in lower case or padded with spaces (it is \
             the vehicle whose id it is once trimmed and upper-cased), and purchases of \
             vehicles not in the fleet are ignored.",
        );
    }
    let question = wording::question(g, &what);
    let precision = wording::precision(g, 2);
    let prompt = format!("{intro} {files} {method}{rules} {question} {precision}");

    let mut fuel_csv = String::from("purchase_id,vehicle_id,date,volume,unit,price\n");
    let mut purchase_id = g.int(1_000, 9_000);
    for p in &purchases {
        purchase_id += g.int(1, 3);
        let id = match p.vehicle {
            Some(v) => {
                let id = vehicles[v].id.clone();
                if p.dirty_id {
                    match g.index(3) {
                        0 => id.to_lowercase(),
                        1 => format!(" {id}"),
                        _ => format!("{id} "),
                    }
                } else {
                    id
                }
            }
            None => {
                number += g.int(1, 9);
                format!("FL-{number}")
            }
        };
        let (dollars, cents) = (p.cents / 100, p.cents % 100);
        let price = match if medium_on { g.index(4) } else { 0 } {
            1 => format!("${dollars}.{cents:02}"),
            2 => format!("\"{dollars},{cents:02}\""),
            _ => format!("{dollars}.{cents:02}"),
        };
        let row = format!(
            "P{purchase_id},{id},2024-{:02}-{:02},{}.{:02},{},{price}\n",
            p.month + 1,
            p.day,
            p.volume / 100,
            p.volume % 100,
            if p.gallons { "gal" } else { "L" }
        );
        if p.twice {
            fuel_csv.push_str(&row);
        }
        fuel_csv.push_str(&row);
    }
    let type_ids: Vec<i64> = (0..TYPES.len()).map(|_| g.int(1, 9)).collect();
    let mut db = Database::new("fleet.db");
    let make = |g: &mut Gen| *g.pick(MAKES);
    let makes: Vec<&str> = vehicles.iter().map(|_| make(g)).collect();
    if hard {
        // Distinct ids, not the types' order.
        let ids: Vec<i64> = kinds
            .iter()
            .enumerate()
            .map(|(i, _)| 10 * (i as i64 + 1) + type_ids[i])
            .collect();
        let id_of = |kind: usize| ids[kinds.iter().position(|&k| k == kind).unwrap()];
        db = db
            .table(
                "types",
                "id INTEGER PRIMARY KEY, name TEXT NOT NULL",
                kinds
                    .iter()
                    .map(|&k| vec![Sql::from(id_of(k)), TYPES[k].0.into()]),
            )
            .table(
                "vehicles",
                "vehicle_id TEXT PRIMARY KEY, make TEXT NOT NULL, type_id INTEGER NOT NULL \
                 REFERENCES types(id), odometer_unit TEXT NOT NULL",
                vehicles.iter().zip(&makes).map(|(v, make)| {
                    vec![
                        v.id.as_str().into(),
                        (*make).into(),
                        id_of(v.kind).into(),
                        (if v.miles { "mi" } else { "km" }).into(),
                    ]
                }),
            );
    } else {
        db = db.table(
            "vehicles",
            "vehicle_id TEXT PRIMARY KEY, make TEXT NOT NULL, type TEXT NOT NULL, \
             odometer_unit TEXT NOT NULL",
            vehicles.iter().zip(&makes).map(|(v, make)| {
                vec![
                    v.id.as_str().into(),
                    (*make).into(),
                    TYPES[v.kind].0.into(),
                    (if v.miles { "mi" } else { "km" }).into(),
                ]
            }),
        );
    }
    let mut workbook = String::from("SHEETS = [");
    let depots = g.sample(DEPOTS, sheets);
    for (s, depot) in depots.iter().enumerate() {
        let name = if hard {
            format!("depot_{depot}")
        } else {
            "readings".to_owned()
        };
        workbook.push_str(&format!("({name:?}, ["));
        for month in 0..=months {
            for vehicle in vehicles.iter().filter(|v| v.sheet == s) {
                workbook.push_str(&format!(
                    "({:?}, {}, {}), ",
                    vehicle.id,
                    month + 1,
                    vehicle.readings[month]
                ));
            }
        }
        workbook.push_str("]), ");
    }
    workbook.push_str("]\n");
    let instance = Instance::new(
        prompt,
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file("fuel.csv", fuel_csv)
    .setup(db.setup())
    .setup(format!(
        "{workbook}{WORKBOOK}{}{WORKBOOK_END}",
        save_workbook("odometer.xlsx")
    ))
    .secret(format!("{value:.2}"));
    Attempt::new(instance, sound)
}

/// Whether `value` is clear of a rounding edge at 2 decimals.
fn clear_of_edge(value: f64) -> bool {
    ((value * 100.0).abs().fract() - 0.5).abs() > 0.02
}

/// Writes odometer.xlsx from `SHEETS` (name, rows of (vehicle_id, month of 2024, reading)),
/// dates as Excel dates, with fixed document dates and zip timestamps so every run writes the
/// same bytes.
const WORKBOOK: &str = r#"import datetime as _datetime
import io as _io
import re as _re
import zipfile as _zipfile

import openpyxl as _openpyxl

_wb = _openpyxl.Workbook()
_wb.remove(_wb.active)
for _name, _rows in SHEETS:
    _ws = _wb.create_sheet(_name)
    _ws.append(["vehicle_id", "date", "reading"])
    for _vehicle, _month, _reading in _rows:
        _ws.append([_vehicle, _datetime.date(2024, _month, 1), _reading])
        _ws.cell(row=_ws.max_row, column=2).number_format = "yyyy-mm-dd"
_wb.properties.modified = _datetime.datetime(2024, 1, 1)
"#;

/// What the setup forgets once odometer.xlsx is written.
const WORKBOOK_END: &str = "del SHEETS, _wb, _ws, _name, _rows\n";
