//! A model behind an API as a policy: OpenAI-compatible chat completions with tool calling
//! (also how Qwen3-VL is served), and Anthropic's Messages API, with the desktop's actions
//! through the `computer_20251124` tool.
//!
//! Each call is retried on a timeout, a connection failure, 429 or 5xx, with exponential
//! backoff (Retry-After honoured). A 400 that says the context is too long ends the episode
//! as a context overflow; any other refusal ends it as an endpoint failure.

use std::sync::Arc;
use std::time::Duration;

use mcpgym_shared::env::BoxFuture;
use rmcp::model::{ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};

use super::EvalArgs;
use super::policy::{Answer, Call, Policy, Stop};

/// The longest a backoff waits between two tries.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Which API the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI's chat completions.
    Openai,
    /// Anthropic's Messages.
    Anthropic,
    /// Chat completions serving Qwen3-VL (screenshots as user images).
    Qwen3vl,
}

impl Api {
    /// The flag's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
            Self::Qwen3vl => "qwen3vl",
        }
    }
}

/// A model endpoint and how it is called.
pub struct Endpoint {
    /// The API.
    pub api: Api,
    /// The URL requests go to.
    url: String,
    /// The model's name.
    pub model: String,
    /// The key, never shown (this type's Debug leaves it out).
    key: Option<String>,
    temperature: f64,
    max_tokens: u32,
    retries: u32,
    client: reqwest::Client,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("api", &self.api)
            .field("url", &self.url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The endpoint the flags describe.
    pub fn from_args(args: &EvalArgs) -> anyhow::Result<Self> {
        let api = match args.api.as_str() {
            "anthropic" => Api::Anthropic,
            "qwen3vl" => Api::Qwen3vl,
            _ => Api::Openai,
        };
        let model = args.model.clone().ok_or_else(|| {
            anyhow::anyhow!(
                "--policy model needs --model NAME (or use --policy oracle, noop or random)"
            )
        })?;
        let (default_base, key_var, path) = match api {
            Api::Anthropic => (
                "https://api.anthropic.com/v1",
                "ANTHROPIC_API_KEY",
                "/messages",
            ),
            _ => (
                "https://api.openai.com/v1",
                "OPENAI_API_KEY",
                "/chat/completions",
            ),
        };
        let base = args.endpoint.as_deref().unwrap_or(default_base);
        let base = base.trim_end_matches('/');
        let url = if base.ends_with(path) {
            base.to_owned()
        } else {
            format!("{base}{path}")
        };
        reqwest::Url::parse(&url)
            .map_err(|e| anyhow::anyhow!("--endpoint {url:?} is not a URL: {e}"))?;
        let key_var = args.api_key_env.as_deref().unwrap_or(key_var);
        let key = std::env::var(key_var).ok().filter(|k| !k.is_empty());
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(args.request_timeout))
            .tcp_nodelay(true)
            .build()?;
        Ok(Self {
            api,
            url,
            model,
            key,
            temperature: args.temperature,
            max_tokens: args.max_tokens,
            retries: args.retries,
            client,
        })
    }

