//! Counters and a latency histogram, exposed as Prometheus text at `GET /metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0, 30.0,
];

/// Picks one counter out of an environment's metrics.
type CounterField = fn(&EnvMetrics) -> &AtomicU64;

/// Counters of one environment.
#[derive(Debug, Default)]
pub struct EnvMetrics {
    episodes_started: AtomicU64,
    episodes_finished: AtomicU64,
    tool_calls: AtomicU64,
    tool_errors: AtomicU64,
    latency_buckets: [AtomicU64; BUCKETS.len()],
    latency_sum_us: AtomicU64,
}

impl EnvMetrics {
    /// Counts a started episode.
    pub fn episode_started(&self) {
        self.episodes_started.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts an episode that reached `done`.
    pub fn episode_finished(&self) {
        self.episodes_finished.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a tool call and its latency.
    pub fn tool_call(&self, latency: Duration, is_error: bool) {
        self.tool_calls.fetch_add(1, Ordering::Relaxed);
        if is_error {
            self.tool_errors.fetch_add(1, Ordering::Relaxed);
        }
        let seconds = latency.as_secs_f64();
        if let Some(bucket) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.latency_buckets[bucket].fetch_add(1, Ordering::Relaxed);
        }
        self.latency_sum_us
            .fetch_add(latency.as_micros() as u64, Ordering::Relaxed);
    }
}

/// What a server holds, for the gauges of [`Metrics::render`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Held {
    /// Live episodes.
    pub live: usize,
    /// Finished episodes kept readable.
    pub finished: usize,
    /// Finished episodes forgotten so far to make room.
    pub finished_dropped: u64,
}

/// Every environment's counters; the set of environments is fixed at start-up, so the hot path
/// takes no lock.
#[derive(Debug, Default)]
pub struct Metrics {
    by_env: BTreeMap<&'static str, Arc<EnvMetrics>>,
}

impl Metrics {
    /// Counters for these environments.
    pub fn new(envs: impl IntoIterator<Item = &'static str>) -> Self {
        Self {
            by_env: envs.into_iter().map(|e| (e, Arc::default())).collect(),
        }
    }

    /// One environment's counters (episodes keep a handle, so calls need no lookup).
    pub fn env(&self, env: &str) -> Option<&Arc<EnvMetrics>> {
        self.by_env.get(env)
    }

    /// The Prometheus text exposition, with what the server `held` as gauges.
    pub fn render(&self, held: Held) -> String {
        let mut out = String::new();
        let gauges = [
            (
                "mcpgym_episodes_live",
                "Live episodes held now (what --max-episodes bounds).",
                held.live as u64,
            ),
            (
                "mcpgym_episodes_finished_held",
                "Finished episodes kept readable now (what --max-finished bounds).",
                held.finished as u64,
            ),
        ];
        for (name, help, value) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            let _ = writeln!(out, "{name} {value}");
        }
        let name = "mcpgym_episodes_finished_dropped_total";
        let _ = writeln!(
            out,
            "# HELP {name} Finished episodes forgotten to make room for newer ones."
        );
        let _ = writeln!(out, "# TYPE {name} counter");
        let _ = writeln!(out, "{name} {}", held.finished_dropped);
        let counters: [(&str, &str, CounterField); 4] = [
            ("mcpgym_episodes_started_total", "Episodes started.", |m| {
                &m.episodes_started
            }),
            (
                "mcpgym_episodes_finished_total",
                "Episodes that reached done (solved, lost or truncated).",
                |m| &m.episodes_finished,
            ),
            ("mcpgym_tool_calls_total", "Environment tool calls.", |m| {
                &m.tool_calls
            }),
            (
                "mcpgym_tool_errors_total",
                "Environment tool calls that returned isError.",
                |m| &m.tool_errors,
            ),
        ];
        for (name, help, field) in counters {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            for (env, metrics) in &self.by_env {
                let value = field(metrics).load(Ordering::Relaxed);
                let _ = writeln!(out, "{name}{{env=\"{env}\"}} {value}");
            }
        }
        let name = "mcpgym_tool_call_duration_seconds";
        let _ = writeln!(out, "# HELP {name} Time to serve an environment tool call.");
        let _ = writeln!(out, "# TYPE {name} histogram");
        for (env, metrics) in &self.by_env {
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(&metrics.latency_buckets) {
                cumulative += count.load(Ordering::Relaxed);
                let _ = writeln!(
                    out,
                    "{name}_bucket{{env=\"{env}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let total = metrics.tool_calls.load(Ordering::Relaxed);
            let sum = metrics.latency_sum_us.load(Ordering::Relaxed) as f64 / 1e6;
            let _ = writeln!(out, "{name}_bucket{{env=\"{env}\",le=\"+Inf\"}} {total}");
            let _ = writeln!(out, "{name}_sum{{env=\"{env}\"}} {sum}");
            let _ = writeln!(out, "{name}_count{{env=\"{env}\"}} {total}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_and_cumulative_buckets() {
        let metrics = Metrics::new(["wordle"]);
        let m = metrics.env("wordle").unwrap();
        m.episode_started();
        m.tool_call(Duration::from_micros(80), false);
        m.tool_call(Duration::from_millis(3), true);
        let text = metrics.render(Held {
            live: 1,
            finished: 2,
            finished_dropped: 3,
        });
        assert!(text.contains("mcpgym_episodes_live 1"));
        assert!(text.contains("mcpgym_episodes_finished_held 2"));
        assert!(text.contains("mcpgym_episodes_finished_dropped_total 3"));
        assert!(text.contains("mcpgym_tool_calls_total{env=\"wordle\"} 2"));
        assert!(text.contains("mcpgym_tool_errors_total{env=\"wordle\"} 1"));
        assert!(text.contains("le=\"0.0001\"} 1"));
        assert!(text.contains("le=\"0.005\"} 2"));
        assert!(text.contains("le=\"+Inf\"} 2"));
    }
}
