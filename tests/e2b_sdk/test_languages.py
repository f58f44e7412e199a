"""Languages: JavaScript and TypeScript (Deno), R (IRkernel) and Bash beside Python, each with
its output, working directory and environment variables (sandbox-wide, per execution, and
overridden), in default and created contexts. Java is refused with a reason."""

import pytest
from conftest import SandboxFactory
from e2b_code_interpreter import Sandbox

SANDBOX_ENV = {"TEST_ENV_VAR": "supertest"}


def stdout(execution: object) -> str:
    return "".join(execution.logs.stdout)  # type: ignore[attr-defined]


def first_text(execution: object) -> str:
    """The text of the first result (R shows values as displays, not as the cell's value)."""
    results = execution.results  # type: ignore[attr-defined]
    assert results, f"no results in {execution!r}"
    return results[0].text.strip()


def test_default_contexts_are_python_and_javascript(sandbox: Sandbox) -> None:
    languages = [context.language for context in sandbox.list_code_contexts()]
    assert languages[:2] == ["python", "javascript"]
    assert all(context.cwd == "/home/user" for context in sandbox.list_code_contexts())


def test_javascript_prints_imports_and_awaits(sandbox: Sandbox) -> None:
    hello = sandbox.run_code("console.log('Hello, World!')", language="js")
    assert hello.error is None
    assert hello.logs.stdout == ["Hello, World!\n"]
    imported = sandbox.run_code(
        "import { readFileSync } from 'node:fs'\nconsole.log(typeof readFileSync)",
        language="javascript",
    )
    assert imported.logs.stdout == ["function\n"]
    awaited = sandbox.run_code("await Promise.resolve('resolved ' + (6 * 7))", language="js")
    assert awaited.text == "resolved 42"
    assert sandbox.run_code("process.cwd()", language="js").text == "/home/user"


def test_javascript_keeps_state_and_reports_errors(sandbox: Sandbox) -> None:
    default = next(c for c in sandbox.list_code_contexts() if c.language == "javascript")
    # Restarting the listed context before its first cell is allowed (it is fresh anyway).
    sandbox.restart_code_context(default)
    sandbox.run_code("globalThis.counter = 41", language="js")
    assert sandbox.run_code("counter + 1", language="js").text == "42"
    sandbox.restart_code_context(default)
    assert sandbox.run_code("typeof counter", language="js").text == "undefined"
    sandbox.run_code("globalThis.counter = 41", language="js")
    failed = sandbox.run_code("notDefinedAnywhere + 1", language="js")
    assert failed.error is not None
    assert "notDefinedAnywhere" in failed.error.value
    # A new context is a new kernel: nothing carries over.
    context = sandbox.create_code_context(language="javascript")
    isolated = sandbox.run_code("typeof counter", context=context)
    assert isolated.text == "undefined"


def test_typescript_runs_typed_code(sandbox: Sandbox) -> None:
    typed = sandbox.run_code(
        "const message: string = 'Hello, World!'; console.log(message)", language="ts"
    )
    assert typed.error is None
    assert typed.logs.stdout == ["Hello, World!\n"]
    generic = sandbox.run_code(
        "function first<T>(items: T[]): T { return items[0] }\nfirst<number>([7, 8])",
        language="typescript",
    )
    assert generic.text == "7"
    assert sandbox.run_code("process.cwd()", language="ts").text == "/home/user"
    languages = [context.language for context in sandbox.list_code_contexts()]
    assert "typescript" in languages


def test_r_prints_and_shows_values(sandbox: Sandbox) -> None:
    hello = sandbox.run_code('print("Hello, World!")', language="r")
    assert hello.error is None
    assert hello.logs.stdout == ['[1] "Hello, World!"\n']
    assert first_text(sandbox.run_code("getwd()", language="r")) == '[1] "/home/user"'
    assert first_text(sandbox.run_code("sum(1:10)", language="r")) == "[1] 55"
    failed = sandbox.run_code('stop("broken on purpose")', language="r")
    assert failed.error is not None
    assert "broken on purpose" in failed.error.value


