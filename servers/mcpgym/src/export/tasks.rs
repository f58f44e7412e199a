//! `mcpgym tasks export`: an environment's tasks as a training dataset, one row per task
//! instance, in the row shape verl's `RLHFDataset`, TRL's `GRPOTrainer` and SkyRL's
//! `PromptDataset` read (see the README's "Tasks as a dataset").

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context;
use mcpgym_shared::env::full_prompt;
use mcpgym_shared::generate::Level;
use mcpgym_shared::{Environment, Split, TaskFamily, TaskSet};
use serde::Serialize;

/// The most rows an export writes when `--count` is not given; a selection with more (a
/// generated family holds hundreds of thousands) needs `--count`.
pub const DEFAULT_COUNT_LIMIT: u64 = 100_000;
/// The largest seed a row may carry: every JSON reader (JavaScript's, Arrow's) reads integers
/// up to 2^53 exactly.
pub const MAX_SEED: u64 = (1 << 53) - 1;

/// What the export reads: which tasks, how many rows, and their seeds.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The split the tasks come from.
    pub split: Split,
    /// Families to take tasks from; empty for every family and the listed tasks.
    pub families: Vec<String>,
    /// Levels to take tasks of, from the families that have levels; empty for every task.
    pub levels: Vec<Level>,
    /// How many rows; `None` for every selected task once.
    pub count: Option<u64>,
    /// The first row's seed; row `i` has seed `seed + i`.
    pub seed: u64,
}

/// One row: what a trainer reads to start an episode, and nothing the agent must not see (no
/// answer, no grader: those stay in the server, which grades the episode).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRow {
    /// `mcpgym/<env>`: verl picks a reward function by it.
    pub data_source: String,
    /// The chat to start from: one user message with the environment's instructions and the
    /// task's prompt, as the server hands the prompt over (no system message: trainers put
    /// the tool list there).
    pub prompt: Vec<Message>,
    /// The environment's name (verl's task category).
    pub ability: String,
    /// verl's reward model entry: style `mcpgym` (the reward comes from the server, step by
    /// step), and an empty ground truth, since the answer never leaves the server.
    pub reward_model: RewardModel,
    /// `mcpgym`: the id SkyRL makes the environment by (`mcpgym.adapters.skyrl.register()`).
    pub env_class: &'static str,
    /// The environment (TRL's `reset(**row)` and SkyRL's `env_extras` read these four).
    pub env: String,
    /// The task id.
    pub task: String,
    /// The episode's seed.
    pub seed: u64,
    /// The task's split.
    pub split: &'static str,
    /// The same, for verl (which hands its tools only `extra_info.tools_kwargs`), with the
    /// row's index and the task's family.
    pub extra_info: ExtraInfo,
}

/// A chat message of a row's prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// `user`.
    pub role: &'static str,
    /// The text.
    pub content: String,
}

/// verl's `reward_model` column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RewardModel {
    /// `mcpgym`.
    pub style: &'static str,
    /// Always empty: graders stay on the server.
    pub ground_truth: String,
}

/// verl's `extra_info` column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtraInfo {
    /// The environment.
    pub env: String,
    /// The task id.
    pub task: String,
    /// The seed.
    pub seed: u64,
    /// The split.
    pub split: &'static str,
    /// The row's position in the file, from 0.
    pub index: u64,
    /// The task's family (the part of a `<family>/<n>` id before the `/`); `None` for a
    /// listed task.
    pub family: Option<String>,
    /// For every tool of the environment, what verl's `ToolAgentLoop` passes to the tool's
    /// `create`: the mcpgym verl tool starts this task with this seed.
    pub tools_kwargs: BTreeMap<String, ToolKwargs>,
}

/// One tool's entry of `tools_kwargs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolKwargs {
    /// What the tool's `create` receives.
    pub create_kwargs: StartArgs,
}

/// How the episode starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartArgs {
    /// The task id.
    pub task: String,
    /// The seed.
    pub seed: u64,
    /// The split.
    pub split: &'static str,
}

/// A group of tasks the export takes from in turn: the listed ids, or one family.
struct Group {
    family: Option<String>,
    ids: GroupIds,
}

enum GroupIds {
    Listed(Vec<String>),
    /// A family's instances of one split, of the given levels (all when empty).
    Family(TaskFamily, Split, Vec<Level>),
}

impl Group {
    fn len(&self) -> u64 {
        match &self.ids {
            GroupIds::Listed(ids) => ids.len() as u64,
            GroupIds::Family(family, split, levels) => family.count_at(*split, levels),
        }
    }

    fn get(&self, n: u64) -> String {
        match &self.ids {
            GroupIds::Listed(ids) => ids[n as usize].clone(),
            GroupIds::Family(family, split, levels) => {
                // n < len(): there is such an instance.
                family.id(family.nth_at(*split, levels, n).unwrap_or_default())
            }
        }
    }
}

/// The rows' tasks, in order: the groups taken in turn (one task of each, then the next of
/// each), so any first N rows spread over every family; past the selection's end it starts
/// again (with new seeds).
pub struct Rows {
    env: Arc<dyn Environment>,
    groups: Vec<Group>,
    selection: Selection,
    total: u64,
    /// Tasks in the selection, once each.
    distinct: u64,
}

