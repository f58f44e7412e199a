//! LibreOffice in an episode's jail: `libreoffice --calc|--writer|--impress [FILE]`.
//!
//! LibreOffice starts with a warm profile written into the home folder (at the place it looks
//! for one by default, `~/.config/libreoffice/4/user`), so the first window is the document:
//! no tip of the day, no first-run or "what's new" bars, no update check, no usage reports,
//! no template chooser in Impress, no recovery or autosave, and macros never run. Saving in a
//! foreign format (`.xlsx`, `.csv`, `.docx`) does not ask whether to keep it. Calc's
//! AutoInput is off: its suggestions, popping up while a formula or a word is typed,
//! swallowed typed letters (`=sum(` arrived as `=sm(`). Dialogs are
//! LibreOffice's own (the only display plugin installed is the plain X11 one).
//!
//! `FILE` is relative to home; flat ODF files (`.fods`, `.fodt`, `.fodp`), which are plain
//! XML a task can write as text, open directly in the matching application.

use std::path::{Path, PathBuf};

use mcpgym_jail::{Bind, HostUser};

use super::{AppContext, Prepared};
use crate::session::{DesktopError, chown};

/// The profile's settings, copied into every home that launches LibreOffice.
const REGISTRY: &str = include_str!("libreoffice-profile/registrymodifications.xcu");

/// Where the profile lives, relative to home: LibreOffice's default location, so a user who
/// starts `soffice` by hand inside the desktop gets the same settings.
const PROFILE_DIR: &str = ".config/libreoffice/4/user";

/// The profile as the jail sees it, for `-env:UserInstallation` (which names the folder that
/// holds `user/`).
const USER_INSTALLATION: &str = "file:///home/user/.config/libreoffice/4";

/// Prepares `libreoffice --calc|--writer|--impress [FILE]`.
pub async fn prepare(args: &[String], context: &AppContext<'_>) -> Result<Prepared, DesktopError> {
    let (mode, file) = match args {
        [mode] => (mode, None),
        [mode, file] => (mode, Some(file)),
        _ => return Err(usage(args)),
    };
    if !matches!(mode.as_str(), "--calc" | "--writer" | "--impress") {
        return Err(usage(args));
    }
    if file.is_some_and(|f| f.starts_with('-')) {
        return Err(usage(args));
    }
    let home = context.home.to_owned();
    let user = context.user;
    tokio::task::spawn_blocking(move || write_profile(&home, user))
        .await
        .map_err(|e| DesktopError::Launch {
            program: "libreoffice".into(),
            source: std::io::Error::other(e),
        })??;
    let mut argv = vec![
        "soffice".to_owned(),
        mode.clone(),
        "--norestore".to_owned(),
        "--nologo".to_owned(),
        format!("-env:UserInstallation={USER_INSTALLATION}"),
    ];
    argv.extend(file.cloned());
    Ok(Prepared {
        argv,
        // The launcher script and the program read their bootstrap settings from here.
        binds: vec![Bind {
            source: PathBuf::from("/etc/libreoffice"),
            target: PathBuf::from("/etc/libreoffice"),
            writable: false,
        }],
        // LibreOffice's own dialogs (the plain X11 plugin, the only one Debian's packages here
        // install), named so a host with more plugins behaves the same.
        env: vec![("SAL_USE_VCLPLUGIN".to_owned(), "gen".to_owned())],
        unlimited_address_space: false,
    })
}

fn usage(args: &[String]) -> DesktopError {
    DesktopError::Launch {
        program: "libreoffice".into(),
        source: std::io::Error::other(format!(
            "expected `libreoffice --calc|--writer|--impress [FILE]`, got {args:?}"
        )),
    }
}

/// Writes the profile's settings under `home`, the folders and the file owned by `user`.
/// Folders are made one at a time and a symlink anywhere on the way is refused, so the
/// profile never lands outside home.
fn write_profile(home: &Path, user: Option<HostUser>) -> Result<(), DesktopError> {
    let io = |action: &'static str, path: &Path| {
        let path = path.to_owned();
        move |source| DesktopError::Io {
            action,
            path,
            source,
        }
    };
    let mut dir = home.to_owned();
    for part in PROFILE_DIR.split('/') {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => {
                return Err(io("use", &dir)(std::io::Error::other(
                    "is not a folder (a symlink or a file is in the way)",
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir).map_err(io("create", &dir))?;
                chown(&dir, user)?;
            }
            Err(e) => return Err(io("inspect", &dir)(e)),
        }
    }
    let file = dir.join("registrymodifications.xcu");
    if std::fs::symlink_metadata(&file).is_ok_and(|m| !m.is_file()) {
        return Err(io("write", &file)(std::io::Error::other(
            "is not a regular file",
        )));
    }
    std::fs::write(&file, REGISTRY).map_err(io("write", &file))?;
    chown(&file, user)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_turns_off_dialogs_and_macros() {
        for setting in [
            "ShowTipOfTheDay",
            "FirstRun",
            "WarnAlienFormat",
            "MacroSecurityLevel",
            "AutoPilot",
            "AutoCheckEnabled",
            "CollectUsageInformation",
        ] {
            assert!(REGISTRY.contains(setting), "{setting}");
        }
    }

    #[tokio::test]
    async fn prepare_writes_the_profile_and_checks_arguments() {
        let home = std::env::temp_dir().join(format!("mcpgym-lo-test-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        let context = AppContext {
            folder: &home,
            home: &home,
            user: None,
            page_socket: None,
        };
        let args = ["--calc".to_owned(), "data.fods".to_owned()];
        let prepared = prepare(&args, &context).await.unwrap();
        assert_eq!(prepared.argv[0], "soffice");
        assert_eq!(prepared.argv.last().unwrap(), "data.fods");
        let written =
            std::fs::read_to_string(home.join(PROFILE_DIR).join("registrymodifications.xcu"))
                .unwrap();
        assert_eq!(written, REGISTRY);
        // Twice is fine (a second window).
        prepare(&args, &context).await.unwrap();
        assert!(prepare(&["--base".to_owned()], &context).await.is_err());
        assert!(
            prepare(&["--calc".to_owned(), "-env:x".to_owned()], &context)
                .await
                .is_err()
        );
        std::fs::remove_dir_all(&home).unwrap();
    }
}
