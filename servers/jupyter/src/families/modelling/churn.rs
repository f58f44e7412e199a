//! `churn`: a subscription service's customers (tenure, plan, contract, monthly charge,
//! support calls, payment method) and whether each left; the agent predicts which held-out
//! customers leave, scored by accuracy from that of the most common answer (0) to that of the
//! true churn probabilities' best guess (1).
//!
//! Leaving follows a logistic rule the data reveals: support calls and monthly contracts push
//! towards leaving, tenure and automatic payment away, and the monthly charge matters relative
//! to the plan's usual price. Logistic regression on the encoded columns recovers it; guessing
//! "no" for everyone scores 0.
//!
//! Levels: easy is clean; medium adds the charge-relative-to-plan effect and more rows; hard
//! has the charge written in cents for one billing system (a `billing` column says which),
//! customers listed twice, and contract names in mixed case.

use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes};
use crate::predictions::{Metric, PredictionGrader, Truth};
use crate::tasks::{Grader, TaskKind};

use super::{PREDICTIONS, closing};

pub(super) const FAMILY: Family = Family {
    name: "churn",
    kind: TaskKind::Modelling,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "train a classifier on customers who stayed or left; predict held-out churn (accuracy, partial credit)",
    generate,
};

/// Plans and their usual monthly charge.
const PLANS: &[(&str, f64)] = &[("basic", 19.0), ("plus", 39.0), ("pro", 69.0)];

/// The share of the score scale a model must reach to succeed.
const THRESHOLD: f64 = 0.7;

struct Customer {
    tenure: i64,
    plan: usize,
    monthly_contract: bool,
    charge: f64,
    calls: i64,
    autopay: bool,
}

fn generate(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let medium_or_hard = level != Level::Easy;
    let intercept = g.float(-1.6, -0.6);
    let per_call = g.float(0.45, 0.9);
    let per_year = -g.float(0.5, 1.0);
    let monthly = g.float(1.0, 2.0);
    let autopay = -g.float(0.6, 1.3);
    let overcharge = if medium_or_hard {
        g.float(0.08, 0.16)
    } else {
        0.0
    };
    let probability = |c: &Customer| {
        let logit = intercept
            + per_call * c.calls as f64
            + per_year * c.tenure as f64 / 12.0
            + if c.monthly_contract { monthly } else { 0.0 }
            + if c.autopay { autopay } else { 0.0 }
            + overcharge * (c.charge - PLANS[c.plan].1);
        1.0 / (1.0 + (-logit).exp())
    };
    let customer = |g: &mut Gen| {
        let plan = g.index(PLANS.len());
        Customer {
            tenure: g.int(1, 72),
            plan,
            monthly_contract: g.chance(0.55),
            charge: ((PLANS[plan].1 + g.float(-8.0, 14.0)) * 100.0).round() / 100.0,
            calls: g.int(0, 6),
            autopay: g.chance(0.5),
        }
    };
    let header = [
        "customer_id",
        "tenure_months",
        "plan",
        "contract",
        "monthly_charge",
        "billing",
        "support_calls",
        "autopay",
        "churned",
    ];
    let row = |g: &mut Gen, id: &str, c: &Customer, churned: Option<bool>| {
        let contract = if c.monthly_contract {
            "monthly"
        } else {
            "annual"
        };
        let contract = if hard && g.chance(0.3) {
            contract.to_uppercase()
        } else {
            contract.to_owned()
        };
        let (charge, billing) = if hard && g.chance(0.3) {
            (format!("{:.0}", c.charge * 100.0), "legacy")
        } else {
            (format!("{:.2}", c.charge), "current")
        };
        let mut fields = vec![
            id.to_owned(),
            c.tenure.to_string(),
            PLANS[c.plan].0.to_owned(),
            contract,
            charge,
            billing.to_owned(),
            c.calls.to_string(),
            if c.autopay { "yes" } else { "no" }.to_owned(),
        ];
        if let Some(churned) = churned {
            fields.push(if churned { "yes" } else { "no" }.to_owned());
        }
        fields
    };
    let train_count = level.pick(g.int(600, 900), g.int(1000, 1600), g.int(1800, 2600));
    let mut number = g.int(10_000, 60_000);
    let mut train_rows = Vec::new();
    let mut left = 0usize;
    for _ in 0..train_count {
        number += g.int(1, 5);
        let c = customer(g);
        let churned = g.chance(probability(&c));
        left += usize::from(churned);
        let fields = row(g, &format!("C{number}"), &c, Some(churned));
        if hard && g.chance(0.04) {
            train_rows.push(fields.clone());
        }
        train_rows.push(fields);
    }
    let majority = 2 * left > train_count as usize;
    let test_count = g.int(400, 600) as usize;
    let (mut test_rows, mut ids, mut truth) = (Vec::new(), Vec::new(), Vec::new());
    let (mut baseline, mut reference) = (0usize, 0usize);
    for _ in 0..test_count {
        number += g.int(1, 5);
        let c = customer(g);
        let p = probability(&c);
        let churned = g.chance(p);
        let id = format!("C{number}");
        test_rows.push(row(g, &id, &c, None));
        ids.push(id);
        truth.push(if churned { "yes" } else { "no" }.to_owned());
        baseline += usize::from(churned == majority);
        reference += usize::from(churned == (p > 0.5));
    }
    let share = |right: usize| right as f64 / test_count as f64;
    let dirty = if hard {
        " The export is careless: customers billed by the legacy system (billing is legacy) \
         have monthly_charge in cents, some customers are listed twice, and contract names are \
         not always in lower case."
    } else {
        ""
    };
    let opening = match g.index(4) {
        0 => "Your home directory holds customers.csv: a subscription service's customers",
        1 => "In your home directory, customers.csv lists a subscription service's customers",
        2 => {
            "The file customers.csv in your home directory describes a subscription service's \
              customers"
        }
        _ => {
            "A subscription service exported its customers to customers.csv, in your home \
              directory"
        }
    };
    let task = match g.index(3) {
        0 => {
            "Train a classifier and predict, for every customer in held_out.csv, whether they \
              left."
        }
        1 => {
            "Fit a classifier to the customers, then predict whether each customer in \
              held_out.csv left."
        }
        _ => "Using the customers, predict for every customer in held_out.csv whether they left.",
    };
    let prompt = format!(
        "{opening}, with customer_id, tenure_months, plan, contract (monthly or annual), \
         monthly_charge (dollars), billing, support_calls, autopay (yes/no) and churned (yes/no: \
         whether they left). held_out.csv has the same columns for other customers, without \
         churned.{dirty} {task} Write predictions.csv with a header and the columns id (the \
         customer_id) and prediction (yes or no), one row per held-out customer. It is scored \
         by accuracy on the true outcomes (which only the grader has): 0 at the accuracy of \
         giving everyone the most common answer, 1 at that of the churn rule behind the data; \
         {THRESHOLD} or more is a success. {}",
        closing(g)
    );
    let grader = PredictionGrader {
        file: PREDICTIONS.into(),
        ids,
        truth: Truth::Classes(truth),
        metric: Metric::Accuracy,
        baseline: share(baseline),
        reference: share(reference),
        threshold: THRESHOLD,
    };
    let mut test_header = header.to_vec();
    test_header.pop();
    Instance::new(prompt, Grader::Predictions(Box::new(grader)))
        .file("customers.csv", csv_bytes(&header, &train_rows))
        .file("held_out.csv", csv_bytes(&test_header, &test_rows))
}
