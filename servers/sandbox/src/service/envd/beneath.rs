//! File operations confined to a sandbox's home directory, safe against code in the sandbox
//! that swaps a directory for a symlink while a request runs.
//!
//! Every path is resolved by the kernel with `openat2(2)` and `RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS` from a descriptor of the home: a `..` or a symlink that leads out of
//! it (an absolute symlink included) fails with `EXDEV` instead of being followed, atomically,
//! however the tree changes meanwhile. The last step of each operation is a `*at` call on the
//! descriptor of the directory found that way (`mkdirat`, `renameat`, `unlinkat`, `fstatat`
//! without following, `readlinkat`), so no path string is resolved twice. Blocking: call it
//! from a blocking thread.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// How many times a resolution that raced with a rename (`EAGAIN`) is tried again.
const RETRIES: usize = 64;

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path contains a NUL byte"))
}

fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// `openat2(dir, path, flags, mode)` resolving beneath `dir`. An empty path means `dir` itself.
fn open_beneath(dir: BorrowedFd<'_>, path: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    let c = c_path(path)?;
    // SAFETY: `open_how` is plain data; zero is a valid value for every field.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.mode = u64::from(mode);
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    for _ in 0..RETRIES {
        // SAFETY: a valid descriptor, a NUL-terminated path and a live `open_how` of the size
        // given; the kernel returns a new descriptor or -1.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EAGAIN) {
            return Err(error);
        }
    }
    Err(io::Error::from_raw_os_error(libc::EAGAIN))
}

/// A path below the home, split into the directory that holds it and its last name.
fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the home directory itself cannot be used here",
        )),
    }
}

/// A sandbox's home, open.
pub(crate) struct Home(OwnedFd);

impl Home {
    /// Opens the home directory (a host path the service made; the sandbox cannot replace it,
    /// as only its contents are visible inside).
    pub(crate) fn open(home: &Path) -> io::Result<Home> {
        let c = c_path(home)?;
        // SAFETY: a NUL-terminated path; the result is checked.
        let fd = check(unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        })?;
        // SAFETY: a new descriptor only we own.
        Ok(Home(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.0.as_fd()
    }

    /// The directory `path` (relative to the home; empty for the home), as a descriptor.
    pub(crate) fn dir(&self, path: &Path) -> io::Result<OwnedFd> {
        open_beneath(self.fd(), path, libc::O_PATH | libc::O_DIRECTORY, 0)
    }

    /// Opens a regular file for reading. Anything else (a directory, a FIFO that would block,
    /// a device) is refused.
    pub(crate) fn open_read(&self, path: &Path) -> io::Result<File> {
        let fd = open_beneath(
            self.fd(),
            path,
            libc::O_RDONLY | libc::O_NOCTTY | libc::O_NONBLOCK,
            0,
        )?;
        regular_file(fd)
    }

    /// Creates or truncates a regular file for writing, creating its missing directories.
    pub(crate) fn create(&self, path: &Path, mode: u32) -> io::Result<File> {
        let (parent, _) = split(path)?;
        self.make_dirs(parent)?;
        let fd = open_beneath(
            self.fd(),
            path,
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOCTTY | libc::O_NONBLOCK,
            mode,
        )?;
        regular_file(fd)
    }

    /// Creates the missing directories of `path` (relative to the home), each with `mkdirat`
    /// in the descriptor of its parent; returns the last one.
    pub(crate) fn make_dirs(&self, path: &Path) -> io::Result<OwnedFd> {
        let mut current = self.dir(Path::new(""))?;
        let mut prefix = PathBuf::new();
        for component in path.components() {
            let Component::Normal(name) = component else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the path is not normalized",
                ));
            };
            prefix.push(name);
            current = match self.dir(&prefix) {
                Ok(dir) => dir,
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    match mkdir_at(&current, name, 0o755) {
                        Err(error) if error.kind() != io::ErrorKind::AlreadyExists => {
                            return Err(error);
                        }
                        _ => {}
                    }
                    self.dir(&prefix)?
                }
                Err(error) => return Err(error),
            };
        }
        Ok(current)
    }

    /// Creates one directory; its parents must exist (`AlreadyExists` if it does).
    pub(crate) fn make_dir(&self, path: &Path) -> io::Result<()> {
        let (parent, name) = split(path)?;
        let parent = self.make_dirs(parent)?;
        mkdir_at(&parent, name, 0o755)
    }

    /// The status of `path` without following a symlink at its end, and the link's target
    /// when it is one.
    pub(crate) fn stat(&self, path: &Path) -> io::Result<(libc::stat, Option<PathBuf>)> {
        if path.as_os_str().is_empty() {
            let home = self.dir(path)?;
            return Ok((stat_at(&home, OsStr::new(""), libc::AT_EMPTY_PATH)?, None));
        }
        let (parent, name) = split(path)?;
        let parent = self.dir(parent)?;
        entry_at(&parent, name)
    }

    /// Renames `from` to `to` (creating `to`'s missing directories).
    pub(crate) fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (from_parent, from_name) = split(from)?;
        let (to_parent, to_name) = split(to)?;
        let from_dir = self.dir(from_parent)?;
        let to_dir = self.make_dirs(to_parent)?;
        let (a, b) = (c_name(from_name)?, c_name(to_name)?);
        // SAFETY: valid descriptors and NUL-terminated names; the result is checked.
        check(unsafe {
            libc::renameat(
                from_dir.as_raw_fd(),
                a.as_ptr(),
                to_dir.as_raw_fd(),
                b.as_ptr(),
            )
        })
        .map(drop)
    }

    /// Removes a file, a symlink (not what it points to) or a whole directory tree.
    pub(crate) fn remove(&self, path: &Path) -> io::Result<()> {
        let (parent, name) = split(path)?;
        let parent = self.dir(parent)?;
        remove_at(&parent, name)
    }

    /// The entries of directory `path`, down to `depth` levels (1: only its own), as (path
    /// relative to `path`, status, link target). Never descends through a symlink.
    pub(crate) fn list(&self, path: &Path, depth: u32) -> io::Result<Vec<ListedEntry>> {
        let dir = open_beneath(self.fd(), path, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        let mut entries = Vec::new();
        list_into(&dir, PathBuf::new(), depth.max(1), &mut entries)?;
        Ok(entries)
    }
}