def test_bash_keeps_its_shell_between_cells(sandbox: Sandbox) -> None:
    assert stdout(sandbox.run_code("pwd", language="bash")) == "/home/user\n"
    sandbox.run_code("mkdir -p work && cd work && greeting=hello", language="bash")
    assert stdout(sandbox.run_code('pwd; echo "$greeting"', language="bash")) == (
        "/home/user/work\nhello\n"
    )
    looped = sandbox.run_code("for i in 1 2; do\n  echo line $i\ndone", language="bash")
    assert stdout(looped) == "line 1\nline 2\n"
    failed = sandbox.run_code("ls /no/such/place", language="bash")
    assert failed.error is not None
    assert failed.error.value == "2"
    assert "No such file" in stdout(failed)


def test_python_cells_can_still_shell_out(sandbox: Sandbox) -> None:
    assert stdout(sandbox.run_code("!pwd")).strip() == "/home/user"


@pytest.mark.parametrize(
    ("language", "read", "read_or_default"),
    [
        ("javascript", "process.env.{name}", "process.env.{name} || 'default'"),
        ("typescript", "Deno.env.get('{name}')", "Deno.env.get('{name}') ?? 'default'"),
        ("r", "Sys.getenv('{name}')", "Sys.getenv('{name}', unset = 'default')"),
        ("bash", "echo ${name}", "echo ${{{name}:-default}}"),
        ("python", "import os; os.environ['{name}']", "os.environ.get('{name}', 'default')"),
    ],
)
def test_environment_variables_in_every_language(
    sandbox_factory: SandboxFactory, language: str, read: str, read_or_default: str
) -> None:
    sandbox = sandbox_factory(envs=SANDBOX_ENV)

    def value(code: str, envs: dict[str, str] | None = None) -> str:
        execution = sandbox.run_code(code, language=language, envs=envs)
        assert execution.error is None, execution.error
        if execution.logs.stdout:
            return stdout(execution).strip()
        text = first_text(execution)
        # R shows a string as [1] "value".
        return text.removeprefix("[1] ").strip('"')

    assert value(read.format(name="TEST_ENV_VAR")) == "supertest"
    assert value(read.format(name="FOO"), envs={"FOO": "bar"}) == "bar"
    assert value(read_or_default.format(name="FOO")) == "default"
    overwritten = value(read.format(name="TEST_ENV_VAR"), envs={"TEST_ENV_VAR": "overwrite"})
    assert overwritten == "overwrite"
    assert value(read.format(name="TEST_ENV_VAR")) == "supertest"


@pytest.mark.parametrize(
    ("language", "code", "expected"),
    [
        ("python", "import os; os.getcwd()", "/root/project"),
        ("javascript", "Deno.cwd()", "/root/project"),
        ("r", "getwd()", '[1] "/root/project"'),
        ("bash", "pwd", "/root/project"),
    ],
)
def test_contexts_take_a_language_and_a_working_directory(
    sandbox: Sandbox, language: str, code: str, expected: str
) -> None:
    context = sandbox.create_code_context(language=language, cwd="/root/project")
    assert context.language == language
    assert context.cwd == "/root/project"
    listed = sandbox.list_code_contexts()[-1]
    assert (listed.id, listed.language, listed.cwd) == (context.id, language, "/root/project")
    execution = sandbox.run_code(code, context=context)
    assert execution.error is None, execution.error
    shown = stdout(execution).strip() if execution.logs.stdout else first_text(execution)
    assert shown == expected


def test_root_home_is_writable(sandbox: Sandbox) -> None:
    context = sandbox.create_code_context(cwd="/root")
    written = sandbox.run_code(
        "open('notes.txt', 'w').write('kept'); open('/root/notes.txt').read()", context=context
    )
    assert written.text == "kept"


def test_java_is_refused_with_a_reason(sandbox: Sandbox) -> None:
    with pytest.raises(Exception, match="Java is not supported"):
        sandbox.run_code('System.out.println("Hello")', language="java")
    with pytest.raises(Exception, match="Java is not supported"):
        sandbox.create_code_context(language="java")


def test_unknown_languages_and_bad_variable_names_are_refused(sandbox: Sandbox) -> None:
    with pytest.raises(Exception, match="not known"):
        sandbox.run_code("DISPLAY 'HI'", language="cobol")
    with pytest.raises(Exception, match="invalid name"):
        sandbox.run_code("echo hi", language="bash", envs={"A;rm -rf /": "x"})


def test_context_and_language_together_are_refused(sandbox: Sandbox) -> None:
    context = sandbox.create_code_context(language="python")
    with pytest.raises(Exception, match="context"):
        sandbox.run_code("console.log(1)", language="js", context=context)
