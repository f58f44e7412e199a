//! The seccomp filter of every jail: system calls a jailed program never needs fail with
//! `EPERM`.
//!
//! bwrap installs the filter (`--seccomp FD`) after it has built the jail's mounts and just
//! before it executes the jailed program, with no-new-privileges set, so the filter binds the
//! program and everything it starts, and cannot be removed. Denied are the calls that change
//! mounts or namespaces (the way out of a bwrap jail when a capability is left), that inspect
//! or write other processes, the kernel keyring, BPF and perf, module and kexec loading,
//! io_uring (its operations bypass this filter), the clock, NUMA placement and the rest of
//! what Docker's default profile denies, and pushing input into a terminal (`TIOCSTI`,
//! `TIOCLINUX`). Sockets are allow-listed by family: Unix, IPv4, IPv6 and netlink; any
//! other (`AF_VSOCK`, which crosses network namespaces to the hypervisor and to other
//! sandboxes on the same host, `AF_PACKET`, `AF_ALG`, …) fails with `EPERM`.
//!
//! `clone3` fails with `ENOSYS` instead: its flags live in memory a filter cannot read, and
//! `ENOSYS` makes the C library fall back to `clone`, whose namespace flags are checked. A
//! process of another ABI is killed (the architecture check), and on x86-64 the x32 system
//! call numbers fail with `EPERM`.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use crate::error::{Error, Result};

/// System calls denied whatever their arguments.
const DENIED: &[libc::c_long] = &[
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_setns,
    libc::SYS_unshare,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_userfaultfd,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_syslog,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_chroot,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_lookup_dcookie,
    libc::SYS_fanotify_init,
    libc::SYS_kcmp,
    libc::SYS_vhangup,
    libc::SYS_mbind,
    libc::SYS_set_mempolicy,
    libc::SYS_get_mempolicy,
    libc::SYS_move_pages,
    libc::SYS_nfsservctl,
];

/// x86's own calls Docker's default profile denies: the local descriptor table (16-bit
/// code, old exploits), port I/O, and retired calls.
#[cfg(target_arch = "x86_64")]
const DENIED_X86: &[libc::c_long] = &[
    libc::SYS_modify_ldt,
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_uselib,
    libc::SYS_ustat,
    libc::SYS_sysfs,
    libc::SYS__sysctl,
    libc::SYS_getpmsg,
    libc::SYS_putpmsg,
    libc::SYS_afs_syscall,
    libc::SYS_tuxcall,
    libc::SYS_security,
];
#[cfg(not(target_arch = "x86_64"))]
const DENIED_X86: &[libc::c_long] = &[];

/// The socket families a jailed program may open (`socket`, `socketpair`): local sockets,
/// IP (inside the jail's own network namespace), and netlink (the C library asks it for the
/// interfaces).
const SOCKET_FAMILIES: &[libc::c_int] = &[
    libc::AF_UNIX,
    libc::AF_INET,
    libc::AF_INET6,
    libc::AF_NETLINK,
];

/// `clone` flags that make a namespace (`CLONE_NEWTIME` shares its bit with the exit signal
/// in `clone`, and only `unshare`/`clone3` take it: both denied whole).
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// `ioctl` requests denied: typing into a terminal, and the Linux console's equivalents.
const DENIED_IOCTLS: &[u64] = &[libc::TIOCSTI, libc::TIOCLINUX];

/// First x32 system call number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The filter as the bytes bwrap reads from its `--seccomp` descriptor (built once).
pub fn program_bytes() -> Result<&'static [u8]> {
    static PROGRAM: OnceLock<std::result::Result<Vec<u8>, String>> = OnceLock::new();
    PROGRAM
        .get_or_init(|| build().map(|program| to_bytes(&program)))
        .as_deref()
        .map_err(|e| Error::Seccomp(e.clone()))
}

/// A memory file holding the filter, positioned at its start, closed on exec (the child
/// clears that flag for bwrap alone).
pub(crate) fn program_fd() -> Result<OwnedFd> {
    crate::memfd::with_contents(c"mcpgym-seccomp", program_bytes()?)
}

fn build() -> std::result::Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let condition = |arg, value: u64, op| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(|e| e.to_string())
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED
        .iter()
        .chain(DENIED_X86)
        .map(|&nr| (nr, Vec::new()))
        .collect();
    // One rule: the family is none of the allowed ones (its conditions must all hold).
    let other_family = || {
        SOCKET_FAMILIES
            .iter()
            .map(|&family| {
                SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, family as u64)
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .and_then(SeccompRule::new)
            .map_err(|e| e.to_string())
    };
    rules.insert(libc::SYS_socket, vec![other_family()?]);
    rules.insert(libc::SYS_socketpair, vec![other_family()?]);
    rules.insert(
        libc::SYS_clone,
        NAMESPACE_FLAGS
            .iter()
            .map(|&flag| {
                let flag = flag as u32 as u64;
                condition(0, flag, SeccompCmpOp::MaskedEq(flag))
            })
            .collect::<std::result::Result<_, _>>()?,
    );
    rules.insert(
        libc::SYS_ioctl,
        DENIED_IOCTLS
            .iter()
            .map(|&request| condition(1, request, SeccompCmpOp::Eq))
            .collect::<std::result::Result<_, _>>()?,
    );
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let mut program = BpfProgram::try_from(filter).map_err(|e| e.to_string())?;
    // seccompiler's program opens with the three-instruction architecture check (load, jump,
    // kill); the calls it cannot express go right after it.
    program.splice(3..3, prefix());
    Ok(program)
}

/// `clone3` → `ENOSYS`; on x86-64, every x32 call → `EPERM`.
fn prefix() -> Vec<sock_filter> {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    let insn = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let errno = |e: libc::c_int| libc::SECCOMP_RET_ERRNO | e as u32;
    #[allow(unused_mut)]
    let mut prefix = vec![
        // seccomp_data.nr is at offset 0.
        insn(LD_W_ABS, 0, 0, 0),
        insn(JEQ_K, 0, 1, libc::SYS_clone3 as u32),
        insn(RET_K, 0, 0, errno(libc::ENOSYS)),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        const JGE_K: u16 = 0x35;
        prefix.push(insn(JGE_K, 0, 1, X32_SYSCALL_BIT));
        prefix.push(insn(RET_K, 0, 0, errno(libc::EPERM)));
    }
    prefix
}

/// The program in the layout of `struct sock_filter[]`, as bwrap reads it.
fn to_bytes(program: &[sock_filter]) -> Vec<u8> {
    program
        .iter()
        .flat_map(|insn| {
            let mut bytes = [0u8; 8];
            bytes[..2].copy_from_slice(&insn.code.to_ne_bytes());
            bytes[2] = insn.jt;
            bytes[3] = insn.jf;
            bytes[4..].copy_from_slice(&insn.k.to_ne_bytes());
            bytes
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_builds_and_fits() {
        let bytes = program_bytes().unwrap();
        assert_eq!(bytes.len() % 8, 0);
        // The kernel's limit is 4096 instructions.
        assert!(bytes.len() / 8 < 4096);
        // Architecture check first: load seccomp_data.arch (offset 4).
        assert_eq!(&bytes[..2], &0x20u16.to_ne_bytes());
        assert_eq!(&bytes[4..8], &4u32.to_ne_bytes());
    }
}
