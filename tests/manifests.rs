//! The shipped client configurations start servers that work.

mod common;

use common::*;
use serde_json::Value;

fn manifest(path: &str) -> Value {
    let file = format!("{}/../../manifests/{path}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

#[tokio::test]
async fn stdio_entries_start_a_working_server() {
    for path in [
        "claude-code/.mcp.json",
        "claude-desktop/claude_desktop_config.json",
    ] {
        let config = manifest(path);
        let servers = config["mcpServers"].as_object().unwrap();
        let stdio: Vec<_> = servers
            .values()
            .filter(|s| s["command"] == "mcpgym")
            .collect();
        assert!(!stdio.is_empty(), "{path} has a stdio entry");
        for server in stdio {
            let args: Vec<&str> = server["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            let client = stdio_client(&args).await;
            let tools = client.list_all_tools().await.unwrap();
            assert!(tools.iter().any(|t| t.name == "guess"), "{path}");
            client.cancel().await.unwrap();
        }
    }
}

#[tokio::test]
async fn http_entry_points_at_the_mcp_endpoint() {
    let config = manifest("claude-code/.mcp.json");
    let entry = &config["mcpServers"]["wordle-http"];
    assert_eq!(entry["type"], "http");
    let url = entry["url"].as_str().unwrap();
    assert!(url.ends_with("/mcp"), "{url}");
    // The same path on a real server speaks MCP.
    let server = HttpServer::start(&["wordle"]);
    let client = server.legacy_client("/mcp").await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    client.cancel().await.unwrap();
}