    /// Posts `body`, retrying what may pass; the answer's JSON.
    async fn post(&self, body: &Value) -> Result<Value, Stop> {
        let mut backoff = Duration::from_secs(1);
        let mut tries = 0;
        loop {
            tries += 1;
            let mut request = self.client.post(&self.url).json(body);
            request = match (self.api, &self.key) {
                (Api::Anthropic, key) => {
                    let request = request
                        .header("anthropic-version", "2023-06-01")
                        .header("anthropic-beta", "computer-use-2025-11-24");
                    match key {
                        Some(key) => request.header("x-api-key", key),
                        None => request,
                    }
                }
                (_, Some(key)) => request.bearer_auth(key),
                (_, None) => request,
            };
            let failure = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    let text = response.text().await.unwrap_or_default();
                    if status.is_success() {
                        return serde_json::from_str(&text).map_err(|e| {
                            Stop::Endpoint(format!("the answer is not JSON ({e}): {}", clip(&text)))
                        });
                    }
                    let said = format!("{status}: {}", clip(&text));
                    if status.as_u16() == 429 || status.is_server_error() {
                        if let Some(wait) = retry_after {
                            backoff = wait.min(MAX_BACKOFF);
                        }
                        said
                    } else if is_context_overflow(&text) {
                        return Err(Stop::ContextOverflow(said));
                    } else {
                        return Err(Stop::Endpoint(said));
                    }
                }
                Err(error) => format!("{error}"),
            };
            if tries > self.retries {
                return Err(Stop::Endpoint(format!("{failure} (after {tries} tries)")));
            }
            tracing::warn!(url = %self.url, %failure, "model call failed; retrying");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

/// Whether a refusal says the conversation is longer than the model's context.
fn is_context_overflow(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "context length",
        "context_length",
        "maximum context",
        "too many tokens",
        "prompt is too long",
    ]
    .iter()
    .any(|phrase| text.contains(phrase))
}

fn clip(text: &str) -> String {
    let end = text.char_indices().nth(300).map_or(text.len(), |(i, _)| i);
    text[..end].to_owned()
}

/// A model playing one episode: the conversation so far, in its API's shape.
pub struct ModelPolicy {
    endpoint: Arc<Endpoint>,
    tools: Vec<Value>,
    /// The episode's tools, while the display's size is still to be asked (Anthropic's
    /// computer tool is declared with it).
    awaiting_size: Option<Vec<Tool>>,
    messages: Vec<Value>,
    tokens: (u64, u64),
}

impl ModelPolicy {
    /// A conversation that starts with `prompt`, offering `tools`.
    pub fn new(endpoint: Arc<Endpoint>, tools: &[Tool], prompt: String) -> Self {
        let sized_later = endpoint.api == Api::Anthropic
            && tools.iter().any(|t| t.name == "computer")
            && tools.iter().any(|t| t.name == SIZE_TOOL);
        let awaiting_size = sized_later.then(|| tools.to_vec());
        let tools = match endpoint.api {
            Api::Anthropic => anthropic_tools(tools, None),
            _ => tools
                .iter()
                .map(|tool| {
                    json!({"type": "function", "function": {
                        "name": tool.name,
                        "description": tool.description.as_deref().unwrap_or(""),
                        "parameters": Value::Object((*tool.input_schema).clone()),
                    }})
                })
                .collect(),
        };
        Self {
            endpoint,
            tools,
            messages: vec![json!({"role": "user", "content": prompt})],
            tokens: (0, 0),
            awaiting_size,
        }
    }

    fn add_answers(&mut self, answered: &[Answer]) {
        if answered.is_empty() {
            return;
        }
        match self.endpoint.api {
            Api::Anthropic => {
                let results: Vec<Value> = answered
                    .iter()
                    .map(|answer| {
                        let (content, is_error) = match &answer.record {
                            Ok(record) => (anthropic_content(&record.content), record.is_error),
                            Err(error) => (vec![json!({"type": "text", "text": error})], true),
                        };
                        json!({"type": "tool_result", "tool_use_id": answer.id,
                               "content": content, "is_error": is_error})
                    })
                    .collect();
                self.messages
                    .push(json!({"role": "user", "content": results}));
            }
            _ => {
                let mut images = Vec::new();
                for answer in answered {
                    let text = match &answer.record {
                        Ok(record) => {
                            for block in &record.content {
                                if let Some(image) = block.as_image() {
                                    images.push(json!({"type": "image_url", "image_url": {
                                        "url": format!("data:{};base64,{}", image.mime_type, image.data)
                                    }}));
                                }
                            }
                            mcpgym_shared::env::text_of(&record.content)
                        }
                        Err(error) => format!("Error: {error}"),
                    };
                    self.messages.push(
                        json!({"role": "tool", "tool_call_id": answer.id, "name": answer.tool, "content": text}),
                    );
                }
                // Tool messages carry text only on most servers (and in Qwen3-VL's harness):
                // the screen reaches the model as the user's image.
                if !images.is_empty() {
                    let mut content =
                        vec![json!({"type": "text", "text": "The screen after the last action:"})];
                    content.extend(images);
                    self.messages
                        .push(json!({"role": "user", "content": content}));
                }
            }
        }
    }

