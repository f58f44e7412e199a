//! envd's file transfer: `/files?path=`.

use std::time::Duration;

use mcpgym_e2b::{ENVD_PORT, files::files_url};

use super::{E2bError, Sandbox};

impl Sandbox {
    /// Writes a file (parent folders are created).
    pub async fn write_file(&self, path: &str, bytes: Vec<u8>) -> Result<(), E2bError> {
        self.data(http::Method::POST, ENVD_PORT, &files_url(path))
            .header("content-type", "application/octet-stream")
            .body(bytes)
            .timeout(Duration::from_secs(60))
            .send()
            .await?
            .success()
            .await
            .map(drop)
    }

    /// Reads a file.
    pub async fn read_file(&self, path: &str) -> Result<Vec<u8>, E2bError> {
        self.data(http::Method::GET, ENVD_PORT, &files_url(path))
            .timeout(Duration::from_secs(60))
            .send()
            .await?
            .success()
            .await?
            .bytes()
            .await
    }
}
