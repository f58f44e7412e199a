//! What one execution produced, and how iopub messages become it.

use std::time::Duration;

use jupyter_protocol::{ExecutionState, JupyterMessageContent, Media, ReplyStatus, Stdio};
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::budget::OutputBudget;

/// What [`Kernel::execute_streaming`](super::Kernel::execute_streaming) reports while a cell
/// runs, as soon as the kernel says it.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The kernel accepted the cell and gave it this execution count.
    Started {
        /// The kernel's execution counter for this cell.
        execution_count: u32,
    },
    /// One output. Stream text comes chunk by chunk, as the kernel sent it (not merged).
    Output(Output),
    /// The kernel had died since the last call and was restarted before this code ran (see
    /// [`Execution::died_before`]). Sent before anything else.
    KernelRestarted,
}

/// Which standard stream a text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamName {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// One output of an execution, in the order the kernel produced them.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Text on stdout or stderr. Consecutive chunks of the same stream are merged.
    Stream {
        /// Which stream.
        name: StreamName,
        /// The text.
        text: String,
    },
    /// The value of the cell's last expression (`execute_result`).
    Result {
        /// The execution count it belongs to.
        execution_count: u32,
        /// MIME type → data, as on the wire (`text/plain`, `image/png` in base64, ...).
        data: Map<String, Value>,
        /// MIME type → metadata (e.g. image sizes).
        metadata: Map<String, Value>,
    },
    /// Rich output displayed during the cell, e.g. a matplotlib figure (`display_data`).
    Display {
        /// MIME type → data, as on the wire.
        data: Map<String, Value>,
        /// MIME type → metadata.
        metadata: Map<String, Value>,
    },
    /// An exception the code raised.
    Error {
        /// Exception class, e.g. `ZeroDivisionError`.
        ename: String,
        /// Exception message.
        evalue: String,
        /// Traceback lines as IPython formats them (with ANSI colours).
        traceback: Vec<String>,
    },
}

impl Output {
    /// The data of a result or display output for `mime`, if present.
    pub fn data(&self, mime: &str) -> Option<&Value> {
        match self {
            Output::Result { data, .. } | Output::Display { data, .. } => data.get(mime),
            _ => None,
        }
    }
}

/// How an execution ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionStatus {
    /// The code ran to completion.
    Ok,
    /// The code raised an exception (see the [`Output::Error`]).
    Error,
    /// The kernel refused to run it (a previous request failed or was interrupted).
    Aborted,
    /// The timeout passed. [`Execution::restarted`] tells whether the interrupt worked or the
    /// kernel had to be killed and started again.
    TimedOut,
    /// The kernel died while running it (e.g. killed for exceeding a limit) and was started
    /// again.
    KernelDied,
}

/// Everything one call to [`Kernel::execute`](super::Kernel::execute) returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    /// Outputs in the order they were produced.
    pub outputs: Vec<Output>,
    /// How it ended.
    pub status: ExecutionStatus,
    /// The kernel's execution counter for this request, when it said.
    pub execution_count: Option<u32>,
    /// An `interrupt_request` was sent because the timeout passed.
    pub interrupted: bool,
    /// The kernel was killed and a fresh one started: all variables are gone (files in the
    /// home directory stay).
    pub restarted: bool,
    /// The kernel had died before this call (killed from outside, or by an earlier cell) and
    /// was restarted before the code ran: the code ran in a fresh kernel, without the
    /// variables and imports of earlier cells.
    pub died_before: bool,
    /// Output beyond the configured budget was cut (a [`cut_marker`](super::cut_marker) line
    /// in the outputs says how much).
    pub truncated: bool,
    /// How many characters of output were cut.
    pub cut_characters: u64,
    /// Wall time from sending the request to the end.
    pub elapsed: Duration,
}

impl Execution {
    /// All text of one stream, concatenated.
    pub fn stream(&self, which: StreamName) -> String {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Stream { name, text } if *name == which => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The first error output, if any.
    pub fn error(&self) -> Option<&Output> {
        self.outputs
            .iter()
            .find(|o| matches!(o, Output::Error { .. }))
    }
}

/// Accumulates the iopub messages and the reply of one request, within its output budget.
#[derive(Debug)]
pub(super) struct Collector {
    pub(super) outputs: Vec<Output>,
    pub(super) execution_count: Option<u32>,
    pub(super) reply: Option<ReplyStatus>,
    pub(super) idle: bool,
    budget: OutputBudget,
    clear_before_next: bool,
    /// Where each output also goes as it arrives (a streaming execution).
    sink: Option<UnboundedSender<Event>>,
}

impl Collector {
    /// A collector keeping about `max_output_bytes` of output (see [`OutputBudget`]).
    pub(super) fn new(max_output_bytes: usize) -> Self {
        Collector {
            outputs: Vec::new(),
            execution_count: None,
            reply: None,
            idle: false,
            budget: OutputBudget::new(max_output_bytes),
            clear_before_next: false,
            sink: None,
        }
    }

    /// Also report every output to `sink` as it arrives.
    pub(super) fn streaming_to(mut self, sink: Option<UnboundedSender<Event>>) -> Self {
        self.sink = sink;
        self
    }

    /// Reports to the sink, if any. A sink whose receiver is gone is ignored: the caller
    /// went away and the execution is settled by the kernel, not here.
    fn report(&self, event: impl FnOnce() -> Event) {
        if let Some(sink) = &self.sink {
            let _ = sink.send(event());
        }
    }

    /// Both the `execute_reply` and the final `status: idle` have arrived (IPython sends
    /// them in either order).
    pub(super) fn finished(&self) -> bool {
        self.reply.is_some() && self.idle
    }

