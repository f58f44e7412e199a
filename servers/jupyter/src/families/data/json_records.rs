//! `json-records`: a JSON list of orders with nested customer, item and shipping records; an
//! aggregate over a nested field for one group of orders.

use mcpgym_env::answer::half_unit;
use serde_json::{Value, json};

use super::draw::{Attempt, draw};
use super::stats::{mean, sum};
use crate::families::{Family, FamilySplit, Gen, Instance, words};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "json-records",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: false,
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
    let cities = g.subset(words::CITIES, 3, 6);
    let tiers = g.subset(TIERS, 2, 4);
    let methods = g.subset(METHODS, 2, 4);
    let skus: Vec<String> = (0..g.int(5, 15))
        .map(|_| format!("{}-{}", g.word(), g.int(10, 99)))
        .collect();
    let file = *g.pick(FILES);
    let mut orders = Vec::new();
    let mut records = Vec::new();
    let mut id = g.int(1000, 50_000);
    for _ in 0..g.int(40, 160) {
        id += g.int(1, 9);
        let (city, tier, method) = (*g.pick(&cities), *g.pick(&tiers), *g.pick(&methods));
        let order = Order {
            city,
            tier,
            method,
            shipping: g.money(0.0, 25.0, 2),
            items: (0..g.int(1, 5))
                .map(|_| (g.int(1, 6), g.money(1.0, 150.0, 2)))
                .collect(),
        };
        let items: Vec<Value> = order
            .items
            .iter()
            .map(|(qty, price)| json!({"sku": g.pick(&skus), "qty": qty, "unit_price": price}))
            .collect();
        let name = format!("{} {}", g.first_name(), g.last_name());
        records.push(json!({
            "order_id": format!("A{id}"),
            "customer": {"name": name, "city": order.city, "tier": order.tier},
            "items": items,
            "shipping": {"method": order.method, "cost": order.shipping},
        }));
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
            "What is the total value of their items (the sum of qty × unit_price over every \
             item of those orders)?",
            sum(&selected.iter().map(|o| o.items_value()).collect::<Vec<_>>()),
        ),
        1 => (
            "What is the mean number of units per order (units: the sum of qty over an \
             order's items)?",
            mean(
                &selected
                    .iter()
                    .map(|o| o.items.iter().map(|i| i.0).sum::<i64>() as f64)
                    .collect::<Vec<_>>(),
            ),
        ),
        2 => (
            "What is their mean order total, where an order's total is the sum of qty × \
             unit_price over its items plus its shipping.cost?",
            mean(
                &selected
                    .iter()
                    .map(|o| o.items_value() + o.shipping)
                    .collect::<Vec<_>>(),
            ),
        ),
        _ => (
            "What is the mean unit_price over all items of those orders (each item counts \
             once, whatever its qty)?",
            mean(
                &selected
                    .iter()
                    .flat_map(|o| o.items.iter().map(|i| i.1))
                    .collect::<Vec<_>>(),
            ),
        ),
    };
    let text = serde_json::to_string_pretty(&Value::from(records)).unwrap_or_default();
    let instance = Instance::new(
        format!(
            "The file {file} in your home directory is a JSON list of orders. Each order has \
             order_id, customer (an object with name, city, tier), items (a list of objects \
             with sku, qty, unit_price) and shipping (an object with method, cost). Consider \
             the orders {group}. {question} Give the number rounded to 2 decimal places."
        ),
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file(file, text.into_bytes())
    .secret(format!("{value:.2}"));
    Attempt::new(instance, selected.len() >= 3)
}
