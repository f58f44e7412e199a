//! The hidden check of the class-debugging families: drive the agent's class through
//! scenarios in a child process and compare every result.

use serde_json::Value;

/// A check that drives the agent's class `class` (from the module file `module` in the home
/// folder) through hidden scenarios and compares every result with `expected`.
///
/// A scenario is `{"new": [args], "steps": [[method, [args]], ...]}`: the class is built with
/// `new` and each step's method called in turn. What a step gives is `["ok", value]` or
/// `["raised", exception class name]`; `expected` holds, per scenario, the list of those (numbers
/// within `tolerance`, relative or absolute). As in [`crate::families::function_check`], the
/// agent's code runs in a child process that gets only the scenarios, and its results come back
/// after a random marker.
pub(super) fn class_check(
    module: &str,
    class: &str,
    scenarios: &[Value],
    expected: &[Value],
    tolerance: f64,
) -> String {
    assert_eq!(
        scenarios.len(),
        expected.len(),
        "one expectation per scenario"
    );
    let scenarios = hex(&Value::from(scenarios.to_vec()).to_string());
    let expected = hex(&Value::from(expected.to_vec()).to_string());
    format!(
        r#"import secrets
import subprocess
import sys

SCENARIOS = json.loads(bytes.fromhex("{scenarios}"))
EXPECTED = json.loads(bytes.fromhex("{expected}"))
MARKER = secrets.token_hex(16)
RUNNER = """
import importlib.util, json, sys
scenarios = json.loads(sys.stdin.readline())
marker = sys.stdin.readline().strip()
spec = importlib.util.spec_from_file_location("agent_module", {module:?})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
cls = getattr(module, {class:?})
results = []
for scenario in scenarios:
    done = []
    try:
        obj = cls(*scenario["new"])
    except Exception as error:
        results.append([["raised", type(error).__name__]])
        continue
    for method, args in scenario["steps"]:
        try:
            done.append(["ok", getattr(obj, method)(*args)])
        except Exception as error:
            done.append(["raised", type(error).__name__])
    results.append(done)
print(marker + json.dumps(results, default=str))
"""


def same(got, want):
    if isinstance(want, bool) or isinstance(got, bool):
        return got is want
    if isinstance(want, (int, float)) and not isinstance(want, bool):
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
        input=json.dumps(SCENARIOS) + "\n" + MARKER + "\n",
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
    print("FAIL: {module} could not be imported and run on the hidden scenarios")
else:
    failed = sum(1 for got, want in zip(results, EXPECTED, strict=True) if not same(got, want))
    print("PASS" if failed == 0 else f"FAIL: {{failed}} of {{len(EXPECTED)}} hidden scenarios fail")
"#
    )
}

/// Lowercase hex of a string's bytes, for Python's `bytes.fromhex`: no quoting to get wrong.
fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}
