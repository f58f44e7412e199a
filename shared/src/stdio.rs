//! MCP over stdio: one process, one episode, started from the CLI flags.

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::env::Environment;
use crate::hub::{CreateEpisode, Hub, HubError};
use crate::mcp::McpHandler;

/// Why serving over stdio stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The episode described by the flags could not start.
    #[error(transparent)]
    Episode(#[from] HubError),
    /// The MCP session failed.
    #[error("MCP over stdio failed: {0}")]
    Protocol(String),
}

/// Serves one environment over stdin and stdout until the client disconnects. The episode is
/// started before the first message, so a bad `--task` fails at once.
pub async fn serve_stdio(hub: Arc<Hub>, env: Arc<dyn Environment>) -> Result<(), StdioError> {
    hub.check_defaults(env.as_ref())?;
    let created = hub
        .create(CreateEpisode {
            env: Some(env.name().to_owned()),
            ..CreateEpisode::default()
        })
        .await?;
    tracing::info!(episode = %created.id, task = %created.task, "stdio episode started");
    let handler = McpHandler::bound_to(hub.clone(), env, &created.id);
    let result = async {
        let service = handler
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| StdioError::Protocol(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| StdioError::Protocol(e.to_string()))?;
        Ok(())
    }
    .await;
    hub.close_all().await;
    result
}
