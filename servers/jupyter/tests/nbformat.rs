//! The notebook builder's output against Jupyter's own validator: the official nbformat 4.5
//! JSON Schema, as the `nbformat` package ships it. nbformat is not a dependency of mcpgym: the
//! test uses the first `python3` that has it (Debian: `python3-nbformat`) and says so when none
//! does; the structural validator's own tests run regardless.

use std::io::Write;
use std::process::{Command, Stdio};

use mcpgym_jupyter::notebook::{CellOutput, ExecutedCell, build_notebook, validate};

// The schema validator itself: `nbformat.validate` would quietly add missing cell ids and only
// warn, and a missing id is exactly what 4.5 must not have.
const VALIDATE: &str = "import json, sys\n\
from nbformat.validator import get_validator\n\
nb = json.loads(sys.stdin.read())\n\
get_validator(version=4, version_minor=5).validate(nb)\n\
print('VALID', nb['nbformat'], nb['nbformat_minor'])\n";

fn python_with_nbformat() -> Option<&'static str> {
    ["/usr/bin/python3", "python3"].into_iter().find(|python| {
        Command::new(python)
            .args(["-c", "import nbformat"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[test]
fn jupyter_accepts_the_notebook() {
    let cells = vec![
        ExecutedCell::markdown("# Task\nFind the answer."),
        ExecutedCell::code(
            "import sys\nprint('out')\nprint('err', file=sys.stderr)\n{'a': 1}",
            Some(1),
            vec![
                CellOutput::stdout("out\n"),
                CellOutput::stderr("err\n"),
                CellOutput::text_result("{'a': 1}"),
            ],
        ),
        ExecutedCell::code("plt.show()", Some(2), vec![CellOutput::png("iVBORw0KGgo=")]),
        ExecutedCell::code(
            "1/0",
            Some(3),
            vec![CellOutput::error(
                "ZeroDivisionError",
                "division by zero",
                "\u{1b}[0;31mZeroDivisionError\u{1b}[0m\nTraceback line",
            )],
        ),
        ExecutedCell::shell("ls -l", Some(4), vec![CellOutput::stdout("total 0\n")]),
        ExecutedCell::code("", None, vec![]),
    ];
    let notebook = build_notebook(&cells, serde_json::Map::new());
    validate(&notebook).unwrap();

    let python = python_with_nbformat()
        .expect("no python3 with nbformat: run .ci/setup (it installs python3-nbformat)");
    let mut child = Command::new(python)
        .args(["-c", VALIDATE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string_pretty(&notebook).unwrap().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "nbformat rejected the notebook: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "VALID 4 5");
}
