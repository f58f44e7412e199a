//! The Jupyter environment's reward.
//!
//! | component | when | amount |
//! |---|---|---|
//! | `correct` | `final_answer` is graded (the episode ends) | 1.0 if the answer is right, 0.0 if not |
//! | `success` or `partial` | a scored task (a model's predictions, hidden tests) is graded | its score, from 0 to 1: under `success` when it reaches the task's threshold, else under `partial` |
//! | `steps` | each cell run, `shaped` only | −`step_cost` (0.01 unless set) |
//! | `errors` | each cell that raised, `shaped` only | −`error_cost` (0.02 unless set) |
//!
//! A *cell* is one execution: `add_and_execute_code_cell`, `edit_and_execute_current_cell` or
//! `execute_shell_command`. A cell *raised* when the kernel reported an error (an exception, or
//! the cell was interrupted or killed for its timeout) or, for a shell command, when it exited
//! with a non-zero status. Reading the notebook and `final_answer` are not cells.
//!
//! A scored task pays its score either way, so partial credit is reward; the component's name
//! says whether it counts as solved (pass rates count `success` and never `partial`).
//!
//! `sparse` (the default) pays only the terminal component: no reward for effort, and nothing the agent can
//! earn without the right answer. `shaped` adds the two costs so that a group of rollouts that
//! all fail still differ (fewer cells and fewer errors score higher). The costs of one episode
//! stop at [`MAX_TOTAL_COST`] in all, so a right answer is always worth more than any wrong one
//! and a long but successful episode still ends well above zero.

use mcpgym_env::Reward;

use crate::grading::Verdict;

/// The most the `steps` and `errors` components can take from one episode together.
pub const MAX_TOTAL_COST: f64 = 0.5;

mcpgym_env::choices! {
    /// Which reward to pay.
    pub enum RewardMode: "reward mode" {
        /// Only `correct`, when the answer is graded.
        Sparse = "sparse",
        /// Also a small cost per cell and per cell that raised.
        Shaped = "shaped",
    }
}

/// The reward settings of an episode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RewardConfig {
    /// Sparse or shaped.
    pub mode: RewardMode,
    /// Subtracted for each cell run (`steps`).
    pub step_cost: f64,
    /// Subtracted for each cell that raised (`errors`), on top of `step_cost`.
    pub error_cost: f64,
}

impl Default for RewardConfig {
    fn default() -> Self {
        Self::new(RewardMode::Sparse, None, None)
    }
}

impl RewardConfig {
    /// The settings for a mode, with its default costs unless some are given. In `sparse` mode
    /// the costs default to 0; given costs apply in either mode.
    pub fn new(mode: RewardMode, step_cost: Option<f64>, error_cost: Option<f64>) -> Self {
        let (default_step, default_error) = match mode {
            RewardMode::Sparse => (0.0, 0.0),
            RewardMode::Shaped => (0.01, 0.02),
        };
        Self {
            mode,
            step_cost: step_cost.unwrap_or(default_step),
            error_cost: error_cost.unwrap_or(default_error),
        }
    }

    /// The terminal component for a graded answer.
    pub fn terminal(&self, verdict: &Verdict) -> Vec<Reward> {
        match verdict {
            Verdict::Correct => vec![Reward::new("correct", 1.0)],
            Verdict::Incorrect { .. } => vec![Reward::new("correct", 0.0)],
            Verdict::Scored { score, success, .. } => {
                let name = if *success { "success" } else { "partial" };
                vec![Reward::new(name, *score)]
            }
        }
    }
}

/// The per-episode side of the reward: what the costs have taken so far, so that they stop at
/// [`MAX_TOTAL_COST`].
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeReward {
    config: RewardConfig,
    cost_paid: f64,
}

impl EpisodeReward {
    /// A fresh episode's account.
    pub fn new(config: RewardConfig) -> Self {
        Self {
            config,
            cost_paid: 0.0,
        }
    }

    /// The settings.
    pub fn config(&self) -> &RewardConfig {
        &self.config
    }

