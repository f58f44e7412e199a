//! `largest-eigenvalue` (held out): a symmetric matrix in a file; its largest (or smallest,
//! or largest in absolute value, or second largest) eigenvalue, to six decimals.
//!
//! Levels change the work: an easy matrix is 3 × 3 to 6 × 6, written whole; a medium one
//! 8 × 8 to 14 × 14, and may ask the second largest eigenvalue; a hard one 15 × 15 to 30 × 30,
//! with only its upper triangle written (line i starts at the diagonal), so the matrix must
//! be rebuilt before it is solved.
//!
//! The eigenvalues come from the cyclic Jacobi method, run until the off-diagonal part is
//! negligible, on the values as written.

use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "largest-eigenvalue",
    kind: TaskKind::Numeric,
    split: FamilySplit::TestOnly,
    levelled: true,
    about: "linear algebra: an extreme eigenvalue of a symmetric matrix in a file",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    super::unrevealed(g, draw)
}

fn draw(g: &mut Gen) -> Option<Instance> {
    let level = g.level();
    let n = level.pick(g.int(3, 6), g.int(8, 14), g.int(15, 30)) as usize;
    let upper = level == Level::Hard;
    let decimals = g.int(1, 2) as usize;
    let scale = *g.pick(&[1.0, 5.0, 10.0, 50.0]);
    let mut a = vec![vec![0.0; n]; n];
    for (i, j) in (0..n).flat_map(|i| (i..n).map(move |j| (i, j))) {
        let v = g.money(-scale, scale, decimals as i32);
        a[i][j] = v;
        a[j][i] = v;
    }
    let mut eigenvalues = jacobi(a.clone());
    eigenvalues.sort_by(f64::total_cmp);
    let largest = eigenvalues
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let smallest = eigenvalues.iter().copied().fold(f64::INFINITY, f64::min);
    let kinds = if level == Level::Easy { 4 } else { 5 };
    let (question, answer) = match g.index(kinds) {
        0 | 1 => (
            "its largest eigenvalue (the greatest, most positive one)",
            largest,
        ),
        2 => ("its smallest eigenvalue (the most negative one)", smallest),
        3 => (
            "its spectral radius (the largest absolute value of an eigenvalue)",
            largest.abs().max(smallest.abs()),
        ),
        _ => (
            "its second largest eigenvalue (the largest but one, eigenvalues counted with \
             multiplicity)",
            eigenvalues[n - 2],
        ),
    };
    let (file, separator, layout) = *g.pick(&[
        ("matrix.csv", ",", "comma-separated, no header"),
        ("symmetric.csv", ",", "comma-separated, no header"),
        ("matrix.txt", " ", "numbers separated by single spaces"),
        ("hessian.txt", " ", "numbers separated by single spaces"),
    ]);
    let text: String = a
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let from = if upper { i } else { 0 };
            let cells: Vec<String> = row[from..]
                .iter()
                .map(|v| format!("{v:.decimals$}"))
                .collect();
            format!("{}\n", cells.join(separator))
        })
        .collect();
    let written = if upper {
        format!(
            "only its upper triangle is written: line i holds row i from the diagonal on, so \
             the first line has {n} numbers and the last 1 ({layout})"
        )
    } else {
        format!("one row per line ({layout})")
    };
    let asked = super::ask(g, question, 6);
    Some(
        Instance::new(
            format!(
                "The file {file} in your home directory holds a symmetric {n} × {n} matrix; \
                 {written}. {asked}"
            ),
            Grader::Numeric {
                value: answer,
                rel_tol: 0.0,
                abs_tol: half_unit(6),
            },
        )
        .file(file, text.into_bytes())
        .secret(format!("{answer:.6}")),
    )
}

/// The eigenvalues of a symmetric matrix, by cyclic Jacobi rotations.
fn jacobi(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let n = a.len();
    let norm: f64 = a.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum::<f64>()
            .sqrt();
        if off <= 1e-15 * norm.max(1e-300) {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                if a[p][q] == 0.0 {
                    continue;
                }
                // The rotation that zeroes a[p][q] (Rutishauser's stable form).
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (akp, akq) = (row[p], row[q]);
                    row[p] = c * akp - s * akq;
                    row[q] = s * akp + c * akq;
                }
                let (upper, lower) = a.split_at_mut(q);
                for (apk, aqk) in upper[p].iter_mut().zip(lower[0].iter_mut()) {
                    let (x, y) = (*apk, *aqk);
                    *apk = c * x - s * y;
                    *aqk = s * x + c * y;
                }
            }
        }
    }
    (0..n).map(|i| a[i][i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_finds_known_eigenvalues() {
        let mut e = jacobi(vec![
            vec![2.0, -1.0, 0.0],
            vec![-1.0, 2.0, -1.0],
            vec![0.0, -1.0, 2.0],
        ]);
        e.sort_by(f64::total_cmp);
        let want = [2.0 - 2f64.sqrt(), 2.0, 2.0 + 2f64.sqrt()];
        for (got, want) in e.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{e:?}");
        }
    }
}
