//! Grading the string given to `final_answer`.
//!
//! The answer is the whole string the agent passed to `final_answer`; nothing else (cell output,
//! notebook text) is ever searched for the expected value. Text and numbers follow the one
//! answer rule of [`mcpgym_env::answer`] (whitespace, one pair of quotes and one trailing
//! period removed; commas in groups of three as thousands separators). Per [`Grader`]:
//!
//! - **`Exact`**: the normalised answer equals the normalised expected string, byte for byte
//!   (case-sensitive; prompts say which case they want).
//! - **`OneOf`**: the normalised answer equals one of the accepted spellings, normalised,
//!   ignoring case (Unicode lowercase of both sides).
//! - **`Numeric`**: the answer must be *one number and nothing else*, by [`parse_number`]; it
//!   is correct when `|x − value| ≤ max(abs_tol, rel_tol × |value|)` (families asking for `d`
//!   decimal places set `abs_tol` to half a unit of the last place,
//!   [`mcpgym_env::answer::half_unit`]). With both tolerances 0 the number must equal the value
//!   exactly (so `42.0` is right for 42, `42.5` is not).
//! - **`Check`**: grading needs the sandbox: [`grade`] returns the [`CheckProgram`] to run
//!   there (its `ANSWER` is the normalised answer), and [`CheckProgram::interpret`] reads its
//!   output.
//! - **`HiddenTests`**: like a check, but each output line is one test's result, and the
//!   verdict is [`Verdict::Scored`] with the fraction that passed.
//! - **`Predictions`**: a model's predictions file, read from the sandbox after the episode and
//!   measured on the host against labels the sandbox never held
//!   ([`crate::predictions`]), scored between a trivial predictor and a reference.
//!
//! A [`Verdict`]'s reason never contains the expected answer, so it may be shown or logged.

use mcpgym_env::answer::{close, normalize, parse_number};

use crate::charts::ChartGrader;
use crate::predictions::PredictionGrader;
use crate::python::check_program;
use crate::tasks::{Grader, PRELUDE, Task};

/// The outcome of grading.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The answer is right.
    Correct,
    /// The answer is wrong; the reason says why without revealing the expected answer.
    Incorrect {
        /// Why, in a sentence.
        reason: String,
    },
    /// The work earned partial credit: a model's predictions measured on held-out rows, or
    /// the fraction of hidden tests a fixed package passes.
    Scored {
        /// From 0 (nothing gained) to 1.
        score: f64,
        /// Whether the score reaches what the task calls success.
        success: bool,
        /// What was measured, in a sentence.
        reason: String,
    },
}

impl Verdict {
    /// Whether the answer is right (for a scored task: whether it succeeded).
    pub fn is_correct(&self) -> bool {
        match self {
            Verdict::Correct => true,
            Verdict::Incorrect { .. } => false,
            Verdict::Scored { success, .. } => *success,
        }
    }

    /// What the answer earned, from 0 to 1.
    pub fn score(&self) -> f64 {
        match self {
            Verdict::Correct => 1.0,
            Verdict::Incorrect { .. } => 0.0,
            Verdict::Scored { score, .. } => *score,
        }
    }

    pub(crate) fn incorrect(reason: impl Into<String>) -> Self {
        Verdict::Incorrect {
            reason: reason.into(),
        }
    }
}

/// What grading an answer needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Grading {
    /// Graded already, from the answer alone.
    Done(Verdict),
    /// A hidden check must run in the sandbox first.
    Check(CheckProgram),
    /// The predictions file must be read from the sandbox and measured here.
    Predictions(Box<PredictionGrader>),
    /// The last chart shown in the notebook must be checked.
    Chart(Box<ChartGrader>),
}

/// A hidden check, ready to run in the sandbox after the episode.
///
/// Run [`CheckProgram::source`] as its own process (`python3 -I -c SOURCE`, e.g. through envd's
/// `process.Process/Start`), never in the agent's kernel: the agent has had the kernel to
/// itself and may have replaced `print` or anything else in it. `-I` keeps the home folder,
/// which the agent controls, off `sys.path` and ignores user site-packages and `PYTHON*`
/// variables, so the check imports only the read-only system's modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckProgram {
    source: String,
    /// Whether each output line is one hidden test's result (partial credit) rather than one
    /// verdict.
    tests: bool,
}

