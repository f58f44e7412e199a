//! Families of modelling: the agent trains a model on given data and writes predictions for
//! held-out rows whose labels never enter the sandbox; the reward is the metric scaled between
//! a trivial predictor and the generating function itself ([`crate::predictions`]).

mod churn;
mod demand_forecast;
mod house_prices;

use super::{Family, Gen};

/// This module's families.
pub(super) static FAMILIES: &[Family] =
    &[house_prices::FAMILY, churn::FAMILY, demand_forecast::FAMILY];

/// The file every modelling task asks for.
const PREDICTIONS: &str = "predictions.csv";

/// Root mean squared error of `predicted` against `truth`.
fn rmse(predicted: impl Iterator<Item = f64>, truth: &[f64]) -> f64 {
    let sum: f64 = predicted.zip(truth).map(|(p, t)| (p - t).powi(2)).sum();
    (sum / truth.len().max(1) as f64).sqrt()
}

/// The sentence that ends a modelling prompt, in one of four forms: the answer is not graded,
/// the predictions file is.
fn closing(g: &mut Gen) -> &'static str {
    const FORMS: [&str; 4] = [
        "Then call final_answer with the word done (the answer is not graded).",
        "When the file is written, call final_answer with done; only the file is graded.",
        "Finish by calling final_answer with the word done (the file is what is graded).",
        "Call final_answer with done once predictions.csv is written; the answer itself is not \
         graded.",
    ];
    FORMS[g.index(FORMS.len())]
}
