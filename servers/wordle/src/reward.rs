//! Wordle's reward.
//!
//! | component | when | amount |
//! |---|---|---|
//! | `win` | the game ends | 1.0 if solved, 0.0 if not |
//! | `efficiency` | solved in `n` guesses | 0.5 × (6 − n) / 5: 0.5 for one guess, 0 for six |
//! | `information` | each valid guess, `shaped` only | 0.2 × bits of the answer list the guess ruled out, over the list's total bits |
//! | `invalid` | each refused guess | −`invalid_penalty` (0 for `sparse`, 0.02 for `shaped`, unless set) |

use mcpgym_env::Reward;

use crate::game::MAX_GUESSES;

/// Weight of the shaped information component: a game that narrows the list to one word earns
/// this much in total, less than a win is worth.
pub const INFORMATION_WEIGHT: f64 = 0.2;

mcpgym_env::choices! {
    /// Which reward to pay.
    pub enum RewardMode: "reward mode" {
        /// Only the terminal reward: `win` and `efficiency`.
        Sparse = "sparse",
        /// Also `information` on every valid guess, so a group of rollouts is not all zeros.
        Shaped = "shaped",
    }
}

/// The reward settings of an episode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RewardConfig {
    /// Sparse or shaped.
    pub mode: RewardMode,
    /// Subtracted for each refused guess.
    pub invalid_penalty: f64,
}

impl RewardConfig {
    /// The settings for a mode, with its default penalty unless one is given.
    pub fn new(mode: RewardMode, invalid_penalty: Option<f64>) -> Self {
        let default_penalty = match mode {
            RewardMode::Sparse => 0.0,
            RewardMode::Shaped => 0.02,
        };
        Self {
            mode,
            invalid_penalty: invalid_penalty.unwrap_or(default_penalty),
        }
    }

    /// The terminal components: a win in `guesses`, or a loss.
    pub fn terminal(&self, solved_in: Option<usize>) -> Vec<Reward> {
        match solved_in {
            Some(n) => {
                let spare = MAX_GUESSES.saturating_sub(n) as f64;
                vec![
                    Reward::new("win", 1.0),
                    Reward::new("efficiency", 0.5 * spare / (MAX_GUESSES - 1) as f64),
                ]
            }
            None => vec![Reward::new("win", 0.0)],
        }
    }

    /// The shaped component for narrowing `before` candidates to `after` out of `total`.
    pub fn information(&self, before: usize, after: usize, total: usize) -> Option<Reward> {
        if self.mode != RewardMode::Shaped || total < 2 || after == 0 {
            return None;
        }
        let bits = (before as f64 / after as f64).log2();
        Some(Reward::new(
            "information",
            INFORMATION_WEIGHT * bits / (total as f64).log2(),
        ))
    }

    /// The penalty for a refused guess, if any.
    pub fn invalid(&self) -> Option<Reward> {
        (self.invalid_penalty != 0.0).then(|| Reward::new("invalid", -self.invalid_penalty))
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
        let error = "Shaped".parse::<RewardMode>().unwrap_err().to_string();
        assert!(
            error.contains("\"Shaped\"") && error.contains("`sparse` or `shaped`"),
            "{error}"
        );
    }

    #[test]
    fn win_pays_more_for_fewer_guesses() {
        let config = RewardConfig::new(RewardMode::Sparse, None);
        let total = |n| {
            config
                .terminal(Some(n))
                .iter()
                .map(|r| r.value)
                .sum::<f64>()
        };
        assert_eq!(total(1), 1.5);
        assert_eq!(total(6), 1.0);
        assert!(total(3) > total(4));
        assert_eq!(config.terminal(None)[0].value, 0.0);
        assert!(config.invalid().is_none());
        assert!(config.information(10, 1, 100).is_none());
    }

    #[test]
    fn shaped_information_sums_to_its_weight() {
        let config = RewardConfig::new(RewardMode::Shaped, None);
        let a = config.information(1024, 32, 1024).unwrap().value;
        let b = config.information(32, 1, 1024).unwrap().value;
        assert!((a + b - INFORMATION_WEIGHT).abs() < 1e-12);
        assert_eq!(config.invalid().unwrap().value, -0.02);
    }
}
