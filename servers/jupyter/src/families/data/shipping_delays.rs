//! `shipping-delays`: orders (CSV, the dispatch time on the warehouse's local clock beside its
//! IANA time zone), carriers and their promised delivery hours per service level (SQLite), and
//! the tracking events of every shipment (nested JSON, in UTC); how often a carrier delivered
//! late, which carrier was late most often, how late its late deliveries were, or how many
//! failed attempts its shipments had.
//!
//! - `orders.csv`: `order_id,region,carrier,service,shipped_at,tz` (`shipped_at` is
//!   `YYYY-MM-DD HH:MM` in the zone `tz`; every zone is one without daylight saving in 2024).
//! - `carriers.db`: `carriers(code, name)` and `promises(carrier_code, service, hours)`.
//! - `tracking.json`: an array of `{order_id, events: [{status, time}]}`, `time` in UTC.
//!
//! A delivery is late when the time from dispatch to its first `delivered` event is more than
//! the carrier's promise for the order's service. Reading the local dispatch time as UTC moves
//! it by the zone's offset; the generator redraws an instance until that mistake (and, for the
//! attempts question, counting repeated events twice) gives a wrong answer.
//!
//! Levels: easy has three carriers, two services, a hundred orders and clean tracking; medium
//! has more of everything, events out of order and some listed twice, shipments never
//! delivered, and asks also for delays and failed attempts; hard has several hundred orders
//! split over a second export in another schema (`orders_phone.csv`: semicolons, other
//! headers, day-first dates), orders listed twice, carrier codes in lower case or padded,
//! services capitalised, and a shipment's events split over two entries of the array.

use serde_json::{Value, json};

use super::clock::{FIXED_ZONES, YEAR_2024, local_minute, local_minute_day_first, utc_iso};
use super::draw::{Attempt, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "shipping-delays",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "orders on local clocks (CSV), carriers' promises (SQLite) and tracking events \
            (nested JSON); late deliveries per carrier, region and service",
    generate,
};

/// Carriers: code and name.
const CARRIERS: &[(&str, &str)] = &[
    ("SWX", "Swift Express"),
    ("PCL", "Parcel Line"),
    ("NRD", "Nordic Freight"),
    ("BLU", "Blue Courier"),
    ("ATL", "Atlas Post"),
    ("QKS", "Quickship"),
    ("ORB", "Orbit Logistics"),
];

/// Service levels and the promises (hours) a carrier may give for each.
const SERVICES: &[(&str, [i64; 3])] = &[
    ("express", [18, 24, 36]),
    ("standard", [48, 60, 72]),
    ("economy", [96, 120, 144]),
];

const REGIONS: &[&str] = &["North", "South", "East", "West", "Central", "Coastal"];

/// One shipment as it happened.
struct Order {
    id: String,
    region: usize,
    carrier: usize,
    service: usize,
    zone: usize,
    shipped: i64,
    /// When it was delivered, if it was.
    delivered: Option<i64>,
    /// Its failed delivery attempts (distinct events).
    attempts: i64,
    /// Its failed attempts as the tracking file lists them, repeats included.
    attempts_listed: i64,
    /// Its tracking events as the file lists them (status, time).
    listed: Vec<(&'static str, i64)>,
    /// Where its events are split over two entries (at which event, and how many entries
    /// later the second comes), if they are.
    split: Option<(usize, usize)>,
}

/// What the question asks.
enum Question {
    /// The percentage of a carrier's deliveries to a region that were late.
    LateShare { carrier: usize, region: usize },
    /// The carrier with the highest share of late deliveries on a service.
    WorstCarrier { service: usize },
    /// The mean hours past the promise of a carrier's late deliveries to a region.
    MeanDelay { carrier: usize, region: usize },
    /// The failed attempts on a carrier's shipments to a region.
    Attempts { carrier: usize, region: usize },
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let easy = level == Level::Easy;
    let hard = level == Level::Hard;
    let carriers: Vec<usize> = g.sample(
        &(0..CARRIERS.len()).collect::<Vec<_>>(),
        level.pick(3, 4, 5),
    );
    let services = if easy { 2 } else { 3 };
    // promise[c][s]: hours carrier c promises on service s.
    let promise: Vec<Vec<i64>> = carriers
        .iter()
        .map(|_| (0..services).map(|s| *g.pick(&SERVICES[s].1)).collect())
        .collect();
    let regions: Vec<usize> =
        g.sample(&(0..REGIONS.len()).collect::<Vec<_>>(), level.pick(3, 4, 5));
    let zones: Vec<usize> = g.sample(
        &(0..FIXED_ZONES.len()).collect::<Vec<_>>(),
        level.pick(3, 4, 6),
    );

