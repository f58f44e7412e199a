//! The Jupyter oracle: a generated family's reference solver (`families/<name>/solver.py`
//! beside this crate) run as one cell, its last printed line given to `final_answer`; a listed
//! task with an answer key gives that answer. A listed task graded by a hidden check has no
//! oracle.
//!
//! The solvers are read from the folder [`SOLVERS_VAR`] names, else from this crate's folder
//! in the checkout the binary was built from: they are never embedded in the binary.

use std::path::PathBuf;

use mcpgym_env::{Answered, Oracle, OracleMove};
use serde_json::json;

use crate::tasks::{Grader, Task};

/// The environment variable naming the folder of family solvers (`<family>/solver.py`).
pub const SOLVERS_VAR: &str = "MCPGYM_JUPYTER_SOLVERS";

/// Where the solvers are: [`SOLVERS_VAR`], else the checkout's `servers/jupyter/families`.
pub fn solvers_dir() -> PathBuf {
    std::env::var_os(SOLVERS_VAR).map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/families")),
        PathBuf::from,
    )
}

/// The oracle of `task`, `None` when it has no solver and no answer key.
pub fn oracle(task: &Task) -> Option<Box<dyn Oracle>> {
    let id = task.id();
    if let Some((family, _)) = mcpgym_env::parse_family_id(id) {
        let solver = std::fs::read_to_string(solvers_dir().join(family).join("solver.py"));
        if let Ok(solver) = solver {
            return Some(Box::new(Solver {
                solver,
                stage: Stage::Start,
            }));
        }
    }
    let answer = match task.grader() {
        Grader::Exact(answer) => answer.clone(),
        Grader::Numeric { value, .. } => value.to_string(),
        Grader::OneOf(answers) => answers.first()?.clone(),
        _ => return None,
    };
    Some(Box::new(mcpgym_env::oracle::Script::new(vec![
        OracleMove::call("final_answer", json!({ "answer": answer })),
    ])))
}

/// Where a solver run is.
enum Stage {
    Start,
    Prompted,
    Solved,
    Answered,
}

/// Reads the prompt, runs the solver with it as `PROMPT`, answers its last printed line.
struct Solver {
    solver: String,
    stage: Stage,
}

impl Oracle for Solver {
    fn next(&mut self, last: Option<Answered<'_>>) -> OracleMove {
        match self.stage {
            Stage::Start => {
                self.stage = Stage::Prompted;
                OracleMove::call("get_task", json!({}))
            }
            Stage::Prompted => {
                self.stage = Stage::Solved;
                let prompt = last
                    .and_then(|a| a.structured)
                    .and_then(|s| s["prompt"].as_str())
                    .unwrap_or_default();
                let code = format!("PROMPT = {}\n{}", json!(prompt), self.solver);
                OracleMove::call("add_and_execute_code_cell", json!({ "code": code }))
            }
            Stage::Solved => {
                self.stage = Stage::Answered;
                let stdout = last
                    .and_then(|a| a.structured)
                    .and_then(|s| s["stdout"].as_str())
                    .unwrap_or_default();
                let answer = stdout.lines().rev().find(|l| !l.trim().is_empty());
                OracleMove::call(
                    "final_answer",
                    json!({ "answer": answer.unwrap_or("").trim() }),
                )
            }
            Stage::Answered => OracleMove::Done,
        }
    }
}
