//! Every generated task family, end to end with the sandbox's own Python (the data-science
//! runtime `.ci/setup` builds in `target/runtime`), one test per family (named as the family
//! with `_` for `-`, so a failure names it and `cargo nextest run -E 'test(=group_revenue)'`
//! runs one alone):
//!
//! - its reference solver (`families/<name>/solver.py`) solves instances of each split it
//!   serves (one per split in the fast tier, 200 in the full tier, `./.ci/test --full`), and
//!   the solver's answer grades correct (for hidden checks: the check passes on the solved
//!   folder);
//! - the untouched instance fails (an empty answer, or the check on a folder only set up);
//! - a modelling family's trivial predictor (`families/<name>/trivial.py`) scores about 0, and
//!   the reference's predictions with a row dropped, repeated or shifted do not succeed;
//! - near misses fail: for a number, the value just past its tolerance or rounded too
//!   coarsely; for a hidden check on the files a task leaves (not a debugging task's), each
//!   JSON file the solver wrote with its first or last number off by one, or a key added;
//!   each CSV report it wrote with a number off by one in its first or last row, a row added
//!   or missing, or two rows swapped;
//! - the setup writes the same bytes twice;
//! - for the families whose work is cleaning messy sources (`needs_every_step`, `naive_solver_fails`), the solver
//!   with any one cleaning step left out (duplicates kept, a unit ignored, …) gets a wrong
//!   answer on nearly every instance of the levels that set that step's trap;
//! - 1,000 seeds give at least 990 distinct instances, the same instance number gives the
//!   same prompt and files, and a computed answer appears in neither.
//!
//! Instances run in one Python process per family (a driver that sets each one up in its own
//! folder and runs the solver there), so hundreds of instances take seconds, not minutes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcpgym_env::Split;
use mcpgym_env::generate::Level;
use mcpgym_env::rng::EpisodeRng;
use mcpgym_jupyter::families::{FAMILIES, Family, FamilySplit};
use mcpgym_jupyter::grading::{Grading, grade};
use mcpgym_jupyter::tasks::{Grader, Task, TaskKind};
use serde_json::{Value, json};

/// Instances per split the solver must solve: one in the fast tier, 200 in the full tier.
fn solved_per_split() -> u64 {
    if std::env::var("MCPGYM_TEST_TIER").is_ok_and(|tier| tier == "full") {
        200
    } else {
        1
    }
}
/// Instances per split whose distinctness is counted.
const DISTINCT: u64 = 1000;

/// The sandbox's Python: the runtime the setup script builds.
fn python() -> PathBuf {
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/runtime/bin/python");
    assert!(
        runtime.exists(),
        "{} is missing: run .ci/setup to build the data-science runtime",
        runtime.display()
    );
    runtime
}

fn solver(family: &Family) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("families")
        .join(family.name)
        .join("solver.py")
}

/// The instance numbers a split's seeds select, as the environment picks them.
fn instances(family: &Family, split: Split, seeds: u64) -> Vec<u64> {
    let range = family.ranges().range(split);
    (0..seeds)
        .map(|seed| range.start + EpisodeRng::new(seed ^ 0x5EED).below_u64(range.end - range.start))
        .collect()
}

/// The instances of a split the solver must solve: the first [`solved_per_split`] the seeds
/// select, of each level for a levelled family.
fn solved_instances(family: &Family, split: Split) -> Vec<u64> {
    let per_level = solved_per_split();
    if !family.levelled {
        return instances(family, split, per_level);
    }
    let mut counts = [0; 3];
    let mut picked = Vec::new();
    // Seeds pick instances uniformly, so each level turns up about every third seed.
    for n in instances(family, split, per_level * 60) {
        let level = Level::of(n) as usize;
        // Seeds can pick an instance twice; each is set up once, in its own folder.
        if counts[level] < per_level && !picked.contains(&n) {
            counts[level] += 1;
            picked.push(n);
        }
    }
    assert!(
        counts.iter().all(|&c| c == per_level),
        "{}: too few seeds reached every level",
        family.name
    );
    picked
}

fn splits(family: &Family) -> Vec<Split> {
    match family.split {
        FamilySplit::TrainAndTest => vec![Split::Train, Split::Test],
        FamilySplit::TestOnly => vec![Split::Test],
    }
}

/// Sets up, compares two setups, solves: one job per task, in one Python process. Returns each
/// job's result object (see `DRIVER`).
const DRIVER: &str = r#"
import contextlib, io, json, os, sys, traceback

def snapshot(root):
    files = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, root)] = f.read()
    return files

def run(source, cwd, scope):
    out = io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, scope.get("__file__", "<program>"), "exec"), scope)
        return out.getvalue(), None
    except SystemExit as stop:
        return out.getvalue(), None if stop.code in (None, 0) else f"exit {stop.code}"
    except BaseException:
        return out.getvalue(), traceback.format_exc()
    finally:
        os.chdir(previous)

