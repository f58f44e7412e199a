//! Grading a model's predictions for held-out rows, with partial credit.
//!
//! A modelling task gives the agent training data and the features of held-out rows; the
//! agent writes a CSV file of predictions (`id,prediction`, one row per held-out id). The
//! labels of those rows never enter the sandbox: the server reads the file after the episode
//! and computes the metric here, on the host.
//!
//! The score is the metric scaled between two figures the generator fixed with the task: the
//! metric of a trivial predictor (the training mean, the most common class, the recent mean of
//! a series) scores 0, and that of a strong reference (the generating function itself, without
//! its noise) scores 1; the score is clamped to `[0, 1]`. The task succeeds when its score is
//! at least its `threshold`, which its prompt states.
//!
//! The file must hold a header with an `id` and a `prediction` column (others are ignored, so
//! pandas' index column does no harm) and exactly one row for each held-out id: a missing,
//! unknown or repeated id, or a prediction that is not a finite number (for a numeric target),
//! scores 0 with a sentence saying which.

use std::collections::HashMap;

use crate::grading::Verdict;

/// The held-out labels, in the order of [`PredictionGrader::ids`].
#[derive(Debug, Clone, PartialEq)]
pub enum Truth {
    /// A numeric target.
    Numbers(Vec<f64>),
    /// A class label, compared as written after trimming.
    Classes(Vec<String>),
}

/// How predictions are measured against the truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Root mean squared error (lower is better).
    Rmse,
    /// Mean absolute error (lower is better).
    Mae,
    /// The fraction of rows whose class is right (higher is better).
    Accuracy,
}

impl Metric {
    /// Its name, as reports show it.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Rmse => "RMSE",
            Metric::Mae => "MAE",
            Metric::Accuracy => "accuracy",
        }
    }
}

/// The grader of a modelling task.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionGrader {
    /// The predictions file, relative to the home folder.
    pub file: String,
    /// The held-out ids.
    pub ids: Vec<String>,
    /// Their labels.
    pub truth: Truth,
    /// The metric.
    pub metric: Metric,
    /// The trivial predictor's metric (scores 0).
    pub baseline: f64,
    /// The reference's metric (scores 1).
    pub reference: f64,
    /// The score at or above which the task succeeds.
    pub threshold: f64,
}

/// What a prediction file said for one id.
enum Predicted<'a> {
    Number(f64),
    Class(&'a str),
}

impl PredictionGrader {
    /// The score of a metric value: 0 at the baseline, 1 at the reference, clamped (the same
    /// formula whichever way the metric improves).
    pub fn scale(&self, metric: f64) -> f64 {
        let span = self.reference - self.baseline;
        if !metric.is_finite() || span == 0.0 {
            return 0.0;
        }
        ((metric - self.baseline) / span).clamp(0.0, 1.0)
    }

    /// The verdict on the predictions file's bytes (`None` when there is no such file).
    pub fn grade(&self, file: Option<&[u8]>) -> Verdict {
        let Some(bytes) = file else {
            return Verdict::incorrect(format!("there is no {} in the home folder", self.file));
        };
        match self.metric_of(bytes) {
            Err(reason) => Verdict::incorrect(reason),
            Ok(metric) => {
                let score = self.scale(metric);
                let success = score >= self.threshold;
                Verdict::Scored {
                    score,
                    success,
                    reason: format!(
                        "{} {} ({} for the trivial predictor, {} for the reference): score {:.3}, {} {:.2}",
                        self.metric.name(),
                        figure(metric),
                        figure(self.baseline),
                        figure(self.reference),
                        score,
                        if success { "at least" } else { "below" },
                        self.threshold
                    ),
                }
            }
        }
    }

    /// The metric of the predictions in `bytes`, or why they cannot be measured.
    pub fn metric_of(&self, bytes: &[u8]) -> Result<f64, String> {
        let file = &self.file;
        let text = std::str::from_utf8(bytes).map_err(|_| format!("{file} is not UTF-8 text"))?;
        let mut lines = text.lines().filter(|line| !line.trim().is_empty());
        let header = split_csv_line(lines.next().ok_or_else(|| format!("{file} is empty"))?);
        let column = |name: &str| {
            header
                .iter()
                .position(|h| h.trim().eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    format!(
                        "{file} has no {name:?} column (its header must name `id` and `prediction`)"
                    )
                })
        };
        let (id_at, prediction_at) = (column("id")?, column("prediction")?);
        let wanted: HashMap<&str, usize> = self
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        let mut predicted: Vec<Option<Predicted>> = (0..self.ids.len()).map(|_| None).collect();
        let fields: Vec<Vec<&str>> = lines.map(split_csv_line).collect();
        for (row, fields) in fields.iter().enumerate() {
            let line = row + 2;
            let (Some(id), Some(value)) = (fields.get(id_at), fields.get(prediction_at)) else {
                return Err(format!("line {line} of {file} has too few fields"));
            };
            let id = id.trim();
            // pandas writes integer ids of a float column as `12.0`.
            let index = wanted
                .get(id)
                .or_else(|| wanted.get(id.strip_suffix(".0").unwrap_or(id)))
                .ok_or_else(|| {
                    format!("line {line} of {file} names id {id:?}, which is not a held-out row")
                })?;
            if predicted[*index].is_some() {
                return Err(format!("{file} predicts id {id:?} twice"));
            }
            let value = value.trim();
            predicted[*index] = Some(match self.truth {
                Truth::Numbers(_) => match value.parse::<f64>() {
                    Ok(number) if number.is_finite() => Predicted::Number(number),
                    _ => {
                        return Err(format!(
                            "line {line} of {file}: the prediction {value:?} is not a finite number"
                        ));
                    }
                },
                Truth::Classes(_) => Predicted::Class(value),
            });
        }
        let missing = predicted.iter().filter(|p| p.is_none()).count();
        if missing > 0 {
            return Err(format!(
                "{file} predicts {} of the {} held-out rows; {missing} are missing",
                self.ids.len() - missing,
                self.ids.len()
            ));
        }
        let predicted = predicted.into_iter().flatten();
        let n = self.ids.len().max(1) as f64;
        Ok(match (&self.truth, self.metric) {
            (Truth::Numbers(truth), metric) => {
                let errors = truth.iter().zip(predicted).map(|(t, p)| match p {
                    Predicted::Number(p) => p - t,
                    Predicted::Class(_) => f64::NAN,
                });
                match metric {
                    Metric::Rmse => (errors.map(|e| e * e).sum::<f64>() / n).sqrt(),
                    Metric::Mae => errors.map(f64::abs).sum::<f64>() / n,
                    Metric::Accuracy => f64::NAN,
                }
            }
            (Truth::Classes(truth), _) => {
                let right = truth
                    .iter()
                    .zip(predicted)
                    .filter(|(t, p)| matches!(p, Predicted::Class(c) if c == t))
                    .count();
                right as f64 / n
            }
        })
    }
}

