//! Charts graded from their data: a task whose answer is a plot is checked against the chart
//! the sandbox extracted when the figure was shown (the `e2b/chart` output of a matplotlib
//! figure: its type, axis labels and elements), never from the picture.
//!
//! The chart graded is the last one shown in the notebook (the last cell, in notebook order,
//! that displayed one). It must be of the asked type, with the asked axis labels (compared
//! ignoring case and surrounding spaces), and hold exactly the expected series: for a bar chart
//! each expected bar once and no other, for a line chart each expected line (by its legend
//! label) with exactly the expected points in order. A value counts within the grader's
//! tolerance (half a unit of the precision the data has). An x value given as text matches an
//! expected one it starts with, so a date `2024-03-31T00:00:00` is the month `2024-03`.
//!
//! The chart is extracted inside the sandbox, by code the agent could imitate: a forged chart
//! holding the right numbers still needs the work that computes them, which is what is paid.

use serde_json::Value;

use crate::grading::Verdict;
use crate::notebook::{CellOutput, ExecutedCell};

/// The MIME type the sandbox gives a figure's extracted chart.
pub const CHART_MIME: &str = "e2b/chart";

/// The kind of chart a task asks for, as the extracted chart's `type` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// Bars, one per category (`plt.bar`, `DataFrame.plot.bar`).
    Bar,
    /// Lines through points (`plt.plot`).
    Line,
}

impl ChartKind {
    /// The extracted chart's `type` for this kind.
    pub fn name(self) -> &'static str {
        match self {
            ChartKind::Bar => "bar",
            ChartKind::Line => "line",
        }
    }
}

/// One expected series: a line (its legend label and points) or, for a bar chart, the bars
/// (the label is not read: a single group's name is the plotting library's choice).
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedSeries {
    /// The legend label of a line.
    pub label: String,
    /// `(x, y)`: the x value as text (a category, a bar's label, a month `YYYY-MM`) and the
    /// unrounded y value.
    pub points: Vec<(String, f64)>,
}

/// What a chart task expects of the last chart shown.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartGrader {
    /// The chart's type.
    pub kind: ChartKind,
    /// The x axis label asked for.
    pub x_label: String,
    /// The y axis label asked for.
    pub y_label: String,
    /// The series it must hold, and no others.
    pub series: Vec<ExpectedSeries>,
    /// How far a value may be from the expected one.
    pub tolerance: f64,
}

/// The last chart shown in `cells`: the last extracted chart of the last cell, in notebook
/// order, that displayed one.
pub fn last_chart(cells: &[ExecutedCell]) -> Option<&Value> {
    cells.iter().rev().find_map(|cell| {
        cell.outputs.iter().rev().find_map(|output| match output {
            CellOutput::Result { data, .. } => data.get(CHART_MIME),
            _ => None,
        })
    })
}

/// Labels are compared as people read them: case and surrounding spaces aside.
fn same_label(actual: Option<&str>, expected: &str) -> bool {
    actual.is_some_and(|actual| actual.trim().eq_ignore_ascii_case(expected.trim()))
}

/// An x value as text: a string as it is, a number as Rust prints it.
fn x_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.trim().to_owned()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

impl ChartGrader {
    /// The verdict on `chart`, the last chart shown (`None`: there was none).
    pub fn grade(&self, chart: Option<&Value>) -> Verdict {
        match self.mismatch(chart) {
            None => Verdict::Correct,
            Some(reason) => Verdict::Incorrect { reason },
        }
    }

    /// Why `chart` is not the expected one, or `None` when it is.
    fn mismatch(&self, chart: Option<&Value>) -> Option<String> {
        let Some(chart) = chart else {
            return Some(
                "no chart was shown in the notebook: draw it with matplotlib and show it (plt.show()) before final_answer"
                    .into(),
            );
        };
        let kind = chart
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        if kind != self.kind.name() {
            return Some(format!(
                "the last chart shown is a {kind} chart, not a {} chart",
                self.kind.name()
            ));
        }
        for (axis, key, expected) in [
            ("x", "x_label", &self.x_label),
            ("y", "y_label", &self.y_label),
        ] {
            if !same_label(chart.get(key).and_then(Value::as_str), expected) {
                return Some(format!("the {axis} axis is not labelled {expected:?}"));
            }
        }
        let elements = chart
            .get("elements")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match self.kind {
            ChartKind::Bar => self.bars_mismatch(elements),
            ChartKind::Line => self.lines_mismatch(elements),
        }
    }

