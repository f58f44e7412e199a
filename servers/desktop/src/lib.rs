//! The desktop environment for mcpgym: each episode gets its own X display (Xvfb, a window
//! manager, its task's applications), driven by screenshots, mouse and keyboard in the
//! Anthropic `computer_20251124`, Qwen3-VL or OpenAI computer-use action spaces, and graded by
//! the desktop's real state (files, window titles, the clipboard) when it ends.

pub mod action;
pub mod apps;
pub mod display;
pub mod env;
pub mod families;
pub mod grading;
pub mod input;
pub mod keyboard;
pub mod keys;
pub mod oracle;
pub mod pages;
pub mod scale;
pub mod session;
pub mod spaces;
pub mod task_file;
pub mod tasks;
pub mod tools;
pub mod worker;
