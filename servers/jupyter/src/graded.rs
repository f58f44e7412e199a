//! What a Jupyter episode keeps of its grading, for `mcpgym rescore`: the answer given to
//! `final_answer` and, for a task graded by a hidden check, the home folder as the check saw
//! it (a gzipped tar, taken after the agent's kernels and commands were stopped and before the
//! check ran), within [`GRADED_BUDGET`] bytes of file content.
//!
//! In the trajectory's end record: `{"answer": "…", "home": {"tar_gz": "<base64>",
//! "bytes": N}}`, or `"home": {"over_budget": N}` when the folder held more than the budget.
//! Rescoring restores the folder into a new sandbox and runs the same check there.
//!
//! For a modelling task, the predictions file as the server read it:
//! `"predictions": {"base64": "…", "bytes": N}`, `{"absent": true}` when there was none, or
//! `{"over_budget": N}`; rescoring measures it again on the host.
//!
//! For a chart task, the chart graded (the last one shown): `"chart": {…}`, or `"chart": null`
//! when none was shown; rescoring checks it again.

use base64::Engine;
use serde_json::{Value, json};

use mcpgym_env::rescore::{GRADED_BUDGET, RescoreError};

use crate::tasks::SANDBOX_HOME;

/// The home folder as a graded state keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HomeSnapshot {
    /// The folder, a gzipped tar of it.
    Kept(Vec<u8>),
    /// Its files held this many bytes, more than the budget: not kept.
    OverBudget(u64),
}

/// A program that writes the home folder as a gzipped tar to `out` (inside it, left out of the
/// archive) and prints `OK`, or prints `OVER N` when its regular files hold more than the
/// budget. Symlinks are archived as links, never followed.
pub fn snapshot_program(out: &str) -> String {
    format!(
        r#"import os, sys, tarfile
HOME = {SANDBOX_HOME:?}
OUT = {out:?}
total = 0
for root, dirs, files in os.walk(HOME):
    for name in files:
        path = os.path.join(root, name)
        if path != OUT and os.path.isfile(path) and not os.path.islink(path):
            total += os.path.getsize(path)
if total > {GRADED_BUDGET}:
    print(f"OVER {{total}}")
    sys.exit(0)
with tarfile.open(OUT, "w:gz") as tar:
    for entry in sorted(os.listdir(HOME)):
        path = os.path.join(HOME, entry)
        if path != OUT:
            tar.add(path, arcname=entry)
print("OK")
"#
    )
}

/// A program that unpacks the archive at `archive` into the home folder, refusing members
/// that would land outside it, then deletes the archive.
pub fn restore_program(archive: &str) -> String {
    format!(
        r#"import os, tarfile
HOME = {SANDBOX_HOME:?}
ARCHIVE = {archive:?}
with tarfile.open(ARCHIVE, "r:gz") as tar:
    try:
        tar.extractall(HOME, filter="tar")
    except TypeError:
        for member in tar.getmembers():
            target = os.path.realpath(os.path.join(HOME, member.name))
            if not target.startswith(HOME + os.sep):
                raise SystemExit(f"refusing {{member.name}}")
        tar.extractall(HOME)
os.remove(ARCHIVE)
print("OK")
"#
    )
}

/// A modelling task's predictions file, as grading read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PredictionsFile {
    /// Its bytes.
    Read(Vec<u8>),
    /// There was no such file.
    Absent,
    /// It held this many bytes, more than the budget: neither graded nor kept.
    OverBudget(u64),
}

/// The graded state of an episode that answered `answer`, with the home folder for a check
/// and the predictions file for a modelling task.
pub fn graded_state(
    answer: &str,
    home: Option<&HomeSnapshot>,
    predictions: Option<&PredictionsFile>,
    chart: Option<&Option<Value>>,
) -> Value {
    let mut state = serde_json::Map::new();
    if answer.len() <= GRADED_BUDGET {
        state.insert("answer".into(), answer.into());
    } else {
        state.insert("answer_bytes".into(), answer.len().into());
    }
    match home {
        Some(HomeSnapshot::Kept(archive)) => {
            state.insert(
                "home".into(),
                json!({
                    "tar_gz": base64::engine::general_purpose::STANDARD.encode(archive),
                    "bytes": archive.len(),
                }),
            );
        }
        Some(HomeSnapshot::OverBudget(bytes)) => {
            state.insert("home".into(), json!({ "over_budget": bytes }));
        }
        None => {}
    }
    if let Some(file) = predictions {
        let kept = match file {
            PredictionsFile::Read(bytes) => json!({
                "base64": base64::engine::general_purpose::STANDARD.encode(bytes),
                "bytes": bytes.len(),
            }),
            PredictionsFile::Absent => json!({ "absent": true }),
            PredictionsFile::OverBudget(bytes) => json!({ "over_budget": bytes }),
        };
        state.insert("predictions".into(), kept);
    }
    if let Some(chart) = chart {
        // The sandbox bounds an extracted chart's size; one past the budget is not kept.
        let size = chart.as_ref().map_or(0, |c| c.to_string().len());
        if size <= GRADED_BUDGET {
            state.insert("chart".into(), chart.clone().unwrap_or(Value::Null));
        } else {
            state.insert("chart_bytes".into(), size.into());
        }
    }
    Value::Object(state)
}

