//! `mcpgym tasks export` and `mcpgym trajectories export`: datasets for trainers, from an
//! environment's tasks and from recorded episodes.

mod output;
mod parquet_file;
mod progress;
mod tasks;
mod trajectories;

use std::path::PathBuf;

use anyhow::Context;

use crate::envs::ENVIRONMENTS;
use crate::registry::{Built, Registration};

pub use output::Output;
pub use progress::Progress;
use tasks::MAX_SEED;
pub use tasks::{Rows, Selection};
use trajectories::{Filter, ImageMode};

/// `mcpgym tasks ...`.
#[derive(Debug, clap::Subcommand)]
pub enum TasksCommand {
    /// Write an environment's tasks as a dataset: one row per task instance with its prompt
    /// and what verl, TRL and SkyRL read to start that task's episode (env, task, seed,
    /// split; verl's tools_kwargs, SkyRL's env_class). No answer or grader is written: the
    /// server grades the episode. An environment's own flags (e.g. jupyter's --tasks FILE)
    /// go after `--`.
    Export(TasksExport),
}

/// Flags of `mcpgym tasks export`.
#[derive(Debug, clap::Args)]
pub struct TasksExport {
    /// The environment.
    #[arg(long, value_name = "ENV", value_parser = env_names())]
    env: String,
    /// The split to take tasks from.
    #[arg(long, value_name = "SPLIT", default_value = "train", value_parser = ["train", "test"])]
    split: String,
    /// Only these task families (comma-separated; see the environment's README); default:
    /// every family of the split and the tasks listed by id.
    #[arg(long, value_name = "NAME,…", value_delimiter = ',')]
    families: Vec<String>,
    /// Only tasks of these levels (comma-separated: easy, medium, hard), from the families
    /// that have levels; default: every task.
    #[arg(long, value_name = "LEVEL,…", value_delimiter = ',')]
    levels: Vec<mcpgym_shared::generate::Level>,
    /// Rows to write, taking one task of each family in turn so any first rows cover every
    /// family; past the selection's end its tasks come again with new seeds. Default: every
    /// selected task once; required when the selection holds more than 100000.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// The first row's seed; row i gets seed SEED + i.
    #[arg(long, value_name = "SEED", default_value_t = 0, value_parser = clap::value_parser!(u64).range(..=MAX_SEED))]
    seed: u64,
    /// jsonl (one JSON object per line) or parquet (what verl and SkyRL load by default).
    #[arg(long, value_name = "FORMAT", default_value = "jsonl", value_parser = ["jsonl", "parquet"])]
    format: String,
    /// The file to write (`-`: standard output, jsonl only). Written beside as FILE.partial
    /// and renamed when complete.
    #[arg(long, short, value_name = "FILE")]
    output: PathBuf,
    /// The environment's own flags, as `mcpgym ENV` takes them (its task file, word list…).
    #[arg(last = true, value_name = "ENV_FLAGS")]
    env_flags: Vec<String>,
}

/// `mcpgym trajectories ...`.
#[derive(Debug, clap::Subcommand)]
pub enum TrajectoriesCommand {
    /// Write recorded episodes (a folder --trajectory-dir wrote) as chat data: one JSON line
    /// per episode with OpenAI-style messages (the prompt as a user message, each tool call
    /// as an assistant message with tool_calls, each observation as a tool message), its
    /// return and its task. Unreadable files are reported and skipped.
    Export(TrajectoriesExport),
}

