//! `join-orders`: customers.csv and orders.csv; join them, then an aggregate of the orders of
//! the customers that match a condition (a city, a signup year, or both).
//!
//! Levels: easy is a few dozen customers and one condition; medium adds the combined
//! conditions and the per-customer question; hard is several times the data with dirty keys
//! (customer ids in lower case or padded with spaces), orders listed twice, and amounts
//! written with a `$`, each to be cleaned (as the prompt says) before the join.

use super::draw::{Attempt, draw};
use super::stats::{mean, sum};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, date_of, words};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "join-orders",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "join customers and orders, then aggregate the orders of matching customers",
    generate,
};

struct Customer {
    id: String,
    city: &'static str,
    signup_year: i64,
}

struct Order {
    customer: String,
    year: i64,
    amount: f64,
}

/// Which orders of which customers a question counts.
type Condition = Box<dyn Fn(&Customer, &Order) -> bool>;

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let hard = level == Level::Hard;
    let cities = g.subset(words::CITIES, 3, 6);
    let count = level.pick(g.int(15, 30), g.int(20, 70), g.int(80, 160));
    let mut next_id = g.int(100, 900);
    let mut customers = Vec::new();
    let mut customer_rows = Vec::new();
    for _ in 0..count {
        next_id += g.int(1, 6);
        let id = format!("C{next_id}");
        let name = format!("{} {}", g.first_name(), g.last_name());
        let city = *g.pick(&cities);
        let (signup, _) = g.date();
        customer_rows.push(vec![id.clone(), name, city.to_owned(), signup.clone()]);
        customers.push(Customer {
            id,
            city,
            signup_year: signup[..4].parse().unwrap_or(2020),
        });
    }
    let mut orders = Vec::new();
    let mut order_rows = Vec::new();
    let mut order_id = g.int(10_000, 60_000);
    let order_count = level.pick(g.int(60, 150), g.int(120, 450), g.int(600, 1200));
    for _ in 0..order_count {
        order_id += g.int(1, 3);
        // A few orders belong to customers no longer in customers.csv: the join drops them.
        let customer = if g.chance(0.04) {
            next_id += g.int(1, 6);
            format!("C{next_id}")
        } else {
            g.pick(&customers).id.clone()
        };
        let day = g.int(0, 6 * 365);
        let date = date_of(day);
        let amount = g.money(5.0, 480.0, 2);
        // Hard: the key and the amount as a careless export writes them, and some orders twice.
        let written_customer = if hard && g.chance(0.15) {
            match g.index(3) {
                0 => customer.to_lowercase(),
                1 => format!(" {customer}"),
                _ => format!("{customer}  "),
            }
        } else {
            customer.clone()
        };
        let written_amount = if hard && g.chance(0.2) {
            format!("${amount:.2}")
        } else {
            format!("{amount:.2}")
        };
        let row = vec![
            format!("O{order_id}"),
            written_customer,
            date.clone(),
            written_amount,
        ];
        if hard && g.chance(0.06) {
            order_rows.push(row.clone());
        }
        order_rows.push(row);
        orders.push(Order {
            customer,
            year: date[..4].parse().unwrap_or(2020),
            amount,
        });
    }
    let city = *g.pick(&cities);
    let year = g.int(2020, 2025);
    let conditions = level.pick(2, 4, 4);
    let (who, matches): (String, Condition) = match g.index(conditions) {
        0 => (
            format!("customers whose city is {city}"),
            Box::new(move |c, _| c.city == city),
        ),
        1 => (
            format!("customers who signed up in {year}"),
            Box::new(move |c, _| c.signup_year == year),
        ),
        2 => {
            let since = g.int(2021, 2024);
            (
                format!("customers whose city is {city} and who signed up in {since} or later"),
                Box::new(move |c, _| c.city == city && c.signup_year >= since),
            )
        }
        _ => (
            format!("customers whose city is {city}, counting only orders placed in {year}"),
            Box::new(move |c, o| c.city == city && o.year == year),
        ),
    };
    // (customer id, amount) of every matching order.
    let matched: Vec<(&str, f64)> = orders
        .iter()
        .filter_map(|o| {
            let c = customers.iter().find(|c| c.id == o.customer)?;
            matches(c, o).then_some((c.id.as_str(), o.amount))
        })
        .collect();
    let amounts: Vec<f64> = matched.iter().map(|m| m.1).collect();
    let questions = level.pick(2, 3, 3);
    // (a sentence of what to do first, if any; what is asked; its value)
    let (step, asked, value) = match g.index(questions) {
        0 => (
            String::new(),
            format!("the total amount of the orders of {who}"),
            sum(&amounts),
        ),
        1 => (
            String::new(),
            format!("the mean amount per order of the orders of {who}"),
            mean(&amounts),
        ),
        _ => {
            let mut totals: Vec<(&str, f64)> = Vec::new();
            for (id, amount) in &matched {
                match totals.iter_mut().find(|t| t.0 == *id) {
                    Some(total) => total.1 += amount,
                    None => totals.push((id, *amount)),
                }
            }
            let totals: Vec<f64> = totals.iter().map(|t| t.1).collect();
            (
                format!("Take the orders of {who}, and total the amounts per customer. "),
                "the mean of those per-customer totals (customers without such orders are left \
                 out)"
                    .to_owned(),
                mean(&totals),
            )
        }
    };
    let dirty = if hard {
        " orders.csv was exported carelessly: a customer_id there may be in lower case or \
         padded with spaces (it names the customer whose id it is once trimmed and upper-cased), \
         an amount may carry a leading $, and an order may be listed more than once (count each \
         order_id once)."
    } else {
        ""
    };
    let files = "customers.csv (customer_id, name, city, signup_date) and orders.csv \
                 (order_id, customer_id, order_date, amount)";
    let intro = match g.index(4) {
        0 => format!("Your home directory holds {files}; dates are YYYY-MM-DD."),
        1 => format!("A shop's data is in your home directory: {files}, with dates as YYYY-MM-DD."),
        2 => format!("In your home directory are {files}; every date is YYYY-MM-DD."),
        _ => format!("Two files are in your home directory, {files}; dates are YYYY-MM-DD."),
    };
    let ignored = match g.index(3) {
        0 => "Orders whose customer_id is not in customers.csv are ignored.",
        1 => "An order whose customer_id customers.csv does not list is left out.",
        _ => "Ignore the orders of customer_ids that customers.csv does not have.",
    };
    let question = wording::question(g, &asked);
    let precision = wording::precision(g, 2);
    let instance = Instance::new(
        format!("{intro}{dirty} {ignored} {step}{question} {precision}"),
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file(
        "customers.csv",
        csv_bytes(
            &["customer_id", "name", "city", "signup_date"],
            &customer_rows,
        ),
    )
    .file(
        "orders.csv",
        csv_bytes(
            &["order_id", "customer_id", "order_date", "amount"],
            &order_rows,
        ),
    )
    .secret(format!("{value:.2}"));
    Attempt::new(instance, amounts.len() >= 3)
}
