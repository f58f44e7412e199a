//! `mcpgym python SPEC` and `mcpgym serve --python SPEC`: environments written in Python.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mcpgym_python::{Launch, PythonEnvironment};
use mcpgym_shared::Environment;

/// How Python environments run.
#[derive(Debug, Clone, clap::Args)]
pub struct PythonArgs {
    /// The Python interpreter that runs the workers; it must import the mcpgym package and
    /// the class. The Python package's own `mcpgym` command sets MCPGYM_PYTHON to its
    /// interpreter.
    #[arg(
        long,
        value_name = "PATH",
        env = "MCPGYM_PYTHON",
        default_value = "python3"
    )]
    pub python_interpreter: PathBuf,
    /// Worker processes per Python environment; episodes are spread over them (default: one
    /// per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub python_workers: Option<u64>,
    /// Longest one step (or reset) of a Python environment may run: then its worker is
    /// stopped, that episode ends aborted, and the worker's other episodes are rebuilt on a
    /// new one.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub python_step_timeout: u64,
}

impl PythonArgs {
    /// Loads the class `spec` names (`module:Class` or `path/to/file.py:Class`).
    pub fn load(&self, spec: &str) -> anyhow::Result<Arc<dyn Environment>> {
        let launch = Launch {
            python: self.python_interpreter.clone(),
            spec: spec.to_owned(),
            step_timeout: Duration::from_secs(self.python_step_timeout),
            start_timeout: Duration::from_secs(self.python_step_timeout.max(60)),
        };
        let workers = self.python_workers.map(|n| n as usize);
        let env = PythonEnvironment::load(launch, workers)
            .with_context(|| format!("cannot serve the Python environment {spec}"))?;
        Ok(Arc::new(env))
    }
}
