//! Chromium in an episode's jail.
//!
//! `chromium [URL|PAGE]…` runs Debian's Chromium binary itself (the `/usr/bin` wrapper reads
//! `/etc/chromium.d`, which the jail does not hold) with its profile in the home folder
//! (`~/.config/chromium`, so the bookmark grader reads what the browser saved), and:
//!
//! - `--no-sandbox`: Chromium's own sandbox needs user namespaces, which the jail denies; the
//!   jail is the sandbox. `--test-type` hides the infobar that warns about it.
//! - no first run, default-browser check, sync, component updates, background traffic, crash
//!   reporter or keyring (`--password-store=basic`);
//! - managed policies (`chromium-policies.json`, bound read-only at
//!   `/etc/chromium/policies/managed`): downloads go to `~/Downloads` without asking, no
//!   password manager, translation or autofill prompts, no HTTPS upgrades of the local pages;
//! - an unlimited address space (it reserves terabytes it never touches, and dies under an
//!   `RLIMIT_AS`); the cgroup bounds its memory.
//!
//! The jail has its own network namespace with only a loopback interface. When the task
//! serves pages, the page server's socket is bound into the jail at [`PAGE_SOCKET`] and
//! `socat` relays `127.0.0.1:8000` to it, started before Chromium and waited for; nothing
//! else is reachable. An argument that is not a URL or a flag names a page
//! (`form.html` opens `http://127.0.0.1:8000/form.html`); with none, Chromium opens the
//! pages' index, or `about:blank` when the task has no pages.

use std::path::PathBuf;

use mcpgym_jail::Bind;

use super::{AppContext, Prepared};
use crate::pages::PAGE_PORT;
use crate::session::DesktopError;

/// Chromium's binary (Debian's package).
pub const BINARY: &str = "/usr/lib/chromium/chromium";

/// Where the page server's socket appears inside the browser's jail.
pub const PAGE_SOCKET: &str = "/run/pages.sock";

/// Where Chromium reads managed policies.
const POLICY_DIR: &str = "/etc/chromium/policies/managed";

/// The managed policies.
const POLICIES: &str = include_str!("chromium-policies.json");

/// The profile, inside the jail.
pub const PROFILE: &str = "/home/user/.config/chromium";

/// The flags every launch gets.
const FLAGS: &[&str] = &[
    "--no-sandbox",
    "--test-type",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-dev-shm-usage",
    "--password-store=basic",
    "--noerrdialogs",
    "--hide-crash-restore-bubble",
    "--start-maximized",
];

/// Starts the relay in the background, waits (up to two seconds) until it listens, so the
/// first page load cannot race it, then becomes Chromium. `$0` and `$@` are Chromium's argv.
fn relay_script() -> String {
    let port_hex = format!("{PAGE_PORT:04X}");
    format!(
        "socat TCP-LISTEN:{PAGE_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:{PAGE_SOCKET} 2>/dev/null &\n\
         i=0\n\
         while [ $i -lt 200 ] && ! grep -q ':{port_hex} 00000000:0000 0A' /proc/net/tcp; do sleep 0.01; i=$((i+1)); done\n\
         exec {BINARY} \"$@\"\n"
    )
}

/// The URL an argument names: itself when it is a URL, else a page of the page server.
fn url_of(arg: &str) -> String {
    let is_url = ["http://", "https://", "about:", "file:", "data:", "chrome:"]
        .iter()
        .any(|scheme| arg.starts_with(scheme));
    if is_url {
        arg.to_owned()
    } else {
        format!(
            "http://127.0.0.1:{PAGE_PORT}/{}",
            arg.trim_start_matches('/')
        )
    }
}

/// Prepares `chromium ARGS…`.
pub async fn prepare(args: &[String], context: &AppContext<'_>) -> Result<Prepared, DesktopError> {
    let policy_dir = context.folder.join("chromium-policies");
    write_policies(&policy_dir).await?;
    let mut binds = vec![Bind {
        source: policy_dir,
        target: PathBuf::from(POLICY_DIR),
        writable: false,
    }];
    let mut flags: Vec<String> = FLAGS.iter().map(|f| (*f).to_owned()).collect();
    flags.push(format!("--user-data-dir={PROFILE}"));
    let mut urls = Vec::new();
    for arg in args {
        if arg.starts_with('-') {
            flags.push(arg.clone());
        } else {
            urls.push(url_of(arg));
        }
    }
    if urls.is_empty() {
        urls.push(if context.page_socket.is_some() {
            format!("http://127.0.0.1:{PAGE_PORT}/")
        } else {
            "about:blank".to_owned()
        });
    }
    let argv = match context.page_socket {
        Some(socket) => {
            binds.push(Bind {
                source: socket.to_owned(),
                target: PathBuf::from(PAGE_SOCKET),
                writable: false,
            });
            let mut argv = vec![
                "/bin/sh".to_owned(),
                "-c".to_owned(),
                relay_script(),
                BINARY.to_owned(),
            ];
            argv.extend(flags);
            argv.extend(urls);
            argv
        }
        None => {
            let mut argv = vec![BINARY.to_owned()];
            argv.extend(flags);
            argv.extend(urls);
            argv
        }
    };
    Ok(Prepared {
        argv,
        binds,
        env: Vec::new(),
        unlimited_address_space: true,
    })
}

/// Writes the managed policies into a folder of the episode, readable by the jail's user.
async fn write_policies(dir: &std::path::Path) -> Result<(), DesktopError> {
    let io = |action: &'static str, path: &std::path::Path| {
        let path = path.to_owned();
        move |source| DesktopError::Io {
            action,
            path,
            source,
        }
    };
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(io("create", dir))?;
    let file = dir.join("policies.json");
    tokio::fs::write(&file, POLICIES)
        .await
        .map_err(io("write", &file))?;
    use std::os::unix::fs::PermissionsExt;
    for (path, mode) in [(dir, 0o755), (file.as_path(), 0o644)] {
        tokio::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .await
            .map_err(io("set the permissions of", path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policies_are_json_and_the_relay_waits_for_its_port() {
        let policies: serde_json::Value = serde_json::from_str(POLICIES).unwrap();
        assert_eq!(policies["DownloadDirectory"], "/home/user/Downloads");
        assert!(relay_script().contains(":1F40 00000000:0000 0A"));
        assert_eq!(url_of("form.html"), "http://127.0.0.1:8000/form.html");
        assert_eq!(url_of("/a/b.html"), "http://127.0.0.1:8000/a/b.html");
        assert_eq!(url_of("about:blank"), "about:blank");
    }

    #[tokio::test]
    async fn pages_bring_the_relay_and_the_socket() {
        let dir = std::env::temp_dir().join(format!("mcpgym-chromium-test.{}", std::process::id()));
        let socket = dir.join("page.sock");
        let context = AppContext {
            folder: &dir,
            home: &dir,
            user: None,
            page_socket: Some(&socket),
        };
        let prepared = prepare(&["form.html".into()], &context).await.unwrap();
        assert_eq!(prepared.argv[0], "/bin/sh");
        assert_eq!(
            prepared.argv.last().unwrap(),
            "http://127.0.0.1:8000/form.html"
        );
        assert!(prepared.unlimited_address_space);
        assert!(
            prepared
                .binds
                .iter()
                .any(|b| b.target == std::path::Path::new(PAGE_SOCKET))
        );
        let plain = AppContext {
            page_socket: None,
            ..context
        };
        let prepared = prepare(&[], &plain).await.unwrap();
        assert_eq!(prepared.argv[0], BINARY);
        assert_eq!(prepared.argv.last().unwrap(), "about:blank");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
