//! The shipped client configurations start servers that work.

mod common;

use common::*;
use serde_json::Value;

fn manifest(path: &str) -> Value {
    let file = format!("{}/../../manifests/{path}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

/// RL-Factory's `.pydata` is a Python literal: read it the way RL-Factory does.
fn pydata(path: &str) -> Value {
    let file = format!("{}/../../manifests/{path}", env!("CARGO_MANIFEST_DIR"));
    let output = std::process::Command::new("python3")
        .args([
            "-c",
            "import ast, json, sys; print(json.dumps(ast.literal_eval(open(sys.argv[1]).read())))",
            &file,
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn stdio_entries_start_a_working_server() {
    let configs = [
        ("claude-code/.mcp.json", manifest("claude-code/.mcp.json")),
        (
            "claude-desktop/claude_desktop_config.json",
            manifest("claude-desktop/claude_desktop_config.json"),
        ),
        (
            "qwen-agent/mcpgym_tools.json",
            manifest("qwen-agent/mcpgym_tools.json"),
        ),
        (
            "rl-factory/mcpgym.pydata",
            pydata("rl-factory/mcpgym.pydata")[0].clone(),
        ),
    ];
    for (path, config) in configs {
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
            let expected = match args[0] {
                "wordle" => "guess",
                "desktop" => "computer",
                _ => "final_answer",
            };
            assert!(tools.iter().any(|t| t.name == expected), "{path} {args:?}");
            if args[0] == "desktop" {
                // A real private display answers.
                let shot = client
                    .call_tool(call("screenshot", Default::default()))
                    .await
                    .unwrap();
                assert!(
                    shot.content
                        .iter()
                        .any(|c| matches!(c, rmcp::model::ContentBlock::Image(_))),
                    "{path}: a screenshot"
                );
            }
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

#[test]
fn http_entries_use_streamable_http() {
    let rl_factory = pydata("rl-factory/mcpgym.pydata");
    let entry = &rl_factory[0]["mcpServers"]["jupyter-http"];
    // A bare url would be taken as legacy SSE.
    assert_eq!(entry["type"], "streamable-http");
    assert!(entry["url"].as_str().unwrap().ends_with("/mcp"));

    let verl = manifest("verl/mcp_server.json");
    for server in verl["mcpServers"].as_object().unwrap().values() {
        assert_eq!(server["transport"], "http");
        assert!(server["url"].as_str().unwrap().ends_with("/mcp"));
        assert!(server.get("auth_token").is_none());
    }
    let tools = std::fs::read_to_string(format!(
        "{}/../../manifests/verl/mcpgym_tools.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(tools.contains("mcp_servers_config_path: ./mcp_server.json"));
    for tool in ["add_and_execute_code_cell", "final_answer", "guess"] {
        assert!(tools.contains(&format!("- {tool}")), "{tool}");
    }
}
