//! A tool table: each tool is declared once — name, description, title, effect, argument
//! type, output type — and the table gives the `tools/list` entries, parses arguments with a
//! message the model can act on, and dispatches to a method of the episode state.
//!
//! ```
//! use mcpgym_env::tools::{Effect, NoArguments, ToolTable, tool};
//! use mcpgym_env::StepOutcome;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct Add {
//!     /// How much to add.
//!     amount: i64,
//! }
//!
//! struct Counter(i64);
//!
//! let table = ToolTable::new()
//!     .sync(
//!         tool("add", "Add to the counter.").effect(Effect::Changes).example(r#"{"amount": 2}"#),
//!         |counter: &mut Counter, args: Add| {
//!             counter.0 += args.amount;
//!             StepOutcome::ok(counter.0.to_string())
//!         },
//!     )
//!     .sync(
//!         tool("show", "Show the counter.").effect(Effect::ReadOnly),
//!         |counter: &mut Counter, _: NoArguments| StepOutcome::ok(counter.0.to_string()),
//!     );
//! assert_eq!(table.list().len(), 2);
//! ```

use std::borrow::Cow;
use std::future::ready;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::env::{BoxFuture, StepOutcome, parse_arguments};
use crate::schema::{input_schema, no_arguments, output_schema};

/// What calling a tool does to the episode, as MCP's tool annotations tell clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Only reads (`readOnlyHint`, `idempotentHint`).
    ReadOnly,
    /// Changes the episode without destroying anything (a guess, an answer).
    Changes,
    /// May overwrite or destroy state (`destructiveHint`: runs code, presses keys).
    Destroys,
}

/// The arguments of a tool that takes none: `{}` (unknown fields are refused).
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArguments {}

impl JsonSchema for NoArguments {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoArguments".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let schema: serde_json::Value = serde_json::Value::Object((*no_arguments()).clone());
        schemars::Schema::try_from(schema).unwrap_or_default()
    }
}

/// One tool's declaration, made with [`tool`].
#[derive(Debug, Clone)]
pub struct ToolSpec {
    name: &'static str,
    description: Cow<'static, str>,
    title: Option<&'static str>,
    effect: Effect,
    example: &'static str,
    input: Option<Arc<JsonObject>>,
    output: Option<Arc<JsonObject>>,
}

/// Declares a tool: its name and the description the model reads. Read-only unless
/// [`ToolSpec::effect`] says otherwise; titled with its name unless [`ToolSpec::title`] says
/// otherwise.
pub fn tool(name: &'static str, description: impl Into<Cow<'static, str>>) -> ToolSpec {
    ToolSpec {
        name,
        description: description.into(),
        title: None,
        effect: Effect::ReadOnly,
        example: "{}",
        input: None,
        output: None,
    }
}

impl ToolSpec {
    /// The short human-readable title clients show.
    pub fn title(mut self, title: &'static str) -> Self {
        self.title = Some(title);
        self
    }

    /// What the tool does to the episode.
    pub fn effect(mut self, effect: Effect) -> Self {
        self.effect = effect;
        self
    }

    /// A valid argument object, shown to the model when its arguments do not parse.
    pub fn example(mut self, example: &'static str) -> Self {
        self.example = example;
        self
    }

    /// The type of the tool's `structuredContent` (its output schema is generated from it).
    pub fn output<T: JsonSchema>(mut self) -> Self {
        self.output = Some(output_schema::<T>());
        self
    }

    /// An input schema written by hand, for tools whose arguments follow another vendor's
    /// published format; otherwise the schema is generated from the handler's argument type.
    pub fn input_schema(mut self, schema: Arc<JsonObject>) -> Self {
        self.input = Some(schema);
        self
    }

    fn into_tool<A: JsonSchema>(self) -> Tool {
        let annotations = ToolAnnotations::with_title(self.title.unwrap_or(self.name))
            .read_only(self.effect == Effect::ReadOnly)
            .destructive(self.effect == Effect::Destroys)
            .idempotent(self.effect == Effect::ReadOnly)
            .open_world(false);
        let input = self.input.unwrap_or_else(input_schema::<A>);
        let tool = Tool::new_with_raw(self.name, Some(self.description), input)
            .with_annotations(annotations);
        match self.output {
            Some(output) => tool.with_raw_output_schema(output),
            None => tool,
        }
    }
}

type Handler<S> =
    Box<dyn for<'a> Fn(&'a mut S, JsonObject) -> BoxFuture<'a, StepOutcome> + Send + Sync>;

/// The tools of an environment whose episodes are `S`.
pub struct ToolTable<S> {
    tools: Vec<Tool>,
    handlers: Vec<Handler<S>>,
}

impl<S: Send + 'static> Default for ToolTable<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> std::fmt::Debug for ToolTable<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
        f.debug_struct("ToolTable").field("tools", &names).finish()
    }
}

