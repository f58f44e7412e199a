//! `top-customer`: transactions, and refunds of some of them in a JSON file; the customer with
//! the highest net revenue after refunds (by id or name), or that net revenue.

use mcpgym_env::answer::half_unit;
use serde_json::{Value, json};

use super::draw::{Attempt, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes, date_of, round};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "top-customer",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "net revenue per customer after refunds: the top customer or its total",
    generate,
};

struct Sale {
    customer: usize,
    amount: f64,
    refunded: f64,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let count = g.int(8, 30) as usize;
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
    // Some customers buy more often than others.
    let activity: Vec<i64> = (0..count).map(|_| g.int(1, 6)).collect();
    let busy: Vec<usize> = (0..count)
        .flat_map(|c| std::iter::repeat_n(c, activity[c] as usize))
        .collect();
    let mut sales: Vec<Sale> = (0..g.int(80, 350))
        .map(|_| Sale {
            customer: *g.pick(&busy),
            amount: g.money(5.0, 600.0, 2),
            refunded: 0.0,
        })
        .collect();
    let gross = totals(&sales, count, |s| s.amount);
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
    let net = totals(&sales, count, |s| s.amount - s.refunded);
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
    let transactions: Vec<Vec<String>> = sales
        .iter()
        .zip(&txn_ids)
        .map(|(s, id)| {
            vec![
                id.clone(),
                ids[s.customer].clone(),
                date_of(g.int(3 * 365, 5 * 365)),
                format!("{:.2}", s.amount),
            ]
        })
        .collect();
    g.shuffle(&mut refunds);
    let mut refund_id = g.int(100, 900);
    let refund_records: Vec<Value> = refunds
        .iter()
        .map(|&(i, amount)| {
            refund_id += g.int(1, 5);
            json!({"refund_id": format!("R{refund_id}"), "txn_id": txn_ids[i], "amount": amount})
        })
        .collect();
    let customers: Vec<Vec<String>> = ids
        .iter()
        .zip(&names)
        .map(|(id, name)| vec![id.clone(), name.clone()])
        .collect();
    let top_net = round(net[top], 2);
    let lead = round(net[top] - second, 2);
    // An id or a name is one the files show, so only the computed totals are secret.
    let (question, grader, secret) = match g.index(4) {
        0 => (
            "Which customer has the highest net revenue? Answer with its customer_id.",
            Grader::OneOf(vec![ids[top].clone()]),
            None,
        ),
        1 => (
            "Which customer has the highest net revenue? Answer with its name as written in \
             customers.csv.",
            Grader::OneOf(vec![names[top].clone()]),
            None,
        ),
        2 => (
            "What is the highest net revenue of any customer? Give it rounded to 2 decimal \
             places.",
            numeric(top_net),
            Some(format!("{top_net:.2}")),
        ),
        _ => (
            "By how much does the highest net revenue of any customer exceed the second \
             highest? Give the difference rounded to 2 decimal places.",
            numeric(lead),
            Some(format!("{lead:.2}")),
        ),
    };
    let mut instance = Instance::new(
        format!(
            "Your home directory holds customers.csv (customer_id, name), transactions.csv \
             (txn_id, customer_id, date, amount) and refunds.json (a JSON list of refunds, each \
             with refund_id, txn_id and amount; a transaction may have several partial \
             refunds). A customer's net revenue is the sum of their transaction amounts minus \
             the sum of the refunds of those transactions. {question}"
        ),
        grader,
    )
    .file(
        "customers.csv",
        csv_bytes(&["customer_id", "name"], &customers),
    )
    .file(
        "transactions.csv",
        csv_bytes(&["txn_id", "customer_id", "date", "amount"], &transactions),
    )
    .file(
        "refunds.json",
        serde_json::to_string_pretty(&Value::from(refund_records))
            .unwrap_or_default()
            .into_bytes(),
    );
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
