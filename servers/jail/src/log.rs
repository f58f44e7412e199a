//! A jail's log: its stdout and stderr, drained from pipes into a host file that keeps only
//! the last [`LOG_BYTES`], so a jail that prints without end never fills the host's disk.

use std::path::PathBuf;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

/// Most bytes a jail's log holds: when more arrive, what came before is dropped.
pub const LOG_BYTES: u64 = 1 << 20;

/// The line that starts a log whose earlier part was dropped.
const DROPPED: &[u8] = b"[earlier output of the jail dropped: its log keeps the last 1 MiB]\n";

/// Copies `stdout` and `stderr` into the file at `path` until both end, keeping at most
/// [`LOG_BYTES`] in it. Errors writing the file end the copy into it, never the reading: the
/// jail must not block on a full pipe.
pub(crate) async fn drain(
    stdout: impl AsyncRead + Unpin,
    stderr: impl AsyncRead + Unpin,
    path: PathBuf,
) {
    let mut file = match tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .await
    {
        Ok(file) => Some(file),
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "cannot open the jail's log; its output is dropped");
            None
        }
    };
    let mut written = match &file {
        Some(file) => file.metadata().await.map(|m| m.len()).unwrap_or(0),
        None => 0,
    };
    let (mut stdout, mut stderr) = (Some(stdout), Some(stderr));
    let (mut out_buf, mut err_buf) = (vec![0u8; 16 << 10], vec![0u8; 16 << 10]);
    while stdout.is_some() || stderr.is_some() {
        let chunk = tokio::select! {
            read = async { stdout.as_mut().unwrap().read(&mut out_buf).await }, if stdout.is_some() => {
                match read { Ok(0) | Err(_) => { stdout = None; continue } Ok(n) => &out_buf[..n] }
            }
            read = async { stderr.as_mut().unwrap().read(&mut err_buf).await }, if stderr.is_some() => {
                match read { Ok(0) | Err(_) => { stderr = None; continue } Ok(n) => &err_buf[..n] }
            }
        };
        let Some(open) = file.as_mut() else { continue };
        if let Err(error) = append(open, &mut written, chunk).await {
            tracing::warn!(path = %path.display(), %error, "cannot write the jail's log; its output is dropped");
            file = None;
        }
    }
}

/// Appends `chunk`, first emptying the file when it would grow past [`LOG_BYTES`].
async fn append(
    file: &mut tokio::fs::File,
    written: &mut u64,
    chunk: &[u8],
) -> std::io::Result<()> {
    // A chunk is at most 16 KiB, far below the limit.
    if *written + chunk.len() as u64 > LOG_BYTES {
        file.set_len(0).await?;
        file.rewind().await?;
        file.write_all(DROPPED).await?;
        *written = DROPPED.len() as u64;
    }
    file.write_all(chunk).await?;
    // tokio's file writes in the background: done before the next truncation or the end.
    file.flush().await?;
    *written += chunk.len() as u64;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_log_keeps_its_last_part_and_never_grows_past_the_limit() {
        let dir = std::env::temp_dir().join(format!("mcpgym-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("jail.log");
        let _ = std::fs::remove_file(&path);
        // 3 MiB on stdout, then a last line; a line on stderr.
        let mut out = vec![b'a'; 3 << 20];
        out.extend_from_slice(b"\nthe last line\n");
        drain(&out[..], &b"an error\n"[..], path.clone()).await;
        let log = std::fs::read(&path).unwrap();
        assert!(log.len() as u64 <= LOG_BYTES, "{} bytes", log.len());
        assert!(log.starts_with(DROPPED));
        assert!(log.ends_with(b"the last line\n") || log.ends_with(b"an error\n"));
        let text = String::from_utf8_lossy(&log);
        assert!(text.contains("the last line"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