impl CheckProgram {
    /// The check `code` of `task`, to run in `home` with `answer` as `ANSWER` (and the task's
    /// setup rerun into `ORIGINAL`; see [`Grader::Check`]). Made by [`grade`].
    pub(crate) fn new(task: &Task, code: &str, answer: &str, home: &str) -> Self {
        let check = format!("{PRELUDE}\n{code}");
        Self {
            source: check_program(home, &task.setup_source(), &check, answer),
            tests: false,
        }
    }

    /// Hidden tests `code` of `task` (see [`Grader::HiddenTests`]), to run like a check.
    pub(crate) fn tests(task: &Task, code: &str, answer: &str, home: &str) -> Self {
        Self {
            tests: true,
            ..Self::new(task, code, answer, home)
        }
    }

    /// The program's Python source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The verdict from the check's standard output and exit code.
    ///
    /// Correct only when the process exited with 0 (or the code is unknown) and its output,
    /// blank lines aside, is one or more lines that read exactly `PASS`. Any `FAIL` line
    /// (`FAIL` or `FAIL: reason`) fails; any other line, no output at all, or a non-zero exit
    /// fails too, with a reason saying which. Hidden tests are read by
    /// [`interpret_test_output`] instead.
    pub fn interpret(&self, stdout: &str, exit_code: Option<i32>) -> Verdict {
        if self.tests {
            interpret_test_output(stdout, exit_code)
        } else {
            interpret_check_output(stdout, exit_code)
        }
    }
}

/// Reads the output of hidden tests: one line per test, `PASS <name>` or
/// `FAIL <name>[: reason]`. The score is the fraction that passed; success is all of them.
/// Any other line, no test at all, or a non-zero exit scores 0.
pub fn interpret_test_output(stdout: &str, exit_code: Option<i32>) -> Verdict {
    if let Some(code) = exit_code.filter(|code| *code != 0) {
        return Verdict::incorrect(format!("the hidden tests exited with status {code}"));
    }
    let mut passed = 0usize;
    let mut failed = Vec::new();
    for line in stdout.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(name) = line.strip_prefix("PASS ") {
            if name.trim().is_empty() {
                return Verdict::incorrect("a hidden test passed without a name");
            }
            passed += 1;
        } else if let Some(rest) = line.strip_prefix("FAIL ") {
            let name = rest.split(':').next().unwrap_or(rest).trim();
            failed.push(name.to_owned());
        } else {
            return Verdict::incorrect(
                "the hidden tests printed a line other than PASS <name> or FAIL <name>",
            );
        }
    }
    let total = passed + failed.len();
    if total == 0 {
        return Verdict::incorrect("the hidden tests printed no result");
    }
    let failing = if failed.is_empty() {
        String::new()
    } else {
        format!("; failing: {}", failed.join(", "))
    };
    Verdict::Scored {
        score: passed as f64 / total as f64,
        success: failed.is_empty(),
        reason: format!("{passed} of {total} hidden tests pass{failing}"),
    }
}

/// Reads a check's output; see [`CheckProgram::interpret`].
pub fn interpret_check_output(stdout: &str, exit_code: Option<i32>) -> Verdict {
    if let Some(code) = exit_code.filter(|code| *code != 0) {
        return Verdict::incorrect(format!("the hidden check exited with status {code}"));
    }
    let lines: Vec<&str> = stdout
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return Verdict::incorrect("the hidden check printed nothing");
    }
    let mut failures = Vec::new();
    for line in &lines {
        if *line == "PASS" {
            continue;
        }
        if *line == "FAIL" {
            failures.push("");
        } else if let Some(reason) = line.strip_prefix("FAIL:") {
            failures.push(reason.trim());
        } else {
            return Verdict::incorrect("the hidden check printed a line other than PASS or FAIL");
        }
    }
    match failures.iter().find(|r| !r.is_empty()) {
        Some(reason) => Verdict::incorrect(format!("the hidden check failed: {reason}")),
        None if !failures.is_empty() => Verdict::incorrect("the hidden check failed"),
        None => Verdict::Correct,
    }
}

