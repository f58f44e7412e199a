//! The hidden check of the class-debugging families: drive the agent's class through
//! scenarios in a child process and compare every result.

use serde_json::Value;

use crate::families::child_check;

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
    let runner = format!(
        r#"cls = getattr(module, {class:?})
results = []
for scenario in inputs:
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
    results.append(done)"#
    );
    child_check(
        module,
        &runner,
        scenarios,
        expected,
        tolerance,
        "hidden scenarios",
    )
}
