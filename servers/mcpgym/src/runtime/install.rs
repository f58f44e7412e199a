//! `mcpgym runtime install`: the steps of `manifests/container/install runtime`, from the lock
//! this binary embeds, with a progress line per step. A plain command: it blocks.
//!
//! The venv is built under `DIR.build` and renamed to `DIR` once its stamp is written, so an
//! interrupted build never leaves a runtime that looks complete; `DIR.lock` keeps two installs
//! from building the same folder at once.

use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::{BASE_PYTHON, DENO_VERSION, LOCK, STAMP_FILE, Stamp, hidden_from_jails};

/// Where, inside a runtime, Matplotlib's font cache is built (what the sandbox seeds each
/// jail's Matplotlib folder with).
const FONT_CACHE_DIR: &str = mcpgym_sandbox::runtime::FONT_CACHE_DIR;
/// The steps a build shows.
const STEPS: usize = 6;
/// How often the progress line is redrawn while a step only writes files.
const TICK: Duration = Duration::from_millis(200);

/// Flags of `mcpgym runtime install`.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Build it in DIR instead of the per-user cache (the servers then need --runtime DIR or
    /// MCPGYM_RUNTIME=DIR). DIR must be new, empty, or a runtime (an older one is replaced).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Builds the runtime unless it is there already; prints its folder.
pub fn run(args: InstallArgs) -> anyhow::Result<()> {
    let python = base_python()?;
    let stamp = Stamp::of(&python);
    let target = match args.dir {
        Some(dir) => std::path::absolute(&dir)
            .with_context(|| format!("cannot make {} absolute", dir.display()))?,
        None => super::cache_dir()
            .context(
                "cannot tell where the per-user cache is (neither XDG_CACHE_HOME nor HOME is \
                 set): give a folder with --dir DIR",
            )?
            .join(stamp.key()),
    };
    if stamp.marks(&target) {
        eprintln!("the runtime is already installed in {}", target.display());
        println!("{}", target.display());
        return Ok(());
    }
    anyhow::ensure!(
        on_path("npm"),
        "npm is not on PATH, and the runtime's Deno (the JavaScript kernel) comes from npm: \
         install it (`apt-get install npm`, or Node.js from nodejs.org), then run `mcpgym \
         runtime install` again"
    );
    let (name, parent) = match (target.file_name(), target.parent()) {
        (Some(name), Some(parent)) => (name.to_owned(), parent),
        _ => anyhow::bail!("{} cannot hold a runtime: name a folder", target.display()),
    };
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    // Where the parent really is: jails bind the runtime there, and its scripts must name it.
    let final_dir = parent
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", parent.display()))?
        .join(name);
    anyhow::ensure!(
        !hidden_from_jails(&final_dir),
        "{} lies under root's home, which jails never see: choose another --dir (or, for the \
         per-user cache, set XDG_CACHE_HOME elsewhere)",
        final_dir.display()
    );
    // Only a runtime (an older or unfinished one) or an empty folder is ever replaced.
    let replaceable = |dir: &Path| {
        !dir.exists()
            || dir.join("pyvenv.cfg").is_file()
            || dir.join(STAMP_FILE).is_file()
            || std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
    };
    anyhow::ensure!(
        replaceable(&final_dir),
        "{} holds something that is not a runtime, and installing would replace it: give a new or \
         empty folder with --dir",
        final_dir.display()
    );
    let _lock = lock(&with_suffix(&final_dir, ".lock"))?;
    // Another install may have finished it while this one waited.
    if stamp.marks(&final_dir) {
        eprintln!(
            "the runtime is already installed in {}",
            final_dir.display()
        );
        println!("{}", final_dir.display());
        return Ok(());
    }
    let build_dir = with_suffix(&final_dir, ".build");
    let started = Instant::now();
    eprintln!(
        "building the sandboxes' runtime in {} from {} pinned wheels and Deno {DENO_VERSION} \
         (a few minutes, about 1.2 GB)",
        final_dir.display(),
        super::locked_packages().count()
    );
    let built = build(&build_dir, &final_dir, &stamp);
    if built.is_err() {
        // A failed build is started again from nothing; its gigabyte need not wait for that.
        let _ = std::fs::remove_dir_all(&build_dir);
    }
    built?;
    let old = with_suffix(&final_dir, ".old");
    let _ = std::fs::remove_dir_all(&old);
    if final_dir.exists() {
        std::fs::rename(&final_dir, &old)
            .with_context(|| format!("cannot move the old {} aside", final_dir.display()))?;
    }
    std::fs::rename(&build_dir, &final_dir)
        .with_context(|| format!("cannot move the runtime to {}", final_dir.display()))?;
    let _ = std::fs::remove_dir_all(&old);
    eprintln!(
        "the runtime is installed in {} ({})",
        final_dir.display(),
        seconds(started.elapsed())
    );
    println!("{}", final_dir.display());
    Ok(())
}

