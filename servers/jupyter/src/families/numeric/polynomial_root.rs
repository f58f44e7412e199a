//! `polynomial-root`: the one real solution of a generated equation (a polynomial, or a
//! polynomial plus a sine, cosine or exponential term) in an interval, to six decimals.
//!
//! The interval is chosen around one root where the function is strictly monotonic (checked
//! on a fine grid), so it holds exactly that root and a change of sign at its ends.

use super::{poly_eval, poly_text, scaled_x};
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "polynomial-root",
    kind: TaskKind::Numeric,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "root finding: the one solution of an equation in an interval",
    generate,
};

/// The non-polynomial term, times its integer scale.
#[derive(Clone, Copy)]
enum Term {
    None,
    Sin(f64),
    Cos(f64),
    Exp(f64),
    Atan,
}

impl Term {
    fn eval(self, x: f64) -> f64 {
        match self {
            Term::None => 0.0,
            Term::Sin(w) => (w * x).sin(),
            Term::Cos(w) => (w * x).cos(),
            Term::Exp(w) => (w * x).exp(),
            Term::Atan => x.atan(),
        }
    }

    fn text(self) -> String {
        match self {
            Term::None => String::new(),
            Term::Sin(w) => format!("math.sin({})", scaled_x(w)),
            Term::Cos(w) => format!("math.cos({})", scaled_x(w)),
            Term::Exp(w) => format!("math.exp({})", scaled_x(w)),
            Term::Atan => "math.atan(x)".to_owned(),
        }
    }
}

fn generate(g: &mut Gen) -> Instance {
    super::unrevealed(g, draw)
}

fn draw(g: &mut Gen) -> Option<Instance> {
    let plain = g.chance(0.4);
    let (degree, span) = if plain {
        (g.int(3, 5), 9)
    } else {
        (g.int(1, 3), 5)
    };
    let degree = degree as usize;
    let mut poly: Vec<i64> = (0..=degree).map(|_| g.int(-span, span)).collect();
    if poly[degree] == 0 {
        poly[degree] = *g.pick(&[-2, -1, 1, 2]);
    }
    let (term, scale) = if plain {
        (Term::None, 0)
    } else {
        let w = f64::from(g.int(3, 20) as i32) / 10.0;
        let w_signed = if g.chance(0.5) { w } else { -w };
        let term = match g.index(4) {
            0 => Term::Sin(w),
            1 => Term::Cos(w),
            2 => Term::Exp(w_signed),
            _ => Term::Atan,
        };
        let mut scale = 0;
        while scale == 0 {
            scale = g.int(-5, 5);
        }
        (term, scale)
    };
    let f = |x: f64| poly_eval(&poly, x) + scale as f64 * term.eval(x);
    // Brackets of the roots in [-6, 6].
    let grid: Vec<f64> = (0..=1200).map(|i| -6.0 + f64::from(i) / 100.0).collect();
    let brackets: Vec<(f64, f64)> = grid
        .windows(2)
        .filter(|w| f(w[0]) * f(w[1]) < 0.0)
        .map(|w| (w[0], w[1]))
        .collect();
    if brackets.is_empty() {
        return None;
    }
    let (lo, hi) = *g.pick(&brackets);
    let root = bisect(&f, lo, hi);
    let mut reach = f64::from(g.int(2, 15) as i32) / 10.0;
    let (a, b) = loop {
        let a = ((root - reach) * 10.0).floor() / 10.0;
        let b = ((root + g.float(0.1, reach.max(0.2))) * 10.0).ceil() / 10.0;
        if f(a) * f(b) < 0.0 && f(a).abs() > 1e-6 && f(b).abs() > 1e-6 && monotonic(&f, a, b) {
            break (a, b);
        }
        reach /= 2.0;
        if reach < 0.05 {
            return None;
        }
    };
    let root = bisect(&f, a, b);
    let mut expression = poly_text(&poly);
    if scale != 0 {
        let sign = if scale < 0 { '-' } else { '+' };
        let magnitude = scale.unsigned_abs();
        let factor = if magnitude == 1 {
            String::new()
        } else {
            format!("{magnitude}*")
        };
        expression.push_str(&format!(" {sign} {factor}{}", term.text()));
    }
    let (from, to) = (format!("{a:.1}"), format!("{b:.1}"));
    Some(
        Instance::new(
            format!(
                "The equation `{expression} = 0` (Python syntax; `math` is Python's math module) \
                 has exactly one real solution x in the interval [{from}, {to}]. Find it and give \
                 it rounded to 6 decimal places."
            ),
            Grader::Numeric {
                value: root,
                rel_tol: 0.0,
                abs_tol: half_unit(6),
            },
        )
        .secret(format!("{root:.6}")),
    )
}

/// A root of `f` in `[a, b]`, where `f(a)` and `f(b)` differ in sign, to the last bit.
fn bisect(f: &dyn Fn(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    let negative_at_a = f(a) < 0.0;
    for _ in 0..200 {
        let m = (a + b) / 2.0;
        if m <= a || m >= b {
            break;
        }
        if (f(m) < 0.0) == negative_at_a {
            a = m;
        } else {
            b = m;
        }
    }
    (a + b) / 2.0
}

/// Whether `f` is strictly monotonic over `[a, b]`, on a grid of 4,000 steps.
fn monotonic(f: &dyn Fn(f64) -> f64, a: f64, b: f64) -> bool {
    let steps = 4000;
    let values: Vec<f64> = (0..=steps)
        .map(|i| f(a + (b - a) * f64::from(i) / f64::from(steps)))
        .collect();
    let rising = values[1] > values[0];
    values
        .windows(2)
        .all(|w| if rising { w[1] > w[0] } else { w[1] < w[0] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisection_finds_a_root() {
        let r = bisect(&|x: f64| x * x - 2.0, 0.0, 3.0);
        assert!((r - 2f64.sqrt()).abs() < 1e-15);
        assert!(monotonic(&|x: f64| x * x, 0.5, 2.0));
        assert!(!monotonic(&|x: f64| x * x, -1.0, 2.0));
    }
}
