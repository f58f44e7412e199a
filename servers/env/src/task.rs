//! Task identifiers and train/test splits.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::generate::Level;
use crate::rng::EpisodeRng;

/// Which part of an environment's tasks an episode is drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// Tasks for training.
    Train,
    /// Held-out tasks for evaluation; disjoint from `Train`.
    Test,
}

impl Split {
    /// The split's name as used in URLs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::Test => "test",
        }
    }
}

impl std::fmt::Display for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Split {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "train" => Ok(Split::Train),
            "test" => Ok(Split::Test),
            other => Err(format!(
                "unknown split {other:?}: use \"train\" or \"test\""
            )),
        }
    }
}

/// An environment's tasks, by split: ids listed one by one, and task families whose
/// instances are numbered (`<family>/<n>`) and generated on demand, so a split may hold
/// millions of tasks without a list of them. Ids are public; what a task hides (an answer, a
/// grader) stays inside the environment.
///
/// A split's tasks have a stable order, for index-based clients: the listed ids first, then
/// each family's instances of that split, family by family in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct TaskSet {
    train: Vec<String>,
    test: Vec<String>,
    families: Vec<TaskFamily>,
}

/// A family of generated tasks: its name and the instance numbers each split uses. The two
/// ranges never overlap, so no test instance is ever seen in training.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskFamily {
    /// The family's name, the part of a task id before the `/`.
    pub name: String,
    /// Instance numbers of the train split (may be empty: a test-only family).
    pub train: std::ops::Range<u64>,
    /// Instance numbers of the test split (may be empty: a train-only family).
    pub test: std::ops::Range<u64>,
    /// Whether its instances have levels: instance `n` is of level `n % 3`
    /// ([`crate::generate::Level::of`]).
    pub levelled: bool,
}

impl TaskFamily {
    /// A family with these instance ranges; they must not overlap.
    pub fn new(
        name: impl Into<String>,
        train: std::ops::Range<u64>,
        test: std::ops::Range<u64>,
    ) -> Self {
        debug_assert!(
            train.is_empty()
                || test.is_empty()
                || train.end <= test.start
                || test.end <= train.start
        );
        Self {
            name: name.into(),
            train,
            test,
            levelled: false,
        }
    }

    /// The same family, whose instances have levels.
    pub fn with_levels(mut self) -> Self {
        self.levelled = true;
        self
    }

    /// The level of instance `n`, where the family has levels.
    pub fn level_of(&self, n: u64) -> Option<crate::generate::Level> {
        self.levelled.then(|| crate::generate::Level::of(n))
    }

    /// The instance numbers of one split.
    pub fn range(&self, split: Split) -> std::ops::Range<u64> {
        match split {
            Split::Train => self.train.clone(),
            Split::Test => self.test.clone(),
        }
    }

    /// How many instances of one split are of `levels` (all of them when `levels` is empty;
    /// none when the family has no levels and some are asked for).
    pub fn count_at(&self, split: Split, levels: &[Level]) -> u64 {
        let range = self.range(split);
        if levels.is_empty() {
            return range.end.saturating_sub(range.start);
        }
        if !self.levelled {
            return 0;
        }
        let wanted = residues(levels);
        // Instances 0..end of those levels: whole blocks of three, then the rest.
        let below = |end: u64| {
            end / 3 * wanted.len() as u64
                + wanted.iter().filter(|&&l| end / 3 * 3 + l < end).count() as u64
        };
        below(range.end).saturating_sub(below(range.start))
    }

    /// The `index`-th instance of one split that is of `levels` (in number order), as
    /// [`count_at`](Self::count_at) counts them.
    pub fn nth_at(&self, split: Split, levels: &[Level], index: u64) -> Option<u64> {
        if index >= self.count_at(split, levels) {
            return None;
        }
        let range = self.range(split);
        if levels.is_empty() {
            return Some(range.start + index);
        }
        let wanted = residues(levels);
        let k = wanted.len() as u64;
        // Count from the block of three holding the range's start, skipping the instances of
        // that block below the start.
        let block = range.start / 3 * 3;
        let skipped = wanted.iter().filter(|&&l| block + l < range.start).count() as u64;
        let position = index + skipped;
        Some(block + position / k * 3 + wanted[(position % k) as usize])
    }

    /// The id of instance `n`: `<family>/<n>`.
    pub fn id(&self, n: u64) -> String {
        format!("{}/{n}", self.name)
    }
}

/// The residues modulo 3 of `levels` (instance `n` is of level `n % 3`), sorted, once each.
fn residues(levels: &[Level]) -> Vec<u64> {
    let mut residues: Vec<u64> = levels.iter().map(|&level| level as u64).collect();
    residues.sort_unstable();
    residues.dedup();
    residues
}

/// `<family>/<n>` split into its two parts; `None` when `id` does not have that form.
pub fn parse_family_id(id: &str) -> Option<(&str, u64)> {
    let (family, n) = id.rsplit_once('/')?;
    // Digits only: `+1`, ` 1` or `01` would name the same instance twice.
    let canonical =
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'));
    if family.is_empty() || !canonical {
        return None;
    }
    Some((family, n.parse().ok()?))
}

