//! `calculator_arithmetic`: a seeded expression's value on the clipboard, with the calculator
//! open (the grader reads the clipboard, so the prompt asks for that and not for a process).

use super::super::{Family, FamilySplit, Gen, Instance};
use crate::grading::Check;
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "calculator_arithmetic",
    app: App::Calculator,
    split: FamilySplit::TrainAndTest,
    about: "calculator: a seeded arithmetic expression, the result copied to the clipboard",
    generate,
};

/// A number in `low..=high` whose neighbouring digits differ: galculator drops a key
/// repeated while it animates the previous one.
pub(super) fn number(g: &mut Gen, low: i64, high: i64) -> i64 {
    loop {
        let n = g.int(low, high);
        let digits = n.to_string().into_bytes();
        if digits.windows(2).all(|w| w[0] != w[1]) {
            return n;
        }
    }
}

/// An expression as the instruction writes it, the keys that enter it, and its value.
pub(super) struct Expression {
    /// As written for people (`(125 + 376) × 16`).
    pub(super) text: String,
    /// xdotool keys, one per press.
    pub(super) keys: Vec<String>,
    /// The exact result.
    pub(super) value: i64,
}

fn digit_keys(n: i64) -> impl Iterator<Item = String> {
    n.to_string()
        .chars()
        .map(String::from)
        .collect::<Vec<_>>()
        .into_iter()
}

/// A seeded expression with a whole, positive result.
pub(super) fn expression(g: &mut Gen) -> Expression {
    let mut keys = Vec::new();
    let (text, value) = match g.index(5) {
        0 => {
            let (a, b) = (number(g, 12, 99), number(g, 12, 99));
            keys.extend(digit_keys(a));
            keys.push("KP_Multiply".into());
            keys.extend(digit_keys(b));
            (format!("{a} × {b}"), a * b)
        }
        1 => {
            let (a, b) = (number(g, 102, 986), number(g, 102, 986));
            keys.extend(digit_keys(a));
            keys.push("KP_Add".into());
            keys.extend(digit_keys(b));
            (format!("{a} + {b}"), a + b)
        }
        2 => {
            let a = number(g, 1000, 9876);
            let b = number(g, 102, a.min(987) - 1);
            keys.extend(digit_keys(a));
            keys.push("KP_Subtract".into());
            keys.extend(digit_keys(b));
            (format!("{a} − {b}"), a - b)
        }
        3 => {
            // A whole quotient: the dividend is a multiple of the divisor.
            let (a, b) = loop {
                let (b, q) = (number(g, 3, 49), g.int(12, 99));
                let a = b * q;
                let digits = a.to_string().into_bytes();
                if digits.windows(2).all(|w| w[0] != w[1]) {
                    break (a, b);
                }
            };
            keys.extend(digit_keys(a));
            keys.push("KP_Divide".into());
            keys.extend(digit_keys(b));
            (format!("{a} ÷ {b}"), a / b)
        }
        _ => {
            let (a, b, c) = (number(g, 12, 398), number(g, 12, 398), number(g, 2, 29));
            keys.push("parenleft".into());
            keys.extend(digit_keys(a));
            keys.push("KP_Add".into());
            keys.extend(digit_keys(b));
            keys.push("parenright".into());
            keys.push("KP_Multiply".into());
            keys.extend(digit_keys(c));
            (format!("({a} + {b}) × {c}"), (a + b) * c)
        }
    };
    Expression { text, keys, value }
}

/// Presses the expression's keys one at a time, 150 ms apart, then Return.
pub(super) fn press(mut instance: Instance, expression: &Expression) -> Instance {
    for key in &expression.keys {
        instance = instance.key(key).wait(150);
    }
    instance.key("Return").wait(300)
}

fn generate(g: &mut Gen) -> Instance {
    // The answer never appears in the instruction.
    let expression = loop {
        let e = expression(g);
        if !e.text.contains(&e.value.to_string()) {
            break e;
        }
    };
    let instruction = format!(
        // The grader sees the clipboard, not how the number got there: the prompt asks for
        // what it checks, and offers the calculator as the tool at hand.
        "Compute {} and put the result on the clipboard. The calculator is open (its Edit > \
         Copy, Ctrl+C, copies what it shows).",
        expression.text
    );
    let instance = Instance::new(instruction)
        .launch(["galculator"])
        .check(Check::ClipboardNumber {
            value: expression.value as f64,
            tolerance: 1e-9,
        })
        .wait(1000);
    press(instance, &expression).key("ctrl+c").wait(700)
}
