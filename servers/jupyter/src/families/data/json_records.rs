//! `json-records`: a JSON list of orders with nested customer, item and shipping records; an
//! aggregate over a nested field for one group of orders.
//!
//! Levels: easy is one clean JSON file; medium has more orders and untidy values (a qty or
//! unit_price written as a string, prices with a `$`, a `null` shipping cost for free
//! shipping, city names with stray spaces or capitals); hard also splits the orders over
//! several export files in `exports/` (an order may be in two of them, to be counted once),
//! and an order names its customer by id, to be looked up in `customers.json`.

use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;
use serde_json::{Value, json};

use super::draw::{Attempt, draw};
use super::stats::{mean, sum};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, words};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "json-records",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "nested JSON records: an aggregate over a nested field for one group",
    generate,
};

const TIERS: &[&str] = &["bronze", "silver", "gold", "platinum"];
const METHODS: &[&str] = &["standard", "express", "pickup", "overnight"];
const FILES: &[&str] = &[
    "orders.json",
    "export.json",
    "records.json",
    "shop_orders.json",
];

struct Order {
    city: &'static str,
    tier: &'static str,
    method: &'static str,
    shipping: f64,
    /// (quantity, unit price) per item.
    items: Vec<(i64, f64)>,
}

impl Order {
    fn items_value(&self) -> f64 {
        self.items.iter().map(|(q, p)| *q as f64 * p).sum()
    }
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (messy, hard) = (level != Level::Easy, level == Level::Hard);
    let cities = g.subset(words::CITIES, 3, 6);
    let tiers = g.subset(TIERS, 2, 4);
    let methods = g.subset(METHODS, 2, 4);
    let skus: Vec<String> = (0..g.int(5, 15))
        .map(|_| format!("{}-{}", g.word(), g.int(10, 99)))
        .collect();
    let file = *g.pick(FILES);
    // Hard: the customers, each with an id the orders refer to.
    let customers: Vec<(String, &str, &str)> = if hard {
        let mut id = g.int(100, 900);
        (0..g.int(20, 50))
            .map(|_| {
                id += g.int(1, 9);
                (format!("C{id}"), *g.pick(&cities), *g.pick(&tiers))
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut orders = Vec::new();
    let mut records = Vec::new();
    let mut id = g.int(1000, 50_000);
    for _ in 0..level.pick(g.int(40, 160), g.int(120, 260), g.int(220, 400)) {
        id += g.int(1, 9);
        let customer = hard.then(|| g.index(customers.len()));
        let (city, tier) = match customer {
            Some(c) => (customers[c].1, customers[c].2),
            None => (*g.pick(&cities), *g.pick(&tiers)),
        };
        let method = *g.pick(&methods);
        // Untidy exports leave a free shipping's cost null.
        let free = messy && g.chance(0.1);
        let order = Order {
            city,
            tier,
            method,
            shipping: if free { 0.0 } else { g.money(0.0, 25.0, 2) },
            items: (0..g.int(1, 5))
                .map(|_| (g.int(1, 6), g.money(1.0, 150.0, 2)))
                .collect(),
        };
        let items: Vec<Value> = order
            .items
            .iter()
            .map(|&(qty, price)| {
                let qty = if messy && g.chance(0.1) {
                    json!(qty.to_string())
                } else {
                    json!(qty)
                };
                let price = if messy && g.chance(0.15) {
                    if g.chance(0.5) {
                        json!(format!("${price:.2}"))
                    } else {
                        json!(format!("{price:.2}"))
                    }
                } else {
                    json!(price)
                };
                json!({"sku": g.pick(&skus), "qty": qty, "unit_price": price})
            })
            .collect();
        let cost = if free {
            Value::Null
        } else {
            json!(order.shipping)
        };
        let shipping = json!({"method": order.method, "cost": cost});
        let record = match customer {
            Some(c) => json!({
                "order_id": format!("A{id}"),
                "customer_id": customers[c].0,
                "items": items,
                "shipping": shipping,
            }),
            None => {
                let name = format!("{} {}", g.first_name(), g.last_name());
                let city = scuffed(g, order.city, messy);
                json!({
                    "order_id": format!("A{id}"),
                    "customer": {"name": name, "city": city, "tier": order.tier},
                    "items": items,
                    "shipping": shipping,
                })
            }
        };
        records.push(record);
        orders.push(order);
    }
    let (group, selected): (String, Vec<&Order>) = match g.index(3) {
        0 => {
            let city = *g.pick(&cities);
            (
                format!("whose customer.city is {city:?}"),
                orders.iter().filter(|o| o.city == city).collect(),
            )
        }
        1 => {
            let tier = *g.pick(&tiers);
            (
                format!("whose customer.tier is {tier:?}"),
                orders.iter().filter(|o| o.tier == tier).collect(),
            )
        }
        _ => {
            let method = *g.pick(&methods);
            (
                format!("whose shipping.method is {method:?}"),
                orders.iter().filter(|o| o.method == method).collect(),
            )
        }
    };
    let (question, value) = match g.index(4) {
        0 => (
            "the total value of their items (the sum of qty × unit_price over every item of \
             those orders)",
            sum(&selected.iter().map(|o| o.items_value()).collect::<Vec<_>>()),
        ),
        1 => (
            "the mean number of units per order (units: the sum of qty over an order's items)",
            mean(
                &selected
                    .iter()
                    .map(|o| o.items.iter().map(|i| i.0).sum::<i64>() as f64)
                    .collect::<Vec<_>>(),
            ),
        ),
        2 => (
            "their mean order total, where an order's total is the sum of qty × unit_price \
             over its items plus its shipping.cost",
            mean(
                &selected
                    .iter()
                    .map(|o| o.items_value() + o.shipping)
                    .collect::<Vec<_>>(),
            ),
        ),
        _ => (
            "the mean unit_price over all items of those orders (each item counts once, \
             whatever its qty)",
            mean(
                &selected
                    .iter()
                    .flat_map(|o| o.items.iter().map(|i| i.1))
                    .collect::<Vec<_>>(),
            ),
        ),
    };

    let mut instance_files: Vec<(String, Vec<u8>)> = Vec::new();
    let where_text = if hard {
        // Two to four exports; an order now and then exported twice.
        let parts = g.int(2, 4) as usize;
        let mut exports: Vec<Vec<Value>> = vec![Vec::new(); parts];
        for record in &records {
            let part = g.index(parts);
            exports[part].push(record.clone());
            if g.chance(0.06) {
                exports[(part + 1 + g.index(parts - 1)) % parts].push(record.clone());
            }
        }
        for (i, export) in exports.into_iter().enumerate() {
            let text = serde_json::to_string_pretty(&Value::from(export)).unwrap_or_default();
            instance_files.push((format!("exports/part_{}.json", i + 1), text.into_bytes()));
        }
        let people: Vec<Value> = customers
            .iter()
            .map(|(id, city, tier)| {
                let city = scuffed(g, city, true);
                json!({"id": id, "name": format!("{} {}", g.first_name(), g.last_name()),
                       "city": city, "tier": tier})
            })
            .collect();
        let text = serde_json::to_string_pretty(&Value::from(people)).unwrap_or_default();
        instance_files.push(("customers.json".to_owned(), text.into_bytes()));
        format!(
            "The folder exports in your home directory holds {parts} JSON files, each a list \
             of orders; an order may appear in more than one of them (count each order_id \
             once). Each order has order_id, customer_id, items (a list of objects with sku, \
             qty, unit_price) and shipping (an object with method, cost). customers.json lists \
             the customers (id, name, city, tier): an order's customer.city and customer.tier \
             are those of the customer its customer_id names."
        )
    } else {
        let text = serde_json::to_string_pretty(&Value::from(records)).unwrap_or_default();
        instance_files.push((file.to_owned(), text.into_bytes()));
        let layout = "order_id, customer (an object with name, city, tier), items (a list of \
                      objects with sku, qty, unit_price) and shipping (an object with method, \
                      cost)";
        match g.index(4) {
            0 => format!(
                "The file {file} in your home directory is a JSON list of orders. Each order \
                 has {layout}."
            ),
            1 => format!(
                "Your home directory holds {file}, a JSON list of a shop's orders. An order \
                 has {layout}."
            ),
            2 => format!(
                "In your home directory, {file} is an export of orders as one JSON list. Its \
                 orders have {layout}."
            ),
            _ => format!(
                "A shop's orders are in {file} in your home directory, as a JSON list. Every \
                 order has {layout}."
            ),
        }
    };
    let dirty = if messy {
        " The export is untidy: a qty or unit_price may be a string (a price may carry a \
         leading $), a shipping cost of null means free shipping, and a city may carry stray \
         spaces or capitals (\" oslo\" is Oslo)."
    } else {
        ""
    };
    let consider = match g.index(4) {
        0 => "Consider the orders",
        1 => "Take only the orders",
        2 => "Look at the orders",
        _ => "Restrict yourself to the orders",
    };
    let question = wording::question(g, question);
    let precision = wording::precision(g, 2);
    let mut instance = Instance::new(
        format!("{where_text}{dirty} {consider} {group}. {question} {precision}"),
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    );
    for (path, bytes) in instance_files {
        instance = instance.file(path, bytes);
    }
    let instance = instance.secret(format!("{value:.2}"));
    Attempt::new(instance, selected.len() >= 3)
}

/// `name` as an untidy export may write it (when `messy`): now and then padded with a space
/// or in other capitals.
fn scuffed(g: &mut Gen, name: &str, messy: bool) -> String {
    if !messy || !g.chance(0.15) {
        return name.to_owned();
    }
    match g.index(3) {
        0 => format!(" {name}"),
        1 => format!("{name} "),
        _ => name.to_lowercase(),
    }
}
