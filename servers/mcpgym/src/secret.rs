//! The test secret: the bytes test instances of generated families are derived with, so that
//! the public generators and a test id do not reveal a test task (see
//! [`mcpgym_env::generate`]). Read from a file, created with fresh random bytes on first use.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The file's length: the secret's bytes.
const SECRET_BYTES: usize = 32;

/// The default file: `$XDG_STATE_HOME/mcpgym/test-secret`, else `~/.local/state/mcpgym/test-secret`.
pub fn default_path() -> Option<PathBuf> {
    Some(dirs::state_dir()?.join("mcpgym").join("test-secret"))
}

/// Reads the secret at `path` (the default file when `None`), creating it (mode 0600, in a
/// folder made if missing) when it does not exist, and sets it for this process.
pub fn load(path: Option<&Path>) -> anyhow::Result<()> {
    let path = match path {
        Some(path) => path.to_path_buf(),
        None => default_path().context(
            "cannot tell where the test secret lives (neither XDG_STATE_HOME nor HOME is set): \
             pass --test-secret FILE",
        )?,
    };
    let secret = read_or_create(&path)?;
    anyhow::ensure!(
        mcpgym_shared::generate::set_test_secret(secret),
        "a different test secret was set already in this process"
    );
    tracing::debug!(path = %path.display(), fingerprint = %mcpgym_shared::generate::test_secret_fingerprint(), "test secret");
    Ok(())
}

fn read_or_create(path: &Path) -> anyhow::Result<[u8; SECRET_BYTES]> {
    match std::fs::read(path) {
        Ok(bytes) => parse(&bytes).with_context(|| format!("the test secret {}", path.display())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => create(path),
        Err(error) => Err(error).with_context(|| {
            format!(
                "cannot read the test secret {} (pass --test-secret FILE to use another)",
                path.display()
            )
        }),
    }
}

fn parse(bytes: &[u8]) -> anyhow::Result<[u8; SECRET_BYTES]> {
    // Hex text, so a secret can be written by hand or copied between machines.
    let text = std::str::from_utf8(bytes)
        .ok()
        .map(str::trim)
        .filter(|text| text.len() == 2 * SECRET_BYTES)
        .context(
            "it must hold 64 hexadecimal digits (32 bytes); delete it to have a new one made",
        )?;
    let mut secret = [0u8; SECRET_BYTES];
    for (i, byte) in secret.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16)
            .ok()
            .context("it holds a character that is not a hexadecimal digit")?;
    }
    Ok(secret)
}

fn create(path: &Path) -> anyhow::Result<[u8; SECRET_BYTES]> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot make {}", folder.display()))?;
    }
    let mut secret = [0u8; SECRET_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| std::io::Read::read_exact(&mut random, &mut secret))
        .context("cannot read /dev/urandom for a new test secret")?;
    let text: String = secret.iter().map(|byte| format!("{byte:02x}")).collect();
    // create_new: two servers starting at once on a fresh machine must agree on one secret.
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(mut file) => {
            file.write_all(format!("{text}\n").as_bytes())
                .and_then(|()| file.sync_all())
                .with_context(|| format!("cannot write the test secret {}", path.display()))?;
            tracing::info!(path = %path.display(), "made a new test secret");
            Ok(secret)
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            // Another process made it first; a half-written file reads as invalid, so wait
            // for its contents briefly.
            for _ in 0..50 {
                if let Ok(secret) = std::fs::read(path)
                    .map_err(anyhow::Error::from)
                    .and_then(|b| parse(&b))
                {
                    return Ok(secret);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            read_or_create(path)
        }
        Err(error) => {
            Err(error).with_context(|| format!("cannot create the test secret {}", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_made_once_and_read_back() {
        let dir = std::env::temp_dir().join(format!("mcpgym-secret-{}", std::process::id()));
        let path = dir.join("nested/test-secret");
        let made = read_or_create(&path).unwrap();
        assert_eq!(read_or_create(&path).unwrap(), made);
        let mode = std::fs::metadata(&path).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        std::fs::write(&path, "zz").unwrap();
        let error = format!("{:#}", read_or_create(&path).unwrap_err());
        assert!(error.contains("64 hexadecimal digits"), "{error}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
