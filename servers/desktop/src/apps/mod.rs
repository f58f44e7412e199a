//! How applications start in an episode's jail.
//!
//! A task's `launch` lists argvs. Most run as written; two names are set up here, because
//! running them well in a jail takes more than an argv:
//!
//! - `chromium [URL]`: Chromium with its profile in the home folder, no first-run, sync,
//!   update or background traffic, and the episode's page server at `127.0.0.1:8000` (see
//!   [`chromium`]).
//! - `libreoffice --calc|--writer|--impress [FILE]`: LibreOffice with a warm profile copied
//!   into the home folder, no first-run dialogs, tips, update checks or macro execution (see
//!   [`libreoffice`]).

pub mod chromium;
pub mod libreoffice;

use std::path::Path;

use mcpgym_jail::{Bind, HostUser};

use crate::session::DesktopError;

/// What an application's launch needs from the episode.
#[derive(Debug, Clone, Copy)]
pub struct AppContext<'a> {
    /// The episode's folder on the host.
    pub folder: &'a Path,
    /// The home folder on the host (the jail sees it as `/home/user`).
    pub home: &'a Path,
    /// The jail's user on the host, when the server runs as root.
    pub user: Option<HostUser>,
    /// The page server's socket on the host, when the task serves pages.
    pub page_socket: Option<&'a Path>,
}

/// An application ready to start: its argv and what its jail needs beyond the episode's.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// The argv to run in the jail.
    pub argv: Vec<String>,
    /// Extra binds (read-only configuration, the page server's socket).
    pub binds: Vec<Bind>,
    /// Environment variables to add.
    pub env: Vec<(String, String)>,
    /// Whether the application needs an unlimited address space (its memory then is bounded
    /// by the cgroup alone; see [`mcpgym_jail::Limits::unlimited_address_space`]).
    pub unlimited_address_space: bool,
}

/// Prepares one argv of a task's `launch`.
pub async fn prepare(argv: &[String], context: &AppContext<'_>) -> Result<Prepared, DesktopError> {
    match argv.first().map(String::as_str) {
        Some("chromium") => chromium::prepare(&argv[1..], context).await,
        Some("libreoffice") => libreoffice::prepare(&argv[1..], context).await,
        _ => Ok(Prepared {
            argv: argv.to_vec(),
            ..Prepared::default()
        }),
    }
}