impl TaskSet {
    /// A task set of listed ids. An id must not appear in both splits.
    pub fn new(train: Vec<String>, test: Vec<String>) -> Self {
        debug_assert!(train.iter().all(|id| !test.contains(id)));
        Self {
            train,
            test,
            families: Vec::new(),
        }
    }

    /// Adds a family of generated tasks (after any added before).
    pub fn with_family(mut self, family: TaskFamily) -> Self {
        self.families.push(family);
        self
    }

    /// The listed ids of one split, in their stable order (families' instances not included).
    pub fn listed(&self, split: Split) -> &[String] {
        match split {
            Split::Train => &self.train,
            Split::Test => &self.test,
        }
    }

    /// The families, in order.
    pub fn families(&self) -> &[TaskFamily] {
        &self.families
    }

    /// How many tasks one split has.
    pub fn len(&self, split: Split) -> u64 {
        let generated: u64 = self
            .families
            .iter()
            .map(|f| f.range(split).end.saturating_sub(f.range(split).start))
            .sum();
        self.listed(split).len() as u64 + generated
    }

    /// Whether a split has no task.
    pub fn is_empty(&self, split: Split) -> bool {
        self.len(split) == 0
    }

    /// The task at `index` in a split's stable order, if there is one.
    pub fn get(&self, split: Split, index: u64) -> Option<String> {
        let listed = self.listed(split);
        if let Some(id) = usize::try_from(index).ok().and_then(|i| listed.get(i)) {
            return Some(id.clone());
        }
        let mut index = index - listed.len() as u64;
        for family in &self.families {
            let range = family.range(split);
            let size = range.end.saturating_sub(range.start);
            if index < size {
                return Some(family.id(range.start + index));
            }
            index -= size;
        }
        None
    }

    /// The tasks at indices `start..stop` (clamped to the split's length) of a split.
    pub fn slice(&self, split: Split, start: u64, stop: u64) -> Vec<String> {
        let stop = stop.min(self.len(split));
        (start..stop).filter_map(|i| self.get(split, i)).collect()
    }

    /// The split a task id belongs to, if it exists.
    pub fn split_of(&self, id: &str) -> Option<Split> {
        if self.train.iter().any(|t| t == id) {
            return Some(Split::Train);
        }
        if self.test.iter().any(|t| t == id) {
            return Some(Split::Test);
        }
        let (name, n) = parse_family_id(id)?;
        let family = self.families.iter().find(|f| f.name == name)?;
        [Split::Train, Split::Test]
            .into_iter()
            .find(|&split| family.range(split).contains(&n))
    }

    /// The task a seed selects from a split: the same seed gives the same task on any machine.
    /// Each family (and the listed ids, together) is equally likely, then each of its tasks;
    /// so a family of a few fixed tasks is drawn as often as one of a million instances.
    /// `None` when the split is empty.
    pub fn pick(&self, split: Split, seed: u64) -> Option<String> {
        self.pick_at(split, seed, &[])
    }

