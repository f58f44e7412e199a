//! `mcpgym bench`: load generators that run the real binary and print what they measure.
//!
//! Each phase starts its own server process (this same binary), so the figures include
//! everything a client pays: HTTP, JSON-RPC, the episode lock, the game, and the reply.
//!
//! [`harness`] starts and reads the server processes and builds the MCP requests; [`report`]
//! turns latencies into figures; [`wordle`], [`jupyter`] and [`desktop`] are the benchmarks,
//! and [`soak`] holds one server under a mixed load to find what grows.

pub mod desktop;
mod harness;
pub mod jupyter;
mod report;
pub mod soak;
pub mod wordle;

/// What to benchmark.
#[derive(Debug, clap::Subcommand)]
pub enum BenchTarget {
    /// Wordle: guess calls over HTTP with many concurrent episodes (stateless and legacy
    /// sessions), calls over stdio, the memory of idle episodes and idle sessions, and (with
    /// --callgrind) instructions per request.
    Wordle(wordle::WordleBench),
    /// Jupyter: sandbox ready from the warm pool, `1+1` through MCP, executions per second with
    /// several episodes, and memory per idle sandbox.
    Jupyter(jupyter::JupyterBench),
    /// Desktop: episode start to first screenshot, the screenshot tool, a click with its
    /// screenshot, and desktops held at one action per second each.
    Desktop(desktop::DesktopBench),
    /// Soak: one `serve` under a mixed load (Wordle sessions, Jupyter and desktop episodes)
    /// for --minutes, its process tree sampled; fails on growth in memory, open files,
    /// processes or scratch folders, or on anything left after its shutdown.
    Soak(soak::SoakBench),
}

/// Runs a benchmark.
pub fn run(target: BenchTarget) -> anyhow::Result<()> {
    match target {
        BenchTarget::Wordle(bench) => wordle::run(bench),
        BenchTarget::Jupyter(bench) => jupyter::run(bench),
        BenchTarget::Desktop(bench) => desktop::run(bench),
        BenchTarget::Soak(bench) => soak::run(bench),
    }
}