def last_chart():
    # The chart the kernel's display formatter would extract from the figure shown last
    # (with the Agg backend, plt.show() leaves it open), as JSON.
    if "matplotlib.pyplot" not in sys.modules:
        return None
    import matplotlib.pyplot as plt
    from e2b_charts import chart_figure_to_chart
    if not plt.get_fignums():
        return None
    chart = chart_figure_to_chart(plt.gcf())
    plt.close("all")
    if chart is None:
        return None
    return json.loads(json.dumps(chart.model_dump(warnings=False), default=lambda o: o.item() if hasattr(o, "item") else str(o)))

jobs = json.load(sys.stdin)
solver = open(sys.argv[1]).read() if len(sys.argv) > 1 else None
for job in jobs:
    result = {}
    for name in ("solved", "unsolved"):
        os.makedirs(job[name], exist_ok=True)
        _, error = run(job["setup_" + name], "/", {"__name__": "__main__"})
        if error:
            result["error"] = "setup: " + error
    if "error" not in result:
        result["same"] = snapshot(job["solved"]) == snapshot(job["unsolved"])
        if job.get("check"):
            output, error = run(job["check"], "/", {"__name__": "__main__"})
            result["output"] = output
            if error:
                result["error"] = error
        else:
            output, error = run(solver, job["solved"], {"__name__": "__main__", "__file__": "solver.py", "PROMPT": job["prompt"]})
            result["answer"] = output.strip().splitlines()[-1] if output.strip() else ""
            if error:
                result["error"] = "solver: " + error
            if job.get("chart"):
                result["chart"] = last_chart()
    print(json.dumps(result), flush=True)
# Every result is out: skip the interpreter's teardown, where a native library's threads (the
# solvers import pyarrow and polars) may abort the process ("terminate called ...").
sys.stdout.flush()
os._exit(0)
"#;

