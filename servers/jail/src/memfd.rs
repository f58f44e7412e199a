//! Memory files bwrap reads while it builds a jail: its arguments, the seccomp filter, the
//! jail's `/etc/passwd` and `/etc/group`. Handing them over as descriptors keeps host paths
//! off bwrap's command line (which is PID 1's inside the jail) and out of the jail's
//! mount table.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::{Error, Result};

/// A memory file holding `bytes`, positioned at its start, closed on exec (the child clears
/// that flag for bwrap alone).
pub(crate) fn with_contents(name: &CStr, bytes: &[u8]) -> Result<OwnedFd> {
    let io = |e| Error::io("write a memory file for bwrap", "memfd", e);
    // SAFETY: memfd_create with a valid C string; the new descriptor is owned below.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io(std::io::Error::last_os_error()));
    }
    // SAFETY: just created, owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(fd);
    std::io::Write::write_all(&mut file, bytes).map_err(io)?;
    std::io::Seek::rewind(&mut file).map_err(io)?;
    let fd = OwnedFd::from(file);
    debug_assert!(fd.as_raw_fd() > 2);
    Ok(fd)
}
