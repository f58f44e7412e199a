//! The self-contained Python programs that run setups and hidden checks.
//!
//! Every piece of text that goes into a program (the home path, the setup, the check, the
//! agent's answer) travels hex-encoded and is decoded by Python at run time, so no answer,
//! however it is quoted, can become code. The placeholders are replaced by hex digits only, so
//! one replacement can never create another placeholder.

/// Lowercase hex of a string's UTF-8 bytes, for Python's `bytes.fromhex`: no quoting to
/// get wrong.
pub(crate) fn hex(text: &str) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(text.len() * 2);
    for byte in text.bytes() {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0x0f)] as char);
    }
    out
}

/// Runs the setup with the working directory at the home folder (created if missing), in its
/// own namespace, and restores the directory: harmless even if someone runs it in a kernel.
const SETUP: &str = r#"def _mcpgym_setup():
    import os
    home = bytes.fromhex("{HOME}").decode("utf-8")
    setup = compile(bytes.fromhex("{SETUP}").decode("utf-8"), "<mcpgym-setup>", "exec")
    previous = os.getcwd()
    os.makedirs(home, exist_ok=True)
    os.chdir(home)
    try:
        exec(setup, {"__name__": "__mcpgym_setup__", "HOME": home})
    finally:
        os.chdir(previous)


_mcpgym_setup()
del _mcpgym_setup
"#;

/// Recreates the task's starting files in a fresh temporary folder (`ORIGINAL`), so a check
/// compares the agent's work with inputs the agent cannot have edited, then runs the check in
/// the home folder. Any exception, in the setup or the check, becomes a `FAIL:` line, so the
/// output is always PASS/FAIL lines. The process first makes itself undumpable: a check may run
/// the agent's code in a child process, and a child of the same user could otherwise read the
/// expected values from the check's memory (`/proc/PID/mem`).
const CHECK: &str = r#"def _mcpgym_check():
    import ctypes
    import os
    import shutil
    import tempfile
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    home = bytes.fromhex("{HOME}").decode("utf-8")
    answer = bytes.fromhex("{ANSWER}").decode("utf-8")
    setup = bytes.fromhex("{SETUP}").decode("utf-8")
    check = bytes.fromhex("{CHECK}").decode("utf-8")
    previous = os.getcwd()
    original = tempfile.mkdtemp(prefix="mcpgym-original-")
    try:
        os.chdir(original)
        exec(compile(setup, "<mcpgym-setup>", "exec"), {"__name__": "__mcpgym_setup__", "HOME": original})
        os.chdir(home)
        scope = {"__name__": "__mcpgym_check__", "HOME": home, "ANSWER": answer, "ORIGINAL": original}
        exec(compile(check, "<mcpgym-check>", "exec"), scope)
    except BaseException as error:
        print("FAIL: the check raised " + type(error).__name__, flush=True)
    finally:
        os.chdir(previous)
        shutil.rmtree(original, ignore_errors=True)


_mcpgym_check()
del _mcpgym_check
"#;

/// Python that writes `files` (relative path, bytes) in the working directory: the bytes travel
/// as base64 literals, so any bytes do. Empty when there are none.
pub(crate) fn files_writer(files: &[(String, Vec<u8>)]) -> String {
    use base64::Engine as _;
    if files.is_empty() {
        return String::new();
    }
    let engine = base64::engine::general_purpose::STANDARD;
    let mut source = String::from("import base64\n\n_FILES = [\n");
    for (path, bytes) in files {
        // A JSON string literal is a valid Python literal for any text.
        let path = serde_json::to_string(path).expect("a string serializes");
        source.push_str(&format!("    ({path}, \"{}\"),\n", engine.encode(bytes)));
    }
    source.push_str(
        "]\nfor _path, _data in _FILES:\n    \
         os.makedirs(os.path.dirname(_path) or \".\", exist_ok=True)\n    \
         with open(_path, \"wb\") as _file:\n        \
         _file.write(base64.b64decode(_data))\n",
    );
    source
}

/// The program that runs `setup` (prelude included) in `home`.
pub(crate) fn setup_program(home: &str, setup: &str) -> String {
    SETUP
        .replace("{HOME}", &hex(home))
        .replace("{SETUP}", &hex(setup))
}

/// The program that runs `check` (prelude included) in `home`, with `answer` as `ANSWER` and a
/// fresh copy of the starting files from `setup` (prelude included) at `ORIGINAL`.
pub(crate) fn check_program(home: &str, setup: &str, check: &str, answer: &str) -> String {
    CHECK
        .replace("{HOME}", &hex(home))
        .replace("{ANSWER}", &hex(answer))
        .replace("{SETUP}", &hex(setup))
        .replace("{CHECK}", &hex(check))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_through_utf8() {
        assert_eq!(hex("A\"é\n"), "4122c3a90a");
    }

    #[test]
    fn programs_embed_no_raw_text() {
        let program = check_program(
            "/home/user",
            "open('x', 'w')",
            "print('PASS')",
            "\"); evil()",
        );
        assert!(!program.contains("evil"));
        assert!(!program.contains("PASS"));
        for placeholder in ["{HOME}", "{ANSWER}", "{SETUP}", "{CHECK}"] {
            assert!(!program.contains(placeholder), "{placeholder}");
        }
        assert!(!setup_program("/h", "x = 1").contains("{SETUP}"));
    }
}