/// The base interpreter's `-VV`, checked: it exists and is the Python the lock is for.
fn base_python() -> anyhow::Result<String> {
    let output = Command::new(BASE_PYTHON)
        .arg("-VV")
        .env_remove("PYTHONHOME")
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        _ => anyhow::bail!(
            "{BASE_PYTHON} does not run, and the runtime is a venv of it: install Debian's \
             Python (`apt-get install python3 python3-venv`), then run `mcpgym runtime install` \
             again"
        ),
    };
    let version = String::from_utf8_lossy(&output.stdout).into_owned();
    anyhow::ensure!(
        version.starts_with("Python 3.11."),
        "the runtime's lock holds wheels for Python 3.11 (Debian 12's) and {BASE_PYTHON} is {}: \
         on this system, make a venv with ipykernel and the packages your tasks need, and give \
         it to the servers with --runtime DIR",
        version
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(version)
}

/// The steps, in `build`, ending with the stamp.
fn build(build: &Path, final_dir: &Path, stamp: &Stamp) -> anyhow::Result<()> {
    let mut progress = Progress::new();
    if build.exists() {
        std::fs::remove_dir_all(build)
            .with_context(|| format!("cannot remove the unfinished {}", build.display()))?;
    }
    let python = build.join("bin/python");

    progress.step("making a venv of ".to_owned() + &stamp.python);
    let venv = python_command(Path::new(BASE_PYTHON))
        .args(["-m", "venv"])
        .arg(build)
        .output()
        .context("cannot run python3 -m venv")?;
    if !venv.status.success() {
        let said = last_line(&venv.stderr, &venv.stdout);
        anyhow::bail!(
            "{BASE_PYTHON} cannot make a venv ({said}): install Debian's venv module (`apt-get \
             install python3-venv`), then run `mcpgym runtime install` again"
        );
    }
    progress.done();

    let share = build.join("share/mcpgym");
    std::fs::create_dir_all(&share)?;
    let lock = share.join("runtime-requirements.txt");
    std::fs::write(&lock, LOCK)?;
    pip_install(&mut progress, &python, &lock, build)?;

    progress.step(format!("installing Deno {DENO_VERSION} from npm"));
    let npm = Command::new("npm")
        .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
        .arg(share.join("deno"))
        .arg(format!("deno@{DENO_VERSION}"))
        .stdin(Stdio::null())
        .output()
        .context("cannot run npm")?;
    if !npm.status.success() {
        let said = last_line(&npm.stderr, &npm.stdout);
        anyhow::bail!(
            "npm could not install Deno {DENO_VERSION} ({said}): check the connection to the npm \
             registry, then run `mcpgym runtime install` again"
        );
    }
    let platform = match std::env::consts::ARCH {
        "aarch64" => "linux-arm64-glibc",
        _ => "linux-x64-glibc",
    };
    let deno = build.join("bin/deno");
    std::os::unix::fs::symlink(
        format!("../share/mcpgym/deno/node_modules/@deno/{platform}/deno"),
        &deno,
    )?;
    let version = Command::new(&deno).arg("--version").output();
    anyhow::ensure!(
        version.is_ok_and(|output| output.status.success()),
        "the Deno npm installed does not run ({}): remove {} and run `mcpgym runtime install` \
         again",
        deno.display(),
        build.display()
    );
    progress.done();

    // Jails mount it read-only: compile now, since nothing can write a .pyc there later.
    progress.step("compiling the packages' Python".to_owned());
    let compiled = python_command(&python)
        .args(["-m", "compileall", "-q", "-j", "0"])
        .arg(build.join("lib"))
        .stdout(Stdio::null())
        .output()?;
    if !compiled.status.success() {
        let said = last_line(&compiled.stderr, &compiled.stdout);
        anyhow::bail!("compiling the runtime's packages failed ({said})");
    }
    progress.done();

    // Bound read-only into each jail's Matplotlib folder, so the first plot does not scan the
    // fonts again.
    progress.step("building Matplotlib's font cache".to_owned());
    let fonts = build.join(FONT_CACHE_DIR);
    std::fs::create_dir_all(&fonts)?;
    let cached = python_command(&python)
        .args(["-c", "import matplotlib.font_manager"])
        .env("MPLCONFIGDIR", &fonts)
        .env("MPLBACKEND", "agg")
        .output()?;
    if !cached.status.success() {
        let said = last_line(&cached.stderr, &cached.stdout);
        anyhow::bail!("the runtime's Matplotlib does not import ({said})");
    }
    progress.done();

    // Scripts, activation files and the font cache name the build path; they must name the
    // final one.
    let from = build.to_string_lossy().into_owned();
    let to = final_dir.to_string_lossy().into_owned();
    for place in ["bin", "pyvenv.cfg", "share/mcpgym"] {
        rewrite(&build.join(place), &from, &to)?;
    }
    std::fs::write(build.join(STAMP_FILE), format!("{}\n", stamp.hash))?;
    Ok(())
}