impl Rows {
    /// The rows `selection` asks of `env`; fails with a sentence on what to change when a
    /// family is unknown, a split is empty or the count is missing.
    pub fn new(env: Arc<dyn Environment>, selection: Selection) -> anyhow::Result<Self> {
        let groups = groups(env.name(), env.tasks(), &selection)?;
        let distinct: u64 = groups.iter().map(Group::len).sum();
        anyhow::ensure!(
            distinct > 0,
            "the {} split of {} has no tasks{}",
            selection.split,
            env.name(),
            match (selection.families.is_empty(), selection.levels.is_empty()) {
                (true, true) => "",
                (false, true) => " in those families",
                (true, false) => " of those levels (only families with levels have them)",
                (false, false) => " of those levels in those families",
            }
        );
        let total = match selection.count {
            Some(count) => count,
            None if distinct <= DEFAULT_COUNT_LIMIT => distinct,
            None => anyhow::bail!(
                "the selection holds {distinct} tasks of {}'s {} split; say how many rows with --count N",
                env.name(),
                selection.split
            ),
        };
        anyhow::ensure!(
            selection
                .seed
                .checked_add(total)
                .is_some_and(|last| last <= MAX_SEED + 1),
            "--seed {} with {total} rows would give seeds above 2^53 - 1, which JSON readers cannot hold exactly",
            selection.seed
        );
        Ok(Self {
            env,
            groups,
            selection,
            total,
            distinct,
        })
    }

    /// How many groups the tasks are taken from in turn: the families, and the listed tasks.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// How many rows there are.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// How many distinct tasks they hold (fewer than the rows when the count wraps around).
    pub fn distinct(&self) -> u64 {
        self.distinct
    }

    /// Every row, in order.
    pub fn iter(&self) -> impl Iterator<Item = TaskRow> + '_ {
        let tools: Vec<String> = self
            .env
            .tools()
            .iter()
            .map(|tool| tool.name.to_string())
            .collect();
        self.order()
            .take(usize::try_from(self.total).unwrap_or(usize::MAX))
            .enumerate()
            .map(move |(index, (family, task))| self.row(index as u64, family, task, &tools))
    }

    /// `(family, task)` in row order, endlessly.
    fn order(&self) -> impl Iterator<Item = (Option<String>, String)> + '_ {
        let longest = self.groups.iter().map(Group::len).max().unwrap_or(0);
        std::iter::repeat(()).flat_map(move |()| {
            (0..longest).flat_map(move |n| {
                self.groups
                    .iter()
                    .filter(move |group| n < group.len())
                    .map(move |group| (group.family.clone(), group.get(n)))
            })
        })
    }

    fn row(&self, index: u64, family: Option<String>, task: String, tools: &[String]) -> TaskRow {
        let env = self.env.name().to_owned();
        let seed = self.selection.seed + index;
        let split = self.selection.split.as_str();
        let prompt = full_prompt(
            self.env.instructions(),
            self.env.task_prompt(&task).as_deref(),
        );
        let start = StartArgs {
            task: task.clone(),
            seed,
            split,
        };
        TaskRow {
            data_source: format!("mcpgym/{env}"),
            prompt: vec![Message {
                role: "user",
                content: prompt,
            }],
            ability: env.clone(),
            reward_model: RewardModel {
                style: "mcpgym",
                ground_truth: String::new(),
            },
            env_class: "mcpgym",
            env: env.clone(),
            task: task.clone(),
            seed,
            split,
            extra_info: ExtraInfo {
                env,
                task,
                seed,
                split,
                index,
                family,
                tools_kwargs: tools
                    .iter()
                    .map(|tool| {
                        let kwargs = ToolKwargs {
                            create_kwargs: start.clone(),
                        };
                        (tool.clone(), kwargs)
                    })
                    .collect(),
            },
        }
    }
}

/// The groups a selection takes tasks from, in the task set's order.
fn groups(env: &str, tasks: &TaskSet, selection: &Selection) -> anyhow::Result<Vec<Group>> {
    let split = selection.split;
    let families = tasks.families();
    let levels = &selection.levels;
    let family_group = |family: &TaskFamily| Group {
        family: Some(family.name.clone()),
        ids: GroupIds::Family(family.clone(), split, levels.clone()),
    };
    if selection.families.is_empty() {
        let mut groups = Vec::new();
        // A listed task has no level.
        if !tasks.listed(split).is_empty() && levels.is_empty() {
            groups.push(Group {
                family: None,
                ids: GroupIds::Listed(tasks.listed(split).to_vec()),
            });
        }
        groups.extend(
            families
                .iter()
                .filter(|f| f.count_at(split, levels) > 0)
                .map(family_group),
        );
        return Ok(groups);
    }
    anyhow::ensure!(
        !families.is_empty(),
        "{env} has no task families (its tasks are listed by id): leave out --families"
    );
    let names = || {
        families
            .iter()
            .filter(|f| !f.range(split).is_empty())
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut groups = Vec::new();
    for name in &selection.families {
        let family = families.iter().find(|f| &f.name == name).with_context(|| {
            format!(
                "{env} has no task family {name:?}; its {split} families are: {}",
                names()
            )
        })?;
        anyhow::ensure!(
            !family.range(split).is_empty(),
            "family {name:?} has no {split} tasks (it is held out of that split); its {split} families are: {}",
            names()
        );
        anyhow::ensure!(
            levels.is_empty() || family.levelled,
            "family {name:?} has no levels, so --levels cannot select its tasks; leave it out of --families or leave out --levels"
        );
        if groups
            .iter()
            .all(|g: &Group| g.family.as_deref() != Some(name))
        {
            groups.push(family_group(family));
        }
    }
    Ok(groups)
}

/// Writes the rows as JSON Lines; gives the output back to be finished.
pub fn write_jsonl<W: std::io::Write>(
    mut output: W,
    rows: &Rows,
    progress: &mut crate::export::Progress,
) -> anyhow::Result<W> {
    for row in rows.iter() {
        serde_json::to_writer(&mut output, &row)?;
        output.write_all(b"\n")?;
        progress.tick();
    }
    Ok(output)
}
