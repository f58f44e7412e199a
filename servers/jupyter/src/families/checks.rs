//! Hidden checks the families share.

use serde_json::Value;

/// A check that runs the agent's `function` from the module file `module` (in the home folder)
/// on hidden argument lists and compares what it returns with `expected`, element by element
/// (numbers within `tolerance`, relative or absolute).
///
/// The agent's code runs in a child process that gets only the arguments: the expected values
/// stay in the check's own memory (which the check makes unreadable to its children), so code
/// that inspects its caller or its parent finds nothing to copy. The child's results travel as
/// the last line of its output, after a marker the agent cannot know in advance.
pub fn function_check(
    module: &str,
    function: &str,
    calls: &[Value],
    expected: &[Value],
    tolerance: f64,
) -> String {
    assert_eq!(calls.len(), expected.len(), "one expected value per call");
    let calls = hex(&Value::from(calls.to_vec()).to_string());
    let expected = hex(&Value::from(expected.to_vec()).to_string());
    format!(
        r#"import secrets
import subprocess
import sys

CALLS = json.loads(bytes.fromhex("{calls}"))
EXPECTED = json.loads(bytes.fromhex("{expected}"))
MARKER = secrets.token_hex(16)
RUNNER = """
import importlib.util, json, sys
calls = json.loads(sys.stdin.readline())
marker = sys.stdin.readline().strip()
spec = importlib.util.spec_from_file_location("agent_module", {module:?})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
results = []
for args in calls:
    try:
        results.append(["ok", getattr(module, {function:?})(*args)])
    except Exception as error:
        results.append(["raised", type(error).__name__])
print(marker + json.dumps(results, default=str))
"""


def same(got, want):
    if isinstance(want, float) or isinstance(got, float):
        try:
            got, want = float(got), float(want)
        except (TypeError, ValueError):
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
        input=json.dumps(CALLS) + "\n" + MARKER + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=HOME,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    results = json.loads(lines[-1][len(MARKER):]) if lines else None
except subprocess.TimeoutExpired:
    results = None
if results is None:
    print("FAIL: {module} could not be imported and run on the hidden tests")
else:
    failed = sum(
        1
        for (status, got), want in zip(results, EXPECTED, strict=True)
        if status != "ok" or not same(got, want)
    )
    print("PASS" if failed == 0 else f"FAIL: {{failed}} of {{len(EXPECTED)}} hidden tests fail")
"#
    )
}

/// Lowercase hex of a string's bytes, for Python's `bytes.fromhex`: no quoting to get wrong.
fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}