fn drive(jobs: &[Value], solver: Option<&Path>) -> Vec<Value> {
    let mut command = Command::new(python());
    command
        .arg("-I")
        .arg("-c")
        .arg(DRIVER)
        .env("MPLBACKEND", "Agg");
    if let Some(solver) = solver {
        command.arg(solver);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the runtime's python runs");
    let input = serde_json::to_vec(jobs).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(&input).unwrap();
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        output.status.success(),
        "driver failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Checks one family; returns its failures as sentences.
fn verify(family: &Family, scratch: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let mut tasks: Vec<Task> = Vec::new();
    for split in splits(family) {
        for n in solved_instances(family, split) {
            let task = family.task(n).expect("an instance of the split's range");
            assert_eq!(task.split(), split, "{}", task.id());
            tasks.push(task);
        }
    }
    let home = |task: &Task, which: &str| scratch.join(task.id().replace('/', "-")).join(which);
    let jobs: Vec<Value> = tasks
        .iter()
        .map(|task| {
            let (solved, unsolved) = (home(task, "solved"), home(task, "unsolved"));
            json!({
                "prompt": task.prompt(),
                "solved": solved,
                "unsolved": unsolved,
                "setup_solved": task.setup_program(solved.to_str().unwrap()),
                "setup_unsolved": task.setup_program(unsolved.to_str().unwrap()),
                "chart": matches!(task.grader(), Grader::Chart(_)),
            })
        })
        .collect();
    let results = drive(&jobs, Some(&solver(family)));
    let mut checks = Vec::new();
    let mut modelled = Vec::new();
    for (task, result) in tasks.iter().zip(&results) {
        let id = task.id();
        if let Some(error) = result["error"].as_str() {
            failures.push(format!("{id}: {error}"));
            continue;
        }
        if result["same"] != json!(true) {
            failures.push(format!("{id}: two setups wrote different files"));
        }
        let answer = result["answer"].as_str().unwrap_or_default();
        let graded = |answer: &str, folder: &Path| grade(task, answer, folder.to_str().unwrap());
        match graded(answer, &home(task, "solved")) {
            Grading::Done(verdict) => {
                if !verdict.is_correct() {
                    failures.push(format!("{id}: the solver's answer {answer:?}: {verdict:?}"));
                }
                if let Grading::Done(untouched) = graded("", &home(task, "unsolved"))
                    && untouched.is_correct()
                {
                    failures.push(format!("{id}: an empty answer passed"));
                }
                for near_miss in near_misses(task.grader()) {
                    if let Grading::Done(verdict) = graded(&near_miss, &home(task, "solved"))
                        && verdict.is_correct()
                    {
                        failures.push(format!("{id}: the near miss {near_miss:?} passed"));
                    }
                }
            }
            Grading::Chart(grader) => {
                let chart = result.get("chart").filter(|c| !c.is_null());
                let verdict = grader.grade(chart);
                if !verdict.is_correct() {
                    failures.push(format!("{id}: the solver's chart: {verdict:?}"));
                }
                if grader.grade(None).is_correct() {
                    failures.push(format!("{id}: no chart passed"));
                }
                for (hack, hacked) in chart_hacks(chart.cloned().unwrap_or_default()) {
                    if grader.grade(Some(&hacked)).is_correct() {
                        failures.push(format!("{id}: the chart hack {hack} passed"));
                    }
                }
            }
            Grading::Predictions(grader) => {
                let solved = std::fs::read(home(task, "solved").join(&grader.file)).ok();
                let verdict = grader.grade(solved.as_deref());
                if !verdict.is_correct() {
                    failures.push(format!("{id}: the solver's predictions: {verdict:?}"));
                }
                let untouched = std::fs::read(home(task, "unsolved").join(&grader.file)).ok();
                if grader.grade(untouched.as_deref()).score() > 0.0 {
                    failures.push(format!("{id}: the untouched folder scored"));
                }
                for (hack, bytes) in prediction_hacks(solved.as_deref().unwrap_or_default()) {
                    let verdict = grader.grade(Some(&bytes));
                    if verdict.is_correct() {
                        failures.push(format!("{id}: the hack {hack} succeeded: {verdict:?}"));
                    }
                }
                modelled.push((task, grader));
            }
            Grading::Check(program) => {
                checks.push((task, "solved", program));
                // A check costs a process or two; one untouched folder in ten is plenty.
                let sampled = checks.len() % 10 == 1;
                if let Grading::Check(untouched) = graded(answer, &home(task, "unsolved"))
                    && sampled
                {
                    checks.push((task, "untouched", untouched));
                }
                for (i, hacked) in
                    hacked_outputs(task, &home(task, "solved"), &home(task, "unsolved"))
                        .into_iter()
                        .enumerate()
                {
                    let folder = scratch
                        .join(task.id().replace('/', "-"))
                        .join(format!("hacked-{i}"));
                    if let Grading::Check(program) = graded(answer, &folder)
                        && hacked(&folder)
                    {
                        checks.push((task, "hacked", program));
                    }
                }
            }
        }
    }
    if !modelled.is_empty() {
        // The trivial predictor the score's 0 stands for, on the untouched folders.
        let jobs: Vec<Value> = modelled
            .iter()
            .enumerate()
            .map(|(i, (task, _))| {
                json!({
                    "prompt": task.prompt(),
                    "solved": home(task, "unsolved"),
                    "unsolved": scratch.join(format!("trivial-{i}")),
                    "setup_solved": "",
                    "setup_unsolved": "",
                })
            })
            .collect();
        let trivial = solver(family).with_file_name("trivial.py");
        for ((task, grader), result) in modelled.iter().zip(drive(&jobs, Some(&trivial))) {
            let bytes = std::fs::read(home(task, "unsolved").join(&grader.file)).ok();
            let verdict = grader.grade(bytes.as_deref());
            if verdict.is_correct() || verdict.score() > 0.1 || result.get("error").is_some() {
                failures.push(format!(
                    "{}: the trivial predictor: {verdict:?} {}",
                    task.id(),
                    result["error"].as_str().unwrap_or_default()
                ));
            }
        }
    }
    if !checks.is_empty() {
        // The checks run on the folders as the solver left them; setups run again first (into
        // other folders), since a check recreates the original inputs itself.
        let jobs: Vec<Value> = checks
            .iter()
            .enumerate()
            .map(|(i, (_, _, program))| {
                let spare = scratch.join(format!("spare-{i}"));
                json!({
                    "prompt": "",
                    "solved": spare.join("a"),
                    "unsolved": spare.join("b"),
                    "setup_solved": "",
                    "setup_unsolved": "",
                    "check": program.source(),
                })
            })
            .collect();
        for ((task, folder, program), result) in checks.iter().zip(drive(&jobs, None)) {
            let verdict = program.interpret(result["output"].as_str().unwrap_or_default(), Some(0));
            if *folder == "untouched" && verdict.score() > 0.0 {
                failures.push(format!(
                    "{}: the untouched folder earned {verdict:?}",
                    task.id()
                ));
            }
            if verdict.is_correct() != (*folder == "solved") {
                failures.push(format!(
                    "{}: the hidden check on the {folder} folder: {verdict:?} {}",
                    task.id(),
                    result["error"].as_str().unwrap_or_default()
                ));
            }
        }
    }
    failures
}

/// Prediction files a hacking policy would try, made from the reference's own `solved` file,
/// that must not succeed: a row left out, a row repeated, and the predictions moved one row
/// along (right values, wrong ids).
fn prediction_hacks(solved: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let text = String::from_utf8_lossy(solved);
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() < 3 {
        return Vec::new();
    }
    let join = |lines: &[&str]| (lines.join("\n") + "\n").into_bytes();
    let mut repeated = lines.clone();
    repeated.push(lines[1]);
    let (ids, values): (Vec<&str>, Vec<&str>) = lines[1..]
        .iter()
        .map(|line| line.split_once(',').unwrap_or((line, "")))
        .unzip();
    let mut shifted = vec![lines[0].to_owned()];
    for (i, id) in ids.iter().enumerate() {
        shifted.push(format!("{id},{}", values[(i + 1) % values.len()]));
    }
    vec![
        ("a row left out", join(&lines[..lines.len() - 1])),
        ("a row repeated", join(&repeated)),
        (
            "predictions one row along",
            (shifted.join("\n") + "\n").into_bytes(),
        ),
    ]
}

/// A hack that makes a folder from the solved one: copies it to the folder given and edits
/// the copy; returns whether it applied.
type Hack = Box<dyn Fn(&Path) -> bool>;

/// End states a hacking policy (or a careless one) might leave that a hidden check of a task
/// graded on its files must refuse: each JSON file the solver wrote or changed, with its first
/// or its last number off by one, or (an object) with a key added; each CSV report the solver
/// wrote (a new file, not one of the inputs moved) with a number off by one in its first or
/// its last row, a row added, a row missing, or two rows swapped. Debugging tasks are graded
/// by running the agent's program on hidden input, not on the files it leaves: they get none.
fn hacked_outputs(task: &Task, solved: &Path, unsolved: &Path) -> Vec<Hack> {
    if task.kind() == TaskKind::Debugging {
        return Vec::new();
    }
    let inputs: HashSet<Vec<u8>> = files_under(unsolved)
        .iter()
        .filter_map(|path| std::fs::read(path).ok())
        .collect();
    let mut written = Vec::new();
    let mut reports = Vec::new();
    for path in files_under(solved) {
        let relative = path.strip_prefix(solved).unwrap().to_path_buf();
        let bytes = std::fs::read(&path).ok();
        if path.extension().is_some_and(|e| e == "json")
            && bytes != std::fs::read(unsolved.join(&relative)).ok()
        {
            written.push(relative);
        } else if path.extension().is_some_and(|e| e == "csv")
            && !unsolved.join(&relative).exists()
            && bytes.as_ref().is_some_and(|b| !inputs.contains(b))
        {
            reports.push(relative);
        }
    }
    let mut hacks: Vec<Hack> = Vec::new();
    for relative in reports {
        for edit in [
            csv_first_off_by_one as fn(&mut Vec<Vec<String>>) -> bool,
            csv_last_off_by_one,
            csv_extra_row,
            csv_missing_row,
            csv_rows_swapped,
        ] {
            let (solved, relative) = (solved.to_path_buf(), relative.clone());
            hacks.push(Box::new(move |folder: &Path| {
                let text = std::fs::read_to_string(solved.join(&relative)).unwrap_or_default();
                // Plain reports only: a quoted field would need a real CSV parser.
                if text.contains('"') {
                    return false;
                }
                let mut rows: Vec<Vec<String>> = text
                    .lines()
                    .map(|line| line.split(',').map(str::to_owned).collect())
                    .collect();
                if rows.len() < 3 || !edit(&mut rows) {
                    return false;
                }
                copy_folder(&solved, folder);
                let lines: Vec<String> = rows.iter().map(|row| row.join(",")).collect();
                std::fs::write(folder.join(&relative), lines.join("\n") + "\n").unwrap();
                true
            }));
        }
    }
    for relative in written {
        for edit in [
            first_off_by_one as fn(&mut Value) -> bool,
            last_off_by_one,
            extra_key,
        ] {
            let (solved, relative) = (solved.to_path_buf(), relative.clone());
            hacks.push(Box::new(move |folder: &Path| {
                let Ok(mut value) = serde_json::from_slice::<Value>(
                    &std::fs::read(solved.join(&relative)).unwrap(),
                ) else {
                    return false;
                };
                if !edit(&mut value) {
                    return false;
                }
                copy_folder(&solved, folder);
                std::fs::write(folder.join(&relative), value.to_string()).unwrap();
                true
            }));
        }
    }
    hacks
}

/// Adds one to the first number of a CSV report's first data row; whether it had one.
// One signature for every edit of a report, some of which add or remove rows.
#[allow(clippy::ptr_arg)]
fn csv_first_off_by_one(rows: &mut Vec<Vec<String>>) -> bool {
    csv_off_by_one(&mut rows[1])
}

/// Adds one to the first number of a CSV report's last data row; whether it had one.
// One signature for every edit of a report, some of which add or remove rows.
#[allow(clippy::ptr_arg)]
fn csv_last_off_by_one(rows: &mut Vec<Vec<String>>) -> bool {
    let last = rows.len() - 1;
    csv_off_by_one(&mut rows[last])
}

fn csv_off_by_one(row: &mut [String]) -> bool {
    for field in row.iter_mut() {
        if let Ok(number) = field.trim().parse::<f64>() {
            *field = format!("{}", number + 1.0);
            return true;
        }
    }
    false
}

/// Repeats a CSV report's last row.
fn csv_extra_row(rows: &mut Vec<Vec<String>>) -> bool {
    rows.push(rows[rows.len() - 1].clone());
    true
}

/// Leaves out a CSV report's last row.
fn csv_missing_row(rows: &mut Vec<Vec<String>>) -> bool {
    rows.pop();
    true
}

/// Swaps a CSV report's first two data rows; whether they differ.
// One signature for every edit of a report, some of which add or remove rows.
#[allow(clippy::ptr_arg)]
fn csv_rows_swapped(rows: &mut Vec<Vec<String>>) -> bool {
    rows.swap(1, 2);
    rows[1] != rows[2]
}

/// Adds one to the first number (depth first, keys in sorted order) of `value`; whether
/// there was one.
fn first_off_by_one(value: &mut Value) -> bool {
    off_by_one(value, false)
}

/// Adds one to the last number of `value`; whether there was one.
fn last_off_by_one(value: &mut Value) -> bool {
    off_by_one(value, true)
}

fn off_by_one(value: &mut Value, last: bool) -> bool {
    match value {
        Value::Number(n) => {
            *value = match n.as_i64() {
                Some(i) => json!(i + 1),
                None => json!(n.as_f64().unwrap() + 1.0),
            };
            true
        }
        Value::Array(items) if last => items.iter_mut().rev().any(|v| off_by_one(v, last)),
        Value::Array(items) => items.iter_mut().any(|v| off_by_one(v, last)),
        Value::Object(map) if last => map.values_mut().rev().any(|v| off_by_one(v, last)),
        Value::Object(map) => map.values_mut().any(|v| off_by_one(v, last)),
        _ => false,
    }
}

/// Adds a key to an object; whether `value` is one.
fn extra_key(value: &mut Value) -> bool {
    match value {
        Value::Object(map) => map.insert("note".to_owned(), json!("checked")).is_none(),
        _ => false,
    }
}

/// Every file under `root`, recursively.
fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// Copies the folder `from` (files and folders) to `to`.
fn copy_folder(from: &Path, to: &Path) {
    for path in files_under(from) {
        let target = to.join(path.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&path, &target).unwrap();
    }
}

/// Answers a hacking policy would try that a numeric grader must refuse: the value just past
/// its tolerance either way, and the value rounded to one decimal fewer when that moves it
/// past the tolerance.
fn near_misses(grader: &Grader) -> Vec<String> {
    let Grader::Numeric {
        value,
        rel_tol,
        abs_tol,
    } = grader
    else {
        return Vec::new();
    };
    let tolerance = abs_tol.max(rel_tol * value.abs());
    // Past the tolerance and the grader's float slack (1e-12 of the value); a count, asked
    // exactly, is missed by one.
    let offset = if tolerance == 0.0 && value.fract() == 0.0 {
        1.0
    } else {
        1.5 * tolerance + 1e-8 * value.abs().max(1.0)
    };
    let mut misses = vec![format!("{}", value + offset), format!("{}", value - offset)];
    // Only where the prompt asks for a number of decimal places (an absolute tolerance).
    if *rel_tol == 0.0 && tolerance > 0.0 && tolerance < 0.5 {
        let decimals = (-(2.0 * tolerance).log10()).round() as i32;
        let coarse = mcpgym_env::generate::round(*value, decimals - 1);
        if (coarse - value).abs() > offset {
            misses.push(format!("{coarse}"));
        }
    }
    misses
}

#[test]
fn there_are_thirty_families_and_some_held_out() {
    assert!(FAMILIES.len() >= 30, "{} families", FAMILIES.len());
    let held_out = FAMILIES
        .iter()
        .filter(|f| f.split == FamilySplit::TestOnly)
        .count();
    assert!(held_out >= 4, "{held_out} held-out families");
}

/// Checks the family named `name`: its instances, then its solver, in a scratch folder of
/// its own.
fn solve_family(name: &str) {
    let family = FAMILIES
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no family {name}"));
    let scratch = std::env::temp_dir().join(format!(
        "mcpgym-jupyter-family-{name}-{}",
        std::process::id()
    ));
    check_instances(family);
    let _ = std::fs::remove_dir_all(&scratch);
    let failures = verify(family, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        failures.is_empty(),
        "{name}: {} failures:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// One test per family, named as the family with `_` for `-`; [`every_family_has_a_test`]
/// keeps the list complete.
macro_rules! family_tests {
    ($($family:ident)*) => {
        /// The families tested here, by test name.
        const TESTED: &[&str] = &[$(stringify!($family)),*];
        $(
            #[test]
            fn $family() {
                solve_family(&stringify!($family).replace('_', "-"));
            }
        )*
    };
}

family_tests! {
    log_errors duplicate_files caesar_cipher organise_files tree_size archive_contents
    access_log_latency extract_contacts csv_to_json word_frequency parquet_filter group_revenue
    json_records strongest_correlation top_customer missing_values linear_regression pivot_excel
    outliers time_series join_orders polynomial_root fix_parser largest_eigenvalue fix_class
    linear_system definite_integral ode_value prime_sums lattice_paths fix_function fix_script
    store_margin house_prices churn demand_forecast fix_package payroll_overtime
    sensor_exceedance inventory_report revenue_chart clinic_visits fleet_fuel survey_waves
    shipping_delays budget_variance web_sessions
}

/// Fixing some of a package's bugs pays some of the reward: the reference solver's fixes with
/// `ledger/parse.py` put back as it was (a hard instance always has a bug there, and bugs in
/// the other two modules), on instances of each split. The visible tests pass before any fix.
#[test]
fn fix_package_pays_for_the_modules_fixed() {
    let family = FAMILIES.iter().find(|f| f.name == "fix-package").unwrap();
    let scratch = std::env::temp_dir().join(format!("mcpgym-fix-package-{}", std::process::id()));
    let partial = scratch.join("partial.py");
    std::fs::create_dir_all(&scratch).unwrap();
    let solver = solver(family);
    std::fs::write(
        &partial,
        format!(
            "import pathlib, subprocess, sys\n\
             visible = subprocess.run([sys.executable, 'tests/test_ledger.py'], capture_output=True, text=True).stdout.strip()\n\
             original = pathlib.Path('ledger/parse.py').read_text()\n\
             exec(open({:?}).read())\n\
             pathlib.Path('ledger/parse.py').write_text(original)\n\
             print(visible.replace(' ', '-'))\n",
            solver.to_str().unwrap()
        ),
    )
    .unwrap();
    let tasks: Vec<Task> = [Split::Train, Split::Test]
        .into_iter()
        .flat_map(|split| instances(family, split, 30))
        .filter(|n| Level::of(*n) == Level::Hard)
        .take(4)
        .map(|n| family.task(n).unwrap())
        .collect();
    assert!(tasks.len() >= 2);
    let folder = |task: &Task| scratch.join(task.id().replace('/', "-"));
    let jobs: Vec<Value> = tasks
        .iter()
        .map(|task| {
            let (a, b) = (folder(task).join("a"), folder(task).join("b"));
            json!({
                "prompt": task.prompt(),
                "solved": a,
                "unsolved": b,
                "setup_solved": task.setup_program(a.to_str().unwrap()),
                "setup_unsolved": task.setup_program(b.to_str().unwrap()),
            })
        })
        .collect();
    let results = drive(&jobs, Some(&partial));
    let (mut programs, mut checks) = (Vec::new(), Vec::new());
    for (task, result) in tasks.iter().zip(&results) {
        assert!(result.get("error").is_none(), "{}: {result}", task.id());
        assert_eq!(result["answer"], "visible-tests-pass", "{}", task.id());
        let Grading::Check(program) = grade(task, "done", folder(task).join("a").to_str().unwrap())
        else {
            panic!("hidden tests run as a check");
        };
        let spare = folder(task).join("spare");
        checks.push(json!({
            "prompt": "", "solved": spare.join("a"), "unsolved": spare.join("b"),
            "setup_solved": "", "setup_unsolved": "", "check": program.source(),
        }));
        programs.push(program);
    }
    for ((task, program), result) in tasks.iter().zip(&programs).zip(drive(&checks, None)) {
        let verdict = program.interpret(result["output"].as_str().unwrap_or_default(), Some(0));
        let score = verdict.score();
        assert!(
            score > 0.0 && score < 1.0 && !verdict.is_correct(),
            "{}: {verdict:?}",
            task.id()
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A family's cleaning steps are each needed: for each `(step, first)`, the reference solver
/// with that step left out is wrong on nearly every instance of the levels from `first` on,
/// the first that sets the step's trap (see [`naive_solver_fails`]).
fn needs_every_step(name: &str, steps: &[(&str, Level)]) {
    for &(step, first) in steps {
        naive_solver_fails_from(name, &[step], first);
    }
}

#[test]
fn clinic_visits_needs_every_cleaning_step() {
    needs_every_step(
        "clinic-visits",
        &[
            ("prices", Level::Easy),
            ("dates", Level::Medium),
            ("duplicates", Level::Medium),
            ("codes", Level::Hard),
            ("cancelled", Level::Hard),
            ("pid", Level::Hard),
        ],
    );
}

#[test]
fn fleet_fuel_needs_every_cleaning_step() {
    needs_every_step(
        "fleet-fuel",
        &[
            ("gallons", Level::Easy),
            ("miles", Level::Easy),
            ("period", Level::Medium),
            ("duplicates", Level::Hard),
            ("ids", Level::Hard),
            ("sheets", Level::Hard),
        ],
    );
}

#[test]
fn survey_waves_needs_every_cleaning_step() {
    needs_every_step(
        "survey-waves",
        &[
            ("reverse", Level::Easy),
            ("panel", Level::Easy),
            ("duplicates", Level::Medium),
            ("text", Level::Hard),
            ("ids", Level::Easy),
        ],
    );
}

#[test]
fn every_family_has_a_test() {
    let mut families: Vec<String> = FAMILIES.iter().map(|f| f.name.replace('-', "_")).collect();
    let mut tested: Vec<String> = TESTED.iter().map(|t| t.to_string()).collect();
    families.sort_unstable();
    tested.sort_unstable();
    assert_eq!(
        tested, families,
        "each family needs its line in family_tests! (servers/jupyter/tests/families.rs)"
    );
}

/// The family's first 1,000 instances of each split: distinct, stable, and holding no answer.
fn check_instances(family: &Family) {
    for split in splits(family) {
        let mut seen = HashSet::new();
        for n in instances(family, split, DISTINCT) {
            let instance = family.instance(n).unwrap();
            let again = family.instance(n).unwrap();
            assert_eq!(instance.prompt, again.prompt, "{}/{n}", family.name);
            assert_eq!(instance.files, again.files, "{}/{n}", family.name);
            assert_eq!(instance.setup, again.setup, "{}/{n}", family.name);
            if let Some(secret) = &instance.secret {
                assert!(
                    !instance.prompt.contains(secret.as_str()),
                    "{}/{n}: the prompt holds the answer {secret:?}",
                    family.name
                );
                for (path, bytes) in &instance.files {
                    let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
                    assert!(
                        !found,
                        "{}/{n}: {path} holds the answer {secret:?}",
                        family.name
                    );
                }
            }
            if let Grader::Numeric { value, .. } = instance.grader {
                assert!(value.is_finite(), "{}/{n}", family.name);
            }
            seen.insert((instance.prompt, instance.files, instance.setup));
        }
        assert!(
            seen.len() as u64 >= DISTINCT * 99 / 100,
            "{} ({split}): {} distinct instances of {DISTINCT}",
            family.name,
            seen.len()
        );
        let wordings: HashSet<String> = seen.iter().map(|(prompt, ..)| wording(prompt)).collect();
        assert!(
            wordings.len() >= WORDINGS,
            "{} ({split}): {} wordings in {DISTINCT} instances, fewer than {WORDINGS} (draw the \
             prompt's sentences from mcpgym_env::generate::wording or a list of the family's own)",
            family.name,
            wordings.len()
        );
    }
}

/// Near misses of a chart, each of which must fail: one value off by one, the last bar or
/// point dropped, a bar or line added, an axis label changed, the other chart type.
fn chart_hacks(chart: Value) -> Vec<(&'static str, Value)> {
    let mut hacks = Vec::new();
    let is_line = chart["type"] == "line";
    let mut changed = |name: &'static str, change: &dyn Fn(&mut Value)| {
        let mut hacked = chart.clone();
        change(&mut hacked);
        hacks.push((name, hacked));
    };
    changed("a value off by one", &|c| {
        let value = if is_line {
            &mut c["elements"][0]["points"][0][1]
        } else {
            &mut c["elements"][0]["value"]
        };
        *value = json!(value.as_f64().unwrap_or_default() + 1.0);
    });
    changed("the last bar or point dropped", &|c| {
        let list = if is_line {
            &mut c["elements"][0]["points"]
        } else {
            &mut c["elements"]
        };
        if let Some(list) = list.as_array_mut() {
            list.pop();
        }
    });
    changed("a bar or line added", &|c| {
        let mut extra = c["elements"][0].clone();
        extra["label"] = json!("extra");
        if let Some(list) = c["elements"].as_array_mut() {
            list.push(extra);
        }
    });
    changed("the x label changed", &|c| c["x_label"] = json!("x"));
    changed("the other chart type", &|c| {
        c["type"] = json!(if is_line { "bar" } else { "line" });
    });
    hacks
}

/// Wordings each family's prompts must show at least.
const WORDINGS: usize = 10;

/// A prompt's wording, as far as a test can tell it from its data: the first two words of
/// each sentence, with numbers masked. Two prompts that differ only in the values they ask
/// about have the same wording.
fn wording(prompt: &str) -> String {
    prompt
        .split_inclusive(['.', '?', ':', '!'])
        .map(|sentence| {
            sentence
                .split_whitespace()
                .take(2)
                .map(|word| {
                    if word.bytes().any(|b| b.is_ascii_digit()) {
                        "#".to_owned()
                    } else {
                        word.to_lowercase()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|start| !start.is_empty())
        .collect::<Vec<_>>()
        .join("|")
}

#[test]
fn every_family_has_a_solver_and_every_solver_a_family() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("families");
    let mut on_disk: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("solver.py").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut names: Vec<String> = FAMILIES.iter().map(|f| f.name.to_owned()).collect();
    names.sort();
    assert_eq!(on_disk, names);
    let unique: HashSet<&str> = FAMILIES.iter().map(|f| f.name).collect();
    assert_eq!(unique.len(), FAMILIES.len());
    for family in FAMILIES.iter() {
        assert!(
            family
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{}: family names are lowercase words joined by '-'",
            family.name
        );
    }
}

#[test]
fn the_readme_lists_every_family() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    for family in FAMILIES.iter() {
        let split = match family.split {
            FamilySplit::TrainAndTest => "train, test",
            FamilySplit::TestOnly => "test only",
        };
        let row = format!("| `{}` | {split} | {} |", family.name, family.about);
        assert!(readme.contains(&row), "README.md lacks the row {row}");
    }
}

/// Instances per level a naive solver is tried on.
const NAIVE_PER_LEVEL: usize = 8;

/// The family's reference solver with the cleaning steps `skipped` left out (the solver reads
/// a global `SKIP`, the set of the steps' names, set here: time zones ignored, duplicates or
/// bots kept, …) is wrong on nearly every instance of each level: the data makes the steps
/// matter. At most one instance in [`NAIVE_PER_LEVEL`] per level may come out right by chance.
fn naive_solver_fails(name: &str, skipped: &[&str]) {
    naive_solver_fails_from(name, skipped, Level::Easy);
}

/// [`naive_solver_fails`] on the levels from `first` on.
fn naive_solver_fails_from(name: &str, skipped: &[&str], first: Level) {
    let family = FAMILIES.iter().find(|f| f.name == name).unwrap();
    let scratch = std::env::temp_dir().join(format!(
        "mcpgym-naive-{name}-{}-{}",
        skipped.join("-"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let naive = scratch.join("naive.py");
    let source = std::fs::read_to_string(solver(family)).unwrap();
    let steps: Vec<String> = skipped.iter().map(|step| format!("{step:?}")).collect();
    std::fs::write(&naive, format!("SKIP = {{{}}}\n{source}", steps.join(", "))).unwrap();
    let mut tasks: Vec<Task> = Vec::new();
    for level in Level::ALL.into_iter().filter(|&level| level >= first) {
        for split in splits(family) {
            tasks.extend(
                instances(family, split, 200)
                    .into_iter()
                    .filter(|&n| Level::of(n) == level)
                    .take(NAIVE_PER_LEVEL / 2)
                    .map(|n| family.task(n).unwrap()),
            );
        }
    }
    let folder = |task: &Task| scratch.join(task.id().replace('/', "-"));
    let jobs: Vec<Value> = tasks
        .iter()
        .map(|task| {
            let (a, b) = (folder(task).join("a"), folder(task).join("b"));
            json!({
                "prompt": task.prompt(),
                "solved": a,
                "unsolved": b,
                "setup_solved": task.setup_program(a.to_str().unwrap()),
                "setup_unsolved": task.setup_program(b.to_str().unwrap()),
            })
        })
        .collect();
    let mut right = [0; 3];
    let mut checks = Vec::new();
    for (task, result) in tasks.iter().zip(drive(&jobs, Some(&naive))) {
        // A careless solver that stops on the data it did not clean answers nothing: wrong.
        if result.get("error").is_some() {
            continue;
        }
        let answer = result["answer"].as_str().unwrap_or_default();
        let level = Level::of(task.id().rsplit('/').next().unwrap().parse().unwrap());
        match grade(task, answer, folder(task).join("a").to_str().unwrap()) {
            Grading::Done(verdict) => right[level as usize] += usize::from(verdict.is_correct()),
            Grading::Check(program) => checks.push((level, program)),
            Grading::Predictions(_) | Grading::Chart(_) => {
                panic!("{}: not a family of answers or reports", name)
            }
        }
    }
    let jobs: Vec<Value> = checks
        .iter()
        .enumerate()
        .map(|(i, (_, program))| {
            let spare = scratch.join(format!("spare-{i}"));
            json!({
                "prompt": "", "solved": spare.join("a"), "unsolved": spare.join("b"),
                "setup_solved": "", "setup_unsolved": "", "check": program.source(),
            })
        })
        .collect();
    if !jobs.is_empty() {
        for ((level, program), result) in checks.iter().zip(drive(&jobs, None)) {
            let verdict = program.interpret(result["output"].as_str().unwrap_or_default(), Some(0));
            right[*level as usize] += usize::from(verdict.is_correct());
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    for level in Level::ALL.into_iter().filter(|&level| level >= first) {
        assert!(
            right[level as usize] <= 1,
            "{name}: the solver skipping {skipped:?} was right on {} {level} instances",
            right[level as usize]
        );
    }
}

/// A question on delays needs the time zones, one on attempts needs the repeats counted once:
/// a solver skipping both is wrong on every question.
#[test]
fn shipping_delays_needs_time_zones_and_repeated_events() {
    naive_solver_fails("shipping-delays", &["zones", "repeats"]);
}

#[test]
fn budget_variance_needs_rates_and_renames() {
    naive_solver_fails("budget-variance", &["rates"]);
    naive_solver_fails("budget-variance", &["renames"]);
}

#[test]
fn web_sessions_needs_offsets_and_bots_left_out() {
    naive_solver_fails("web-sessions", &["offsets"]);
    naive_solver_fails("web-sessions", &["bots"]);
}
