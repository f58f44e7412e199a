//! Task identifiers and train/test splits.

use serde::{Deserialize, Serialize};

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

/// An environment's task ids, by split. Ids are public; what a task hides (an answer, a grader)
/// stays inside the environment.
#[derive(Debug, Clone, Default)]
pub struct TaskSet {
    train: Vec<String>,
    test: Vec<String>,
}

impl TaskSet {
    /// A task set from its two splits. An id must not appear in both.
    pub fn new(train: Vec<String>, test: Vec<String>) -> Self {
        debug_assert!(train.iter().all(|id| !test.contains(id)));
        Self { train, test }
    }

    /// The ids of one split, in their stable order.
    pub fn ids(&self, split: Split) -> &[String] {
        match split {
            Split::Train => &self.train,
            Split::Test => &self.test,
        }
    }

    /// The split a task id belongs to, if it exists.
    pub fn split_of(&self, id: &str) -> Option<Split> {
        if self.train.iter().any(|t| t == id) {
            Some(Split::Train)
        } else if self.test.iter().any(|t| t == id) {
            Some(Split::Test)
        } else {
            None
        }
    }

    /// The task a seed selects from a split: the same seed gives the same task on any machine.
    /// `None` when the split is empty.
    pub fn pick(&self, split: Split, seed: u64) -> Option<&str> {
        let ids = self.ids(split);
        if ids.is_empty() {
            return None;
        }
        // A generator distinct from the episode's own stream, so the choice of task does not
        // shift the randomness the episode itself sees.
        let mut rng = EpisodeRng::new(seed ^ 0x7A5C_0000_0000_0001);
        Some(&ids[rng.below(ids.len())])
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
        assert_eq!(set.pick(Split::Test, 5), Some("test-0"));
        assert_eq!(set.split_of("test-0"), Some(Split::Test));
        assert_eq!(set.split_of("nope"), None);
    }
}
