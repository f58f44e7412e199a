//! `polynomial-root`: real solutions of a generated equation (a polynomial, or a polynomial
//! plus sine, cosine, exponential or arctangent terms) in an interval, to six decimals.
//!
//! Levels change the work. Easy: the interval is chosen around one root where the function is
//! strictly monotonic (checked on a fine grid), so it holds exactly that root and a change of
//! sign at its ends. Medium: a wide interval holds two to four roots, and the question asks
//! for the smallest, the largest, the second smallest or their sum, so every root must be
//! found. Hard: as medium, with two non-polynomial terms and three to six roots. Several
//! roots are counted on two grids (steps 0.002 and 0.0004), which must agree, and must lie
//! more than 0.01 apart, so none hides from a careful scan.

use super::{poly_eval, poly_text, scaled_x};
use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "polynomial-root",
    kind: TaskKind::Numeric,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "root finding: solutions of an equation in an interval (the one there, or the smallest, largest or sum of several)",
    generate,
};

/// The non-polynomial term, times its integer scale.
#[derive(Clone, Copy)]
enum Term {
    Sin(f64),
    Cos(f64),
    Exp(f64),
    Atan,
}

impl Term {
    fn eval(self, x: f64) -> f64 {
        match self {
            Term::Sin(w) => (w * x).sin(),
            Term::Cos(w) => (w * x).cos(),
            Term::Exp(w) => (w * x).exp(),
            Term::Atan => x.atan(),
        }
    }

