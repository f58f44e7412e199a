//! Who plays an episode: the built-in policies, and a model behind an API
//! ([`super::endpoint`]).

use std::sync::Arc;

use mcpgym_shared::Environment;
use mcpgym_shared::env::BoxFuture;
use mcpgym_shared::oracle::{Oracle, OracleMove};
use mcpgym_shared::step::StepRecord;
use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use super::endpoint::{Api, Endpoint, ModelPolicy};
use super::{EvalArgs, Job};

/// A call a policy asks for.
#[derive(Debug, Clone)]
pub struct Call {
    /// The policy's id of the call (a model's tool-call id), handed back with its answer.
    pub id: String,
    /// The tool.
    pub tool: String,
    /// Its arguments, or why they could not be read (malformed JSON from a model).
    pub arguments: Result<JsonObject, String>,
}

/// What a call answered.
#[derive(Debug)]
pub struct Answer {
    /// The call's id.
    pub id: String,
    /// The tool called.
    pub tool: String,
    /// The step, or the sentence the call was refused with before it reached the episode.
    pub record: Result<StepRecord, String>,
}

/// Why an episode's loop stopped early: written as that episode's error.
#[derive(Debug, thiserror::Error)]
pub enum Stop {
    /// The model's endpoint failed past its retries, or refused the request.
    #[error("the model endpoint failed: {0}")]
    Endpoint(String),
    /// The conversation no longer fits the model's context.
    #[error("the model's context overflowed: {0}")]
    ContextOverflow(String),
    /// The environment refused to go on.
    #[error("the environment failed: {0}")]
    Environment(String),
    /// The built-in oracle has no solution for this task.
    #[error("no oracle for task {0}")]
    NoOracle(String),
}

/// A policy playing one episode.
pub trait Policy: Send {
    /// The next calls, given the answers to the last ones (empty before the first); no call
    /// ends the episode's loop.
    fn next<'a>(&'a mut self, answered: &'a [Answer]) -> BoxFuture<'a, Result<Vec<Call>, Stop>>;

    /// Tokens read and written so far.
    fn usage(&self) -> (u64, u64) {
        (0, 0)
    }
}

/// Which policy a run uses, with what it needs to start one per episode.
#[derive(Debug)]
pub enum PolicyKind {
    /// The environment's reference solution.
    Oracle,
    /// No call.
    Noop,
    /// Random tools, random arguments.
    Random,
    /// A model.
    Model(Arc<Endpoint>),
}

impl PolicyKind {
    /// The policy the flags name.
    pub fn from_args(args: &EvalArgs) -> anyhow::Result<Self> {
        Ok(match args.policy.as_str() {
            "oracle" => Self::Oracle,
            "noop" => Self::Noop,
            "random" => Self::Random,
            _ => Self::Model(Arc::new(Endpoint::from_args(args)?)),
        })
    }

    /// Its name, for the summary.
    pub fn name(&self) -> String {
        match self {
            Self::Oracle => "oracle".into(),
            Self::Noop => "noop".into(),
            Self::Random => "random".into(),
            Self::Model(endpoint) => format!("{} {}", endpoint.api.name(), endpoint.model),
        }
    }

    /// Environment flags the policy needs: the desktop serves `run_command` for its oracle
    /// (whose demos wait for windows with it) and speaks Qwen3-VL's action space to Qwen3-VL.
    pub fn env_flags(&self, env: &str) -> Vec<String> {
        match (self, env) {
            (Self::Oracle, "desktop") => vec!["--allow-shell".into()],
            (Self::Model(endpoint), "desktop") if endpoint.api == Api::Qwen3vl => {
                vec!["--action-space".into(), "qwen3vl".into()]
            }
            _ => Vec::new(),
        }
    }