    let count = level.pick(g.int(90, 130), g.int(220, 340), g.int(500, 750));
    let mut orders = Vec::new();
    let mut next_id = g.int(10_000, 60_000);
    for _ in 0..count {
        next_id += g.int(1, 7);
        let carrier = g.index(carriers.len());
        let service = g.index(services);
        let zone = *g.pick(&zones);
        // Dispatched in the first half of 2024, on the minute.
        let shipped = YEAR_2024 + g.int(0, 180 * 24 * 60) * 60;
        let hours = promise[carrier][service] as f64;
        // Within a few hours of the promise either way, so a clock off by a zone's offset
        // calls some deliveries late that were not, and the other way round.
        let took = (hours * 60.0 + g.float(-0.45, 0.3) * hours * 60.0).round() as i64 * 60;
        let took = took.max(3 * 3600);
        let undelivered = !easy && g.chance(0.06);
        let delivered = (!undelivered).then_some(shipped + took);
        let mut events = vec![("picked_up", shipped + g.int(5, 90) * 60)];
        let end = shipped + took;
        if g.chance(0.6) {
            events.push(("in_transit", shipped + took / 2 + g.int(-60, 60) * 60));
        }
        let attempts = if g.chance(if easy { 0.15 } else { 0.25 }) {
            g.int(1, 2)
        } else {
            0
        };
        for a in 0..attempts {
            events.push(("failed_attempt", end - (a + 1) * g.int(5, 9) * 3600));
        }
        events.push(("out_for_delivery", end - g.int(30, 180) * 60));
        if !undelivered {
            events.push(("delivered", end));
        }
        let mut listed: Vec<(&'static str, i64)> = Vec::new();
        for &event in &events {
            listed.push(event);
            // A tracking feed that sent an event again.
            if !easy && g.chance(0.08) {
                listed.push(event);
            }
        }
        if !easy {
            g.shuffle(&mut listed);
        } else {
            listed.sort_by_key(|e| e.1);
        }
        let attempts_listed = listed.iter().filter(|e| e.0 == "failed_attempt").count() as i64;
        // The feed's second batch for a shipment, filed as an entry of its own later.
        let split = (hard && listed.len() >= 3 && g.chance(0.1)).then(|| {
            (
                g.int(1, listed.len() as i64 - 1) as usize,
                g.int(0, 40) as usize,
            )
        });
        orders.push(Order {
            id: format!("OR-{next_id}"),
            region: *g.pick(&regions),
            carrier,
            service,
            zone,
            shipped,
            delivered,
            attempts,
            attempts_listed,
            listed,
            split,
        });
    }

    // Late or not, by the true clock and by the local clock read as UTC (the naive one,
    // `skew` seconds later than the truth).
    let late = |o: &Order, skew: i64| -> Option<(bool, f64)> {
        let delivered = o.delivered?;
        let took = delivered - o.shipped - skew;
        let over = took - promise[o.carrier][o.service] * 3600;
        Some((over > 0, over as f64 / 3600.0))
    };
    let skew = |o: &Order| FIXED_ZONES[o.zone].1 * 60;
    // (late, deliveries, hours over of the late ones) of the orders `keep` selects.
    let tally = |keep: &dyn Fn(&Order) -> bool, naive: bool| -> (i64, i64, f64) {
        let mut out = (0, 0, 0.0);
        for o in orders.iter().filter(|o| keep(o)) {
            if let Some((is_late, over)) = late(o, if naive { skew(o) } else { 0 }) {
                out.1 += 1;
                if is_late {
                    out.0 += 1;
                    out.2 += over;
                }
            }
        }
        out
    };

    let shapes = if easy { 2 } else { 4 };
    let question = match g.index(shapes) {
        0 => Question::LateShare {
            carrier: g.index(carriers.len()),
            region: *g.pick(&regions),
        },
        1 => Question::WorstCarrier {
            service: g.index(services),
        },
        2 => Question::MeanDelay {
            carrier: g.index(carriers.len()),
            region: *g.pick(&regions),
        },
        _ => Question::Attempts {
            carrier: g.index(carriers.len()),
            region: *g.pick(&regions),
        },
    };
    let carrier_name = |c: usize| CARRIERS[carriers[c]].1;
    let (what, grader, secret, sound) = match question {
        Question::LateShare { carrier, region } => {
            let keep = |o: &Order| o.carrier == carrier && o.region == region;
            let (k, n, _) = tally(&keep, false);
            let (naive_k, naive_n, _) = tally(&keep, true);
            let share = 100.0 * k as f64 / n.max(1) as f64;
            let naive = 100.0 * naive_k as f64 / naive_n.max(1) as f64;
            (
                format!(
                    "the percentage of carrier {}'s deliveries to the {} region that were late",
                    carrier_name(carrier),
                    REGIONS[region]
                ),
                numeric(share, 1),
                Some(format!("{share:.1}")),
                n >= level.pick(6, 10, 14) && (naive - share).abs() > 0.1,
            )
        }
        Question::WorstCarrier { service } => {
            let shares = |naive: bool| -> Vec<f64> {
                (0..carriers.len())
                    .map(|c| {
                        let (k, n, _) =
                            tally(&|o: &Order| o.carrier == c && o.service == service, naive);
                        k as f64 / n.max(1) as f64
                    })
                    .collect()
            };
            let (truth, naive) = (shares(false), shares(true));
            let best = argmax(&truth);
            let mut sorted = truth.clone();
            sorted.sort_by(|a, b| b.total_cmp(a));
            (
                format!(
                    "the highest share of late deliveries on the {} service",
                    SERVICES[service].0
                ),
                Grader::OneOf(vec![carrier_name(best).to_owned()]),
                None,
                sorted[0] - sorted[1] > 0.02 && argmax(&naive) != best,
            )
        }
        Question::MeanDelay { carrier, region } => {
            let keep = |o: &Order| o.carrier == carrier && o.region == region;
            let (k, _, over) = tally(&keep, false);
            let (naive_k, _, naive_over) = tally(&keep, true);
            let mean = over / k.max(1) as f64;
            let naive = naive_over / naive_k.max(1) as f64;
            (
                format!(
                    "the mean number of hours past the promise of carrier {}'s late deliveries \
                     to the {} region",
                    carrier_name(carrier),
                    REGIONS[region]
                ),
                numeric(mean, 2),
                Some(format!("{mean:.2}")),
                k >= 3 && (naive - mean).abs() > 0.01,
            )
        }
        Question::Attempts { carrier, region } => {
            let scope = orders
                .iter()
                .filter(|o| o.carrier == carrier && o.region == region);
            let (distinct, listed) =
                scope.fold((0, 0), |(d, l), o| (d + o.attempts, l + o.attempts_listed));
            (
                format!(
                    "the number of failed delivery attempts on carrier {}'s shipments to the {} \
                     region",
                    carrier_name(carrier),
                    REGIONS[region]
                ),
                Grader::Numeric {
                    value: distinct as f64,
                    rel_tol: 0.0,
                    abs_tol: 0.0,
                },
                None,
                distinct >= 2 && listed > distinct,
            )
        }
    };

    if !sound {
        // Drawn again: the files are not worth writing.
        return Attempt::new(Instance::new("", Grader::Exact(String::new())), false);
    }
    let hard_files = if hard {
        " Some orders came by phone: orders_phone.csv is separated by semicolons, with the \
         columns Order, Region, Carrier code, Service level, Shipped (local) as DD/MM/YYYY \
         HH:MM, and Time zone; together the two files list every order. The exports are \
         careless: an order may be listed twice (count each order id once), a carrier code \
         may be in lower case or padded with spaces (trim it and upper-case it), and a \
         service may be capitalised. One shipment's events may be split over several entries \
         of tracking.json (its events are all of them together)."
    } else {
        ""
    };
    let repeats = if easy {
        ""
    } else {
        " The feed may list an event twice (the same status at the same time is one event), \
         and a shipment without a delivered event was never delivered: it is no delivery, \
         late or on time."
    };
    let intro = *g.pick(&[
        "Your home directory holds a shop's shipping records.",
        "The files in your home directory are a shop's shipping records.",
        "A shop exported its shipping records into your home directory.",
        "You are given a shop's shipping records, in your home directory.",
    ]);
    let rule = *g.pick(&[
        "A delivery is late when the time from shipped_at to the shipment's first delivered \
         event is more than the hours its carrier promises for its service.",
        "A delivery counts as late if more hours passed between shipped_at and the \
         shipment's first delivered event than its carrier promises for its service.",
        "Late means the first delivered event came more than the promised hours (the \
         carrier's, for the order's service) after shipped_at.",
    ]);
    let asked = match question {
        Question::WorstCarrier { .. } => {
            let frame = *g.pick(&[
                "Which carrier had {}?",
                "Name the carrier with {}.",
                "Find the carrier with {}.",
                "Which carrier shows {}?",
            ]);
            format!("{} {}", frame.replace("{}", &what), wording::name_only(g))
        }
        Question::Attempts { .. } => {
            format!(
                "{} {}",
                wording::question(g, &what),
                wording::precision(g, 0)
            )
        }
        Question::LateShare { .. } => {
            format!(
                "{} {}",
                wording::question(g, &what),
                wording::precision(g, 1)
            )
        }
        Question::MeanDelay { .. } => {
            format!(
                "{} {}",
                wording::question(g, &what),
                wording::precision(g, 2)
            )
        }
    };
    let prompt = format!(
        "{intro} orders.csv has order_id, region, carrier (a code), service, shipped_at (when \
         the order left the warehouse, YYYY-MM-DD HH:MM on the warehouse's local clock) and tz \
         (the warehouse's IANA time zone). carriers.db is a SQLite database: carriers(code, \
         name) and promises(carrier_code, service, hours). tracking.json is an array of \
         shipments, each with order_id and events (each a status and a time in UTC).{hard_files}\
         {repeats} {rule} {asked}"
    );

    let as_json = |events: &[(&str, i64)]| -> Value {
        events
            .iter()
            .map(|(status, t)| json!({"status": status, "time": utc_iso(*t)}))
            .collect()
    };
    let mut tracking: Vec<Value> = Vec::new();
    // Second batches, with the index they are filed at (some entries after the first).
    let mut later_batches: Vec<(usize, Value)> = Vec::new();
    for o in &orders {
        match o.split {
            Some((cut, later)) => {
                tracking.push(json!({"order_id": o.id, "events": as_json(&o.listed[..cut])}));
                let batch = json!({"order_id": o.id, "events": as_json(&o.listed[cut..])});
                later_batches.push((tracking.len() + later, batch));
            }
            None => tracking.push(json!({"order_id": o.id, "events": as_json(&o.listed)})),
        }
    }
    for (at, batch) in later_batches {
        tracking.insert(at.min(tracking.len()), batch);
    }
    let mut web_rows = Vec::new();
    let mut phone_rows = Vec::new();
    for o in &orders {
        let (code, zone, offset) = (
            CARRIERS[carriers[o.carrier]].0,
            FIXED_ZONES[o.zone].0,
            FIXED_ZONES[o.zone].1,
        );
        let code = if hard && g.chance(0.15) {
            match g.index(3) {
                0 => code.to_lowercase(),
                1 => format!(" {code}"),
                _ => format!("{code} "),
            }
        } else {
            code.to_owned()
        };
        let service = SERVICES[o.service].0;
        let service = if hard && g.chance(0.2) {
            format!("{}{}", service[..1].to_uppercase(), &service[1..])
        } else {
            service.to_owned()
        };
        let region = REGIONS[o.region];
        let (rows, row) = if hard && g.chance(0.35) {
            let shipped = local_minute_day_first(o.shipped, offset);
            (
                &mut phone_rows,
                format!("{};{region};{code};{service};{shipped};{zone}", o.id),
            )
        } else {
            let shipped = local_minute(o.shipped, offset);
            (
                &mut web_rows,
                format!("{},{region},{code},{service},{shipped},{zone}", o.id),
            )
        };
        if hard && g.chance(0.05) {
            rows.push(row.clone());
        }
        rows.push(row);
    }
    let lines = |header: &str, rows: &[String]| {
        let mut text = format!("{header}\n");
        for row in rows {
            text.push_str(row);
            text.push('\n');
        }
        text
    };
    let mut db = String::from("CARRIERS = [");
    for &c in &carriers {
        db.push_str(&format!("({:?}, {:?}), ", CARRIERS[c].0, CARRIERS[c].1));
    }
    db.push_str("]\nPROMISES = [");
    for (i, &c) in carriers.iter().enumerate() {
        for (s, hours) in promise[i].iter().enumerate() {
            db.push_str(&format!(
                "({:?}, {:?}, {hours}), ",
                CARRIERS[c].0, SERVICES[s].0
            ));
        }
    }
    db.push_str("]\n");
    let mut instance = Instance::new(prompt, grader)
        .file(
            "orders.csv",
            lines("order_id,region,carrier,service,shipped_at,tz", &web_rows),
        )
        .file(
            "tracking.json",
            serde_json::to_string_pretty(&Value::from(tracking)).unwrap() + "\n",
        )
        .setup(format!("{db}{SETUP}"));
    if hard {
        instance = instance.file(
            "orders_phone.csv",
            lines(
                "Order;Region;Carrier code;Service level;Shipped (local);Time zone",
                &phone_rows,
            ),
        );
    }
    if let Some(secret) = secret {
        instance = instance.secret(secret);
    }
    Attempt::new(instance, sound)
}

/// A numeric grader asking for `decimals` places.
fn numeric(value: f64, decimals: u32) -> Grader {
    Grader::Numeric {
        value,
        rel_tol: 0.0,
        abs_tol: half_unit(decimals),
    }
}

/// The index of the largest value (the first of equals).
fn argmax(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, v) in values.iter().enumerate() {
        if *v > values[best] {
            best = i;
        }
    }
    best
}

/// Builds carriers.db from `CARRIERS` and `PROMISES`.
const SETUP: &str = r#"import sqlite3
db = sqlite3.connect("carriers.db")
db.execute("CREATE TABLE carriers (code TEXT PRIMARY KEY, name TEXT NOT NULL)")
db.execute("CREATE TABLE promises (carrier_code TEXT NOT NULL REFERENCES carriers(code), service TEXT NOT NULL, hours INTEGER NOT NULL, PRIMARY KEY (carrier_code, service))")
db.executemany("INSERT INTO carriers VALUES (?, ?)", CARRIERS)
db.executemany("INSERT INTO promises VALUES (?, ?, ?)", PROMISES)
db.commit()
db.close()
del db, sqlite3
"#;