    fn text(self) -> String {
        match self {
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

/// A non-polynomial term of a random kind, with its integer scale (never 0).
fn term(g: &mut Gen, not: Option<usize>) -> (usize, Term, i64) {
    let w = f64::from(g.int(3, 20) as i32) / 10.0;
    let w_signed = if g.chance(0.5) { w } else { -w };
    let kind = loop {
        let kind = g.index(4);
        if Some(kind) != not {
            break kind;
        }
    };
    let term = match kind {
        0 => Term::Sin(w),
        1 => Term::Cos(w),
        2 => Term::Exp(w_signed),
        _ => Term::Atan,
    };
    let mut scale = 0;
    while scale == 0 {
        scale = g.int(-5, 5);
    }
    (kind, term, scale)
}

/// ` + 3*math.sin(x)`: the term with its scale, as the expression goes on.
fn term_text(term: Term, scale: i64) -> String {
    let sign = if scale < 0 { '-' } else { '+' };
    let magnitude = scale.unsigned_abs();
    let factor = if magnitude == 1 {
        String::new()
    } else {
        format!("{magnitude}*")
    };
    format!(" {sign} {factor}{}", term.text())
}

fn draw(g: &mut Gen) -> Option<Instance> {
    let level = g.level();
    let plain = level != Level::Hard && g.chance(0.4);
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
    let mut terms: Vec<(Term, i64)> = Vec::new();
    if !plain {
        let (kind, first, scale) = term(g, None);
        terms.push((first, scale));
        if level == Level::Hard {
            let (_, second, scale) = term(g, Some(kind));
            terms.push((second, scale));
        }
    }
    let f = |x: f64| {
        poly_eval(&poly, x)
            + terms
                .iter()
                .map(|(t, scale)| *scale as f64 * t.eval(x))
                .sum::<f64>()
    };
    let mut expression = poly_text(&poly);
    for (t, scale) in &terms {
        expression.push_str(&term_text(*t, *scale));
    }
    let (a, b, root_text, answer) = if level == Level::Easy {
        let (a, b, root) = one_root(g, &f)?;
        (a, b, "exactly one real solution x".to_owned(), root)
    } else {
        let a = f64::from(g.int(-60, -20) as i32) / 10.0;
        let b = f64::from(g.int(20, 60) as i32) / 10.0;
        let wanted = if level == Level::Medium { 2..=4 } else { 3..=6 };
        let roots = roots_in(&f, a, b, wanted)?;
        let (what, answer) = match g.index(4) {
            0 => ("the smallest", roots[0]),
            1 => ("the largest", roots[roots.len() - 1]),
            2 => ("the second smallest", roots[1]),
            _ => ("the sum", roots.iter().sum()),
        };
        (
            a,
            b,
            format!("{} real solutions x", roots.len()),
            (answer, format!("{what} of these solutions")),
        )
    };
    let (from, to) = (format!("{a:.1}"), format!("{b:.1}"));
    let (answer, asked) = answer;
    let question = super::ask(g, &asked, 6);
    Some(
        Instance::new(
            format!(
                "The equation `{expression} = 0` (Python syntax; `math` is Python's math module) \
                 has {root_text} in the interval [{from}, {to}]. {question}"
            ),
            Grader::Numeric {
                value: answer,
                rel_tol: 0.0,
                abs_tol: half_unit(6),
            },
        )
        .secret(format!("{answer:.6}")),
    )
}

/// An interval `[a, b]` (ends to one decimal) around one root of `f`, where `f` is strictly
/// monotonic, and that root.
fn one_root(g: &mut Gen, f: &dyn Fn(f64) -> f64) -> Option<(f64, f64, (f64, String))> {
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
    let root = bisect(f, lo, hi);
    let mut reach = f64::from(g.int(2, 15) as i32) / 10.0;
    let (a, b) = loop {
        let a = ((root - reach) * 10.0).floor() / 10.0;
        let b = ((root + g.float(0.1, reach.max(0.2))) * 10.0).ceil() / 10.0;
        if f(a) * f(b) < 0.0 && f(a).abs() > 1e-6 && f(b).abs() > 1e-6 && monotonic(f, a, b) {
            break (a, b);
        }
        reach /= 2.0;
        if reach < 0.05 {
            return None;
        }
    };
    Some((a, b, (bisect(f, a, b), "that solution".to_owned())))
}

/// Every root of `f` in `[a, b]`, in order, when there are `wanted` of them, two grids (steps
/// of 0.002 and 0.0004) agree on them, they lie more than 0.01 apart, `f` nowhere nearly
/// touches 0 away from them and is clearly non-zero at the ends; `None` otherwise.
fn roots_in(
    f: &dyn Fn(f64) -> f64,
    a: f64,
    b: f64,
    wanted: std::ops::RangeInclusive<usize>,
) -> Option<Vec<f64>> {
    // The grid's brackets of sign changes, and its points where `f` comes near 0.
    let changes = |steps: u32| -> (Vec<(f64, f64)>, Vec<f64>) {
        let xs: Vec<f64> = (0..=steps)
            .map(|i| a + (b - a) * f64::from(i) / f64::from(steps))
            .collect();
        let ys: Vec<f64> = xs.iter().map(|x| f(*x)).collect();
        let brackets = (0..steps as usize)
            .filter(|&i| ys[i] * ys[i + 1] <= 0.0)
            .map(|i| (xs[i], xs[i + 1]))
            .collect();
        let near = (0..=steps as usize)
            .filter(|&i| ys[i].abs() < 1e-3)
            .map(|i| xs[i])
            .collect();
        (brackets, near)
    };
    // The coarse grid first: most draws fail on the count, and cheaply.
    let (coarse, _) = changes(((b - a) * 500.0).round() as u32);
    if !wanted.contains(&coarse.len()) || f(a).abs() < 1e-3 || f(b).abs() < 1e-3 {
        return None;
    }
    let (fine, near) = changes(((b - a) * 2500.0).round() as u32);
    if coarse.len() != fine.len() {
        return None;
    }
    // A point where `f` nearly touches 0 away from every sign change may be a double root.
    let touches = near
        .iter()
        .any(|x| !fine.iter().any(|(lo, hi)| x - hi < 0.01 && lo - x < 0.01));
    if touches {
        return None;
    }
    let roots: Vec<f64> = fine.iter().map(|(lo, hi)| bisect(f, *lo, *hi)).collect();
    if roots.windows(2).any(|w| w[1] - w[0] < 0.01) || roots.is_empty() {
        return None;
    }
    Some(roots)
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