/// One entry found by [`Home::list`].
pub(crate) struct ListedEntry {
    /// Its path relative to the listed directory.
    pub(crate) path: PathBuf,
    /// Its status (of the link itself for a symlink).
    pub(crate) stat: libc::stat,
    /// Where it points, for a symlink.
    pub(crate) target: Option<PathBuf>,
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    c_path(Path::new(name))
}

/// An opened descriptor as a `File`, if it is a regular file (then blocking again).
fn regular_file(fd: OwnedFd) -> io::Result<File> {
    let stat = stat_at(&fd, OsStr::new(""), libc::AT_EMPTY_PATH)?;
    match stat.st_mode & libc::S_IFMT {
        libc::S_IFREG => {}
        libc::S_IFDIR => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            ));
        }
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is not a regular file",
            ));
        }
    }
    // SAFETY: a valid descriptor; clearing O_NONBLOCK only changes how reads wait.
    unsafe {
        let flags = check(libc::fcntl(fd.as_raw_fd(), libc::F_GETFL))?;
        check(libc::fcntl(
            fd.as_raw_fd(),
            libc::F_SETFL,
            flags & !libc::O_NONBLOCK,
        ))?;
    }
    Ok(File::from(fd))
}

fn mkdir_at(dir: &OwnedFd, name: &OsStr, mode: u32) -> io::Result<()> {
    let c = c_name(name)?;
    // SAFETY: a valid descriptor and a NUL-terminated name; the result is checked.
    check(unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), mode) }).map(drop)
}

fn stat_at(dir: &OwnedFd, name: &OsStr, flags: i32) -> io::Result<libc::stat> {
    let c = c_name(name)?;
    // SAFETY: `stat` is plain data filled by the kernel; the result is checked.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstatat(dir.as_raw_fd(), c.as_ptr(), &mut stat, flags) })?;
    Ok(stat)
}

/// The status of `name` in `dir` (not following a symlink), and its target if it is one.
fn entry_at(dir: &OwnedFd, name: &OsStr) -> io::Result<(libc::stat, Option<PathBuf>)> {
    let stat = stat_at(dir, name, libc::AT_SYMLINK_NOFOLLOW)?;
    let target = if stat.st_mode & libc::S_IFMT == libc::S_IFLNK {
        read_link_at(dir, name).ok()
    } else {
        None
    };
    Ok((stat, target))
}

fn read_link_at(dir: &OwnedFd, name: &OsStr) -> io::Result<PathBuf> {
    let c = c_name(name)?;
    let mut buffer = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: the buffer is as long as said; the result is checked.
    let length = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            c.as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    if length < 0 {
        return Err(io::Error::last_os_error());
    }
    buffer.truncate(length as usize);
    Ok(PathBuf::from(
        <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(buffer),
    ))
}

/// Opens subdirectory `name` of `dir` for reading, refusing a symlink.
fn open_subdir(dir: &OwnedFd, name: &OsStr) -> io::Result<OwnedFd> {
    let c = c_name(name)?;
    // SAFETY: a valid descriptor and a NUL-terminated name; the result is checked.
    let fd = check(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    })?;
    // SAFETY: a new descriptor only we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The names in directory `dir` (without `.` and `..`).
