//! `definite-integral`: the integral of a generated function (a polynomial times an
//! exponential, a sine, a cosine or another smooth factor) over an interval, to six decimals.
//!
//! The function is shown as a Python expression; the answer comes from adaptive Simpson
//! quadrature far below the requested precision.

use super::{poly_eval, poly_text, scaled_x};
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "definite-integral",
    kind: TaskKind::Numeric,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "numerical integration of a generated function over an interval",
    generate,
};

/// The second factor of the integrand.
#[derive(Clone, Copy)]
enum Factor {
    Exp(f64),
    Sin(f64),
    Cos(f64),
    Reciprocal,
    Log,
    Sqrt,
}

impl Factor {
    fn eval(self, x: f64) -> f64 {
        match self {
            Factor::Exp(k) => (k * x).exp(),
            Factor::Sin(w) => (w * x).sin(),
            Factor::Cos(w) => (w * x).cos(),
            Factor::Reciprocal => 1.0 / (1.0 + x * x),
            Factor::Log => (1.0 + x * x).ln(),
            Factor::Sqrt => (1.0 + x * x).sqrt(),
        }
    }

    fn text(self) -> String {
        match self {
            Factor::Exp(k) => format!("math.exp({})", scaled_x(k)),
            Factor::Sin(w) => format!("math.sin({})", scaled_x(w)),
            Factor::Cos(w) => format!("math.cos({})", scaled_x(w)),
            Factor::Reciprocal => "1 / (1 + x**2)".to_owned(),
            Factor::Log => "math.log(1 + x**2)".to_owned(),
            Factor::Sqrt => "math.sqrt(1 + x**2)".to_owned(),
        }
    }
}

fn generate(g: &mut Gen) -> Instance {
    super::unrevealed(g, draw)
}

fn draw(g: &mut Gen) -> Option<Instance> {
    let degree = g.int(1, 3) as usize;
    let mut poly: Vec<i64> = (0..=degree).map(|_| g.int(-6, 6)).collect();
    if poly[degree] == 0 {
        poly[degree] = *g.pick(&[-2, -1, 1, 2, 3]);
    }
    let tenth = |g: &mut Gen, low: i64, high: i64| {
        let mut v = 0;
        while v == 0 {
            v = g.int(low, high);
        }
        v as f64 / 10.0
    };
    let factor = match g.index(6) {
        0 => Factor::Exp(tenth(g, -20, 10)),
        1 => Factor::Sin(tenth(g, 3, 40)),
        2 => Factor::Cos(tenth(g, 3, 40)),
        3 => Factor::Reciprocal,
        4 => Factor::Log,
        _ => Factor::Sqrt,
    };
    let a = g.int(-30, 20) as f64 / 10.0;
    let b = a + g.int(5, 40) as f64 / 10.0;
    let f = |x: f64| poly_eval(&poly, x) * factor.eval(x);
    let value = integrate(&f, a, b);
    if !value.is_finite() || value.abs() < 0.05 {
        return None;
    }
    let expression = format!("({}) * {}", poly_text(&poly), factor.text());
    let (from, to) = (format!("{a:.1}"), format!("{b:.1}"));
    Some(
        Instance::new(
            format!(
                "Compute the definite integral of f(x) = `{expression}` (Python syntax; `math` is \
                 Python's math module) over x from {from} to {to}. Give the value rounded to 6 \
                 decimal places."
            ),
            Grader::Numeric {
                value,
                rel_tol: 0.0,
                abs_tol: half_unit(6),
            },
        )
        .secret(format!("{value:.6}")),
    )
}

/// The integral of `f` over `[a, b]` by adaptive Simpson quadrature.
fn integrate(f: &dyn Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    // Start from sixteen panels so no oscillation hides between the first three samples.
    let panels = 16;
    let width = (b - a) / f64::from(panels);
    (0..panels)
        .map(|i| {
            let (lo, hi) = (a + width * f64::from(i), a + width * f64::from(i + 1));
            let (flo, fmid, fhi) = (f(lo), f((lo + hi) / 2.0), f(hi));
            let whole = (hi - lo) / 6.0 * (flo + 4.0 * fmid + fhi);
            simpson(f, lo, hi, flo, fmid, fhi, whole, 1e-13, 40)
        })
        .sum()
}

#[allow(clippy::too_many_arguments)]
fn simpson(
    f: &dyn Fn(f64) -> f64,
    a: f64,
    b: f64,
    fa: f64,
    fm: f64,
    fb: f64,
    whole: f64,
    eps: f64,
    depth: u32,
) -> f64 {
    let m = (a + b) / 2.0;
    let (lm, rm) = ((a + m) / 2.0, (m + b) / 2.0);
    let (flm, frm) = (f(lm), f(rm));
    let left = (m - a) / 6.0 * (fa + 4.0 * flm + fm);
    let right = (b - m) / 6.0 * (fm + 4.0 * frm + fb);
    let delta = left + right - whole;
    if depth == 0 || delta.abs() <= 15.0 * eps {
        return left + right + delta / 15.0;
    }
    simpson(f, a, m, fa, flm, fm, left, eps / 2.0, depth - 1)
        + simpson(f, m, b, fm, frm, fb, right, eps / 2.0, depth - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simpson_integrates_known_functions() {
        let v = integrate(&|x: f64| x * x.exp(), 0.0, 1.0);
        assert!((v - 1.0).abs() < 1e-12, "{v}");
        let v = integrate(&|x: f64| (3.0 * x).sin(), 0.0, std::f64::consts::PI);
        assert!((v - 2.0 / 3.0).abs() < 1e-12, "{v}");
    }
}
