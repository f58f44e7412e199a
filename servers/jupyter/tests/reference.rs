//! Every task, end to end with a real Python: its setup runs (twice, and must write the same
//! files both times), the reference solution `tasks/<id>/solution.py` solves it, the
//! solution's answer must grade correct and a wrong answer must not; for hidden checks, the
//! check must pass on the solved folder and fail on a folder that was only set up.
//!
//! A temporary folder stands in for `/home/user`: setups and checks take their home as a
//! parameter, and solutions use paths relative to their working directory, which is that home.
//! The Python is `/usr/bin/python3`, the one the sandbox's kernels use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcpgym_jupyter::families::classic_folder;
use mcpgym_jupyter::grading::{Grading, Verdict, grade};
use mcpgym_jupyter::tasks::{Grader, JupyterTasks, Task};

const PYTHON: &str = "/usr/bin/python3";

/// Runs a program with `python3 -I -c`, as the sandbox will; returns stdout and the exit code.
fn run_program(program: &str, cwd: &Path) -> (String, Option<i32>, String) {
    let output = Command::new(PYTHON)
        .arg("-I")
        .arg("-c")
        .arg(program)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {PYTHON} ({e}); install python3"));
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The folder of task folders, each with its reference solution `solution.py`.
fn tasks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks")
}

/// Every file under `root` with its bytes, by relative path.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                files.insert(path.strip_prefix(root).unwrap().to_path_buf(), bytes);
            }
        }
    }
    files
}

fn set_up(task: &Task, home: &Path) {
    std::fs::create_dir_all(home).unwrap();
    let program = task.setup_program(home.to_str().unwrap());
    let (_, code, stderr) = run_program(&program, Path::new("/"));
    assert_eq!(code, Some(0), "{}: setup failed: {stderr}", task.id());
}

fn run_check(task: &Task, answer: &str, home: &Path) -> Verdict {
    let Grading::Check(program) = grade(task, answer, home.to_str().unwrap()) else {
        panic!("{}: not a check", task.id());
    };
    // Run from somewhere else: the program must find its home by itself.
    let (stdout, code, stderr) = run_program(program.source(), Path::new("/"));
    assert!(
        !stderr.contains("Traceback"),
        "{}: check crashed: {stderr}",
        task.id()
    );
    program.interpret(&stdout, code)
}

fn wrong_answer(grader: &Grader) -> String {
    match grader {
        Grader::Exact(expected) => format!("{expected}x"),
        Grader::OneOf(_) => "definitely-not-it".to_owned(),
        Grader::Numeric { value, .. } => format!("{}", value + value.abs().max(1.0)),
        Grader::Check { .. }
        | Grader::HiddenTests { .. }
        | Grader::Predictions(_)
        | Grader::Chart(_) => "wrong".to_owned(),
    }
}

/// The `classic` family's tasks with the folders they are read from, in instance order.
fn classic() -> Vec<(&'static str, Task)> {
    let tasks = JupyterTasks::builtin();
    (0..)
        .map_while(|n| Some((classic_folder(n)?, tasks.get(&format!("classic/{n}"))?)))
        .collect()
}