/// Flags of `mcpgym trajectories export`.
#[derive(Debug, clap::Args)]
pub struct TrajectoriesExport {
    /// The folder of EPISODE_ID.jsonl files.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// `messages`: OpenAI chat messages with tool calls.
    #[arg(long, value_name = "FORMAT", default_value = "messages", value_parser = ["messages"])]
    format: String,
    /// The file to write (`-`: standard output).
    #[arg(long, short, value_name = "FILE", default_value = "-")]
    output: PathBuf,
    /// Only episodes whose return is at least X.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    min_reward: Option<f64>,
    /// Only episodes whose return is at most X.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    max_reward: Option<f64>,
    /// Only episodes that solved their task (a positive `success` or `win` component, else a
    /// positive return), as pass rates count them.
    #[arg(long)]
    passed_only: bool,
    /// Also episodes that did not finish (closed, reaped or cut off before done).
    #[arg(long)]
    include_unfinished: bool,
    /// Also episodes the environment aborted (a kernel or display that died).
    #[arg(long)]
    include_aborted: bool,
    /// Observation images: `none` (every content is a string; an image shows as its
    /// `[image image/png]` marker) or `data-url` (every content is a list of parts, images
    /// as `image_url` parts with base64 data URLs read from the folder).
    #[arg(long, value_name = "MODE", default_value = "none", value_parser = ["none", "data-url"])]
    images: String,
}

/// The registered environments' names (a flag's possible values).
pub fn env_names() -> Vec<&'static str> {
    ENVIRONMENTS.iter().map(|env| env.name).collect()
}

/// Runs `mcpgym tasks export`.
pub fn run_tasks(command: TasksCommand) -> anyhow::Result<()> {
    let TasksCommand::Export(args) = command;
    let registration = Registration::find(&args.env).context("no such environment")?;
    let Built { env, backing } = registration.catalog(&args.env_flags).with_context(|| {
        format!(
            "cannot read {}'s tasks (the flags after -- are its own, as `mcpgym {} --help` lists them)",
            args.env, args.env
        )
    })?;
    let written = write_tasks(&args, env);
    Built::release(backing);
    written
}

fn write_tasks(
    args: &TasksExport,
    env: std::sync::Arc<dyn mcpgym_shared::Environment>,
) -> anyhow::Result<()> {
    let selection = Selection {
        split: args.split.parse().map_err(anyhow::Error::msg)?,
        families: args.families.clone(),
        levels: args.levels.clone(),
        count: args.count,
        seed: args.seed,
    };
    let rows = Rows::new(env, selection)?;
    if rows.len() > rows.distinct() {
        eprintln!(
            "note: {} rows from {} distinct tasks; tasks repeat with new seeds",
            rows.len(),
            rows.distinct()
        );
    }
    let mut progress = Progress::new("tasks", rows.len());
    let output = Output::create(&args.output, args.format == "parquet")?;
    let output = match args.format.as_str() {
        "parquet" => parquet_file::write(output, &rows, &mut progress)?,
        _ => tasks::write_jsonl(output, &rows, &mut progress)?,
    };
    output.finish()?;
    progress.finish();
    eprintln!(
        "wrote {} rows of {} {} tasks to {}",
        rows.len(),
        args.env,
        args.split,
        args.output.display()
    );
    Ok(())
}

/// Runs `mcpgym trajectories export`.
pub fn run_trajectories(command: TrajectoriesCommand) -> anyhow::Result<()> {
    let TrajectoriesCommand::Export(args) = command;
    anyhow::ensure!(
        args.dir.is_dir(),
        "{} is not a folder: give the folder --trajectory-dir wrote",
        args.dir.display()
    );
    if let (Some(min), Some(max)) = (args.min_reward, args.max_reward) {
        anyhow::ensure!(
            min <= max,
            "--min-reward {min} is above --max-reward {max}: no episode could pass"
        );
    }
    let filter = Filter {
        min_reward: args.min_reward,
        max_reward: args.max_reward,
        passed_only: args.passed_only,
        include_unfinished: args.include_unfinished,
        include_aborted: args.include_aborted,
    };
    let images = match args.images.as_str() {
        "data-url" => ImageMode::DataUrl,
        _ => ImageMode::None,
    };
    let output = Output::create(&args.output, false)?;
    let (output, summary) = trajectories::export(&args.dir, &filter, images, output, |total| {
        Progress::new("episodes", total)
    })?;
    output.finish()?;
    eprintln!(
        "wrote {} episodes to {} ({})",
        summary.written,
        args.output.display(),
        summary.skipped_sentence()
    );
    Ok(())
}
