//! `definite-integral`: the integral of a generated function (a polynomial times an
//! exponential, a sine, a cosine or another smooth factor) over an interval, to six decimals.
//!
//! Levels change the work: an easy integrand is one such product over an interval up to 4
//! long; a medium one the sum of two products over an interval up to 8 long; a hard one a
//! polynomial times a decaying exponential (times a sine or cosine, or not) over an infinite
//! interval, from a point to infinity.
//!
//! The function is shown as a Python expression; the answer comes from adaptive Simpson
//! quadrature far below the requested precision.

use super::{poly_eval, poly_text, scaled_x};
use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "definite-integral",
    kind: TaskKind::Numeric,
    split: FamilySplit::TrainAndTest,
    levelled: true,
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

/// A polynomial of degree 1 to 3 with small integer coefficients, the leading one non-zero.
fn polynomial(g: &mut Gen) -> Vec<i64> {
    let degree = g.int(1, 3) as usize;
    let mut poly: Vec<i64> = (0..=degree).map(|_| g.int(-6, 6)).collect();
    if poly[degree] == 0 {
        poly[degree] = *g.pick(&[-2, -1, 1, 2, 3]);
    }
    poly
}

/// A non-zero multiple of 0.1 in `low..=high` tenths.
fn tenth(g: &mut Gen, low: i64, high: i64) -> f64 {
    let mut v = 0;
    while v == 0 {
        v = g.int(low, high);
    }
    v as f64 / 10.0
}

/// A second factor of a random kind.
fn factor(g: &mut Gen) -> Factor {
    match g.index(6) {
        0 => Factor::Exp(tenth(g, -20, 10)),
        1 => Factor::Sin(tenth(g, 3, 40)),
        2 => Factor::Cos(tenth(g, 3, 40)),
        3 => Factor::Reciprocal,
        4 => Factor::Log,
        _ => Factor::Sqrt,
    }
}