fn verify(folder: &str, task: &Task, scratch: &Path) {
    let id = folder;
    let solved = scratch.join(id).join("solved");
    let unsolved = scratch.join(id).join("unsolved");
    set_up(task, &solved);
    set_up(task, &unsolved);
    assert_eq!(
        snapshot(&solved),
        snapshot(&unsolved),
        "{id}: setup is not deterministic"
    );
    if task.has_setup() {
        assert!(!snapshot(&solved).is_empty(), "{id}: setup wrote nothing");
    }

    let solution = tasks_dir().join(id).join("solution.py");
    let output = Command::new(PYTHON)
        .arg("-I")
        .arg(&solution)
        .current_dir(&solved)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{id}: reference solution failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer = String::from_utf8_lossy(&output.stdout).trim().to_owned();

    match task.grader() {
        Grader::Check { .. } => {
            let verdict = run_check(task, &answer, &solved);
            assert_eq!(verdict, Verdict::Correct, "{id}: check on the solved home");
            let verdict = run_check(task, &answer, &unsolved);
            assert!(
                !verdict.is_correct(),
                "{id}: check passed on an unsolved home"
            );
        }
        grader => {
            let Grading::Done(verdict) = grade(task, &answer, "/unused") else {
                unreachable!()
            };
            assert_eq!(
                verdict,
                Verdict::Correct,
                "{id}: reference answer {answer:?}"
            );
            let wrong = wrong_answer(grader);
            let Grading::Done(verdict) = grade(task, &wrong, "/unused") else {
                unreachable!()
            };
            assert!(!verdict.is_correct(), "{id}: wrong answer {wrong:?} passed");
            // The answer wrapped in prose is not the answer.
            let prose = format!("The answer is {answer}");
            let Grading::Done(verdict) = grade(task, &prose, "/unused") else {
                unreachable!()
            };
            assert!(!verdict.is_correct(), "{id}: prose passed");
        }
    }
}

#[test]
fn every_task_is_solvable_and_graded() {
    let tasks = classic();
    let scratch =
        std::env::temp_dir().join(format!("mcpgym-jupyter-reference-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);

    // Every task has exactly one solution, and every solution a task.
    let mut solution_ids: Vec<String> = std::fs::read_dir(tasks_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|dir| dir.join("solution.py").is_file())
        .map(|dir| dir.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    solution_ids.sort();
    let mut task_ids: Vec<String> = tasks.iter().map(|(f, _)| (*f).to_owned()).collect();
    task_ids.sort();
    assert_eq!(solution_ids, task_ids);

    // Tasks are independent; spread them over the cores.
    let all: Vec<&(&str, Task)> = tasks.iter().collect();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    std::thread::scope(|scope| {
        for chunk in all.chunks(all.len().div_ceil(workers)) {
            let scratch = &scratch;
            scope.spawn(move || {
                for (folder, task) in chunk {
                    verify(folder, task, scratch);
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn a_check_cannot_be_fooled_by_the_answer_or_a_crash() {
    let tasks = classic();
    let (_, task) = tasks
        .iter()
        .find(|(_, t)| matches!(t.grader(), Grader::Check { .. }))
        .unwrap();
    let home = std::env::temp_dir().join(format!("mcpgym-jupyter-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    set_up(task, &home);
    // An answer that tries to close the string and print PASS stays a string.
    let verdict = run_check(task, "\"); print(\"PASS\"); (\"", &home);
    assert!(!verdict.is_correct());
    // A check that raises is a failure with a reason, not a crash.
    let crashing = Task::new(
        "x",
        mcpgym_env::Split::Train,
        task.kind(),
        "p",
        "",
        Grader::Check {
            code: "raise ValueError('boom')".into(),
        },
    );
    let verdict = run_check(&crashing, "", &home);
    assert_eq!(
        verdict,
        Verdict::Incorrect {
            reason: "the hidden check failed: the check raised ValueError".into()
        }
    );
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_check_compares_with_inputs_the_agent_cannot_edit() {
    let tasks = classic();
    let (_, task) = tasks
        .iter()
        .find(|(_, t)| t.prompt().contains("region_totals.csv"))
        .unwrap();
    let home = std::env::temp_dir().join(format!("mcpgym-jupyter-tamper-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    set_up(task, &home);
    // The shortcut: shrink the input, then write totals that match the shrunken input.
    std::fs::write(
        home.join("sales.csv"),
        "date,region,product,units,unit_price\n2024-01-01,North,cog,1,1.00\n",
    )
    .unwrap();
    std::fs::write(
        home.join("region_totals.csv"),
        "region,revenue\nNorth,1.00\n",
    )
    .unwrap();
    assert!(!run_check(task, "/home/user/region_totals.csv", &home).is_correct());
    let _ = std::fs::remove_dir_all(&home);
}
