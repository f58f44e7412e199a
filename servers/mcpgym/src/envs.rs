//! The environments this binary serves, each registered once: the subcommands, `serve` and
//! the jail set-up all come from [`ENVIRONMENTS`].

mod desktop;
mod jupyter;
mod wordle;

use crate::registry::Registration;

/// Every environment, in the order `--help` lists their subcommands.
pub const ENVIRONMENTS: &[Registration] = &[
    Registration::of::<wordle::WordleFlags>(),
    Registration::of::<jupyter::JupyterFlags>(),
    Registration::of::<desktop::DesktopFlags>(),
    Registration::plain(
        "hilo",
        "Hi-Lo, the example environment: find a hidden number (tools: guess, rules)",
        mcpgym_hilo::new,
    ),
];
