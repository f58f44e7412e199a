//! What no jail may read: the server's own executable (it embeds the task catalogs), host
//! secrets, and whatever a caller adds ([`JailConfig::masked_paths`](crate::JailConfig)).
//!
//! Jails bind system directories selectively, never `/`. A sensitive path is never bound
//! itself, and where a bound directory holds one (the executable under `/usr/local/bin` when
//! `/usr` is bound, `/etc/ssl/private` under `/etc/ssl`), an empty file or directory is bound
//! read-only over it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Host paths that are never bound into a jail and are masked wherever a bound directory
/// holds them.
pub const SENSITIVE: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
    "/root",
];

/// This process's executable, canonical (`None` if the system will not say).
pub fn own_executable() -> Option<&'static Path> {
    static EXE: OnceLock<Option<PathBuf>> = OnceLock::new();
    EXE.get_or_init(|| std::env::current_exe().ok()?.canonicalize().ok())
        .as_deref()
}

/// Whether `path` is, or lies below, a [`SENSITIVE`] path (so must not be bound).
pub(crate) fn is_sensitive(path: &Path) -> bool {
    SENSITIVE.iter().any(|s| path.starts_with(s))
        || path
            .canonicalize()
            .is_ok_and(|real| SENSITIVE.iter().any(|s| real.starts_with(s)))
}

/// Where inside the jail each of `secrets` (host paths that exist) shows through one of the
/// read-only `bound` paths (bound at the same path inside), with whether it is a directory.
pub(crate) fn masks(bound: &[PathBuf], secrets: &[PathBuf]) -> Vec<(PathBuf, bool)> {
    let mut masks: Vec<(PathBuf, bool)> = Vec::new();
    for secret in secrets {
        let Ok(meta) = std::fs::metadata(secret) else {
            continue;
        };
        let real = secret.canonicalize().unwrap_or_else(|_| secret.clone());
        for dir in bound {
            let real_dir = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            for (host, base) in [(secret, dir), (&real, &real_dir)] {
                if let Ok(rest) = host.strip_prefix(base) {
                    let inside = dir.join(rest);
                    if !masks.iter().any(|(p, _)| *p == inside) {
                        masks.push((inside, meta.is_dir()));
                    }
                }
            }
        }
    }
    masks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_under_bound_directories_are_masked() {
        let bound = vec![PathBuf::from("/usr"), PathBuf::from("/etc/ssl")];
        let exe = PathBuf::from("/usr/bin/env");
        let found = masks(&bound, &[exe.clone(), PathBuf::from("/etc/hostname")]);
        assert_eq!(found, vec![(exe, false)]);
        assert!(is_sensitive(Path::new("/etc/ssh/sshd_config")));
        assert!(is_sensitive(Path::new("/etc/ssl/private")));
        assert!(!is_sensitive(Path::new("/etc/ssl/certs")));
        assert!(own_executable().is_some());
    }
}
