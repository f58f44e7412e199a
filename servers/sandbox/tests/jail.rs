//! The jail around real kernels: network, file system, limits and isolation.

mod common;

use std::time::Duration;

use common::{ename, start, start_with};
use mcpgym_sandbox::{ExecutionStatus, StreamName};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_network_not_even_to_the_hosts_loopback() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut sandbox = start().await;
    let code = format!(
        "import socket\n\
         try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n    print('connected')\n\
         except OSError as e:\n    print('failed', type(e).__name__)"
    );
    let run = sandbox.ok(&code).await;
    assert!(
        run.stream(StreamName::Stdout).starts_with("failed"),
        "{run:#?}"
    );
    assert!(
        listener.accept().is_err(),
        "the host listener saw a connection"
    );
    let interfaces = sandbox
        .value("import socket\nsorted(n for _, n in socket.if_nameindex())")
        .await;
    assert_eq!(interfaces, "['lo']");
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_home_and_tmp_are_writable() {
    let mut sandbox = start().await;
    let code = "import json, os\n\
        result = {}\n\
        for path in ['/usr/x', '/etc/x', '/x', '/bin/x', '/run/x', '/home/x', '/proc/x', '/home/user/f', '/tmp/f']:\n\
        \x20   try:\n\
        \x20       open(path, 'w').write('hi')\n\
        \x20       result[path] = 'ok'\n\
        \x20   except OSError as e:\n\
        \x20       result[path] = type(e).__name__\n\
        print(json.dumps(result))";
    let run = sandbox.ok(code).await;
    let result: serde_json::Value = serde_json::from_str(&run.stream(StreamName::Stdout)).unwrap();
    for (path, outcome) in result.as_object().unwrap() {
        let writable = path == "/home/user/f" || path == "/tmp/f";
        assert_eq!(outcome == "ok", writable, "{path}: {outcome}");
    }
    // The home directory is the host directory of this sandbox.
    let on_host = std::fs::read_to_string(sandbox.kernel.home_dir().join("f")).unwrap();
    assert_eq!(on_host, "hi");
    // uid 1000 in its own PID namespace, seeing only its own processes.
    let ids = sandbox
        .value("import os\n(os.getuid(), os.getgid(), os.getpid() < 10)")
        .await;
    assert_eq!(ids, "(1000, 1000, True)");
    sandbox.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_kernels_share_neither_files_nor_variables() {
    let (mut a, mut b) = tokio::join!(start(), start());
    a.ok(
        "secret = 42\nopen('/home/user/a.txt', 'w').write('a')\nopen('/tmp/a.txt', 'w').write('a')",
    )
    .await;
    let seen = b
        .value(
            "import os\n('secret' in globals(), os.path.exists('/home/user/a.txt'), \
             os.path.exists('/tmp/a.txt'))",
        )
        .await;
    assert_eq!(seen, "(False, False, False)");
    let others = b.value("import os\nsorted(os.listdir('/proc'))").await;
    assert!(!others.contains("a.txt"));
    assert_ne!(a.kernel.home_dir(), b.kernel.home_dir());
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_bomb_is_contained() {
    let (mut bomb, mut bystander) = tokio::join!(
        start_with(|c| c.jail.limits.max_processes = Some(64)),
        start()
    );
    let code =
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass";
    let run = bomb
        .kernel
        .execute(code, Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(run.status, ExecutionStatus::TimedOut, "{run:#?}");
    // The other sandbox kept working, and a restart clears the bomb's jail.
    assert_eq!(bystander.value("1 + 1").await, "2");
    bomb.kernel.restart().await.unwrap();
    assert_eq!(bomb.value("1 + 1").await, "2");
    bomb.close().await;
    bystander.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_bomb_is_contained() {
    let mut sandbox = start_with(|c| c.jail.limits.memory_bytes = Some(768 << 20)).await;
    let run = sandbox
        .kernel
        .execute("x = bytearray(4 << 30)", common::RUN)
        .await
        .unwrap();
    assert_eq!(ename(&run), Some("MemoryError"), "{run:#?}");
    let code = "chunks = []\nwhile True:\n    chunks.append(b'x' * (32 << 20))";
    let run = sandbox.kernel.execute(code, common::RUN).await.unwrap();
    assert!(
        ename(&run) == Some("MemoryError") || run.status == ExecutionStatus::KernelDied,
        "{run:#?}"
    );
    assert_eq!(sandbox.value("chunks = None\n1 + 1").await, "2");
    sandbox.close().await;
}