    /// A policy for one episode of `job`, asked `prompt`.
    pub fn start(
        &self,
        env: &Arc<dyn Environment>,
        job: &Job,
        prompt: &str,
    ) -> Result<Box<dyn Policy>, Stop> {
        Ok(match self {
            Self::Oracle => {
                let oracle = env
                    .oracle(&job.task)
                    .ok_or_else(|| Stop::NoOracle(job.task.clone()))?;
                Box::new(Oracular(oracle))
            }
            Self::Noop => Box::new(Noop),
            Self::Random => Box::new(Random::new(env.tools(), job)),
            Self::Model(endpoint) => Box::new(ModelPolicy::new(
                endpoint.clone(),
                env.tools(),
                prompt.to_owned(),
            )),
        })
    }
}

/// Makes no call: the untouched episode, closed as it started.
struct Noop;

impl Policy for Noop {
    fn next<'a>(&'a mut self, _: &'a [Answer]) -> BoxFuture<'a, Result<Vec<Call>, Stop>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }
}

/// An environment's oracle as a policy.
struct Oracular(Box<dyn Oracle>);

impl Policy for Oracular {
    fn next<'a>(&'a mut self, answered: &'a [Answer]) -> BoxFuture<'a, Result<Vec<Call>, Stop>> {
        let last = answered.last().map(Answer::as_answered);
        let calls = match self.0.next(last) {
            OracleMove::Call { tool, arguments } => vec![Call {
                id: String::new(),
                tool,
                arguments: Ok(arguments),
            }],
            OracleMove::Done => Vec::new(),
        };
        Box::pin(std::future::ready(Ok(calls)))
    }
}

/// Calls a random tool with arguments drawn from its input schema, until the episode ends.
struct Random {
    tools: Vec<Tool>,
    state: u64,
}

/// Words a random string argument is drawn from.
const WORDS: &[&str] = &[
    "crane", "42", "hello", "ls", "print(1)", "Return", "done", "0.5",
];

impl Random {
    fn new(tools: &[Tool], job: &Job) -> Self {
        let seed = job.seed ^ (u64::from(job.sample) << 40) ^ 0x9e37_79b9_7f4a_7c15;
        Self {
            tools: tools.to_vec(),
            state: seed | 1,
        }
    }

    /// xorshift64*: enough for a baseline, the same for the same task, seed and sample.
    fn below(&mut self, n: usize) -> usize {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        (self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }

    fn value(&mut self, schema: &Value) -> Value {
        if let Some(choices) = schema["enum"].as_array().filter(|c| !c.is_empty()) {
            return choices[self.below(choices.len())].clone();
        }
        let kind = match &schema["type"] {
            Value::Array(kinds) => kinds.first().and_then(Value::as_str).unwrap_or("string"),
            kind => kind.as_str().unwrap_or("string"),
        };
        match kind {
            "integer" => json!(self.below(100)),
            "number" => json!(self.below(1000) as f64 / 10.0),
            "boolean" => json!(self.below(2) == 1),
            "array" => {
                let item = self.value(&schema["items"]);
                json!([item])
            }
            "object" => Value::Object(self.object(schema)),
            _ => json!(WORDS[self.below(WORDS.len())]),
        }
    }

    fn object(&mut self, schema: &Value) -> JsonObject {
        let mut arguments = JsonObject::new();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(properties) = schema["properties"].as_object() {
            for (name, property) in properties {
                if required.contains(&name.as_str()) || self.below(2) == 0 {
                    arguments.insert(name.clone(), self.value(property));
                }
            }
        }
        arguments
    }
}

impl Policy for Random {
    fn next<'a>(&'a mut self, _: &'a [Answer]) -> BoxFuture<'a, Result<Vec<Call>, Stop>> {
        let calls = if self.tools.is_empty() {
            Vec::new()
        } else {
            let pick = self.below(self.tools.len());
            let tool = self.tools[pick].clone();
            let schema = Value::Object((*tool.input_schema).clone());
            vec![Call {
                id: String::new(),
                tool: tool.name.to_string(),
                arguments: Ok(self.object(&schema)),
            }]
        };
        Box::pin(std::future::ready(Ok(calls)))
    }
}