/// The chart a graded state kept (`Ok(None)`: none was shown).
pub fn kept_chart(graded: Option<&Value>) -> Result<Option<Value>, RescoreError> {
    let graded = graded.ok_or_else(|| {
        RescoreError::NotRecorded("the trajectory does not keep the chart graded".into())
    })?;
    if let Some(bytes) = graded.get("chart_bytes") {
        return Err(RescoreError::NotRecorded(format!(
            "the chart was {bytes} bytes, more than the {GRADED_BUDGET} a trajectory keeps"
        )));
    }
    match graded.get("chart") {
        None => Err(RescoreError::NotRecorded(
            "the trajectory does not keep the chart graded".into(),
        )),
        Some(Value::Null) => Ok(None),
        Some(chart) => Ok(Some(chart.clone())),
    }
}

/// The predictions file a graded state kept (`Ok(None)`: there was none to read).
pub fn kept_predictions(graded: Option<&Value>) -> Result<Option<Vec<u8>>, RescoreError> {
    let kept = graded.and_then(|g| g.get("predictions")).ok_or_else(|| {
        RescoreError::NotRecorded("the trajectory does not keep the predictions file".into())
    })?;
    if kept.get("absent").is_some() {
        return Ok(None);
    }
    if let Some(bytes) = kept.get("over_budget") {
        return Err(RescoreError::NotRecorded(format!(
            "the predictions file held {bytes} bytes, more than the {GRADED_BUDGET} a trajectory keeps"
        )));
    }
    let encoded = kept
        .get("base64")
        .and_then(Value::as_str)
        .ok_or_else(|| RescoreError::NotRecorded("the kept predictions have no bytes".into()))?;
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map(Some)
        .map_err(|error| {
            RescoreError::NotRecorded(format!("the kept predictions are not base64: {error}"))
        })
}

/// The answer a graded state kept; `Ok(None)` when it kept none (a file from before answers
/// were kept: the recorded call's arguments hold it).
pub fn kept_answer(graded: Option<&Value>) -> Result<Option<String>, RescoreError> {
    let Some(graded) = graded else {
        return Ok(None);
    };
    if let Some(bytes) = graded.get("answer_bytes") {
        return Err(RescoreError::NotRecorded(format!(
            "the answer was {bytes} bytes, more than the {GRADED_BUDGET} a trajectory keeps"
        )));
    }
    Ok(graded
        .get("answer")
        .and_then(Value::as_str)
        .map(str::to_owned))
}

/// The home folder a graded state kept, as the archive's bytes.
pub fn kept_home(graded: Option<&Value>) -> Result<Vec<u8>, RescoreError> {
    let home = graded.and_then(|g| g.get("home")).ok_or_else(|| {
        RescoreError::NotRecorded(
            "the trajectory does not keep the home folder the hidden check read (it was written before graded files were kept)".into(),
        )
    })?;
    if let Some(bytes) = home.get("over_budget") {
        return Err(RescoreError::NotRecorded(format!(
            "the home folder held {bytes} bytes when the check ran, more than the {GRADED_BUDGET} a trajectory keeps"
        )));
    }
    let encoded = home
        .get("tar_gz")
        .and_then(Value::as_str)
        .ok_or_else(|| RescoreError::NotRecorded("the kept home folder has no archive".into()))?;
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|error| {
            RescoreError::NotRecorded(format!("the kept home folder is not base64: {error}"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_state_reads_back_and_an_oversized_one_says_why() {
        let state = graded_state("42", Some(&HomeSnapshot::Kept(vec![1, 2, 3])), None, None);
        assert_eq!(kept_answer(Some(&state)).unwrap().as_deref(), Some("42"));
        assert_eq!(kept_home(Some(&state)).unwrap(), vec![1, 2, 3]);
        let over = graded_state("42", Some(&HomeSnapshot::OverBudget(9 << 20)), None, None);
        let error = kept_home(Some(&over)).unwrap_err().to_string();
        assert!(error.contains("more than the"), "{error}");
        let error = kept_home(Some(&graded_state("x", None, None, None))).unwrap_err();
        assert!(error.to_string().contains("does not keep the home folder"));
        assert_eq!(kept_answer(None).unwrap(), None);
    }

    #[test]
    fn kept_predictions_read_back() {
        let read = PredictionsFile::Read(b"id,prediction\n1,2\n".to_vec());
        let state = graded_state("", None, Some(&read), None);
        assert_eq!(
            kept_predictions(Some(&state)).unwrap().as_deref(),
            Some(&b"id,prediction\n1,2\n"[..])
        );
        let absent = graded_state("", None, Some(&PredictionsFile::Absent), None);
        assert_eq!(kept_predictions(Some(&absent)).unwrap(), None);
        let over = graded_state("", None, Some(&PredictionsFile::OverBudget(1 << 30)), None);
        assert!(kept_predictions(Some(&over)).is_err());
        assert!(kept_predictions(Some(&graded_state("", None, None, None))).is_err());
    }

    #[test]
    fn the_chart_graded_is_kept_and_read_back() {
        let chart = json!({"type": "bar", "elements": []});
        let state = graded_state("done", None, None, Some(&Some(chart.clone())));
        assert_eq!(kept_chart(Some(&state)).unwrap(), Some(chart));
        let none = graded_state("done", None, None, Some(&None));
        assert_eq!(kept_chart(Some(&none)).unwrap(), None);
        assert!(kept_chart(Some(&graded_state("done", None, None, None))).is_err());
    }
}
