"""The official E2B Python SDK against `mcpgym sandbox`: run by tests/sandbox_e2b_sdk.rs.

Expects E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY in the environment. Prints one line
per check, `ok <name>` or raises (the Rust test reads the output and the exit code).
"""

import base64

from e2b_code_interpreter import Sandbox


def check(name, condition, detail=""):
    if not condition:
        raise AssertionError(f"{name} failed: {detail}")
    print(f"ok {name}", flush=True)


sandbox = Sandbox.create(timeout=120)
check("create", bool(sandbox.sandbox_id), sandbox.sandbox_id)

streamed = []
execution = sandbox.run_code(
    "import sys\nx = 41\nprint(x + 1)\nprint('to stderr', file=sys.stderr)\nx",
    on_stdout=lambda message: streamed.append(message.line),
)
check("stdout", execution.logs.stdout == ["42\n"], execution.logs)
check("stderr", execution.logs.stderr == ["to stderr\n"], execution.logs)
check("result", execution.text == "41", execution.results)
check("streamed", streamed == ["42\n"], streamed)

execution = sandbox.run_code("x + 1")
check("state persists", execution.text == "42", execution.results)

execution = sandbox.run_code(
    "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
    "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"
)
pngs = [r.png for r in execution.results if r.png]
check("png", len(pngs) == 1, execution.results)
check("png bytes", base64.b64decode(pngs[0])[:8] == b"\x89PNG\r\n\x1a\n")

execution = sandbox.run_code("1 / 0")
check("error", execution.error is not None and execution.error.name == "ZeroDivisionError", execution.error)
check("error value", "division by zero" in execution.error.value, execution.error)
check("traceback", "ZeroDivisionError" in execution.error.traceback, execution.error)

context = sandbox.create_code_context()
execution = sandbox.run_code("y = 5\ny * 2", context=context)
check("context", execution.text == "10", execution.results)
execution = sandbox.run_code("'y' in globals()")
check("contexts are apart", execution.text == "False", execution.results)

sandbox.files.write("/home/user/data/hello.txt", "hello from the sdk")
check("file read", sandbox.files.read("/home/user/data/hello.txt") == "hello from the sdk")
execution = sandbox.run_code("open('/home/user/data/hello.txt').read()")
check("file seen by the kernel", execution.text == "hello from the sdk", execution.results)

result = sandbox.commands.run("cat /home/user/data/hello.txt; echo; echo oops >&2; id -un")
check("command stdout", result.stdout == "hello from the sdk\nuser\n", result)
check("command stderr", result.stderr == "oops\n", result)
check("command exit code", result.exit_code == 0, result)
try:
    sandbox.commands.run("exit 3")
    check("command failure", False, "no exception for exit 3")
except Exception as error:  # CommandExitException
    check("command failure", getattr(error, "exit_code", None) == 3, repr(error))

handle = sandbox.commands.run("sleep 60", background=True)
check("command listed", handle.pid in [p.pid for p in sandbox.commands.list()])
check("command killed", handle.kill())
try:
    handle.wait()
    check("killed command ends", False, "it ended normally")
except Exception as error:  # CommandExitException
    check("killed command ends", getattr(error, "exit_code", None) == -1, repr(error))
check("command gone", handle.pid not in [p.pid for p in sandbox.commands.list()])

check("make dir", sandbox.files.make_dir("/home/user/tree/sub"))
sandbox.files.write("/home/user/tree/f.txt", "x")
check("list", sorted(e.name for e in sandbox.files.list("/home/user/tree")) == ["f.txt", "sub"])
check("exists", sandbox.files.exists("/home/user/tree/f.txt") and not sandbox.files.exists("/home/user/none"))
moved = sandbox.files.rename("/home/user/tree/f.txt", "/home/user/tree/g.txt")
check("rename", moved.path == "/home/user/tree/g.txt", moved)
sandbox.files.remove("/home/user/tree")
check("remove", not sandbox.files.exists("/home/user/tree"))
try:
    sandbox.files.read("/etc/passwd")
    check("escape refused", False, "read /etc/passwd")
except Exception as error:
    check("escape refused", "outside the sandbox" in str(error), repr(error))

# A client-side timeout, then the next cell runs (the known "hang after a timeout" fault).
try:
    sandbox.run_code("import time\ntime.sleep(30)", timeout=1)
    check("client timeout", False, "no timeout")
except Exception as error:
    check("client timeout", "Timeout" in type(error).__name__, repr(error))
execution = sandbox.run_code("x")
check("runs after a timeout", execution.text == "41", execution)

check("is running", sandbox.is_running())
sandbox_id = sandbox.sandbox_id
sandbox.kill()
listed = [s.sandbox_id for s in Sandbox.list().next_items()]
check("killed", sandbox_id not in listed, listed)
print("all ok", flush=True)