/// pip, installing the lock's wheels (no resolution: `--no-deps`, wheels only), shown as two
/// steps counted against the lock: the wheels pip has fetched, then those it has installed
/// (their `.dist-info` folders, which pip writes as it finishes each).
fn pip_install(
    progress: &mut Progress,
    python: &Path,
    lock: &Path,
    build: &Path,
) -> anyhow::Result<()> {
    let total = super::locked_packages().count();
    let site_packages = site_packages(build)?;
    let before = dist_infos(&site_packages);
    let mut child = python_command(python)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--progress-bar",
            "off",
            "--only-binary=:all:",
            "--no-deps",
            "-r",
        ])
        .arg(lock)
        // pip's lines as it writes them, not when its buffer fills.
        .env("PYTHONUNBUFFERED", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run pip")?;
    let stdout = child.stdout.take().context("pip's output")?;
    let mut stderr = child.stderr.take().context("pip's errors")?;
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    progress.step(format!("downloading {total} wheels"));
    let mut fetched = 0;
    let mut installing = false;
    let mut installed = 0;
    loop {
        match received.recv_timeout(TICK) {
            Ok(line) => {
                if let Some(rest) = line.strip_prefix("Collecting ") {
                    fetched += 1;
                    let wheel = rest.split_whitespace().next().unwrap_or_default();
                    progress.bar(fetched, total, wheel);
                } else if line.starts_with("Installing collected packages") && !installing {
                    progress.bar(total.min(fetched), total, "");
                    progress.done();
                    progress.step(format!("installing {total} wheels"));
                    progress.bar(0, total, "");
                    installing = true;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if installing {
            let now = dist_infos(&site_packages).difference(&before).count();
            if now != installed {
                installed = now;
                progress.bar(installed.min(total), total, "");
            }
        }
    }
    let status = child.wait()?;
    let said = errors.join().unwrap_or_default();
    if !status.success() {
        anyhow::bail!(pip_failure(&said));
    }
    if !installing {
        // Every wheel was already there: nothing to install.
        progress.done();
        progress.step(format!("installing {total} wheels"));
    }
    progress.bar(total, total, "");
    progress.done();
    Ok(())
}

/// One sentence for a pip that failed, from what it wrote to stderr.
fn pip_failure(stderr: &str) -> String {
    let last = stderr
        .lines()
        .rev()
        .find(|line| line.starts_with("ERROR:"))
        .or_else(|| stderr.lines().rev().find(|line| !line.trim().is_empty()))
        .unwrap_or("no message")
        .trim();
    const UNREACHABLE: &[&str] = &[
        "NewConnectionError",
        "Failed to establish a new connection",
        "Temporary failure in name resolution",
        "Name or service not known",
        "ConnectTimeoutError",
        "ReadTimeoutError",
        "ProxyError",
        "Connection refused",
        "Network is unreachable",
        // A pinned wheel for the right Python that the index does not list: an index that
        // did not answer (pip warns so only when it retries) or a mirror without it.
        "(from versions: none)",
    ];
    if UNREACHABLE.iter().any(|sign| stderr.contains(sign)) {
        format!(
            "pip cannot get the runtime's wheels from the package index ({last}): check the \
             network connection (or PIP_INDEX_URL, for a mirror), then run `mcpgym runtime \
             install` again"
        )
    } else {
        format!(
            "pip could not install the runtime's pinned wheels ({last}): fix that, then run \
             `mcpgym runtime install` again"
        )
    }
}

/// The venv's `lib/python3.X/site-packages`.
fn site_packages(build: &Path) -> anyhow::Result<PathBuf> {
    std::fs::read_dir(build.join("lib"))?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("site-packages"))
        .find(|path| path.is_dir())
        .with_context(|| format!("the venv in {} has no site-packages", build.display()))
}

/// The names of the `.dist-info` folders in `site_packages`: one per installed package.
fn dist_infos(site_packages: &Path) -> std::collections::BTreeSet<std::ffi::OsString> {
    std::fs::read_dir(site_packages)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name())
        .filter(|name| name.to_string_lossy().ends_with(".dist-info"))
        .collect()
}

/// A command running `python` without the caller's Python settings (a venv activated around
/// this process, or a PYTHONPATH, must not leak into the runtime).
fn python_command(python: &Path) -> Command {
    let mut command = Command::new(python);
    command
        .env_remove("PYTHONHOME")
        .env_remove("PYTHONPATH")
        .env_remove("VIRTUAL_ENV")
        .env_remove("PIP_REQUIRE_VIRTUALENV")
        .stdin(Stdio::null());
    command
}

/// Replaces `from` with `to` in every text file at or below `path` (symbolic links left as
/// they are), as `grep -rlI | sed` would.
fn rewrite(path: &Path, from: &str, to: &str) -> anyhow::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            rewrite(&entry?.path(), from, to)?;
        }
    } else if meta.is_file() {
        let mut head = [0u8; 8192];
        let read = std::fs::File::open(path)?.read(&mut head)?;
        if head[..read].contains(&0) {
            return Ok(());
        }
        let bytes = std::fs::read(path)?;
        if let Ok(text) = std::str::from_utf8(&bytes)
            && text.contains(from)
        {
            std::fs::write(path, text.replace(from, to))
                .with_context(|| format!("cannot rewrite {}", path.display()))?;
        }
    }
    Ok(())
}

