//! The Jupyter environment for mcpgym: tasks solved by writing and running Python in a real
//! IPython kernel inside a sandbox, graded by the answer given to `final_answer`.
//!
//! This crate holds the parts that do not talk to a sandbox:
//!
//! - [`tasks`]: the built-in tasks (data analysis on files a setup writes, numeric
//!   computation, text processing, file handling) in train and test splits, each with a public
//!   prompt, a setup program and a secret grader;
//! - [`grading`]: the rules that grade a `final_answer` string (exact, one of several
//!   spellings, a number within tolerance, or a hidden check run in the sandbox);
//! - [`reward`]: the `correct`, `steps` and `errors` components, sparse or shaped;
//! - [`notebook`]: the episode as a valid nbformat 4.5 `.ipynb`;
//! - [`e2b`]: a client for E2B's HTTP protocol (control plane, code interpreter, envd subset);
//! - [`env`](mod@env): the MCP environment, [`Jupyter`]: one sandbox per episode, its tools and reward;
//! - [`observe`]: how a cell's outputs are shown to the model;
//! - [`cap`]: how much of a cell's or command's output is kept, capped while it arrives.
//!
//! The environment reaches sandboxes only over E2B's HTTP protocol; it never links the sandbox
//! service's crate.
//!
//! ```
//! use mcpgym_jupyter::grading::Grading;
//! use mcpgym_jupyter::tasks::{Grader, JupyterTasks, SANDBOX_HOME, Task, TaskKind};
//! use mcpgym_env::Split;
//!
//! let tasks = JupyterTasks::builtin();
//! assert!(tasks.set().families().len() >= 30);
//! assert!(tasks.set().len(Split::Train) >= 20 * 900_000);
//! assert!(tasks.get("group-revenue/7").is_some());
//! let grader = Grader::Numeric { value: 42.0, rel_tol: 0.0, abs_tol: 0.0 };
//! let task = Task::new("my-task", Split::Train, TaskKind::Numeric, "What is 6 × 7?", "", grader);
//! let Grading::Done(verdict) = task.grade(" 4.2e1 ", SANDBOX_HOME) else { unreachable!() };
//! assert!(verdict.is_correct());
//! ```

#![warn(missing_docs)]

pub mod cap;
mod catalog;
pub mod charts;
pub mod e2b;
pub mod env;
pub mod families;
pub mod graded;
pub mod grading;
pub mod notebook;
pub mod observe;
pub mod oracle;
pub mod predictions;
mod python;
pub mod reward;
pub mod task_file;
pub mod tasks;

pub use e2b::{E2bClient, E2bConfig, E2bError};
pub use env::{Jupyter, JupyterConfig};
pub use grading::{CheckProgram, Grading, Verdict, grade};
pub use notebook::{CellOutput, ExecutedCell, build_notebook};
pub use reward::{EpisodeReward, RewardConfig, RewardMode};
pub use tasks::{Grader, JupyterTasks, Task, TaskInfo, TaskKind};
