//! The languages a kernel can speak, as E2B's code interpreter names them, and the few lines
//! of each that the service runs itself (working directory, environment variables).
//!
//! Python is IPython (ipykernel); Bash is one persistent bash behind an IPython kernel whose
//! cells it runs (see `bash_mode.py`); JavaScript
//! and TypeScript are one Deno kernel (Deno runs both); R is IRkernel. Java is named so that
//! a request for it gets a clear refusal: no Java kernel comes from the package registries
//! the service installs from.

use std::fmt;

use serde_json::Value;

/// A language of E2B's `run_code(language=...)` and contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// IPython.
    Python,
    /// Deno's JavaScript.
    JavaScript,
    /// Deno's TypeScript (the same kernel as JavaScript).
    TypeScript,
    /// IRkernel.
    R,
    /// Not served: see [`Language::unsupported`].
    Java,
    /// A persistent bash behind IPython's kernel protocol.
    Bash,
}

/// Which program a kernel of a language is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// `python -m ipykernel_launcher`.
    IPython,
    /// `python -m ipykernel_launcher` running its cells in one bash.
    Bash,
    /// `deno jupyter --kernel`.
    Deno,
    /// `R -e 'IRkernel::main()'`.
    IRkernel,
}

impl Language {
    /// Every language, in the order E2B's documentation lists them.
    pub const ALL: [Language; 6] = [
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::R,
        Language::Java,
        Language::Bash,
    ];

    /// The language a request names, as E2B's server reads it: case and surrounding blanks
    /// do not matter, `js` is JavaScript, `ts` TypeScript, `python3` Python.
    pub fn parse(name: &str) -> Option<Language> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "python" | "python3" => Language::Python,
            "javascript" | "js" => Language::JavaScript,
            "typescript" | "ts" => Language::TypeScript,
            "r" => Language::R,
            "java" => Language::Java,
            "bash" | "sh" => Language::Bash,
            _ => return None,
        })
    }

    /// The name contexts report.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::R => "r",
            Language::Java => "java",
            Language::Bash => "bash",
        }
    }

    /// The kernel that runs it, or `None` when the service has none.
    pub fn kernel(self) -> Option<KernelKind> {
        match self {
            Language::Python => Some(KernelKind::IPython),
            Language::JavaScript | Language::TypeScript => Some(KernelKind::Deno),
            Language::R => Some(KernelKind::IRkernel),
            Language::Bash => Some(KernelKind::Bash),
            Language::Java => None,
        }
    }

    /// Why the service cannot run this language, for the caller.
    pub fn unsupported(self) -> Option<&'static str> {
        match self {
            Language::Java => Some(
                "Java is not supported by this sandbox service: the Java kernel E2B uses (IJava) is published only as a GitHub release, not on Debian, PyPI or npm, which are where the service installs its kernels from; use python, javascript, typescript, r or bash",
            ),
            _ => None,
        }
    }

    /// Code that creates `dir` if needed and makes it the working directory.
    pub fn chdir_code(self, dir: &str) -> String {
        let quoted = json_string(dir);
        match self {
            Language::Python => format!(
                "import os as __os\n__os.makedirs({quoted}, exist_ok=True)\n__os.chdir({quoted})\ndel __os\n"
            ),
            Language::JavaScript | Language::TypeScript => {
                format!("Deno.mkdirSync({quoted}, {{ recursive: true }}); Deno.chdir({quoted});")
            }
            Language::R => format!(
                "invisible(dir.create({quoted}, recursive = TRUE, showWarnings = FALSE)); invisible(setwd({quoted}))"
            ),
            Language::Bash => {
                let quoted = shell_quote(dir);
                format!("mkdir -p -- {quoted} && cd -- {quoted}")
            }
            Language::Java => String::new(),
        }
    }

    /// Code that sets each `(name, value)` in the kernel's environment. Names are checked by
    /// [`valid_env_name`] first.
    pub fn set_env_code(self, vars: &[(String, String)]) -> String {
        let mut code = String::new();
        for (name, value) in vars {
            let line = match self {
                Language::Python => format!(
                    "__import__('os').environ[{}] = {}\n",
                    json_string(name),
                    json_string(value)
                ),
                Language::JavaScript | Language::TypeScript => format!(
                    "Deno.env.set({}, {});\n",
                    json_string(name),
                    json_string(value)
                ),
                Language::R => format!(
                    "invisible(Sys.setenv({} = {}))\n",
                    json_string(name),
                    json_string(value)
                ),
                Language::Bash => format!("export {name}={}\n", shell_quote(value)),
                Language::Java => String::new(),
            };
            code.push_str(&line);
        }
        code
    }

    /// Code that removes each of `names` from the kernel's environment.
    pub fn unset_env_code(self, names: &[&str]) -> String {
        let mut code = String::new();
        for name in names {
            let line = match self {
                Language::Python => {
                    format!(
                        "__import__('os').environ.pop({}, None)\n",
                        json_string(name)
                    )
                }
                Language::JavaScript | Language::TypeScript => {
                    format!("Deno.env.delete({});\n", json_string(name))
                }
                Language::R => format!("invisible(Sys.unsetenv({}))\n", json_string(name)),
                Language::Bash => format!("unset {name}\n"),
                Language::Java => String::new(),
            };
            code.push_str(&line);
        }
        code
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `name` can be an environment variable in every language: a shell identifier
/// (letters, digits and `_`, not starting with a digit).
pub fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A JSON string literal: also a valid string literal in Python, JavaScript and R.
fn json_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// `text` in single quotes for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_as_e2b_reads_them() {
        assert_eq!(Language::parse(" JS "), Some(Language::JavaScript));
        assert_eq!(Language::parse("ts"), Some(Language::TypeScript));
        assert_eq!(Language::parse("Python3"), Some(Language::Python));
        assert_eq!(Language::parse("R"), Some(Language::R));
        assert_eq!(Language::parse("cobol"), None);
        for language in Language::ALL {
            assert_eq!(Language::parse(language.as_str()), Some(language));
        }
    }

    #[test]
    fn only_java_is_refused() {
        for language in Language::ALL {
            assert_eq!(
                language.unsupported().is_some(),
                language.kernel().is_none(),
                "{language}"
            );
        }
        assert!(Language::Java.unsupported().is_some());
    }

    #[test]
    fn values_are_quoted_for_each_language() {
        let vars = [("FOO".to_owned(), "it's \"x\"\n$HOME".to_owned())];
        assert_eq!(
            Language::Bash.set_env_code(&vars),
            "export FOO='it'\\''s \"x\"\n$HOME'\n"
        );
        assert_eq!(
            Language::JavaScript.set_env_code(&vars),
            "Deno.env.set(\"FOO\", \"it's \\\"x\\\"\\n$HOME\");\n"
        );
        assert_eq!(
            Language::R.unset_env_code(&["FOO"]),
            "invisible(Sys.unsetenv(\"FOO\"))\n"
        );
        assert_eq!(
            Language::Bash.chdir_code("/root/a b"),
            "mkdir -p -- '/root/a b' && cd -- '/root/a b'"
        );
    }

    #[test]
    fn environment_names_must_be_identifiers() {
        assert!(valid_env_name("FOO_1"));
        assert!(valid_env_name("_x"));
        assert!(!valid_env_name("1A"));
        assert!(!valid_env_name("A-B"));
        assert!(!valid_env_name("A;rm -rf /"));
        assert!(!valid_env_name(""));
    }
}