fn draw(g: &mut Gen) -> Option<Instance> {
    let level = g.level();
    // The integrand's products: a polynomial times one or two factors each.
    let mut products: Vec<(Vec<i64>, Vec<Factor>)> = Vec::new();
    // A hard integral's value, in closed form.
    let mut tail = None;
    let (a, b) = match level {
        Level::Easy | Level::Medium => {
            for _ in 0..level.pick(1, 2, 0) {
                let poly = polynomial(g);
                products.push((poly, vec![factor(g)]));
            }
            let a = g.int(-30, 20) as f64 / 10.0;
            let length = level.pick(g.int(5, 40), g.int(20, 80), 0);
            (a, a + length as f64 / 10.0)
        }
        Level::Hard => {
            let poly = polynomial(g);
            let rate = tenth(g, 5, 20);
            let mut factors = vec![Factor::Exp(-rate)];
            let wave = match g.index(3) {
                0 => Some((Factor::Sin(tenth(g, 3, 40)), true)),
                1 => Some((Factor::Cos(tenth(g, 3, 40)), false)),
                _ => None,
            };
            let a = g.int(-20, 20) as f64 / 10.0;
            let (w, sine) = match wave {
                Some((factor @ (Factor::Sin(w) | Factor::Cos(w)), sine)) => {
                    factors.push(factor);
                    (w, sine)
                }
                _ => (0.0, false),
            };
            tail = Some(decaying_tail(&poly, rate, w, sine, a));
            products.push((poly, factors));
            (a, f64::INFINITY)
        }
    };
    let f = |x: f64| {
        products
            .iter()
            .map(|(poly, factors)| {
                poly_eval(poly, x) * factors.iter().map(|k| k.eval(x)).product::<f64>()
            })
            .sum::<f64>()
    };
    let value = tail.unwrap_or_else(|| integrate(&f, a, b, 16));
    // Past 10,000 six decimals ask more than a double's precision leaves to spare.
    if !value.is_finite() || value.abs() < 0.05 || value.abs() > 1e4 {
        return None;
    }
    let expression: Vec<String> = products
        .iter()
        .map(|(poly, factors)| {
            let factors: Vec<String> = factors.iter().map(|k| k.text()).collect();
            format!("({}) * {}", poly_text(poly), factors.join(" * "))
        })
        .collect();
    let expression = expression.join(" + ");
    let from = format!("{a:.1}");
    let to = if b.is_finite() {
        format!("{b:.1}")
    } else {
        "infinity".to_owned()
    };
    let asked = super::ask(
        g,
        &format!("the definite integral of f over x from {from} to {to}"),
        6,
    );
    let opening = *g.pick(&[
        "Let f(x) be",
        "Consider the function f(x) =",
        "The function f(x) is",
    ]);
    Some(
        Instance::new(
            format!(
                "{opening} `{expression}` (Python syntax; `math` is Python's math module). \
                 {asked}"
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

/// The integral from `a` to infinity of `poly(x) · e^(−rate·x)`, times `sin(w·x)` when `sine`,
/// else `cos(w·x)` (1 when `w` is 0), in closed form: with `c = rate − i·w`, the integral of
/// `x^n · e^(−c·x)` from `a` is `J_n = (a^n · e^(−c·a) + n · J_(n−1)) / c` (by parts), and
/// the answer the real or imaginary part of the sum of `p_n · J_n`.
fn decaying_tail(poly: &[i64], rate: f64, w: f64, sine: bool, a: f64) -> f64 {
    type Complex = (f64, f64);
    let div = |x: Complex, y: Complex| {
        let norm = y.0 * y.0 + y.1 * y.1;
        (
            (x.0 * y.0 + x.1 * y.1) / norm,
            (x.1 * y.0 - x.0 * y.1) / norm,
        )
    };
    let c = (rate, -w);
    // e^(−c·a) = e^(−rate·a) · (cos(w·a) + i·sin(w·a)).
    let scale = (-rate * a).exp();
    let edge = (scale * (w * a).cos(), scale * (w * a).sin());
    let mut j = div(edge, c);
    let mut total = (poly[0] as f64 * j.0, poly[0] as f64 * j.1);
    for (n, &p) in poly.iter().enumerate().skip(1) {
        let power = a.powi(n as i32);
        let top = (
            power * edge.0 + n as f64 * j.0,
            power * edge.1 + n as f64 * j.1,
        );
        j = div(top, c);
        total = (total.0 + p as f64 * j.0, total.1 + p as f64 * j.1);
    }
    if sine { total.1 } else { total.0 }
}

/// The integral of `f` over `[a, b]` by adaptive Simpson quadrature, from `panels` panels.
fn integrate(f: &dyn Fn(f64) -> f64, a: f64, b: f64, panels: u32) -> f64 {
    // Start from several panels so no oscillation hides between the first three samples.
    let width = (b - a) / f64::from(panels);
    (0..panels)
        .map(|i| {
            let (lo, hi) = (a + width * f64::from(i), a + width * f64::from(i + 1));
            let (flo, fmid, fhi) = (f(lo), f((lo + hi) / 2.0), f(hi));
            let whole = (hi - lo) / 6.0 * (flo + 4.0 * fmid + fhi);
            // Relative to the panel's size: an absolute 1e-13 is out of reach for large
            // values, and the recursion would then split every panel to the last depth.
            let eps = 1e-13 * whole.abs().max(1.0);
            simpson(f, lo, hi, flo, fmid, fhi, whole, eps, 30)
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
    fn the_closed_form_tail_matches_quadrature() {
        for (poly, rate, w, sine, a) in [
            (vec![1, -2, 3], 0.7, 0.0, false, -1.0),
            (vec![2, 0, -1, 1], 1.3, 2.1, true, 0.5),
            (vec![-3, 4], 0.5, 0.8, false, -2.0),
        ] {
            let f = |x: f64| {
                let wave = if w == 0.0 {
                    1.0
                } else if sine {
                    (w * x).sin()
                } else {
                    (w * x).cos()
                };
                poly_eval(&poly, x) * (-rate * x).exp() * wave
            };
            let numeric = integrate(&f, a, a + 120.0, 256);
            let closed = decaying_tail(&poly, rate, w, sine, a);
            assert!((numeric - closed).abs() < 1e-9, "{numeric} {closed}");
        }
    }

    #[test]
    fn simpson_integrates_known_functions() {
        let v = integrate(&|x: f64| x * x.exp(), 0.0, 1.0, 16);
        assert!((v - 1.0).abs() < 1e-12, "{v}");
        let v = integrate(&|x: f64| (3.0 * x).sin(), 0.0, std::f64::consts::PI, 16);
        assert!((v - 2.0 / 3.0).abs() < 1e-12, "{v}");
    }
}
