//! chromium in an episode's jail.

use super::{AppContext, Prepared};
use crate::session::DesktopError;

/// Prepares `chromium ARGS…`.
pub async fn prepare(args: &[String], _context: &AppContext<'_>) -> Result<Prepared, DesktopError> {
    let mut argv = vec!["chromium".to_owned()];
    argv.extend(args.iter().cloned());
    Ok(Prepared {
        argv,
        ..Prepared::default()
    })
}
