//! The shipped client configurations start servers that work.

use crate::common::*;
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
    let verl = |path: &str| manifest(&format!("verl/{path}"));
    for env in ["wordle", "jupyter"] {
        let config = verl(&format!("mcp_{env}.json"));
        let servers = config["mcpServers"].as_object().unwrap();
        // One server per file: fastmcp prefixes tool names when a config has several.
        assert_eq!(servers.len(), 1, "mcp_{env}.json");
        let server = &servers[env];
        assert_eq!(server["transport"], "http");
        assert!(
            server["url"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/{env}/mcp"))
        );
        assert!(server.get("auth_token").is_none());
        let tools = std::fs::read_to_string(format!(
            "{}/../../manifests/verl/mcp_{env}_tools.yaml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert!(tools.contains(&format!("mcp_servers_config_path: ./mcp_{env}.json")));
    }
    // The native tool configs point at the mcpgym verl adapter.
    for env in ["wordle", "jupyter", "desktop"] {
        let tools = std::fs::read_to_string(format!(
            "{}/../../manifests/verl/mcpgym_{env}.yaml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert!(tools.contains("class_name: mcpgym.adapters.verl.McpgymTool"));
        assert!(tools.contains(&format!("env: {env}")));
    }
}

/// Every input property of every tool has one `type` and no `anyOf`/`oneOf`, so OpenAI-style
/// function consumers (verl's `OpenAIFunctionPropertySchema`, Qwen-Agent) accept it.
#[tokio::test]
async fn every_tool_schema_is_openai_function_friendly() {
    let server = HttpServer::start(&["serve"]);
    for env in ["wordle", "jupyter", "desktop"] {
        let tools = server.control().tools(Some(env)).await.unwrap();
        assert!(!tools.is_empty(), "{env}");
        for tool in &tools {
            let name = &tool.name;
            let properties = tool.input_schema["properties"].as_object().unwrap();
            for (prop, schema) in properties {
                assert!(
                    schema["type"].is_string(),
                    "{env} {name}.{prop}: one type, not {}",
                    schema["type"]
                );
                assert!(schema.get("anyOf").is_none(), "{env} {name}.{prop}: anyOf");
                assert!(schema.get("oneOf").is_none(), "{env} {name}.{prop}: oneOf");
                assert!(
                    !schema.get("default").is_some_and(Value::is_null),
                    "{env} {name}.{prop}: a null default"
                );
            }
        }
    }
}

/// Files under `manifests/` whose `${` a program other than an MCP client expands, and which.
const EXPANDED_ELSEWHERE: &[(&str, &str)] = &[
    ("README.md", "documentation: says which client expands what"),
    ("kubernetes/README.md", "documentation"),
    ("kubernetes/validate", "a bash script"),
    ("container/install", "a bash script"),
    (
        "kubernetes/base/router/nginx.conf",
        "the nginx image's envsubst (NGINX_ENVSUBST_FILTER)",
    ),
    (
        "kubernetes/base/kustomization.yaml",
        "a comment about envsubst",
    ),
    (
        "kubernetes/tools/httproute.mjs",
        "JavaScript template literals",
    ),
];

fn files_under(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, found);
        } else {
            found.push(path);
        }
    }
}

/// No client config carries shell syntax its client may not expand: the MCP Inspector reads a
/// Claude Code `.mcp.json` and answers "Invalid URL" to `${MCPGYM_PORT:-8000}`; Claude
/// Desktop, Qwen-Agent, RL-Factory and fastmcp expand nothing either. verl's YAML files may use
/// OmegaConf's `${oc.env:…}` (verl resolves it when it loads them); any other file with `${`
/// must be one that a shell or envsubst reads, listed above.
#[test]
fn no_client_config_carries_variables_its_client_does_not_expand() {
    let root = std::path::PathBuf::from(format!("{}/../../manifests", env!("CARGO_MANIFEST_DIR")));
    let mut files = Vec::new();
    files_under(&root, &mut files);
    let mut client_configs = 0;
    for path in files {
        let name = path
            .strip_prefix(&root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let is_client_config = name.ends_with(".json") || name.ends_with(".pydata");
        if is_client_config {
            client_configs += 1;
            // No `${VAR}`, `$VAR` or `%VAR%` a client would pass on as it is.
            for (at, _) in text.match_indices('$') {
                let next = text[at + 1..].chars().next().unwrap_or(' ');
                assert!(
                    !(next == '{' || next == '_' || next.is_ascii_alphabetic()),
                    "{name}: unexpanded variable at {:?}",
                    &text[at..(at + 30).min(text.len())]
                );
            }
            continue;
        }
        if !text.contains("${") {
            continue;
        }
        if name.starts_with("verl/") && name.ends_with(".yaml") {
            for (at, _) in text.match_indices("${") {
                assert!(
                    text[at..].starts_with("${oc.env:"),
                    "{name}: only OmegaConf's ${{oc.env:…}} is resolved by verl, not {:?}",
                    &text[at..(at + 30).min(text.len())]
                );
            }
            continue;
        }
        assert!(
            EXPANDED_ELSEWHERE.iter().any(|(file, _)| *file == name),
            "{name} carries `${{`: a client config must not (write the value out), and a file a shell or envsubst reads belongs in EXPANDED_ELSEWHERE"
        );
    }
    assert!(client_configs >= 6, "{client_configs} client configs found");
    // The Claude Code HTTP entries are plain URLs to the MCP endpoint.
    let config = manifest("claude-code/.mcp.json");
    for (name, entry) in config["mcpServers"].as_object().unwrap() {
        if entry["type"] == "http" {
            let url = entry["url"].as_str().unwrap();
            let parsed = reqwest::Url::parse(url).unwrap_or_else(|e| panic!("{name}: {url}: {e}"));
            assert!(
                parsed.port().is_some() && parsed.path() == "/mcp",
                "{name}: {url}"
            );
        }
    }
}