    /// Whether some output was cut or dropped.
    pub(super) fn truncated(&self) -> bool {
        self.budget.cut_anything()
    }

    /// Characters of output not kept (an estimate for dropped rich outputs).
    pub(super) fn cut_characters(&self) -> u64 {
        self.budget.cut_chars
    }

    /// Ends the collection: if output was cut, appends (and reports) the marker that says how
    /// much, then the kept tail of the streams.
    pub(super) fn finish(&mut self) {
        for (name, text) in self.budget.finish() {
            self.report(|| {
                Event::Output(Output::Stream {
                    name,
                    text: text.clone(),
                })
            });
            self.append_stream(name, text);
        }
    }

    /// Takes one iopub message that belongs to our request.
    pub(super) fn iopub(&mut self, content: JupyterMessageContent) {
        match content {
            JupyterMessageContent::Status(status)
                if status.execution_state == ExecutionState::Idle =>
            {
                self.idle = true;
            }
            JupyterMessageContent::ExecuteInput(input) => {
                let execution_count = input.execution_count.value() as u32;
                self.execution_count = Some(execution_count);
                self.report(|| Event::Started { execution_count });
            }
            JupyterMessageContent::StreamContent(stream) => {
                let name = match stream.name {
                    Stdio::Stdout => StreamName::Stdout,
                    Stdio::Stderr => StreamName::Stderr,
                };
                self.stream(name, stream.text);
            }
            JupyterMessageContent::ExecuteResult(result) => {
                let execution_count = result.execution_count.value() as u32;
                if let Some(data) = self.budget.rich(mime_bundle(&result.data)) {
                    self.push(Output::Result {
                        execution_count,
                        data,
                        metadata: result.metadata,
                    });
                }
            }
            JupyterMessageContent::DisplayData(display) => {
                if let Some(data) = self.budget.rich(mime_bundle(&display.data)) {
                    self.push(Output::Display {
                        data,
                        metadata: display.metadata,
                    });
                }
            }
            JupyterMessageContent::ErrorOutput(error) => {
                let (evalue, traceback) = self.budget.error(error.evalue, error.traceback);
                self.push(Output::Error {
                    ename: error.ename,
                    evalue,
                    traceback,
                });
            }
            JupyterMessageContent::ClearOutput(clear) => {
                if clear.wait {
                    self.clear_before_next = true;
                } else {
                    self.clear();
                }
            }
            _ => {}
        }
    }

    fn stream(&mut self, name: StreamName, text: String) {
        if self.clear_before_next {
            self.clear();
        }
        let kept = self.budget.stream(name, &text).now;
        if kept.is_empty() {
            return;
        }
        let kept = if kept.len() == text.len() {
            text
        } else {
            kept.to_owned()
        };
        self.report(|| {
            Event::Output(Output::Stream {
                name,
                text: kept.clone(),
            })
        });
        self.append_stream(name, kept);
    }

    /// Appends stream text, merged into the last output when it is the same stream.
    fn append_stream(&mut self, name: StreamName, text: String) {
        if let Some(Output::Stream {
            name: last,
            text: previous,
        }) = self.outputs.last_mut()
            && *last == name
        {
            previous.push_str(&text);
            return;
        }
        self.outputs.push(Output::Stream { name, text });
    }

    fn push(&mut self, output: Output) {
        self.report(|| Event::Output(output.clone()));
        if self.clear_before_next {
            self.clear();
        }
        self.outputs.push(output);
    }

    fn clear(&mut self) {
        self.clear_before_next = false;
        self.outputs.clear();
        self.budget.reset();
    }
}

/// The wire form of a MIME bundle (`image/png` stays base64 text).
fn mime_bundle(media: &Media) -> Map<String, Value> {
    match serde_json::to_value(media) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jupyter_protocol::StreamContent;

    fn text(name: Stdio, text: &str) -> JupyterMessageContent {
        JupyterMessageContent::StreamContent(StreamContent {
            name,
            text: text.to_owned(),
        })
    }

    #[test]
    fn merges_adjacent_chunks_of_one_stream_only() {
        let mut c = Collector::new(1000);
        c.iopub(text(Stdio::Stdout, "a"));
        c.iopub(text(Stdio::Stdout, "b"));
        c.iopub(text(Stdio::Stderr, "c"));
        c.iopub(text(Stdio::Stdout, "d"));
        assert_eq!(c.outputs.len(), 3);
        assert_eq!(
            c.outputs[0],
            Output::Stream {
                name: StreamName::Stdout,
                text: "ab".into()
            }
        );
    }

    #[test]
    fn a_flood_keeps_head_and_tail_and_says_what_was_cut() {
        // 800 bytes: 300 of head and 100 of tail for the streams.
        let mut c = Collector::new(800);
        c.iopub(text(Stdio::Stdout, &"é".repeat(200)));
        for _ in 0..1000 {
            c.iopub(text(Stdio::Stdout, "0123456789"));
        }
        c.iopub(text(Stdio::Stdout, "END"));
        c.finish();
        assert!(c.truncated());
        let Output::Stream { text, .. } = &c.outputs[0] else {
            panic!("{:?}", c.outputs)
        };
        assert!(text.starts_with(&"é".repeat(150)), "{text}");
        assert!(text.ends_with("789END"), "{text}");
        // 50 é, then 10_003 characters of which 100 stay.
        assert!(text.contains("[... 9953 characters cut ...]"), "{text}");
        assert_eq!(c.cut_characters(), 9953);
        assert!(text.len() < 500);
    }
}