    /// As [`pick`](Self::pick), among the instances of `levels` only (every task when
    /// `levels` is empty): listed tasks and families without levels are left out, and within
    /// a family each of the levels is equally likely. `None` when nothing is left.
    pub fn pick_at(&self, split: Split, seed: u64, levels: &[Level]) -> Option<String> {
        // A generator distinct from the episode's own stream, so the choice of task does not
        // shift the randomness the episode itself sees.
        let mut rng = EpisodeRng::new(seed ^ 0x7A5C_0000_0000_0001);
        let listed: &[String] = if levels.is_empty() {
            self.listed(split)
        } else {
            &[]
        };
        let families: Vec<&TaskFamily> = self
            .families
            .iter()
            .filter(|f| f.count_at(split, levels) > 0)
            .collect();
        let groups = families.len() + usize::from(!listed.is_empty());
        if groups == 0 {
            return None;
        }
        let group = if families.is_empty() {
            0
        } else {
            rng.below(groups)
        };
        if !listed.is_empty() && group == 0 {
            return Some(listed[rng.below(listed.len())].clone());
        }
        let family = families[group - usize::from(!listed.is_empty())];
        let index = rng.below_u64(family.count_at(split, levels));
        let n = family.nth_at(split, levels, index)?;
        Some(family.id(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_is_deterministic_and_within_split() {
        let set = TaskSet::new(
            (0..10).map(|i| format!("train-{i}")).collect(),
            vec!["test-0".into()],
        );
        assert_eq!(set.pick(Split::Train, 42), set.pick(Split::Train, 42));
        assert!(set.pick(Split::Train, 42).unwrap().starts_with("train-"));
        assert_eq!(set.pick(Split::Test, 5).as_deref(), Some("test-0"));
        assert_eq!(set.split_of("test-0"), Some(Split::Test));
        assert_eq!(set.split_of("nope"), None);
    }

    #[test]
    fn families_name_instances_and_keep_splits_apart() {
        let set = TaskSet::new(vec!["listed".into()], Vec::new())
            .with_family(TaskFamily::new("sums", 0..900, 900..1000))
            .with_family(TaskFamily::new("held-out", 0..0, 0..50));
        assert_eq!(set.len(Split::Train), 901);
        assert_eq!(set.len(Split::Test), 150);
        assert_eq!(set.get(Split::Train, 0).as_deref(), Some("listed"));
        assert_eq!(set.get(Split::Train, 1).as_deref(), Some("sums/0"));
        assert_eq!(set.get(Split::Train, 900).as_deref(), Some("sums/899"));
        assert_eq!(set.get(Split::Train, 901), None);
        assert_eq!(set.get(Split::Test, 100).as_deref(), Some("held-out/0"));
        assert_eq!(set.slice(Split::Test, 98, 1000).len(), 52);
        assert_eq!(set.split_of("sums/899"), Some(Split::Train));
        assert_eq!(set.split_of("sums/900"), Some(Split::Test));
        assert_eq!(set.split_of("sums/1000"), None);
        assert_eq!(set.split_of("held-out/7"), Some(Split::Test));
        for bad in [
            "sums/", "sums/01", "sums/+1", "sums/ 1", "/1", "nope/1", "sums/-1",
        ] {
            assert_eq!(set.split_of(bad), None, "{bad}");
        }
        let mut seen = std::collections::HashSet::new();
        for seed in 0..300 {
            let id = set.pick(Split::Test, seed).unwrap();
            assert_eq!(set.split_of(&id), Some(Split::Test), "{id}");
            seen.insert(id.split('/').next().unwrap().to_owned());
        }
        // Every family of the split is drawn, however few tasks it has.
        assert_eq!(seen.len(), 2);
        assert_eq!(set.pick(Split::Train, 9), set.pick(Split::Train, 9));
    }

    #[test]
    fn picks_at_levels_keep_to_those_levels_and_the_split() {
        let set = TaskSet::new(vec!["listed".into()], Vec::new())
            .with_family(TaskFamily::new("sums", 0..900, 900..1000).with_levels())
            .with_family(TaskFamily::new("flat", 0..900, 900..1000));
        let mut seen = std::collections::HashSet::new();
        for seed in 0..600 {
            for split in [Split::Train, Split::Test] {
                let id = set.pick_at(split, seed, &[Level::Hard]).unwrap();
                let (family, n) = parse_family_id(&id).unwrap();
                assert_eq!((family, Level::of(n)), ("sums", Level::Hard), "{id}");
                assert_eq!(set.split_of(&id), Some(split), "{id}");
                let id = set
                    .pick_at(split, seed, &[Level::Easy, Level::Medium])
                    .unwrap();
                let (_, n) = parse_family_id(&id).unwrap();
                seen.insert(Level::of(n));
            }
        }
        assert_eq!(seen.len(), 2);
        assert_eq!(
            set.pick_at(Split::Train, 3, &[Level::Hard]),
            set.pick_at(Split::Train, 3, &[Level::Hard])
        );
        let flat = TaskSet::new(vec!["listed".into()], Vec::new()).with_family(TaskFamily::new(
            "flat",
            0..900,
            900..1000,
        ));
        assert_eq!(flat.pick_at(Split::Train, 1, &[Level::Easy]), None);
        for (range, levels) in [
            (0..900, vec![Level::Hard]),
            (900..1000, vec![Level::Easy, Level::Hard]),
            (901..1000, vec![Level::Easy, Level::Medium, Level::Easy]),
            (997..998, vec![Level::Easy]),
        ] {
            let family = TaskFamily::new("f", 0..0, range.clone()).with_levels();
            let expected: Vec<u64> = range.filter(|&n| levels.contains(&Level::of(n))).collect();
            let listed: Vec<u64> = (0..family.count_at(Split::Test, &levels))
                .map(|i| family.nth_at(Split::Test, &levels, i).unwrap())
                .collect();
            assert_eq!(listed, expected, "{levels:?}");
        }
        // The edge of a range: 998 is the last hard instance below 1000.
        let edge = TaskSet::new(Vec::new(), Vec::new())
            .with_family(TaskFamily::new("edge", 0..0, 996..1000).with_levels());
        for seed in 0..100 {
            let id = edge.pick_at(Split::Test, seed, &[Level::Medium]).unwrap();
            assert!(id == "edge/997", "{id}");
        }
    }
}

/// Why a task file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TaskFileError {
    /// The file could not be read.
    #[error("cannot read the task file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not a valid task.
    #[error("{path}, line {line}: {message}")]
    Line {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// What is wrong, and what to do.
        message: String,
    },
    /// The file holds no task.
    #[error(
        "{path} holds no task: write one JSON object per line (see the README's task file sections)"
    )]
    Empty {
        /// The file.
        path: PathBuf,
    },
}