/// Holds an exclusive lock on `path` (made if missing) until dropped, waiting for another
/// install that holds it.
fn lock(path: &Path) -> anyhow::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    use std::os::fd::AsRawFd;
    let flock = |operation| {
        // SAFETY: flock on a descriptor this function owns; no memory is passed.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    if flock(libc::LOCK_EX | libc::LOCK_NB).is_err() {
        eprintln!("waiting for another `mcpgym runtime install` of the same folder to finish");
        flock(libc::LOCK_EX).with_context(|| format!("cannot lock {}", path.display()))?;
    }
    Ok(file)
}

/// `path` with `suffix` appended to its last component.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Whether `program` is an executable file in a `PATH` directory.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The last line a failed command wrote, stderr first.
fn last_line(stderr: &[u8], stdout: &[u8]) -> String {
    [stderr, stdout]
        .iter()
        .find_map(|bytes| {
            String::from_utf8_lossy(bytes)
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
                .map(|line| line.trim().to_owned())
        })
        .unwrap_or_else(|| "no message".to_owned())
}

/// `12 s`, or `3 min 4 s`.
fn seconds(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if secs < 60 {
        format!("{secs} s")
    } else {
        format!("{} min {} s", secs / 60, secs % 60)
    }
}

/// The build's progress on stderr: on a terminal one line per step, redrawn as it advances
/// (with a bar where the step is counted) and closed with its time; elsewhere (a log) each
/// step's line once as it starts.
struct Progress {
    terminal: bool,
    step: usize,
    what: String,
    started: Instant,
}