    async fn ask(&mut self) -> Result<Vec<Call>, Stop> {
        let endpoint = self.endpoint.clone();
        let mut body = json!({
            "model": endpoint.model,
            "messages": self.messages,
            "tools": self.tools,
            "temperature": endpoint.temperature,
            "max_tokens": endpoint.max_tokens,
        });
        if endpoint.api == Api::Anthropic && self.tools.is_empty() {
            body.as_object_mut().map(|b| b.remove("tools"));
        }
        let answer = endpoint.post(&body).await?;
        match endpoint.api {
            Api::Anthropic => self.read_anthropic(&answer),
            _ => self.read_openai(&answer),
        }
    }

    fn read_openai(&mut self, answer: &Value) -> Result<Vec<Call>, Stop> {
        self.tokens.0 += answer["usage"]["prompt_tokens"].as_u64().unwrap_or(0);
        self.tokens.1 += answer["usage"]["completion_tokens"].as_u64().unwrap_or(0);
        let message = &answer["choices"][0]["message"];
        if !message.is_object() {
            return Err(Stop::Endpoint(format!(
                "the answer has no choices[0].message: {}",
                clip(&answer.to_string())
            )));
        }
        let mut kept = json!({"role": "assistant", "content": message["content"].clone()});
        let mut calls = Vec::new();
        if let Some(tool_calls) = message["tool_calls"].as_array().filter(|c| !c.is_empty()) {
            kept["tool_calls"] = Value::Array(tool_calls.clone());
            for (n, call) in tool_calls.iter().enumerate() {
                let id = call["id"]
                    .as_str()
                    .map_or_else(|| format!("call_{n}"), str::to_owned);
                let tool = call["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let arguments = parse_arguments(&call["function"]["arguments"]);
                calls.push(Call {
                    id,
                    tool,
                    arguments,
                });
            }
        }
        self.messages.push(kept);
        Ok(calls)
    }

    fn read_anthropic(&mut self, answer: &Value) -> Result<Vec<Call>, Stop> {
        self.tokens.0 += answer["usage"]["input_tokens"].as_u64().unwrap_or(0);
        self.tokens.1 += answer["usage"]["output_tokens"].as_u64().unwrap_or(0);
        let Some(content) = answer["content"].as_array() else {
            return Err(Stop::Endpoint(format!(
                "the answer has no content: {}",
                clip(&answer.to_string())
            )));
        };
        let calls = content
            .iter()
            .filter(|block| block["type"] == "tool_use")
            .enumerate()
            .map(|(n, block)| Call {
                id: block["id"]
                    .as_str()
                    .map_or_else(|| format!("toolu_{n}"), str::to_owned),
                tool: block["name"].as_str().unwrap_or_default().to_owned(),
                arguments: match &block["input"] {
                    Value::Object(input) => Ok(input.clone()),
                    other => Err(format!("the tool input must be a JSON object, not {other}")),
                },
            })
            .collect();
        self.messages
            .push(json!({"role": "assistant", "content": content}));
        Ok(calls)
    }
}

/// A tool call's `arguments`: a JSON object, or a string holding one (as OpenAI sends them).
fn parse_arguments(arguments: &Value) -> Result<JsonObject, String> {
    let value = match arguments {
        Value::String(text) if text.trim().is_empty() => return Ok(JsonObject::new()),
        Value::String(text) => serde_json::from_str::<Value>(text)
            .map_err(|e| format!("the arguments are not valid JSON ({e}); send a JSON object matching the tool's schema"))?,
        Value::Null => return Ok(JsonObject::new()),
        other => other.clone(),
    };
    match value {
        Value::Object(object) => Ok(object),
        other => Err(format!("the arguments must be a JSON object, not {other}")),
    }
}

/// The desktop's one-action tools that Anthropic's computer tool does not have (the
/// desktop's own additions): they stay tools of their own.
const NOT_COMPUTER_ACTIONS: &[&str] = &["get_screen_size", "terminate"];

/// The episode's tools as Anthropic tools: the desktop's `computer` tool (which takes
/// `computer_20251124` input unchanged) as Anthropic's own computer tool, the desktop's
/// one-action tools left out (the computer tool does all of them), the rest as custom tools.
fn anthropic_tools(tools: &[Tool], size: Option<(u64, u64)>) -> Vec<Value> {
    let computer = tools.iter().find(|tool| tool.name == "computer");
    let mut listed = Vec::new();
    if computer.is_some() {
        let (width, height) = size.unwrap_or((1280, 800));
        listed.push(json!({
            "type": "computer_20251124",
            "name": "computer",
            "display_width_px": width,
            "display_height_px": height,
            "enable_zoom": true,
        }));
    }
    for tool in tools {
        let one_action = computer.is_some()
            && (tool.name == "computer"
                || (mcpgym_desktop::tools::ACTION_TOOLS.contains(&tool.name.as_ref())
                    && !NOT_COMPUTER_ACTIONS.contains(&tool.name.as_ref())));
        if !one_action {
            listed.push(json!({
                "name": tool.name,
                "description": tool.description.as_deref().unwrap_or(""),
                "input_schema": Value::Object((*tool.input_schema).clone()),
            }));
        }
    }
    listed
}

/// An observation as Anthropic tool-result content: text and base64 images.
fn anthropic_content(content: &[ContentBlock]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|block| {
            if let Some(text) = block.as_text() {
                Some(json!({"type": "text", "text": text.text}))
            } else {
                block.as_image().map(|image| {
                    json!({"type": "image", "source": {
                        "type": "base64", "media_type": image.mime_type, "data": image.data
                    }})
                })
            }
        })
        .collect()
}