fn names(dir: &OwnedFd) -> io::Result<Vec<std::ffi::OsString>> {
    // fdopendir takes the descriptor over: give it a duplicate.
    let copy = dir.try_clone()?;
    let raw = std::os::fd::IntoRawFd::into_raw_fd(copy);
    // SAFETY: `raw` is a directory descriptor we own; closedir closes it.
    let stream = unsafe { libc::fdopendir(raw) };
    if stream.is_null() {
        let error = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `raw` is still ours to close.
        unsafe { libc::close(raw) };
        return Err(error);
    }
    // SAFETY: a fresh stream at its start.
    unsafe { libc::rewinddir(stream) };
    let mut names = Vec::new();
    loop {
        // SAFETY: a valid stream; each entry is read before the next call.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: `d_name` is NUL-terminated within the entry.
        let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
        let name = OsStr::from_bytes(name.to_bytes());
        if name != "." && name != ".." {
            names.push(name.to_owned());
        }
    }
    // SAFETY: the stream is ours; this also closes `raw`.
    unsafe { libc::closedir(stream) };
    Ok(names)
}

fn list_into(
    dir: &OwnedFd,
    prefix: PathBuf,
    depth: u32,
    out: &mut Vec<ListedEntry>,
) -> io::Result<()> {
    for name in names(dir)? {
        // An entry removed meanwhile is skipped.
        let Ok((stat, target)) = entry_at(dir, &name) else {
            continue;
        };
        let path = prefix.join(&name);
        let is_dir = stat.st_mode & libc::S_IFMT == libc::S_IFDIR;
        out.push(ListedEntry {
            path: path.clone(),
            stat,
            target,
        });
        if is_dir
            && depth > 1
            && let Ok(child) = open_subdir(dir, &name)
        {
            list_into(&child, path, depth - 1, out)?;
        }
    }
    Ok(())
}

/// Removes `name` from `dir`: a tree, depth first, each step relative to a descriptor.
fn remove_at(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    let c = c_name(name)?;
    let stat = stat_at(dir, name, libc::AT_SYMLINK_NOFOLLOW)?;
    if stat.st_mode & libc::S_IFMT == libc::S_IFDIR {
        let child = open_subdir(dir, name)?;
        for entry in names(&child)? {
            match remove_at(&child, &entry) {
                Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
                _ => {}
            }
        }
        // SAFETY: a valid descriptor and a NUL-terminated name; the result is checked.
        check(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) }).map(drop)
    } else {
        // SAFETY: as above.
        check(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) }).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcpgym-beneath-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("home")).unwrap();
        std::fs::create_dir_all(dir.join("outside")).unwrap();
        std::fs::write(dir.join("outside/secret"), "host").unwrap();
        dir
    }

    #[test]
    fn symlinks_out_of_the_home_are_refused_and_inside_ones_followed() {
        let dir = scratch("links");
        let home_path = dir.join("home");
        let outside = dir.join("outside");
        std::os::unix::fs::symlink(&outside, home_path.join("abs")).unwrap();
        std::os::unix::fs::symlink("../outside", home_path.join("rel")).unwrap();
        std::fs::create_dir(home_path.join("d")).unwrap();
        std::fs::write(home_path.join("d/f"), "mine").unwrap();
        std::os::unix::fs::symlink("d/f", home_path.join("inside")).unwrap();
        let home = Home::open(&home_path).unwrap();
        for escape in ["abs/secret", "rel/secret", "abs", "rel/x/y"] {
            let error = home.open_read(Path::new(escape)).unwrap_err();
            assert_eq!(error.raw_os_error(), Some(libc::EXDEV), "{escape}");
            let error = home
                .create(Path::new(&format!("{escape}/new")), 0o644)
                .unwrap_err();
            assert_eq!(error.raw_os_error(), Some(libc::EXDEV), "{escape}");
        }
        assert!(home.make_dirs(Path::new("abs/sub")).is_err());
        assert!(home.rename(Path::new("d/f"), Path::new("rel/f")).is_err());
        let mut text = String::new();
        io::Read::read_to_string(&mut home.open_read(Path::new("inside")).unwrap(), &mut text)
            .unwrap();
        assert_eq!(text, "mine");
        // Removing a link removes the link, never what it points to.
        home.remove(Path::new("abs")).unwrap();
        assert!(outside.join("secret").exists());
        home.make_dirs(Path::new("a/b/c")).unwrap();
        home.create(Path::new("a/b/c/f"), 0o644).unwrap();
        let listed = home.list(Path::new(""), 4).unwrap();
        assert!(listed.iter().any(|e| e.path == Path::new("a/b/c/f")));
        assert!(
            listed
                .iter()
                .any(|e| e.path == Path::new("rel") && e.target.is_some())
        );
        home.remove(Path::new("a")).unwrap();
        assert!(!home_path.join("a").exists());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
