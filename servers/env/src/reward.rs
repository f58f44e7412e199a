//! Rewards: named components, and the ledger that pays them.

use std::borrow::Cow;
use std::collections::BTreeMap;

/// One named reward component paid on a step, e.g. `("win", 1.0)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Reward {
    /// The component's name, stable across episodes so trainers can log it.
    pub name: Cow<'static, str>,
    /// The amount paid.
    pub value: f64,
}

impl Reward {
    /// A component with a fixed name.
    pub fn new(name: impl Into<Cow<'static, str>>, value: f64) -> Self {
        Self {
            name: name.into(),
            value,
        }
    }
}

/// What a step paid: its total and each component.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepReward {
    /// The sum of the components paid on this step.
    pub total: f64,
    /// Each component paid on this step, by name (components of the same name are summed).
    pub components: BTreeMap<Cow<'static, str>, f64>,
}

/// The episode's reward account: every payment by component, the running return, and a latch
/// that lets the terminal reward be paid exactly once.
#[derive(Debug, Clone, Default)]
pub struct RewardLedger {
    total: f64,
    by_component: BTreeMap<Cow<'static, str>, f64>,
    terminal_paid: bool,
}

impl RewardLedger {
    /// Pays a step's components (and, when `terminal` is given and not yet paid, the terminal
    /// components too). Returns what this step paid.
    pub fn pay(&mut self, step: Vec<Reward>, terminal: Option<Vec<Reward>>) -> StepReward {
        let mut paid = StepReward::default();
        let terminal = match terminal {
            Some(terminal) if !self.terminal_paid => {
                self.terminal_paid = true;
                terminal
            }
            _ => Vec::new(),
        };
        for reward in step.into_iter().chain(terminal) {
            if !reward.value.is_finite() {
                continue;
            }
            paid.total += reward.value;
            *paid.components.entry(reward.name.clone()).or_default() += reward.value;
            *self.by_component.entry(reward.name).or_default() += reward.value;
        }
        self.total += paid.total;
        paid
    }

    /// The return so far: the sum of every step's reward.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// The return so far, by component.
    pub fn by_component(&self) -> &BTreeMap<Cow<'static, str>, f64> {
        &self.by_component
    }

    /// Whether the terminal reward has been paid.
    pub fn terminal_paid(&self) -> bool {
        self.terminal_paid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_reward_is_paid_once() {
        let mut ledger = RewardLedger::default();
        let first = ledger.pay(
            vec![Reward::new("info", 0.5)],
            Some(vec![Reward::new("win", 1.0)]),
        );
        assert_eq!(first.total, 1.5);
        let second = ledger.pay(vec![], Some(vec![Reward::new("win", 1.0)]));
        assert_eq!(second.total, 0.0);
        assert_eq!(ledger.total(), 1.5);
        assert_eq!(ledger.by_component()["win"], 1.0);
    }

    #[test]
    fn non_finite_rewards_are_ignored() {
        let mut ledger = RewardLedger::default();
        let paid = ledger.pay(
            vec![Reward::new("x", f64::NAN), Reward::new("y", 0.25)],
            None,
        );
        assert_eq!(paid.total, 0.25);
        assert!(!paid.components.contains_key("x"));
    }
}
