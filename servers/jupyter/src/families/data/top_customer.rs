//! `top-customer`: transactions, and refunds of some of them in a JSON file; the customer with
//! the highest net revenue after refunds (by id or name), or that net revenue.
//!
//! Levels: easy is as described, all in dollars; medium has more customers and sales, sales
//! in euros as well as dollars (the prompt gives the rate), and customer ids in the
//! transactions in lower case or padded with spaces; hard also lists some transactions twice
//! (one `txn_id`, counted once) and has later refunds in a second file, `refunds_late.jsonl`
//! (one JSON object a line).

use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;
use serde_json::{Value, json};

use super::draw::{Attempt, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, date_of, round};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "top-customer",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "net revenue per customer after refunds: the top customer or its total",
    generate,
};

struct Sale {
    customer: usize,
    /// In the sale's own currency.
    amount: f64,
    refunded: f64,
    /// Dollars per unit of the sale's currency: 1 for dollars, the rate for euros.
    rate: f64,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (messy, hard) = (level != Level::Easy, level == Level::Hard);
    let count = level.pick(g.int(8, 30), g.int(25, 60), g.int(50, 100)) as usize;
    let mut names: Vec<String> = Vec::new();
    while names.len() < count {
        let name = format!("{} {}", g.first_name(), g.last_name());
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut next = g.int(100, 800);
    let ids: Vec<String> = (0..count)
        .map(|_| {
            next += g.int(1, 9);
            format!("K{next}")
        })
        .collect();
    // Dollars per euro (medium on).
    let eur_rate = round(g.float(1.02, 1.25), 4);
    // Some customers buy more often than others.
    let activity: Vec<i64> = (0..count).map(|_| g.int(1, 6)).collect();
    let busy: Vec<usize> = (0..count)
        .flat_map(|c| std::iter::repeat_n(c, activity[c] as usize))
        .collect();
    let sale_count = level.pick(g.int(80, 350), g.int(300, 700), g.int(600, 1200));
    let mut sales: Vec<Sale> = (0..sale_count)
        .map(|_| Sale {
            customer: *g.pick(&busy),
            amount: g.money(5.0, 600.0, 2),
            refunded: 0.0,
            rate: if messy && g.chance(0.35) {
                eur_rate
            } else {
                1.0
            },
        })
        .collect();
    let gross = totals(&sales, count, |s| s.amount * s.rate);
    let gross_top = best(&gross);
    // Refunds: some at random, and often many of the biggest buyer's, so that the net ranking
    // differs from the gross one.
    let hit_top = g.chance(0.5);
    let mut refunds: Vec<(usize, f64)> = Vec::new();
    for (i, sale) in sales.iter_mut().enumerate() {
        let p = if hit_top && sale.customer == gross_top {
            0.5
        } else {
            0.12
        };
        if !g.chance(p) {
            continue;
        }
        let parts = if g.chance(0.2) { 2 } else { 1 };
        for _ in 0..parts {
            let left = round(sale.amount - sale.refunded, 2);
            let amount = if g.chance(0.4) {
                left
            } else {
                round(g.float(0.01, 1.0) * left, 2)
            };
            if amount > 0.0 {
                sale.refunded += amount;
                refunds.push((i, amount));
            }
        }
    }
    let net = totals(&sales, count, |s| (s.amount - s.refunded) * s.rate);
    let top = best(&net);
    let second = (0..count)
        .filter(|&c| c != top)
        .map(|c| net[c])
        .fold(f64::NEG_INFINITY, f64::max);
    let sound = net[top] - second >= (0.01 * net[top]).max(5.0);
    let mut txn = g.int(5000, 90_000);
    let txn_ids: Vec<String> = sales
        .iter()
        .map(|_| {
            txn += g.int(1, 4);
            format!("T{txn}")
        })
        .collect();
    let mut transactions: Vec<Vec<String>> = Vec::new();
    for (s, id) in sales.iter().zip(&txn_ids) {
        let customer = &ids[s.customer];
        let customer = if messy && g.chance(0.1) {
            match g.index(3) {
                0 => customer.to_lowercase(),
                1 => format!(" {customer}"),
                _ => format!("{customer} "),
            }
        } else {
            customer.clone()
        };
        let mut row = vec![
            id.clone(),
            customer,
            date_of(g.int(3 * 365, 5 * 365)),
            format!("{:.2}", s.amount),
        ];
        if messy {
            row.push(if s.rate == 1.0 { "USD" } else { "EUR" }.to_owned());
        }
        if hard && g.chance(0.04) {
            transactions.push(row.clone());
        }
        transactions.push(row);
    }
    g.shuffle(&mut refunds);
    let mut refund_id = g.int(100, 900);
    let refund_records: Vec<Value> = refunds
        .iter()
        .map(|&(i, amount)| {
            refund_id += g.int(1, 5);
            json!({"refund_id": format!("R{refund_id}"), "txn_id": txn_ids[i], "amount": amount})
        })
        .collect();
    // Hard: the last third or so of the refunds came later, in a JSON Lines file.
    let late_from = if hard {
        refund_records.len() * g.int(55, 80) as usize / 100
    } else {
        refund_records.len()
    };
    let customers: Vec<Vec<String>> = ids
        .iter()
        .zip(&names)
        .map(|(id, name)| vec![id.clone(), name.clone()])
        .collect();
    let top_net = net[top];
    let lead = net[top] - second;
    let who = match g.index(3) {
        0 => "Which customer has the highest net revenue?".to_owned(),
        1 => "Who is the customer with the highest net revenue?".to_owned(),
        _ => wording::question(g, "the customer with the highest net revenue"),
    };
    // An id or a name is one the files show, so only the computed totals are secret.
    let (question, grader, secret) = match g.index(4) {
        0 => (
            format!("{who} Answer with its customer_id."),
            Grader::OneOf(vec![ids[top].clone()]),
            None,
        ),
        1 => (
            format!(
                "{who} {} (customers.csv has each customer's name.)",
                wording::name_only(g)
            ),
            Grader::OneOf(vec![names[top].clone()]),
            None,
        ),
        2 => (
            format!(
                "{} {}",
                wording::question(g, "the highest net revenue of any customer, in dollars"),
                wording::precision(g, 2)
            ),
            numeric(top_net),
            Some(format!("{top_net:.2}")),
        ),
        _ => (
            format!(
                "{} {}",
                wording::question(
                    g,
                    "by how many dollars the highest net revenue of any customer exceeds the \
                     second highest"
                ),
                wording::precision(g, 2)
            ),
            numeric(lead),
            Some(format!("{lead:.2}")),
        ),
    };
    let columns = if messy {
        "txn_id, customer_id, date, amount, currency"
    } else {
        "txn_id, customer_id, date, amount"
    };
    let refunds_text = if hard {
        "refunds.json (a JSON list of refunds, each with refund_id, txn_id and amount) and \
         refunds_late.jsonl (later refunds, one JSON object a line, with the same fields); a \
         transaction may have several partial refunds"
    } else {
        "refunds.json (a JSON list of refunds, each with refund_id, txn_id and amount; a \
         transaction may have several partial refunds)"
    };
    let intro = match g.index(3) {
        0 => format!(
            "Your home directory holds customers.csv (customer_id, name), transactions.csv \
             ({columns}) and {refunds_text}."
        ),
        1 => format!(
            "A shop's records are in your home directory: customers.csv (customer_id, name), \
             transactions.csv ({columns}) and {refunds_text}."
        ),
        _ => format!(
            "In your home directory are customers.csv (customer_id, name), transactions.csv \
             ({columns}) and {refunds_text}."
        ),
    };
    let money = if messy {
        format!(
            " An amount is in its transaction's currency, USD or EUR (1 EUR = {eur_rate} USD), \
             and so is a refund of it; net revenue is in dollars. A customer_id in \
             transactions.csv may be in lower case or padded with spaces."
        )
    } else {
        String::new()
    };
    let repeated = if hard {
        " A transaction may be listed twice (count each txn_id once)."
    } else {
        ""
    };
    let mut instance = Instance::new(
        format!(
            "{intro}{money}{repeated} A customer's net revenue is the sum of their transaction \
             amounts minus the sum of the refunds of those transactions. {question}"
        ),
        grader,
    )
    .file(
        "customers.csv",
        csv_bytes(&["customer_id", "name"], &customers),
    );
    let mut header = vec!["txn_id", "customer_id", "date", "amount"];
    if messy {
        header.push("currency");
    }
    instance = instance
        .file("transactions.csv", csv_bytes(&header, &transactions))
        .file(
            "refunds.json",
            serde_json::to_string_pretty(&Value::from(refund_records[..late_from].to_vec()))
                .unwrap_or_default()
                .into_bytes(),
        );
    if hard {
        let mut lines = String::new();
        for record in &refund_records[late_from..] {
            lines.push_str(&record.to_string());
            lines.push('\n');
        }
        instance = instance.file("refunds_late.jsonl", lines);
    }
    if let Some(secret) = secret {
        instance = instance.secret(secret);
    }
    Attempt::new(instance, sound)
}

/// Each customer's total of `value` over their sales.
fn totals(sales: &[Sale], count: usize, value: impl Fn(&Sale) -> f64) -> Vec<f64> {
    let mut totals = vec![0.0; count];
    for sale in sales {
        totals[sale.customer] += value(sale);
    }
    totals
}

/// The index of the largest total (the first of equals).
fn best(totals: &[f64]) -> usize {
    (0..totals.len()).fold(0, |b, c| if totals[c] > totals[b] { c } else { b })
}

fn numeric(value: f64) -> Grader {
    Grader::Numeric {
        value,
        rel_tol: 0.0,
        abs_tol: half_unit(2),
    }
}
