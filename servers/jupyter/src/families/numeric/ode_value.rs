//! `ode-value`: an initial value problem (logistic growth, a driven first-order system, a
//! damped and possibly forced oscillator, predator and prey, a Riccati equation); the
//! solution's value at a later time, to six decimals.
//!
//! The right-hand sides are shown as Python expressions; the answer comes from classical
//! Runge–Kutta with a step far below the requested precision.

use super::py_number;
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "ode-value",
    kind: TaskKind::Numeric,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "differential equations: the value of an initial value problem's solution at time T",
    generate,
};

const TAIL: &str = "(Python syntax; `math` is Python's math module)";

fn generate(g: &mut Gen) -> Instance {
    super::unrevealed(g, draw)
}

fn draw(g: &mut Gen) -> Option<Instance> {
    let t_end = g.money(1.0, 12.0, 1);
    let n = |v: f64| py_number(v);
    let (prompt, value) = match g.index(5) {
        0 => {
            let (r, k) = (g.money(0.1, 1.5, 2), g.int(10, 1000) as f64);
            let y0 = g.money(0.5, k / 2.0, 1);
            let y = solve(|_, s| [r * s[0] * (1.0 - s[0] / k), 0.0], [y0, 0.0], t_end)[0];
            (
                format!(
                    "A population y(t) follows the differential equation dy/dt = `{} * y * (1 - \
                     y / {})` {TAIL} with y(0) = {}.",
                    n(r),
                    n(k),
                    n(y0)
                ),
                ("y", y),
            )
        }
        1 => {
            let (a, b, w) = (
                g.money(0.1, 2.0, 2),
                g.money(0.5, 5.0, 2),
                g.money(0.2, 3.0, 1),
            );
            let y0 = g.money(-5.0, 5.0, 1);
            let y = solve(
                |t, s| [-a * s[0] + b * (w * t).sin(), 0.0],
                [y0, 0.0],
                t_end,
            )[0];
            (
                format!(
                    "A signal y(t) follows the differential equation dy/dt = `-{} * y + {} * \
                     math.sin({} * t)` {TAIL} with y(0) = {}.",
                    n(a),
                    n(b),
                    n(w),
                    n(y0)
                ),
                ("y", y),
            )
        }
        2 => {
            let (c, k) = (g.money(0.05, 1.5, 2), g.money(0.5, 9.0, 2));
            let forced = g.chance(0.5);
            let (amp, w) = if forced {
                (g.money(0.2, 3.0, 1), g.money(0.3, 3.0, 1))
            } else {
                (0.0, 0.0)
            };
            let (y0, v0) = (g.money(-3.0, 3.0, 1), g.money(-3.0, 3.0, 1));
            let y = solve(
                |t, s| [s[1], -c * s[1] - k * s[0] + amp * (w * t).cos()],
                [y0, v0],
                t_end,
            )[0];
            let forcing = if forced {
                format!(" + {} * math.cos({} * t)", n(amp), n(w))
            } else {
                String::new()
            };
            (
                format!(
                    "An oscillator's position y(t) follows the differential equation d²y/dt² = \
                     `-{} * v - {} * y{forcing}` {TAIL}, where v stands for the velocity dy/dt, \
                     with y(0) = {} and dy/dt(0) = {}.",
                    n(c),
                    n(k),
                    n(y0),
                    n(v0)
                ),
                ("y", y),
            )
        }
        3 => {
            let (a, b) = (g.money(0.5, 1.5, 2), g.money(0.02, 0.2, 2));
            let (d, m) = (g.money(0.01, 0.1, 2), g.money(0.3, 1.2, 2));
            let (x0, y0) = (g.int(5, 60) as f64, g.int(2, 20) as f64);
            let s = solve(
                |_, s| [a * s[0] - b * s[0] * s[1], d * s[0] * s[1] - m * s[1]],
                [x0, y0],
                t_end,
            );
            let asked = if g.chance(0.5) {
                ("x", s[0])
            } else {
                ("y", s[1])
            };
            (
                format!(
                    "Prey x(t) and predators y(t) follow the differential equations dx/dt = `{} * \
                     x - {} * x * y` and dy/dt = `{} * x * y - {} * y` {TAIL}, with x(0) = {} and \
                     y(0) = {}.",
                    n(a),
                    n(b),
                    n(d),
                    n(m),
                    n(x0),
                    n(y0)
                ),
                asked,
            )
        }
        _ => {
            let (p, q) = (g.money(0.2, 2.0, 2), g.money(0.2, 1.5, 2));
            let y0 = g.money(0.0, 2.0, 1);
            let y = solve(|t, s| [p * t - q * s[0] * s[0], 0.0], [y0, 0.0], t_end)[0];
            (
                format!(
                    "A quantity y(t) follows the differential equation dy/dt = `{} * t - {} * \
                     y**2` {TAIL} with y(0) = {}.",
                    n(p),
                    n(q),
                    n(y0)
                ),
                ("y", y),
            )
        }
    };
    let (name, answer) = value;
    if !answer.is_finite() || answer.abs() < 0.01 {
        return None;
    }
    Some(
        Instance::new(
            format!(
                "{prompt} What is {name}({})? Give it rounded to 6 decimal places.",
                n(t_end)
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

/// The state at `t_end` of `s' = f(t, s)` from `s(0) = start`: classical Runge–Kutta with
/// 10,000 steps (a step of at most 0.0012, an error far below 1e-6 for these equations).
fn solve(f: impl Fn(f64, [f64; 2]) -> [f64; 2], start: [f64; 2], t_end: f64) -> [f64; 2] {
    let steps = 10_000;
    let h = t_end / f64::from(steps);
    let add = |s: [f64; 2], k: [f64; 2], by: f64| [s[0] + by * k[0], s[1] + by * k[1]];
    let mut s = start;
    for i in 0..steps {
        let t = h * f64::from(i);
        let k1 = f(t, s);
        let k2 = f(t + h / 2.0, add(s, k1, h / 2.0));
        let k3 = f(t + h / 2.0, add(s, k2, h / 2.0));
        let k4 = f(t + h, add(s, k3, h));
        for j in 0..2 {
            s[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runge_kutta_follows_known_solutions() {
        let y = solve(|_, s| [-s[0], 0.0], [1.0, 0.0], 2.0)[0];
        assert!((y - (-2f64).exp()).abs() < 1e-12, "{y}");
        let s = solve(|_, s| [s[1], -s[0]], [0.0, 1.0], 3.0);
        assert!((s[0] - 3f64.sin()).abs() < 1e-12, "{s:?}");
    }
}