impl Progress {
    fn new() -> Self {
        Self {
            terminal: std::io::stderr().is_terminal(),
            step: 0,
            what: String::new(),
            started: Instant::now(),
        }
    }

    /// Starts the next step.
    fn step(&mut self, what: String) {
        self.step += 1;
        self.what = what;
        self.started = Instant::now();
        self.draw(format_args!(""));
        if !self.terminal {
            eprintln!();
        }
    }

    /// Shows `done` of `of` for the step, and what it is on.
    fn bar(&self, done: usize, of: usize, on: &str) {
        if !self.terminal {
            return;
        }
        const WIDTH: usize = 30;
        let filled = (done * WIDTH).checked_div(of).unwrap_or(WIDTH).min(WIDTH);
        self.draw(format_args!(
            " [{}{}] {done}/{of} {on}",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled)
        ));
    }

    /// Ends the step.
    fn done(&self) {
        if self.terminal {
            eprintln!(" ({})", seconds(self.started.elapsed()));
        }
    }

    fn draw(&self, rest: std::fmt::Arguments<'_>) {
        let mut err = std::io::stderr().lock();
        let clear = if self.terminal { "\r\x1b[2K" } else { "" };
        let _ = write!(err, "{clear}[{}/{STEPS}] {}{rest}", self.step, self.what);
        let _ = err.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pip_that_cannot_connect_is_told_from_one_that_fails() {
        let offline = "WARNING: Retrying (Retry(total=4)) after connection broken by \
            'NewConnectionError(...)': /simple/numpy/\n\
            ERROR: Could not find a version that satisfies the requirement numpy==2.3.5\n\
            ERROR: No matching distribution found for numpy==2.3.5\n";
        let said = pip_failure(offline);
        assert!(
            said.starts_with("pip cannot get the runtime's wheels"),
            "{said}"
        );
        assert!(
            said.contains("No matching distribution found for numpy"),
            "{said}"
        );
        let broken = pip_failure("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES\n");
        assert!(said.contains("mcpgym runtime install"), "{said}");
        assert!(broken.starts_with("pip could not install"), "{broken}");
    }

    #[test]
    fn text_files_are_rewritten_and_binaries_and_links_left() {
        let dir = std::env::temp_dir().join(format!("mcpgym-rewrite-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/pip"), "#!/x/rt.build/bin/python\n").unwrap();
        std::fs::write(dir.join("bin/blob"), b"/x/rt.build\0").unwrap();
        std::os::unix::fs::symlink("/x/rt.build/bin/python", dir.join("bin/python")).unwrap();
        rewrite(&dir.join("bin"), "/x/rt.build", "/x/rt").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("bin/pip")).unwrap(),
            "#!/x/rt/bin/python\n"
        );
        assert_eq!(
            std::fs::read(dir.join("bin/blob")).unwrap(),
            b"/x/rt.build\0"
        );
        assert_eq!(
            std::fs::read_link(dir.join("bin/python")).unwrap(),
            Path::new("/x/rt.build/bin/python")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
