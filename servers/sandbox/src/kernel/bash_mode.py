# Run by a Bash context's kernel before the first cell (IPKernelApp's exec_files): the kernel
# speaks Jupyter's protocol as IPython, but every cell is Bash, run in one bash that lives as
# long as the kernel (so `cd`, variables and functions carry over, as in a terminal). The bash
# starts with the first cell: starting it during the kernel's own start-up would make that
# start-up slower for contexts that never run a cell. Output comes back as the cell's stdout
# when the command ends; a non-zero exit status is the cell's error, as with bash_kernel.


def _mcpgym_bash_mode() -> None:
    import uuid

    import IPython
    import pexpect

    shell = IPython.get_ipython()
    # Prompts no command prints by accident: replwrap waits for them after each line.
    marker = uuid.uuid4().hex[:12]
    prompt, continuation = f"[{marker}>", f"[{marker}+"
    state: dict[str, pexpect.spawn] = {}

    class ExitStatus(Exception):
        """The cell's last command exited with a non-zero status."""

        def __init__(self, status: int) -> None:
            super().__init__(str(status))
            self.status = status

        def _render_traceback_(self) -> list[str]:
            return [f"the last command exited with status {self.status}"]

    def bash() -> "pexpect.replwrap.REPLWrapper":
        from pexpect import replwrap

        wrapper = state.get("bash")
        if wrapper is not None and wrapper.child.isalive():
            return wrapper
        child = pexpect.spawn(
            "bash",
            ["--norc", "--noprofile"],
            echo=False,
            encoding="utf-8",
            codec_errors="replace",
        )
        # The \[\] keep the prompts' text out of `env` and `set` output.
        change = (
            f"PS1='[\\[\\]{marker}>' PS2='[\\[\\]{marker}+' PROMPT_COMMAND=''; "
            "bind 'set enable-bracketed-paste off' >/dev/null 2>&1"
        )
        wrapper = replwrap.REPLWrapper(
            child,
            r"\$",
            change,
            new_prompt=prompt,
            continuation_prompt=continuation,
            extra_init_cmd="export PAGER=cat",
        )
        state["bash"] = wrapper
        return wrapper

    def run(code: str) -> None:
        if not code.strip():
            return
        wrapper = bash()
        try:
            output = wrapper.run_command(code.rstrip("\n"), timeout=None)
            status = wrapper.run_command("echo $?", timeout=10).strip()
        except KeyboardInterrupt:
            # Stop the command, and the bash too if it does not come back to its prompt.
            wrapper.child.sendintr()
            try:
                wrapper.child.expect_exact(prompt, timeout=2)
            except pexpect.ExceptionPexpect:
                wrapper.child.terminate(force=True)
            raise
        except pexpect.EOF:
            state.pop("bash", None)
            raise RuntimeError("bash exited; the next cell starts a new one") from None
        output = output.replace("\r\n", "\n")
        if output:
            print(output, end="" if output.endswith("\n") else "\n", flush=True)
        if status.isdigit() and int(status) != 0:
            raise ExitStatus(int(status))

    def transform(lines: list[str]) -> list[str]:
        return [f"__mcpgym_bash_run({''.join(lines)!r})\n"]

    shell.user_ns["__mcpgym_bash_run"] = run
    shell.user_ns_hidden["__mcpgym_bash_run"] = run
    shell.input_transformers_cleanup.insert(0, transform)


_mcpgym_bash_mode()
del _mcpgym_bash_mode