/// Grades `answer` (the string given to `final_answer`) for `task`. `home` is the sandbox's
/// home folder, used only by `Check` graders.
pub fn grade(task: &Task, answer: &str, home: &str) -> Grading {
    match task.grader() {
        Grader::Exact(expected) => Grading::Done(grade_text(answer, |a| a == normalize(expected))),
        Grader::OneOf(accepted) => Grading::Done(grade_text(answer, |a| {
            let a = a.to_lowercase();
            accepted.iter().any(|s| normalize(s).to_lowercase() == a)
        })),
        Grader::Numeric {
            value,
            rel_tol,
            abs_tol,
        } => Grading::Done(grade_number(answer, *value, *rel_tol, *abs_tol)),
        Grader::Check { code } => {
            Grading::Check(CheckProgram::new(task, code, normalize(answer), home))
        }
        Grader::HiddenTests { code } => {
            Grading::Check(CheckProgram::tests(task, code, normalize(answer), home))
        }
        Grader::Predictions(grader) => Grading::Predictions(grader.clone()),
        Grader::Chart(grader) => Grading::Chart(grader.clone()),
    }
}

fn grade_text(answer: &str, matches: impl Fn(&str) -> bool) -> Verdict {
    let answer = normalize(answer);
    if answer.is_empty() {
        Verdict::incorrect("the answer is empty")
    } else if matches(answer) {
        Verdict::Correct
    } else {
        Verdict::incorrect("the answer does not match the expected answer")
    }
}

fn grade_number(answer: &str, value: f64, rel_tol: f64, abs_tol: f64) -> Verdict {
    let Some(number) = parse_number(answer) else {
        return Verdict::incorrect(
            "the answer is not a single number (give only the number, like 42, 4.2e1 or 1,234.5)",
        );
    };
    let tolerance = abs_tol.max(rel_tol * value.abs());
    if close(number, value, tolerance) {
        Verdict::Correct
    } else {
        Verdict::incorrect("the number is not the expected value")
    }
}

#[cfg(test)]
mod tests {
    use mcpgym_env::Split;

    use super::*;
    use crate::tasks::TaskKind;

    fn numeric(value: f64, rel_tol: f64, abs_tol: f64) -> Grader {
        Grader::Numeric {
            value,
            rel_tol,
            abs_tol,
        }
    }

    fn task(grader: Grader) -> Task {
        Task::new("t", Split::Train, TaskKind::Numeric, "p", "", grader)
    }

    fn verdict(grader: &Grader, answer: &str) -> bool {
        match grade(&task(grader.clone()), answer, "/home/user") {
            Grading::Done(v) => v.is_correct(),
            _ => panic!("graded from the answer alone"),
        }
    }

    #[test]
    fn hidden_tests_pay_the_fraction_that_passed() {
        let scored = |out: &str| match interpret_test_output(out, Some(0)) {
            Verdict::Scored { score, success, .. } => (score, success),
            other => panic!("{out:?}: {other:?}"),
        };
        assert_eq!(scored("PASS a\nPASS b\n"), (1.0, true));
        assert_eq!(
            scored("PASS a\nFAIL b: wrong\nFAIL c\nPASS d\n"),
            (0.5, false)
        );
        for broken in ["", "PASS\n", "ok a\n"] {
            assert!(
                matches!(
                    interpret_test_output(broken, Some(0)),
                    Verdict::Incorrect { .. }
                ),
                "{broken:?}"
            );
        }
        assert!(!interpret_test_output("PASS a\n", Some(1)).is_correct());
    }

