//! `linear-system`: a generated system of linear equations in CSV files; one component of
//! the solution (or their sum, or the largest), to six decimals.
//!
//! Levels change the work: an easy system has 3 to 6 unknowns, a medium one 8 to 15, both as
//! a matrix with its right-hand side (one CSV with a header, or two without); a hard one has
//! 15 to 30 unknowns, many zero coefficients, and comes as a long table (one row per non-zero
//! coefficient, in no order) beside a table of right-hand sides, so it must be assembled
//! before it is solved.
//!
//! The matrix is strictly diagonally dominant, so the system is well conditioned; the answer
//! comes from Gaussian elimination with partial pivoting on the values as written.

use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "linear-system",
    kind: TaskKind::Numeric,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "linear algebra: solve a system given in CSV files",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    super::unrevealed(g, draw)
}

fn draw(g: &mut Gen) -> Option<Instance> {
    let level = g.level();
    let n = level.pick(g.int(3, 6), g.int(8, 15), g.int(15, 30)) as usize;
    let decimals = g.int(0, 1) as i32;
    let sparse = level == Level::Hard;
    let mut a = vec![vec![0.0; n]; n];
    for (i, row) in a.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            if i != j && !(sparse && g.chance(0.6)) {
                *cell = g.money(-9.0, 9.0, decimals);
            }
        }
        let off: f64 = row.iter().map(|v| v.abs()).sum();
        let diagonal = crate::families::round(off + g.float(1.0, 12.0), decimals);
        row[i] = if g.chance(0.2) { -diagonal } else { diagonal };
    }
    let b: Vec<f64> = (0..n).map(|_| g.money(-99.0, 99.0, decimals)).collect();
    let x = solve(a.clone(), b.clone())?;
    let text = |v: f64| format!("{v:.*}", decimals as usize);
    let (question, answer) = match g.index(4) {
        0 | 1 => {
            let k = g.index(n);
            (format!("the value of x{}", k + 1), x[k])
        }
        2 => (
            format!("the sum of all the unknowns x1 + … + x{n}"),
            x.iter().sum(),
        ),
        _ => (
            "the largest value among the unknowns".to_owned(),
            x.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ),
    };
    let names: Vec<String> = (1..=n).map(|i| format!("x{i}")).collect();
    let mut instance = if sparse {
        let (coefficients, constants) = *g.pick(&[
            ("coefficients.csv", "rhs.csv"),
            ("entries.csv", "constants.csv"),
            ("terms.csv", "right_sides.csv"),
        ]);
        let mut rows: Vec<Vec<String>> = Vec::new();
        for (i, row) in a.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                if *v != 0.0 {
                    rows.push(vec![(i + 1).to_string(), format!("x{}", j + 1), text(*v)]);
                }
            }
        }
        g.shuffle(&mut rows);
        let mut sides: Vec<Vec<String>> = b
            .iter()
            .enumerate()
            .map(|(i, v)| vec![(i + 1).to_string(), text(*v)])
            .collect();
        g.shuffle(&mut sides);
        Instance::new(
            format!(
                "The files {coefficients} and {constants} in your home directory hold a system \
                 of {n} linear equations in the unknowns x1 … x{n}, in long format: each row of \
                 {coefficients} (columns equation, variable, coefficient) gives one coefficient \
                 of one equation, and a coefficient with no row is 0; {constants} (columns \
                 equation, value) gives each equation's right-hand side. Equation i says: sum \
                 over j of its xj-coefficient × xj = its right-hand side.",
            ),
            Grader::Exact(String::new()),
        )
        .file(
            coefficients,
            csv_bytes(&["equation", "variable", "coefficient"], &rows),
        )
        .file(constants, csv_bytes(&["equation", "value"], &sides))
    } else if g.chance(0.5) {
        let file = *g.pick(&["system.csv", "equations.csv", "linear_system.csv"]);
        let mut header: Vec<&str> = names.iter().map(String::as_str).collect();
        header.push("rhs");
        let rows: Vec<Vec<String>> = a
            .iter()
            .zip(&b)
            .map(|(row, rhs)| row.iter().chain([rhs]).map(|v| text(*v)).collect())
            .collect();
        Instance::new(
            format!(
                "The file {file} in your home directory holds a system of {n} linear equations \
                 in the unknowns x1 … x{n}: one row per equation, with a header; the columns \
                 x1 … x{n} hold the coefficients and the column rhs the right-hand side (row i \
                 says: sum over j of xj-coefficient × xj = rhs).",
            ),
            Grader::Exact(String::new()),
        )
        .file(file, csv_bytes(&header, &rows))
    } else {
        let (matrix, vector) = *g.pick(&[
            ("A.csv", "b.csv"),
            ("matrix.csv", "rhs.csv"),
            ("coefficients.csv", "constants.csv"),
        ]);
        let mut a_text = String::new();
        for row in &a {
            let cells: Vec<String> = row.iter().map(|v| text(*v)).collect();
            a_text.push_str(&cells.join(","));
            a_text.push('\n');
        }
        let b_text: String = b.iter().map(|v| format!("{}\n", text(*v))).collect();
        Instance::new(
            format!(
                "The files {matrix} and {vector} in your home directory (no headers) hold a \
                 system of {n} linear equations A x = b in the unknowns x1 … x{n}: {matrix} is \
                 the {n} × {n} matrix A (row i holds the coefficients of equation i, in the \
                 order x1 … x{n}), {vector} is b, one number per line.",
            ),
            Grader::Exact(String::new()),
        )
        .file(matrix, a_text.into_bytes())
        .file(vector, b_text.into_bytes())
    };
    let asked = super::ask(g, &question, 6);
    instance.prompt.push_str(&format!(" {asked}"));
    instance.grader = Grader::Numeric {
        value: answer,
        rel_tol: 0.0,
        abs_tol: half_unit(6),
    };
    Some(instance.secret(format!("{answer:.6}")))
}

/// The solution of `a x = b` by Gaussian elimination with partial pivoting; `None` when the
/// matrix is singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let factor = a[row][col] / a[col][col];
            let (upper, lower) = a.split_at_mut(row);
            for (target, source) in lower[0][col..].iter_mut().zip(&upper[col][col..]) {
                *target -= factor * source;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let rest: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elimination_solves_a_small_system() {
        let x = solve(vec![vec![2.0, 1.0], vec![1.0, 3.0]], vec![3.0, 5.0]).unwrap();
        assert!(
            (x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12,
            "{x:?}"
        );
        assert!(solve(vec![vec![1.0, 2.0], vec![2.0, 4.0]], vec![1.0, 2.0]).is_none());
    }
}