/// A figure for a report: four significant digits.
fn figure(value: f64) -> String {
    if value.abs() >= 1000.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.4}")
    }
}

/// The fields of one CSV line: commas separate, double quotes enclose (a doubled quote inside
/// is a quote; the enclosing quotes are kept, trimmed by the caller's `trim` only when they
/// are not there).
fn split_csv_line(line: &str) -> Vec<&str> {
    let mut fields = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                fields.push(unquote(&line[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    fields.push(unquote(&line[start..]));
    fields
}

fn unquote(field: &str) -> &str {
    let trimmed = field.trim();
    trimmed
        .strip_prefix('"')
        .and_then(|f| f.strip_suffix('"'))
        .unwrap_or(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regression() -> PredictionGrader {
        PredictionGrader {
            file: "predictions.csv".into(),
            ids: vec!["1".into(), "2".into(), "3".into()],
            truth: Truth::Numbers(vec![10.0, 20.0, 30.0]),
            metric: Metric::Rmse,
            baseline: 8.0,
            reference: 1.0,
            threshold: 0.8,
        }
    }

    fn score(grader: &PredictionGrader, text: &str) -> (f64, bool) {
        match grader.grade(Some(text.as_bytes())) {
            Verdict::Scored { score, success, .. } => (score, success),
            Verdict::Incorrect { .. } => (0.0, false),
            Verdict::Correct => panic!("a prediction grader scores"),
        }
    }

    #[test]
    fn exact_predictions_score_one_and_noise_scores_between() {
        let grader = regression();
        assert_eq!(
            score(&grader, "id,prediction\n1,10\n2,20\n3,30\n"),
            (1.0, true)
        );
        // RMSE 4.5: halfway between 8 and 1.
        let (half, success) = score(&grader, "id,prediction\n3,34.5\n2,15.5\n1,14.5\n");
        assert!((half - 0.5).abs() < 1e-9 && !success, "{half}");
        // Worse than the baseline is 0, not negative.
        assert_eq!(
            score(&grader, "id,prediction\n1,0\n2,0\n3,0\n"),
            (0.0, false)
        );
    }

    #[test]
    fn pandas_files_with_an_index_and_float_ids_are_read() {
        let grader = regression();
        let text = ",id,prediction\n0,1.0,10\n1,2.0,20\n2,3.0,\"30\"\n";
        assert_eq!(score(&grader, text), (1.0, true));
    }

    #[test]
    fn missing_unknown_repeated_or_non_numeric_rows_score_zero_with_a_reason() {
        let grader = regression();
        for (text, says) in [
            ("id,prediction\n1,10\n2,20\n", "1 are missing"),
            (
                "id,prediction\n1,10\n2,20\n3,30\n4,40\n",
                "not a held-out row",
            ),
            ("id,prediction\n1,10\n1,10\n2,20\n3,30\n", "twice"),
            ("id,prediction\n1,10\n2,nan\n3,30\n", "not a finite number"),
            ("id,value\n1,10\n2,20\n3,30\n", "no \"prediction\" column"),
            ("", "empty"),
        ] {
            match grader.grade(Some(text.as_bytes())) {
                Verdict::Incorrect { reason } => assert!(reason.contains(says), "{reason}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
        assert!(!grader.grade(None).is_correct());
    }

    #[test]
    fn classes_score_by_accuracy_from_the_majority_baseline() {
        let grader = PredictionGrader {
            file: "p.csv".into(),
            ids: (0..4).map(|i| i.to_string()).collect(),
            truth: Truth::Classes(vec!["a".into(), "b".into(), "b".into(), "b".into()]),
            metric: Metric::Accuracy,
            baseline: 0.75,
            reference: 1.0,
            threshold: 0.9,
        };
        assert_eq!(
            score(&grader, "id,prediction\n0,a\n1,b\n2,b\n3,b\n"),
            (1.0, true)
        );
        assert_eq!(
            score(&grader, "id,prediction\n0,b\n1,b\n2,b\n3,b\n"),
            (0.0, false)
        );
    }
}