/// The desktop tool that answers the screenshots' size as `WxH`.
const SIZE_TOOL: &str = "get_screen_size";
/// The call id of the harness's own size question.
const SIZE_CALL: &str = "mcpgym-display-size";

/// `WxH` as numbers.
fn parse_size(text: &str) -> Option<(u64, u64)> {
    let (width, height) = text.trim().split_once(['x', 'X', ','])?;
    Some((width.trim().parse().ok()?, height.trim().parse().ok()?))
}

impl Policy for ModelPolicy {
    fn next<'a>(&'a mut self, answered: &'a [Answer]) -> BoxFuture<'a, Result<Vec<Call>, Stop>> {
        if let Some(tools) = &self.awaiting_size {
            // Anthropic's loop declares the display's size with the tool: the harness asks
            // the desktop first (one turn), as the reference harness reads its display's.
            match answered.first() {
                Some(answer) if answer.id == SIZE_CALL => {
                    let size = answer
                        .record
                        .as_ref()
                        .ok()
                        .and_then(|r| parse_size(&mcpgym_shared::env::text_of(&r.content)));
                    self.tools = anthropic_tools(tools, size);
                    self.awaiting_size = None;
                    return Box::pin(self.ask());
                }
                _ => {
                    let call = Call {
                        id: SIZE_CALL.to_owned(),
                        tool: SIZE_TOOL.to_owned(),
                        arguments: Ok(JsonObject::new()),
                    };
                    return Box::pin(std::future::ready(Ok(vec![call])));
                }
            }
        }
        self.add_answers(answered);
        Box::pin(self.ask())
    }

    fn usage(&self) -> (u64, u64) {
        self.tokens
    }
}
