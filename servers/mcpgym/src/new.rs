//! `mcpgym new NAME`: a new environment's files, in Python or in Rust, from templates that
//! the tests build and play.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The language of a new environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// A class deriving mcpgym.env.Environment, served by `mcpgym python`.
    Python,
    /// A crate implementing mcpgym-env's traits, registered in the binary.
    Rust,
}

/// Flags of `mcpgym new`.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The environment's name: lowercase letters, digits and '-', starting with a letter.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The language it is written in.
    #[arg(long, value_enum, default_value_t = Language::Python)]
    pub lang: Language,
    /// Where its folder goes (default: ./NAME).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The mcpgym checkout a Rust environment's `mcpgym-env` dependency points at (default:
    /// the checkout around the working folder, else the project's git repository).
    #[arg(long, value_name = "DIR")]
    pub checkout: Option<PathBuf>,
}

/// The names a template fills in.
struct Names {
    /// `word-sum`
    name: String,
    /// `word_sum`
    module: String,
    /// `WordSum`
    class: String,
}

impl Names {
    fn of(name: &str) -> anyhow::Result<Self> {
        let valid = name.len() <= 32
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !name.ends_with('-');
        anyhow::ensure!(
            valid,
            "{name:?} cannot name an environment: use 1 to 32 lowercase letters, digits and '-', \
             starting with a letter (e.g. word-sum)"
        );
        let class = name
            .split('-')
            .filter(|part| !part.is_empty())
            .map(|part| {
                let mut chars = part.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect();
        Ok(Self {
            name: name.to_owned(),
            module: name.replace('-', "_"),
            class,
        })
    }

    fn fill(&self, template: &str, extra: &[(&str, &str)]) -> String {
        let mut text = template
            .replace("{{name}}", &self.name)
            .replace("{{module}}", &self.module)
            .replace("{{Class}}", &self.class)
            .replace("{{crate}}", &format!("mcpgym_{}", self.module));
        for (key, value) in extra {
            text = text.replace(&format!("{{{{{key}}}}}"), value);
        }
        text
    }
}

/// Writes the new environment's files and says what to run next.
pub fn run(args: NewArgs) -> anyhow::Result<()> {
    let names = Names::of(&args.name)?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&names.name));
    anyhow::ensure!(
        !dir.exists()
            || dir
                .read_dir()
                .is_ok_and(|mut entries| entries.next().is_none()),
        "{} already exists and is not empty: choose another --dir",
        dir.display()
    );
    let files = match args.lang {
        Language::Python => vec![
            (
                format!("{}.py", names.module),
                names.fill(include_str!("new/env.py.in"), &[]),
            ),
            (
                format!("test_{}.py", names.module),
                names.fill(include_str!("new/test_env.py.in"), &[]),
            ),
        ],
        Language::Rust => {
            let source = mcpgym_env_source(args.checkout.as_deref())?;
            let extra = [
                ("mcpgym_env", source.as_str()),
                ("rmcp", "3.11"),
                ("schemars", "1.2"),
            ];
            vec![
                (
                    "Cargo.toml".to_owned(),
                    names.fill(include_str!("new/Cargo.toml.in"), &extra),
                ),
                (
                    "src/lib.rs".to_owned(),
                    names.fill(include_str!("new/lib.rs.in"), &[]),
                ),
                (
                    format!("tests/{}.rs", names.module),
                    names.fill(include_str!("new/test.rs.in"), &[]),
                ),
            ]
        }
    };
    for (path, text) in &files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    let shown = dir.display();
    match args.lang {
        Language::Python => println!(
            "\nnext:\n  cd {shown}\n  python -m pytest test_{module}.py      # plays it through the server\n  mcpgym python {module}.py:{class} --http 127.0.0.1:8000",
            module = names.module,
            class = names.class
        ),
        Language::Rust => println!(
            "\nnext:\n  cargo test --manifest-path {shown}/Cargo.toml\n  in an mcpgym checkout, serve it: add {shown} to the workspace members and\n  mcpgym-{name} to servers/mcpgym's dependencies, then one line in servers/mcpgym/src/envs.rs:\n    Registration::plain(\"{name}\", \"{name}: add two numbers\", mcpgym_{module}::new),",
            name = names.name,
            module = names.module
        ),
    }
    Ok(())
}

/// How the new crate depends on `mcpgym-env`: by path to a checkout, or from git.
fn mcpgym_env_source(checkout: Option<&Path>) -> anyhow::Result<String> {
    let found = match checkout {
        Some(dir) => {
            let env = dir.join("servers/env");
            anyhow::ensure!(
                env.join("Cargo.toml").is_file(),
                "{} is not an mcpgym checkout (no servers/env/Cargo.toml)",
                dir.display()
            );
            Some(env)
        }
        None => std::env::current_dir()?
            .ancestors()
            .map(|dir| dir.join("servers/env"))
            .find(|env| env.join("Cargo.toml").is_file()),
    };
    Ok(match found {
        Some(env) => {
            let env = env.canonicalize()?;
            format!("{{ path = {:?} }}", env.display().to_string())
        }
        None => "{ git = \"https://github.com/mcpgym/mcpgym\" }".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_a_module_and_a_class() {
        let names = Names::of("word-sum2").unwrap();
        assert_eq!(
            (names.module.as_str(), names.class.as_str()),
            ("word_sum2", "WordSum2")
        );
        for bad in ["", "Word", "2sum", "a_b", "sum-", &"a".repeat(33)] {
            let error = Names::of(bad).err().unwrap().to_string();
            assert!(error.contains("cannot name an environment"), "{error}");
        }
    }
}
