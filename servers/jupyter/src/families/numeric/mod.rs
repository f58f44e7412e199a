//! Families of numeric computation, and of debugging a given program until hidden tests pass.

mod class_check;
mod definite_integral;
mod fix_class;
mod fix_function;
mod fix_package;
mod fix_parser;
mod fix_script;
mod largest_eigenvalue;
mod lattice_paths;
mod linear_system;
mod ode_value;
mod polynomial_root;
mod prime_sums;

use mcpgym_env::generate::wording;

use super::{Family, Gen, Instance};

/// This module's families.
pub(super) static FAMILIES: &[Family] = &[
    prime_sums::FAMILY,
    definite_integral::FAMILY,
    polynomial_root::FAMILY,
    linear_system::FAMILY,
    lattice_paths::FAMILY,
    largest_eigenvalue::FAMILY,
    ode_value::FAMILY,
    fix_function::FAMILY,
    fix_parser::FAMILY,
    fix_class::FAMILY,
    fix_script::FAMILY,
    fix_package::FAMILY,
];

/// Draws from `draw` until it gives an instance (a draw may decline, e.g. a degenerate
/// system) whose secret answer appears in neither its prompt nor its files: a short count like
/// `12` could otherwise be read off a number the prompt happens to hold. Each family's draws
/// succeed with high probability, so this ends after a few rounds.
fn unrevealed(g: &mut Gen, draw: fn(&mut Gen) -> Option<Instance>) -> Instance {
    loop {
        if let Some(instance) = draw(g)
            && !reveals(&instance)
        {
            return instance;
        }
    }
}

/// Whether the instance's secret can be read in its prompt or files.
fn reveals(instance: &Instance) -> bool {
    let Some(secret) = &instance.secret else {
        return false;
    };
    let secret = secret.as_bytes();
    instance
        .prompt
        .as_bytes()
        .windows(secret.len())
        .any(|w| w == secret)
        || instance
            .files
            .iter()
            .any(|(_, bytes)| bytes.windows(secret.len()).any(|w| w == secret))
}

/// The question about `what` and how precise its answer is to be (`decimals` places), in
/// one of the wordings of [`mcpgym_env::generate::wording`]: "Find the largest root. Round your
/// answer to 6 decimal places."
fn ask(g: &mut Gen, what: &str, decimals: u32) -> String {
    let question = wording::question(g, what);
    let precision = wording::precision(g, decimals);
    format!("{question} {precision}")
}

/// The prompt of a debugging task on the module `module` whose functions `names` (of the
/// kind `noun`, such as "parser") have bugs, in one of many wordings. The module and the
/// functions' names (in backticks, and nothing else in backticks) are what a solver reads.
fn debug_prompt(g: &mut Gen, module: &str, names: &[&str], noun: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    let one = names.len() == 1;
    let defines = match quoted.as_slice() {
        [only] => format!("{only}, a {noun}"),
        [init @ .., last] => format!("the {noun}s {} and {last}", init.join(", ")),
        [] => unreachable!("a module has a function"),
    };
    let opening = match g.index(4) {
        0 => format!("The module {module} in your home directory defines {defines}."),
        1 => format!("In your home directory, the module {module} defines {defines}."),
        2 => format!("Your home directory holds the module {module}, which defines {defines}."),
        _ => format!("There is a module {module} in your home directory; it defines {defines}."),
    };
    let fault = if one {
        *g.pick(&[
            "It has a bug: it does not do what its docstring says for every input.",
            "Its docstring is right, but its code has a bug.",
            "A bug makes it disagree with its docstring on some inputs.",
        ])
    } else {
        *g.pick(&[
            "They have bugs: they do not do what their docstrings say for every input.",
            "Their docstrings are right, but their code has bugs.",
            "Bugs make each of them disagree with its docstring on some inputs.",
        ])
    };
    let fix = *g.pick(&[
        "Fix the code so that every function does what its docstring says, keeping the names and parameters.",
        "Repair the module: each function must match its docstring; do not rename functions or change their parameters.",
        "Make the code agree with the docstrings without changing any function's name or parameters.",
    ]);
    let hidden = *g.pick(&[
        "Hidden tests will call the functions on other inputs.",
        "Hidden tests, on inputs you have not seen, decide whether it is fixed.",
    ]);
    let close = *g.pick(&[
        "Then call final_answer with \"done\".",
        "When you have finished, call final_answer with \"done\".",
        "Finish by calling final_answer with \"done\".",
    ]);
    format!("{opening} {fault} {fix} {hidden} {close}")
}

/// `x` as Python would write a literal: integers without a fraction, others in the shortest
/// form that reads back exactly.
fn py_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// `w*x` as a Python expression: `x`, `-x`, or `1.5*x`.
fn scaled_x(w: f64) -> String {
    match w {
        1.0 => "x".to_owned(),
        -1.0 => "-x".to_owned(),
        _ => format!("{}*x", py_number(w)),
    }
}

/// A polynomial with integer coefficients (`coefficients[k]` multiplies `x**k`) as a Python
/// expression in `x`, highest power first: `3*x**3 - x + 5`. At least one coefficient is
/// non-zero.
fn poly_text(coefficients: &[i64]) -> String {
    let mut out = String::new();
    for (power, &c) in coefficients.iter().enumerate().rev() {
        if c == 0 {
            continue;
        }
        let magnitude = c.unsigned_abs();
        if out.is_empty() {
            if c < 0 {
                out.push('-');
            }
        } else {
            out.push_str(if c < 0 { " - " } else { " + " });
        }
        let variable = match power {
            0 => String::new(),
            1 => "x".to_owned(),
            _ => format!("x**{power}"),
        };
        match (magnitude, variable.is_empty()) {
            (_, true) => out.push_str(&magnitude.to_string()),
            (1, false) => out.push_str(&variable),
            _ => out.push_str(&format!("{magnitude}*{variable}")),
        }
    }
    out
}

/// The polynomial's value at `x` (Horner).
fn poly_eval(coefficients: &[i64], x: f64) -> f64 {
    coefficients
        .iter()
        .rev()
        .fold(0.0, |acc, &c| acc * x + c as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomials_read_as_python() {
        assert_eq!(poly_text(&[5, -1, 0, 3]), "3*x**3 - x + 5");
        assert_eq!(poly_text(&[0, 2, -1]), "-x**2 + 2*x");
        assert_eq!(poly_eval(&[5, -1, 0, 3], 2.0), 27.0);
        assert_eq!(py_number(2.0), "2");
        assert_eq!(py_number(-0.5), "-0.5");
        assert_eq!(scaled_x(-1.0), "-x");
        assert_eq!(scaled_x(0.3), "0.3*x");
    }
}