    fn close(&self, actual: Option<f64>, expected: f64) -> bool {
        actual.is_some_and(|actual| (actual - expected).abs() <= self.tolerance)
    }

    fn bars_mismatch(&self, elements: &[Value]) -> Option<String> {
        let expected: Vec<&(String, f64)> = self.series.iter().flat_map(|s| &s.points).collect();
        if elements.len() != expected.len() {
            return Some(format!(
                "the chart has {} bars, not {}",
                elements.len(),
                expected.len()
            ));
        }
        for (label, value) in expected {
            let bars: Vec<&Value> = elements
                .iter()
                .filter(|bar| same_label(bar.get("label").and_then(Value::as_str), label))
                .collect();
            match bars.as_slice() {
                [] => return Some(format!("no bar is labelled {label:?}")),
                [bar] => {
                    if !self.close(bar.get("value").and_then(Value::as_f64), *value) {
                        return Some(format!("the bar {label:?} is not the expected value"));
                    }
                }
                _ => return Some(format!("more than one bar is labelled {label:?}")),
            }
        }
        None
    }

    fn lines_mismatch(&self, elements: &[Value]) -> Option<String> {
        if elements.len() != self.series.len() {
            return Some(format!(
                "the chart has {} lines, not {}",
                elements.len(),
                self.series.len()
            ));
        }
        for series in &self.series {
            let lines: Vec<&Value> = elements
                .iter()
                .filter(|line| same_label(line.get("label").and_then(Value::as_str), &series.label))
                .collect();
            let line = match lines.as_slice() {
                [] => {
                    return Some(format!(
                        "no line is labelled {:?} (give each line its label, and show the legend)",
                        series.label
                    ));
                }
                [line] => line,
                _ => return Some(format!("more than one line is labelled {:?}", series.label)),
            };
            let points = line
                .get("points")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            if points.len() != series.points.len() {
                return Some(format!(
                    "the line {:?} has {} points, not {}",
                    series.label,
                    points.len(),
                    series.points.len()
                ));
            }
            for (point, (x, y)) in points.iter().zip(&series.points) {
                let actual_x = point.get(0).and_then(x_text);
                if !actual_x
                    .as_deref()
                    .is_some_and(|a| a.starts_with(x.as_str()))
                {
                    return Some(format!(
                        "the line {:?} does not go through x = {x} where expected (its points must be in order)",
                        series.label
                    ));
                }
                if !self.close(point.get(1).and_then(Value::as_f64), *y) {
                    return Some(format!(
                        "the line {:?} is not the expected value at x = {x}",
                        series.label
                    ));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn bars() -> ChartGrader {
        ChartGrader {
            kind: ChartKind::Bar,
            x_label: "Region".into(),
            y_label: "Revenue".into(),
            series: vec![ExpectedSeries {
                label: String::new(),
                points: vec![("north".into(), 10.5), ("south".into(), 3.25)],
            }],
            tolerance: 0.005,
        }
    }

    fn lines() -> ChartGrader {
        ChartGrader {
            kind: ChartKind::Line,
            x_label: "Month".into(),
            y_label: "Revenue".into(),
            series: vec![
                ExpectedSeries {
                    label: "north".into(),
                    points: vec![("2024-01".into(), 1.0), ("2024-02".into(), 2.0)],
                },
                ExpectedSeries {
                    label: "south".into(),
                    points: vec![("2024-01".into(), 5.0), ("2024-02".into(), 4.0)],
                },
            ],
            tolerance: 0.005,
        }
    }

    fn bar_chart(values: &[(&str, f64)]) -> Value {
        json!({
            "type": "bar", "x_label": " region ", "y_label": "Revenue",
            "elements": values.iter().map(|(l, v)| json!({"label": l, "group": "Group 0", "value": v})).collect::<Vec<_>>(),
        })
    }

    #[test]
    fn a_bar_chart_must_hold_exactly_the_expected_bars() {
        let grader = bars();
        let right = bar_chart(&[("south", 3.2500001), ("north", 10.5)]);
        assert!(grader.grade(Some(&right)).is_correct());
        for wrong in [
            bar_chart(&[("north", 10.5)]),
            bar_chart(&[("north", 10.5), ("south", 3.26)]),
            bar_chart(&[("north", 10.5), ("south", 3.25), ("east", 0.0)]),
            bar_chart(&[("north", 10.5), ("north", 3.25)]),
            bar_chart(&[("north", 10.5), ("west", 3.25)]),
        ] {
            assert!(!grader.grade(Some(&wrong)).is_correct(), "{wrong}");
        }
        let mut unlabelled = right.clone();
        unlabelled["y_label"] = json!(null);
        assert!(!grader.grade(Some(&unlabelled)).is_correct());
        let mut line = right.clone();
        line["type"] = json!("line");
        let Verdict::Incorrect { reason } = grader.grade(Some(&line)) else {
            panic!("a line chart passed as bars")
        };
        assert!(reason.contains("not a bar chart"), "{reason}");
        let Verdict::Incorrect { reason } = grader.grade(None) else {
            panic!("no chart passed")
        };
        assert!(reason.contains("plt.show()"), "{reason}");
    }

    #[test]
    fn a_line_chart_must_go_through_the_expected_points_in_order() {
        let grader = lines();
        let chart = |north: Value, south: Value| {
            json!({"type": "line", "x_label": "Month", "y_label": "revenue", "elements": [
                {"label": "south", "points": south},
                {"label": "north", "points": north},
            ]})
        };
        let right = chart(
            json!([["2024-01-31T00:00:00", 1.0], ["2024-02-29T00:00:00", 2.0]]),
            json!([["2024-01", 5.0], ["2024-02", 4.0]]),
        );
        assert!(grader.grade(Some(&right)).is_correct());
        for wrong in [
            chart(
                json!([["2024-02", 2.0], ["2024-01", 1.0]]),
                json!([["2024-01", 5.0], ["2024-02", 4.0]]),
            ),
            chart(
                json!([["2024-01", 1.0]]),
                json!([["2024-01", 5.0], ["2024-02", 4.0]]),
            ),
            chart(
                json!([["2024-01", 1.0], ["2024-02", 2.1]]),
                json!([["2024-01", 5.0], ["2024-02", 4.0]]),
            ),
            chart(
                json!([["2024-01", 1.0], ["2024-02", "2.0"]]),
                json!([["2024-01", 5.0], ["2024-02", 4.0]]),
            ),
        ] {
            assert!(!grader.grade(Some(&wrong)).is_correct(), "{wrong}");
        }
        let mut one_line = right.clone();
        one_line["elements"].as_array_mut().unwrap().pop();
        assert!(!grader.grade(Some(&one_line)).is_correct());
    }

    #[test]
    fn the_last_chart_shown_is_the_one_graded() {
        let shown = |value: Value| CellOutput::Result {
            is_main: false,
            data: [(CHART_MIME.to_owned(), value)].into_iter().collect(),
        };
        let cells = vec![
            ExecutedCell::code("a", Some(1), vec![shown(json!({"n": 1}))]),
            ExecutedCell::code(
                "b",
                Some(2),
                vec![shown(json!({"n": 2})), shown(json!({"n": 3}))],
            ),
            ExecutedCell::code("c", Some(3), vec![CellOutput::stdout("no chart")]),
        ];
        assert_eq!(last_chart(&cells), Some(&json!({"n": 3})));
        assert_eq!(last_chart(&cells[2..]), None);
    }
}
