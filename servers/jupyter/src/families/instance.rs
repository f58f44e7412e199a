//! [`Instance`]: what a family's generator returns, and how it becomes a [`Task`].

use mcpgym_env::Split;

use crate::tasks::{Grader, Task, TaskKind};

/// One generated task before it has an id: its files, question and grader.
#[derive(Debug, Clone)]
pub struct Instance {
    /// What the agent is told.
    pub prompt: String,
    /// Files written into the home folder before the agent starts, by relative path.
    pub files: Vec<(String, Vec<u8>)>,
    /// Python run after the files are written, in the home folder with the setup prelude
    /// (e.g. turning a CSV into Parquet or Excel). Empty for none.
    pub setup: String,
    /// How the answer is judged.
    pub grader: Grader,
    /// The answer's text as it would be written, when only computation can derive it: the
    /// family tests check it appears in neither the prompt nor the files. `None` when the
    /// answer is legitimately one of the words the agent is shown (a column name, a city).
    pub secret: Option<String>,
}

impl Instance {
    /// An instance asking `prompt`, with no files yet and the given grader.
    pub fn new(prompt: impl Into<String>, grader: Grader) -> Self {
        Self {
            prompt: prompt.into(),
            files: Vec::new(),
            setup: String::new(),
            grader,
            secret: None,
        }
    }

    /// Adds a file.
    pub fn file(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), bytes.into()));
        self
    }

    /// Adds Python to run after the files are written.
    pub fn setup(mut self, code: impl Into<String>) -> Self {
        self.setup.push_str(&code.into());
        self.setup.push('\n');
        self
    }

    /// Marks the answer's text as something only computation may reveal.
    pub fn secret(mut self, text: impl Into<String>) -> Self {
        self.secret = Some(text.into());
        self
    }

    /// The task this instance is, under `id`.
    pub fn into_task(self, id: String, split: Split, kind: TaskKind) -> Task {
        Task::new(id, split, kind, self.prompt, self.setup, self.grader).with_files(self.files)
    }
}

/// A CSV file's bytes: a header and rows, fields quoted only when they need it, `\n` line ends.
pub fn csv_bytes<R: AsRef<[String]>>(header: &[&str], rows: &[R]) -> Vec<u8> {
    let mut out = String::new();
    let field = |out: &mut String, text: &str| {
        if text.contains([',', '"', '\n']) {
            out.push('"');
            out.push_str(&text.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(text);
        }
    };
    for (i, name) in header.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        field(&mut out, name);
    }
    out.push('\n');
    for row in rows {
        for (i, value) in row.as_ref().iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            field(&mut out, value);
        }
        out.push('\n');
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let rows = vec![vec![
            "a,b".to_owned(),
            "say \"hi\"".to_owned(),
            "x".to_owned(),
        ]];
        let text = String::from_utf8(csv_bytes(&["p", "q", "r"], &rows)).unwrap();
        assert_eq!(text, "p,q,r\n\"a,b\",\"say \"\"hi\"\"\",x\n");
    }

    #[test]
    fn setup_writes_any_bytes_then_runs_the_code() {
        let task = Instance::new("p", Grader::Exact("x".into()))
            .file("d/a.bin", vec![0u8, 255, b'"'])
            .setup("print('done')")
            .into_task("t".into(), Split::Train, TaskKind::Files);
        let source = task.setup_source();
        assert!(source.contains("(\"d/a.bin\", \"AP8i\")"), "{source}");
        assert!(source.ends_with("print('done')\n"));
        assert!(!task.setup_code_program("/h").contains("AP8i"));
    }
}
