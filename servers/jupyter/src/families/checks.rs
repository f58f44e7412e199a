//! Hidden checks the families share.

use serde_json::Value;

use crate::python::hex;

/// A check that runs the agent's `function` from the module file `module` (in the home folder)
/// on hidden argument lists and compares what it returns with `expected`, element by element
/// (numbers within `tolerance`, relative or absolute): see [`child_check`].
pub fn function_check(
    module: &str,
    function: &str,
    calls: &[Value],
    expected: &[Value],
    tolerance: f64,
) -> String {
    let runner = format!(
        r#"results = []
for args in inputs:
    try:
        results.append(["ok", getattr(module, {function:?})(*args)])
    except Exception as error:
        results.append(["raised", type(error).__name__])"#
    );
    // What a call gave is compared whole: ["ok", value], or ["raised", name] which never
    // matches.
    let expected: Vec<Value> = expected
        .iter()
        .map(|value| Value::from(vec![Value::from("ok"), value.clone()]))
        .collect();
    child_check(module, &runner, calls, &expected, tolerance, "hidden tests")
}

/// A check that runs several functions of the agent's module file `module` (in the home
/// folder): each call is a function's name, its argument list and the value it must return
/// (numbers within `tolerance`, relative or absolute); a call that raises never matches. See
/// [`child_check`].
pub fn functions_check(module: &str, calls: &[(&str, Value, Value)], tolerance: f64) -> String {
    let runner = r#"results = []
for name, args in inputs:
    try:
        results.append(["ok", getattr(module, name)(*args)])
    except Exception as error:
        results.append(["raised", type(error).__name__])"#;
    let (inputs, expected): (Vec<Value>, Vec<Value>) = calls
        .iter()
        .map(|(name, args, want)| {
            (
                Value::from(vec![Value::from(*name), args.clone()]),
                Value::from(vec![Value::from("ok"), want.clone()]),
            )
        })
        .unzip();
    child_check(
        module,
        runner,
        &inputs,
        &expected,
        tolerance,
        "hidden tests",
    )
}

/// A check that imports the agent's module file `module` (in the home folder) in a child
/// process, runs `runner` there on the hidden `inputs`, and compares the `results` list it
/// builds with `expected`, one element per input (numbers within `tolerance`, relative or
/// absolute; `True` is not `1`). `runner` is Python run after `inputs` (the decoded JSON) and
/// `module` (the agent's module) are defined; it must leave a list in `results`. `what` names
/// the inputs in the failure sentence ("hidden tests").
///
/// The agent's code runs in the child, which gets only the inputs: the expected values stay in
/// the check's own memory (which the check makes unreadable to its children), so code that
/// inspects its caller or its parent finds nothing to copy. The child's results travel as the
/// last line of its output, after a marker the agent cannot know in advance.
pub fn child_check(
    module: &str,
    runner: &str,
    inputs: &[Value],
    expected: &[Value],
    tolerance: f64,
    what: &str,
) -> String {
    assert_eq!(inputs.len(), expected.len(), "one expectation per input");
    let inputs = hex(&Value::from(inputs.to_vec()).to_string());
    let expected = hex(&Value::from(expected.to_vec()).to_string());
    let runner = hex(runner);
    format!(
        r#"import secrets
import subprocess
import sys

INPUTS = json.loads(bytes.fromhex("{inputs}"))
EXPECTED = json.loads(bytes.fromhex("{expected}"))
MARKER = secrets.token_hex(16)
RUNNER = """
import importlib.util, json, sys
inputs = json.loads(sys.stdin.readline())
marker = sys.stdin.readline().strip()
spec = importlib.util.spec_from_file_location("agent_module", {module:?})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
exec(bytes.fromhex("{runner}").decode())
print(marker + json.dumps(results, default=str))
"""


def same(got, want):
    if isinstance(want, bool) or isinstance(got, bool):
        return got is want
    if isinstance(want, (int, float)):
        if not isinstance(got, (int, float)):
            return False
        return abs(got - want) <= {tolerance:?} * max(1.0, abs(want))
    if isinstance(want, list):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(
            same(g, w) for g, w in zip(got, want, strict=True)
        )
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(
            same(got[k], want[k]) for k in want
        )
    return got == want


try:
    done = subprocess.run(
        [sys.executable, "-I", "-c", RUNNER],
        input=json.dumps(INPUTS) + "\n" + MARKER + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=HOME,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    results = json.loads(lines[-1][len(MARKER):]) if lines else None
except subprocess.TimeoutExpired:
    results = None
if not isinstance(results, list) or len(results) != len(EXPECTED):
    print("FAIL: {module} could not be imported and run on the {what}")
else:
    failed = sum(1 for got, want in zip(results, EXPECTED, strict=True) if not same(got, want))
    print("PASS" if failed == 0 else f"FAIL: {{failed}} of {{len(EXPECTED)}} {what} fail")
"#
    )
}
