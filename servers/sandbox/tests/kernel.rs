//! Executing code in real jailed kernels: outputs, errors, plots, timeouts and restarts.

mod common;

use std::time::Duration;

use common::{ename, result_text, start, start_with};
use mcpgym_sandbox::{ExecutionStatus, Output, StreamName};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_persists_and_streams_stay_apart() {
    let mut sandbox = start().await;
    sandbox.ok("x = 41").await;
    let run = sandbox
        .ok("import sys\nprint(x + 1)\nprint('oops', file=sys.stderr)\nx")
        .await;
    assert_eq!(run.stream(StreamName::Stdout), "42\n");
    assert_eq!(run.stream(StreamName::Stderr), "oops\n");
    assert_eq!(result_text(&run).as_deref(), Some("41"));
    assert!(run.execution_count.is_some());
    assert!(!run.interrupted && !run.restarted);
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exception_comes_back_with_its_traceback() {
    let mut sandbox = start().await;
    let run = sandbox
        .kernel
        .execute("def f():\n    return 1 / 0\nf()", common::RUN)
        .await
        .unwrap();
    assert_eq!(run.status, ExecutionStatus::Error);
    let Some(Output::Error {
        ename,
        evalue,
        traceback,
    }) = run.error()
    else {
        panic!("no error output: {run:#?}");
    };
    assert_eq!(ename, "ZeroDivisionError");
    assert!(evalue.contains("division by zero"), "{evalue}");
    // Frames of the cell and of `f`, then the exception (IPython colours them with ANSI codes).
    assert!(traceback.len() >= 3, "{traceback:?}");
    assert!(
        traceback.last().unwrap().contains("ZeroDivisionError"),
        "{traceback:?}"
    );
    // The kernel is fine afterwards.
    assert_eq!(sandbox.value("2 + 2").await, "4");
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matplotlib_plot_comes_back_as_png() {
    let mut sandbox = start().await;
    let run = sandbox
        .ok("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
        .await;
    let png = run
        .outputs
        .iter()
        .find_map(|o| o.data("image/png"))
        .and_then(|v| v.as_str())
        .unwrap_or_else(|| panic!("no image/png: {run:#?}"));
    // Base64 of the PNG signature.
    assert!(
        png.trim_start().starts_with("iVBORw0KGgo"),
        "{}",
        &png[..png.len().min(40)]
    );
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_interrupts_and_the_kernel_goes_on() {
    let mut sandbox = start().await;
    sandbox.ok("kept = 'yes'").await;
    let run = sandbox
        .kernel
        .execute(
            "import time\nprint('before')\ntime.sleep(60)",
            Duration::from_secs(1),
        )
        .await
        .unwrap();
    assert_eq!(run.status, ExecutionStatus::TimedOut, "{run:#?}");
    assert!(run.interrupted && !run.restarted, "{run:#?}");
    assert_eq!(run.stream(StreamName::Stdout), "before\n");
    assert_eq!(ename(&run), Some("KeyboardInterrupt"));
    assert_eq!(sandbox.value("kept").await, "'yes'");
    assert_eq!(sandbox.kernel.restarts(), 0);
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_that_ignores_sigint_gets_the_kernel_restarted() {
    let mut sandbox = start_with(|c| c.interrupt_grace = Duration::from_secs(1)).await;
    sandbox
        .ok("lost = 1\nopen('/home/user/kept.txt', 'w').write('k')")
        .await;
    let code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass";
    let run = sandbox
        .kernel
        .execute(code, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(run.status, ExecutionStatus::TimedOut, "{run:#?}");
    assert!(run.interrupted && run.restarted, "{run:#?}");
    assert_eq!(sandbox.kernel.restarts(), 1);
    // A fresh kernel: variables gone, files kept.
    let after = sandbox.kernel.execute("lost", common::RUN).await.unwrap();
    assert_eq!(ename(&after), Some("NameError"));
    assert_eq!(
        sandbox.value("open('/home/user/kept.txt').read()").await,
        "'k'"
    );
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_gives_a_clean_kernel_and_dropped_executions_are_settled() {
    let mut sandbox = start().await;
    sandbox.ok("v = 1").await;
    sandbox.kernel.restart().await.unwrap();
    let run = sandbox.kernel.execute("v", common::RUN).await.unwrap();
    assert_eq!(ename(&run), Some("NameError"));

    // A caller that gives up mid-execution (its future dropped) must not leave the next
    // request queued behind the abandoned one.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(500),
        sandbox
            .kernel
            .execute("import time\ntime.sleep(60)", common::RUN),
    )
    .await;
    assert!(abandoned.is_err());
    let next = tokio::time::timeout(Duration::from_secs(20), sandbox.value("3 * 3"))
        .await
        .expect("next execution not stuck behind the abandoned one");
    assert_eq!(next, "9");
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_reports_outputs_while_the_cell_runs() {
    let mut sandbox = start().await;
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    let started = std::time::Instant::now();
    let code = "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('second')\n7";
    let mut early = Vec::new();
    let run = {
        let execution = sandbox.kernel.execute_streaming(code, common::RUN, events);
        tokio::pin!(execution);
        loop {
            tokio::select! {
                Some(event) = received.recv() => early.push((started.elapsed(), event)),
                run = &mut execution => break run.unwrap(),
            }
        }
    };
    while let Ok(event) = received.try_recv() {
        early.push((started.elapsed(), event));
    }
    assert!(
        matches!(early[0].1, mcpgym_sandbox::Event::Started { .. }),
        "{early:?}"
    );
    let (first_at, _) = early
        .iter()
        .find(|(_, e)| {
            matches!(e, mcpgym_sandbox::Event::Output(Output::Stream { text, .. }) if text.contains("first"))
        })
        .expect("the first line as an event");
    assert!(*first_at < Duration::from_millis(1200), "{first_at:?}");
    assert!(started.elapsed() >= Duration::from_millis(1500));
    // The returned execution still holds everything.
    assert_eq!(run.stream(StreamName::Stdout), "first\nsecond\n");
    assert_eq!(result_text(&run).as_deref(), Some("7"));
    // Silent housekeeping does not move the execution count.
    let before = sandbox.ok("1").await.execution_count.unwrap();
    sandbox
        .kernel
        .execute_silently("import os", common::RUN)
        .await
        .unwrap();
    assert_eq!(sandbox.ok("2").await.execution_count.unwrap(), before + 1);
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_output_is_cut_to_its_head_and_tail() {
    let mut sandbox = start_with(|config| config.max_output_bytes = 64 * 1024).await;
    let run = sandbox
        .ok("for i in range(50):\n    print(str(i) * 1_000_000)\nprint('END')\n'y' * 10_000_000")
        .await;
    assert!(run.truncated);
    assert!(run.cut_characters > 50_000_000, "{}", run.cut_characters);
    let stdout = run.stream(StreamName::Stdout);
    assert!(stdout.len() < 64 * 1024, "{}", stdout.len());
    assert!(
        stdout.starts_with("0000") && stdout.ends_with("END\n"),
        "{}",
        &stdout[..100]
    );
    assert!(stdout.contains(" characters cut ...]"), "no marker");
    let value = result_text(&run).unwrap();
    assert!(
        value.len() < 64 * 1024 && value.contains("characters cut"),
        "{}",
        value.len()
    );
    // The kernel is as it was.
    assert_eq!(sandbox.value("6 * 7").await, "42");
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kernel_killed_between_calls_is_restarted_by_the_next() {
    let mut sandbox = start().await;
    sandbox.ok("kept = 1").await;
    // A thread of the cell kills the kernel after the cell has ended.
    sandbox
        .ok("import os, signal, threading\nthreading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()")
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let run = sandbox.ok("'kept' in globals()").await;
    assert!(run.died_before, "{run:#?}");
    assert_eq!(result_text(&run).as_deref(), Some("False"));
    assert_eq!(sandbox.value("6 * 7").await, "42");
    sandbox.close().await;
}