impl<S: Send + 'static> ToolTable<S> {
    /// An empty table.
    pub fn new() -> Self {
        Self {
            tools: Vec::new(),
            handlers: Vec::new(),
        }
    }

    /// Adds a tool whose handler answers at once.
    pub fn sync<A, F>(self, spec: ToolSpec, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        F: Fn(&mut S, A) -> StepOutcome + Send + Sync + 'static,
    {
        let (name, example) = (spec.name, spec.example);
        self.push(
            spec.into_tool::<A>(),
            Box::new(move |state, arguments| {
                let outcome = match parse_arguments::<A>(name, arguments, example) {
                    Ok(args) => handler(state, args),
                    Err(refused) => refused,
                };
                Box::pin(ready(outcome))
            }),
        )
    }

    /// Adds a tool whose handler awaits (a kernel, a display).
    pub fn asynchronous<A, F>(self, spec: ToolSpec, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema,
        F: for<'a> Fn(&'a mut S, A) -> BoxFuture<'a, StepOutcome> + Send + Sync + 'static,
    {
        let (name, example) = (spec.name, spec.example);
        self.push(
            spec.into_tool::<A>(),
            Box::new(move |state, arguments| {
                match parse_arguments::<A>(name, arguments, example) {
                    Ok(args) => handler(state, args),
                    Err(refused) => Box::pin(ready(refused)),
                }
            }),
        )
    }

    fn push(mut self, tool: Tool, handler: Handler<S>) -> Self {
        debug_assert!(
            self.tools.iter().all(|t| t.name != tool.name),
            "tool {} declared twice",
            tool.name
        );
        self.tools.push(tool);
        self.handlers.push(handler);
        self
    }

    /// The tools, as `tools/list` shows them.
    pub fn list(&self) -> &[Tool] {
        &self.tools
    }

    /// Runs the tool named `tool` on `state`. The server answers unknown tool names before an
    /// episode sees them; a name that is not in the table is refused here all the same.
    pub fn call<'a>(
        &self,
        state: &'a mut S,
        tool: &str,
        arguments: JsonObject,
    ) -> BoxFuture<'a, StepOutcome> {
        match self.tools.iter().position(|t| t.name == tool) {
            Some(index) => (self.handlers[index])(state, arguments),
            None => Box::pin(ready(StepOutcome::error(format!(
                "unknown tool {tool:?}; the tools are: {}",
                self.names()
            )))),
        }
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Say {
        /// What to say.
        text: String,
    }

    #[derive(Default)]
    struct Parrot {
        said: Vec<String>,
    }

    impl Parrot {
        fn say(&mut self, args: Say) -> StepOutcome {
            self.said.push(args.text.clone());
            StepOutcome::ok(args.text)
        }
    }

    fn table() -> ToolTable<Parrot> {
        ToolTable::new()
            .sync(
                tool("say", "Say something.")
                    .title("Say")
                    .effect(Effect::Changes)
                    .example(r#"{"text": "hello"}"#),
                Parrot::say,
            )
            .asynchronous(
                tool("count", "Count what was said.").output::<usize>(),
                |parrot: &mut Parrot, _: NoArguments| {
                    Box::pin(async move { StepOutcome::ok(parrot.said.len().to_string()) })
                },
            )
    }

    fn arguments(value: serde_json::Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    fn block_on<T>(future: BoxFuture<'_, T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn the_list_follows_the_declarations() {
        let table = table();
        let [say, count] = table.list() else {
            panic!("two tools")
        };
        assert_eq!(say.name, "say");
        assert_eq!(say.input_schema["properties"]["text"]["type"], "string");
        let hints = say.annotations.as_ref().unwrap();
        assert_eq!(hints.title.as_deref(), Some("Say"));
        assert_eq!(hints.read_only_hint, Some(false));
        assert_eq!(hints.destructive_hint, Some(false));
        assert_eq!(hints.idempotent_hint, Some(false));
        let hints = count.annotations.as_ref().unwrap();
        assert_eq!(hints.title.as_deref(), Some("count"));
        assert_eq!(hints.read_only_hint, Some(true));
        assert_eq!(count.input_schema["additionalProperties"], false);
        assert!(count.output_schema.is_some());
    }

    #[test]
    fn calls_dispatch_and_bad_arguments_explain_themselves() {
        let table = table();
        let mut parrot = Parrot::default();
        let said = block_on(table.call(
            &mut parrot,
            "say",
            arguments(serde_json::json!({"text": "hi"})),
        ));
        assert!(!said.is_error);
        assert_eq!(said.text(), "hi");
        let bad = block_on(table.call(
            &mut parrot,
            "say",
            arguments(serde_json::json!({"txt": "hi"})),
        ));
        assert!(bad.is_error);
        assert!(
            bad.text().contains("Invalid arguments for say"),
            "{}",
            bad.text()
        );
        assert!(
            bad.text().contains(r#"{"text": "hello"}"#),
            "{}",
            bad.text()
        );
        let extra =
            block_on(table.call(&mut parrot, "count", arguments(serde_json::json!({"x": 1}))));
        assert!(extra.is_error);
        let count = block_on(table.call(&mut parrot, "count", JsonObject::new()));
        assert_eq!(count.text(), "1");
        let unknown = block_on(table.call(&mut parrot, "shout", JsonObject::new()));
        assert!(unknown.is_error);
        assert!(unknown.text().contains("say, count"), "{}", unknown.text());
    }
}