    /// The components for one cell run; `raised` when it raised (see the module docs). Empty
    /// when the costs are 0 or used up.
    pub fn cell(&mut self, raised: bool) -> Vec<Reward> {
        let mut rewards = Vec::new();
        let mut charge = |name: &'static str, cost: f64, paid: &mut f64| {
            let cost = cost.max(0.0).min(MAX_TOTAL_COST - *paid);
            if cost > 0.0 {
                *paid += cost;
                rewards.push(Reward::new(name, -cost));
            }
        };
        charge("steps", self.config.step_cost, &mut self.cost_paid);
        if raised {
            charge("errors", self.config.error_cost, &mut self.cost_paid);
        }
        rewards
    }

    /// The terminal components for a graded answer.
    pub fn terminal(&self, verdict: &Verdict) -> Vec<Reward> {
        self.config.terminal(verdict)
    }

    /// What the costs have taken so far (a positive number).
    pub fn cost_paid(&self) -> f64 {
        self.cost_paid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpgym_env::Choice;

    #[test]
    fn mode_names_read_back_and_unknown_ones_list_the_choices() {
        for &mode in RewardMode::ALL {
            assert_eq!(mode.to_string().parse::<RewardMode>(), Ok(mode));
            let json = serde_json::Value::String(mode.to_string());
            assert_eq!(serde_json::from_value::<RewardMode>(json).unwrap(), mode);
        }
        let error = "dense".parse::<RewardMode>().unwrap_err().to_string();
        assert!(
            error.contains("\"dense\"") && error.contains("`sparse` or `shaped`"),
            "{error}"
        );
    }

    fn wrong() -> Verdict {
        Verdict::Incorrect {
            reason: "no".into(),
        }
    }

    #[test]
    fn a_scored_task_pays_its_score_named_for_whether_it_succeeded() {
        let config = RewardConfig::default();
        let scored = |score, success| Verdict::Scored {
            score,
            success,
            reason: String::new(),
        };
        assert_eq!(
            config.terminal(&scored(0.4, false)),
            vec![Reward::new("partial", 0.4)]
        );
        assert_eq!(
            config.terminal(&scored(0.9, true)),
            vec![Reward::new("success", 0.9)]
        );
    }

    fn sum(rewards: &[Reward]) -> f64 {
        rewards.iter().map(|r| r.value).sum()
    }

    #[test]
    fn sparse_pays_only_a_correct_answer() {
        let mut episode = EpisodeReward::new(RewardConfig::default());
        assert!(episode.cell(false).is_empty());
        assert!(episode.cell(true).is_empty());
        assert_eq!(sum(&episode.terminal(&Verdict::Correct)), 1.0);
        assert_eq!(
            episode.terminal(&wrong()),
            vec![Reward::new("correct", 0.0)]
        );
    }

    #[test]
    fn shaped_charges_cells_and_errors() {
        let mut episode = EpisodeReward::new(RewardConfig::new(RewardMode::Shaped, None, None));
        assert_eq!(episode.cell(false), vec![Reward::new("steps", -0.01)]);
        assert_eq!(
            episode.cell(true),
            vec![Reward::new("steps", -0.01), Reward::new("errors", -0.02)]
        );
        assert!((episode.cost_paid() - 0.04).abs() < 1e-12);
    }

    #[test]
    fn costs_stop_at_the_cap() {
        let mut episode =
            EpisodeReward::new(RewardConfig::new(RewardMode::Shaped, Some(0.1), Some(0.1)));
        let total: f64 = (0..20).map(|_| sum(&episode.cell(true))).sum();
        assert!((total + MAX_TOTAL_COST).abs() < 1e-12, "{total}");
        assert!(episode.cell(true).is_empty());
        // A right answer after the worst episode still beats any wrong one.
        assert!(sum(&episode.terminal(&Verdict::Correct)) + total > 0.0);
    }

    #[test]
    fn negative_costs_pay_nothing() {
        let mut episode =
            EpisodeReward::new(RewardConfig::new(RewardMode::Sparse, Some(-1.0), None));
        assert!(episode.cell(true).is_empty());
    }
}