    #[test]
    fn numeric_tolerances() {
        let exact = numeric(42.0, 0.0, 0.0);
        assert!(verdict(&exact, "42"));
        assert!(verdict(&exact, "42.000"));
        assert!(!verdict(&exact, "42.0001"));
        assert!(!verdict(&exact, "the answer is 42 or 43"));
        let two_places = numeric(17758.55, 0.0, mcpgym_env::answer::half_unit(2));
        assert!(verdict(&two_places, "17,758.55"));
        assert!(verdict(&two_places, "\"17758.55\""));
        assert!(verdict(&two_places, "17758.5512"));
        assert!(!verdict(&two_places, "17758.56"), "one cent off is wrong");
        assert!(!verdict(&two_places, "17758.6"));
        let relative = numeric(0.0900092352, 1e-5, 1e-6);
        assert!(verdict(&relative, "0.090009"));
        assert!(!verdict(&relative, "0.0900"));
        let negative = numeric(-130050.0, 1e-6, 0.0);
        assert!(verdict(&negative, "-130050"));
        assert!(!verdict(&negative, "130050"));
    }

    #[test]
    fn text_rules() {
        let exact = Grader::Exact("ACC-038".into());
        assert!(verdict(&exact, "ACC-038"));
        assert!(verdict(&exact, "  ACC-038\n"));
        assert!(verdict(&exact, "\"ACC-038\""));
        assert!(verdict(&exact, "`ACC-038`"));
        assert!(!verdict(&exact, "acc-038"), "exact is case-sensitive");
        assert!(
            verdict(&exact, "ACC-038."),
            "one trailing period goes, as everywhere"
        );
        assert!(verdict(
            &Grader::Exact("Meet at noon.".into()),
            "Meet at noon"
        ));
        assert!(!verdict(&exact, "ACC-038.."));
        assert!(!verdict(&exact, "The account is ACC-038"));
        assert!(!verdict(&exact, "\"ACC-038'"));
        assert!(!verdict(&exact, ""));
        let one_of = Grader::OneOf(vec!["meadow".into(), "meadows".into()]);
        assert!(verdict(&one_of, "Meadow"));
        assert!(verdict(&one_of, "'MEADOWS'"));
        assert!(!verdict(&one_of, "meadow, harbor"));
        assert!(!verdict(&one_of, "meadowlark"));
        assert!(!verdict(&one_of, "   "));
    }

    #[test]
    fn reasons_do_not_reveal_the_answer() {
        for (grader, answer) in [
            (Grader::Exact("secretvalue".into()), "nope"),
            (Grader::OneOf(vec!["secretvalue".into()]), "nope"),
            (numeric(987654.0, 0.0, 0.0), "1"),
            (numeric(987654.0, 0.0, 0.0), "words"),
        ] {
            let Grading::Done(Verdict::Incorrect { reason }) = grade(&task(grader), answer, "/h")
            else {
                panic!("should be incorrect");
            };
            assert!(!reason.contains("secretvalue") && !reason.contains("987654"));
        }
    }

    #[test]
    fn check_output_rules() {
        assert!(interpret_check_output("PASS\n", Some(0)).is_correct());
        assert!(interpret_check_output("\nPASS\n\nPASS\n", None).is_correct());
        assert!(!interpret_check_output("FAIL\n", Some(0)).is_correct());
        assert_eq!(
            interpret_check_output("PASS\nFAIL: wrong header\n", Some(0)),
            Verdict::Incorrect {
                reason: "the hidden check failed: wrong header".into()
            }
        );
        // Anything but PASS/FAIL lines is a failure, even alongside PASS.
        assert!(!interpret_check_output("PASS\nhello\n", Some(0)).is_correct());
        assert!(!interpret_check_output("PASSED\n", Some(0)).is_correct());
        assert!(!interpret_check_output("pass\n", Some(0)).is_correct());
        assert!(!interpret_check_output("", Some(0)).is_correct());
        assert!(!interpret_check_output("PASS\n", Some(1)).is_correct());
        let Verdict::Incorrect { reason } = interpret_check_output("", Some(0)) else {
            panic!()
        };
        assert!(reason.contains("nothing"));
    }

    #[test]
    fn check_graders_defer_to_the_sandbox() {
        let grader = Grader::Check {
            code: "print('PASS' if ANSWER == 'x' else 'FAIL')".into(),
        };
        let Grading::Check(program) = grade(&task(grader), "x", "/home/user") else {
            panic!("a check");
        };
        assert!(program.source().contains("ANSWER"));
        assert!(program.interpret("PASS", Some(0)).is_correct());
    }
}
