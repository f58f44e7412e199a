//! The desktop oracle: the task's demo (its scripted, keyboard-only solution) played through
//! the tools, then `terminate("success")` so the desktop is graded.
//!
//! A demo step that waits for a window or a file asks with `run_command`, so the oracle exists
//! only where that tool is served (`--allow-shell`), and only in the anthropic action space,
//! whose `type`, `key` and `wait` tools the demo's steps are.

use std::sync::Arc;
use std::time::Instant;

use mcpgym_env::{Answered, Oracle, OracleMove};
use serde_json::json;

use crate::tasks::{DEMO_WAIT_LIMIT, DemoCall, DemoCondition, DesktopTask};

/// Plays `task`'s demo.
pub fn oracle(task: Arc<DesktopTask>) -> Box<dyn Oracle> {
    Box::new(Demo {
        task,
        next: 0,
        waiting: None,
        terminated: false,
    })
}

struct Demo {
    task: Arc<DesktopTask>,
    /// The demo step to play next.
    next: usize,
    /// The condition being waited for, and since when.
    waiting: Option<(DemoCondition, Instant)>,
    terminated: bool,
}

impl Demo {
    fn probe(condition: &DemoCondition) -> OracleMove {
        OracleMove::call("run_command", json!({ "command": condition.shell_test() }))
    }
}

impl Oracle for Demo {
    fn next(&mut self, last: Option<Answered<'_>>) -> OracleMove {
        if let Some((condition, since)) = &self.waiting {
            let held = last
                .and_then(|a| a.structured)
                .is_some_and(|s| s["exit_code"] == 0);
            if !held && since.elapsed() < DEMO_WAIT_LIMIT {
                return Self::probe(condition);
            }
            // Past the limit the demo goes on: the grader says whether it still worked.
            self.waiting = None;
        }
        let Some(step) = self.task.demo().get(self.next) else {
            if self.terminated {
                return OracleMove::Done;
            }
            self.terminated = true;
            return OracleMove::call("terminate", json!({ "status": "success" }));
        };
        self.next += 1;
        match step.call() {
            DemoCall::Tool(tool, arguments) => OracleMove::call(tool, arguments),
            DemoCall::Until(condition) => {
                let probe = Self::probe(&condition);
                self.waiting = Some((condition, Instant::now()));
                probe
            }
        }
    }
}
