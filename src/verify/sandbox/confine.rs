//! Linux: what runs between fork and exec of an agent, and the Landlock rules it takes.
//!
//! The process `Command` forks is the agent's *keeper*, never the agent: it tries to enter a
//! new user and PID namespace, becomes a child subreaper, forks, closes every descriptor and
//! waits; once its child is gone, or the verifier is (a parent-death signal), it kills and
//! reaps whatever is still below it and exits with the agent's status. With the namespaces
//! its child is the namespace's init (ours too: it mounts the namespace's own `/proc` in a
//! private mount namespace, forks the agent, reaps and exits with the agent, which makes
//! the kernel kill everything left in the namespace; it dies with the keeper through
//! `PR_SET_PDEATHSIG`); without them its child is the agent (which dies with the keeper the
//! same way) and orphans are reparented to the keeper, so `/proc` parent links still lead
//! from the keeper to every process the agent started. The agent itself marks every
//! descriptor above 2 close-on-exec, adds `/proc` (its own, once mounted) to the Landlock
//! ruleset the verifier built, takes it, and reports in one byte on a pipe what applied.
//!
//! Everything here after the fork is async-signal-safe: raw system calls on memory prepared
//! before the fork, no allocation, no lock. `RulesetCreated::restrict_self` of landlock 0.4.8
//! is three system calls (`prctl(PR_SET_NO_NEW_PRIVS)`, `landlock_restrict_self`, closing
//! the ruleset) and plain values; check again when the crate is updated.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

use landlock::{
    path_beneath_rules, Access, AccessFs, CompatLevel, Compatible, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetError, RulesetStatus, Scope, ABI,
};

/// The report byte: set on every report.
const VALID: u8 = 0x80;
/// The agent runs in a PID namespace of its own.
pub(super) const PID_NAMESPACE: u8 = 0x01;
/// ... and in a user namespace of its own.
pub(super) const USER_NAMESPACE: u8 = 0x02;
/// Landlock enforces part of the rules (an older kernel ABI).
pub(super) const LANDLOCK_PARTIAL: u8 = 0x04;
/// Landlock enforces all of them.
pub(super) const LANDLOCK_FULL: u8 = 0x08;
/// The agent sees a `/proc` of its own PID namespace, mounted by its init.
pub(super) const PRIVATE_PROC: u8 = 0x10;

/// The signal a keeper gets when the verifier's thread that started it ends: blocked and
/// waited for, so a thread of the verifier ending is only a reason to look at `getppid()`.
const PARENT_DIED: i32 = libc::SIGUSR1;

/// `LANDLOCK_RULE_PATH_BENEATH` and its attribute (`struct landlock_path_beneath_attr`).
const RULE_PATH_BENEATH: i32 = 1;
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI whose rights are asked for: file system rights up to ioctl on devices
/// (5) and the signal and abstract-socket scopes (6). Later ABIs add only logging here.
const TARGET_ABI: ABI = ABI::V6;

/// Device files any program opens for writing; everything else outside is read-only.
/// `/dev/tty` is left out: an agent has no business writing to the verifier's terminal.
const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// The rules of one agent: read and execute only beneath `readable` and `writable` (and
/// `/proc`, added in the agent: [`Plan::confine_agent`]), write only in `writable` and to
/// [`DEVICES`]; signals and abstract Unix sockets only within its own processes. Paths that do
/// not exist are left out. `None` when the ruleset cannot be built (then the agent runs
/// without Landlock).
pub(super) fn ruleset(writable: &[PathBuf], readable: &[PathBuf]) -> Option<RulesetCreated> {
    let build = || -> Result<RulesetCreated, RulesetError> {
        landlock::Ruleset::default()
            // ABI 1 refuses every rename across folders, which breaks npm and uv: rather no
            // Landlock at all there.
            .set_compatibility(CompatLevel::SoftRequirement)
            .handle_access(AccessFs::Refer)?
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(TARGET_ABI))?
            .scope(Scope::from_all(TARGET_ABI))?
            .create()?
            .add_rules(path_beneath_rules(
                readable,
                AccessFs::from_read(TARGET_ABI),
            ))?
            .add_rules(path_beneath_rules(
                DEVICES,
                AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev,
            ))?
            .add_rules(path_beneath_rules(writable, AccessFs::from_all(TARGET_ABI)))
    };
    build().ok()
}

/// What the child does, prepared before the fork.
pub(super) struct Plan {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    landlock: Option<RulesetCreated>,
    /// A second descriptor of the ruleset, to add `/proc` once the agent's is mounted.
    ruleset: Option<OwnedFd>,
    /// The rights on `/proc`: reading files and listing folders.
    proc_access: u64,
    /// The verifier's pid: the keeper's parent, until the verifier dies.
    verifier: i32,
    /// Where the verifier's command line and environment are in its memory (and so in the
    /// copy its namespace's init is): blanked there.
    strings: [(usize, usize); 2],
    /// The write end of the report pipe (close-on-exec).
    report: i32,
}

impl Plan {
    pub(super) fn new(landlock: Option<RulesetCreated>, report: &impl AsRawFd) -> Self {
        // SAFETY: geteuid and getegid cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let ruleset = landlock
            .as_ref()
            .and_then(|r| r.try_clone().ok())
            .and_then(Option::<OwnedFd>::from);
        Plan {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            landlock,
            ruleset,
            proc_access: (AccessFs::ReadFile | AccessFs::ReadDir).bits(),
            verifier: std::process::id().cast_signed(),
            strings: std::fs::read_to_string("/proc/self/stat")
                .ok()
                .and_then(|stat| stat_strings(&stat))
                .unwrap_or_default(),
            report: report.as_raw_fd(),
        }
    }

    /// The keeper's part; returns (`Ok`) only in the agent, which then execs.
    pub(super) fn run_in_child(&mut self) -> io::Result<()> {
        let mut flags = VALID | self.enter_namespaces();
        let in_namespace = flags & PID_NAMESPACE != 0;
        let mut relay = [-1; 2];
        // SAFETY: system calls on local memory; see the module's documentation.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            if in_namespace && libc::pipe2(relay.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return Err(io::Error::last_os_error());
            }
            let keeper = libc::getpid();
            match libc::fork() {
                -1 => Err(io::Error::last_os_error()),
                0 => {
                    if in_namespace {
                        libc::close(relay[0]);
                        flags |= be_init(relay[1], self.strings)?;
                    } else {
                        // No namespace's init to end it: the agent itself dies with its keeper.
                        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                        if libc::getppid() != keeper {
                            libc::_exit(137);
                        }
                    }
                    self.confine_agent(flags);
                    Ok(())
                }
                child => keep(child, relay[0], self.verifier),
            }
        }
    }

    /// The namespace flags entered.
    ///
    /// The id maps map our own ids, so the agent keeps them. Only root can write them: the
    /// keeper is not dumpable (a copy of the verifier's memory), which makes its `/proc`
    /// files root's. An unprivileged user's agent then runs with its ids unmapped: files and
    /// permissions are unchanged, only `getuid()` and `stat` show the overflow id (65534).
    fn enter_namespaces(&self) -> u8 {
        // SAFETY: unshare(2) in a single-threaded child; writes of prepared buffers.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID) == 0 {
                if write_file(c"/proc/self/uid_map", &self.uid_map) {
                    write_file(c"/proc/self/setgroups", b"deny");
                    write_file(c"/proc/self/gid_map", &self.gid_map);
                }
                return PID_NAMESPACE | USER_NAMESPACE;
            }
            if libc::unshare(libc::CLONE_NEWPID) == 0 {
                return PID_NAMESPACE;
            }
        }
        0
    }

    /// The agent's own part, just before exec: no inherited descriptor survives the exec,
    /// Landlock applies, and the report says what holds.
    fn confine_agent(&mut self, mut flags: u8) {
        mark_close_on_exec_from(3);
        if let Some(ruleset) = &self.ruleset {
            // SAFETY: open, landlock_add_rule and close on a prepared attribute.
            unsafe { allow_beneath(ruleset.as_raw_fd(), c"/proc", self.proc_access) };
        }
        if let Some(ruleset) = self.landlock.take() {
            flags |= match ruleset.restrict_self().map(|s| s.ruleset) {
                Ok(RulesetStatus::FullyEnforced) => LANDLOCK_FULL,
                Ok(RulesetStatus::PartiallyEnforced) => LANDLOCK_PARTIAL,
                Ok(RulesetStatus::NotEnforced) | Err(_) => 0,
            };
        }
        report(self.report, flags);
    }
}

/// What a report byte says, if it is one.
pub(super) fn read_report(byte: Option<u8>) -> Option<u8> {
    byte.filter(|b| b & VALID != 0)
}

fn report(fd: i32, flags: u8) {
    // SAFETY: write(2) of one byte from the stack.
    unsafe {
        libc::write(fd, (&raw const flags).cast(), 1);
    }
}

fn write_file(path: &std::ffi::CStr, data: &[u8]) -> bool {
    // SAFETY: open, write and close on a NUL-terminated path and a prepared buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        usize::try_from(written) == Ok(data.len())
    }
}

/// Let the ruleset `ruleset` allow `access` beneath `path` (nothing when it cannot).
unsafe fn allow_beneath(ruleset: i32, path: &std::ffi::CStr, access: u64) {
    let fd = libc::open(
        path.as_ptr(),
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if fd < 0 {
        return;
    }
    let rule = PathBeneathAttr {
        allowed_access: access,
        parent_fd: fd,
    };
    libc::syscall(
        libc::SYS_landlock_add_rule,
        ruleset,
        RULE_PATH_BENEATH,
        &raw const rule,
        0u32,
    );
    libc::close(fd);
}

/// The init of the agent's PID namespace: mounts the namespace's own `/proc` where it may
/// (returning [`PRIVATE_PROC`] then), blanks the verifier's command line and environment in
/// its copy of the verifier's memory (what its `/proc/1/cmdline` shows the agent), forks the
/// agent (returning in it), then reaps every orphan of the namespace until the agent exits,
/// hands its wait status to the keeper through `relay` and exits, which ends every process
/// left in the namespace.
unsafe fn be_init(relay: i32, strings: [(usize, usize); 2]) -> io::Result<u8> {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    let view = if private_proc() { PRIVATE_PROC } else { 0 };
    for (start, end) in strings {
        if start > 0 && end > start {
            std::ptr::write_bytes(start as *mut u8, 0, end - start);
        }
    }
    let agent = libc::fork();
    if agent < 0 {
        return Err(io::Error::last_os_error());
    }
    if agent == 0 {
        return Ok(view);
    }
    close_all_except(relay);
    let status = wait_for(agent, 0).unwrap_or(127 << 8);
    libc::write(relay, (&raw const status).cast(), size_of::<i32>());
    libc::_exit(0)
}

/// A mount namespace of our own whose mounts propagate nowhere, with a fresh `/proc` (of
/// the PID namespace we are init of) over the verifier's; the keeper's view is untouched.
/// Landlock forbids mounts, so this comes before the agent's ruleset.
unsafe fn private_proc() -> bool {
    let none = std::ptr::null::<libc::c_char>();
    libc::unshare(libc::CLONE_NEWNS) == 0
        && libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) == 0
        && libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ) == 0
}

/// Where the command line and the environment are in memory: fields 48 to 51 of a
/// `/proc/<pid>/stat` line (`arg_start arg_end env_start env_end`).
fn stat_strings(stat: &str) -> Option<[(usize, usize); 2]> {
    // Fields from the state (3rd) on, after the command name and its parentheses.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let at = |n: usize| fields.get(n - 3)?.parse::<usize>().ok();
    Some([(at(48)?, at(49)?), (at(50)?, at(51)?)])
}

/// The keeper: holds nothing of the verifier's, outlives a SIGTERM meant for the agent, reaps
/// what is reparented to it; once its child is gone, kills what is left below it (nothing
/// is, after a namespace's init), so nothing escapes to the verifier, and ends as its child
/// did (as the agent did, through `relay`, when the child is a namespace's init).
///
/// It dies with the verifier: the parent-death signal (sent when the thread of the verifier
/// that forked it ends, and again up to the verifier's last thread) makes it look at its
/// parent; once that is not the verifier any more it kills everything below it and exits.
unsafe fn keep(child: i32, relay: i32, verifier: i32) -> ! {
    close_all_except(relay);
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        libc::signal(signal, libc::SIG_IGN);
    }
    // A handler the verifier installed must not run here (its descriptors are gone): both
    // signals are blocked and taken by `sigtimedwait` in `wait_for`.
    libc::signal(libc::SIGCHLD, libc::SIG_DFL);
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&raw mut set);
    libc::sigaddset(&raw mut set, libc::SIGCHLD);
    libc::sigaddset(&raw mut set, PARENT_DIED);
    libc::sigprocmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut());
    libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_DIED, 0, 0, 0);
    let Some(mut status) = wait_for(child, verifier) else {
        // The verifier is gone (killed): so is everything it started.
        end_descendants();
        libc::_exit(137)
    };
    if relay >= 0 {
        let mut agent = 0i32;
        if libc::read(relay, (&raw mut agent).cast(), size_of::<i32>()) == 4 {
            status = agent;
        }
    }
    end_descendants();
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        // Die of the same signal, without a core dump of the verifier's memory.
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &raw const no_core);
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal);
    }
    libc::_exit(libc::WEXITSTATUS(status))
}

/// SIGKILL every child, then reap, until none is left: orphans of the processes killed are
/// reparented to us (a subreaper), so this reaches every descendant.
unsafe fn end_descendants() {
    let me = libc::getpid();
    loop {
        let listed = for_each_number(c"/proc", |pid, _| {
            if parent_is(pid, me) {
                libc::kill(pid, libc::SIGKILL);
            }
        });
        let mut status = 0;
        // Without /proc nothing can be killed: do not wait for what may never end.
        let flags = if listed { 0 } else { libc::WNOHANG };
        let reaped = libc::waitpid(-1, &raw mut status, flags);
        let interrupted = io::Error::last_os_error().raw_os_error() == Some(libc::EINTR);
        if reaped == 0 || (reaped < 0 && !interrupted) {
            return;
        }
    }
}

/// Whether `/proc/<pid>/stat` names `parent` as the parent of `pid`.
unsafe fn parent_is(pid: i32, parent: i32) -> bool {
    let mut path = [0u8; 32];
    let mut at = write_bytes(&mut path, 0, b"/proc/");
    at = write_number(&mut path, at, pid);
    write_bytes(&mut path, at, b"/stat\0");
    let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    // `pid (comm) state ppid ...`: comm is at most 64 bytes, so the start fits.
    let mut stat = [0u8; 256];
    let read = libc::read(fd, stat.as_mut_ptr().cast(), stat.len());
    libc::close(fd);
    let Ok(read) = usize::try_from(read) else {
        return false;
    };
    stat_parent(&stat[..read]) == Some(parent)
}

/// The parent pid field of a `/proc/<pid>/stat` line.
fn stat_parent(stat: &[u8]) -> Option<i32> {
    let close = stat.iter().rposition(|b| *b == b')')?;
    // ") S 1234 ..."
    let rest = stat.get(close + 4..)?;
    let end = rest.iter().position(|b| *b == b' ')?;
    parse_number(&rest[..end])
}

/// `bytes` written into `buffer` at `at`; where the writing stopped.
fn write_bytes(buffer: &mut [u8], at: usize, bytes: &[u8]) -> usize {
    let end = (at + bytes.len()).min(buffer.len());
    buffer[at..end].copy_from_slice(&bytes[..end - at]);
    end
}

/// `n` (not negative) in decimal into `buffer` at `at`; where the writing stopped.
fn write_number(buffer: &mut [u8], at: usize, n: i32) -> usize {
    let mut digits = [0u8; 10];
    let mut len = 0;
    let mut rest = n.unsigned_abs();
    loop {
        digits[9 - len] = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        len += 1;
        rest /= 10;
        if rest == 0 || len == 10 {
            break;
        }
    }
    write_bytes(buffer, at, &digits[10 - len..])
}

/// Reaps every child until `pid` exits; its wait status. With a `verifier` (not 0), `None`
/// as soon as our parent is not the verifier any more; `SIGCHLD` and [`PARENT_DIED`] must be
/// blocked then: they are waited for, a second at most (the parent is looked at again).
unsafe fn wait_for(pid: i32, verifier: i32) -> Option<i32> {
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&raw mut set);
    libc::sigaddset(&raw mut set, libc::SIGCHLD);
    libc::sigaddset(&raw mut set, PARENT_DIED);
    let second = libc::timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    loop {
        let mut status = 0;
        let flags = if verifier == 0 { 0 } else { libc::WNOHANG };
        let reaped = libc::waitpid(-1, &raw mut status, flags);
        if reaped == pid {
            return Some(status);
        }
        if reaped > 0 {
            continue;
        }
        if reaped < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            // No child left: cannot happen before `pid` is reaped.
            return Some(127 << 8);
        }
        if verifier != 0 {
            if libc::getppid() != verifier {
                return None;
            }
            libc::sigtimedwait(&raw const set, std::ptr::null_mut(), &raw const second);
        }
    }
}

/// Close every descriptor but `keep` (none when negative).
unsafe fn close_all_except(keep: i32) {
    let closed = if keep < 0 {
        close_range(0, -1, 0)
    } else {
        (keep == 0 || close_range(0, keep - 1, 0)) && close_range(keep + 1, -1, 0)
    };
    if !closed {
        for_each_descriptor(|fd| {
            if fd != keep {
                libc::close(fd);
            }
        });
    }
}

/// Mark every descriptor from `first` on close-on-exec.
fn mark_close_on_exec_from(first: i32) {
    // SAFETY: close_range(2) or fcntl(2) on descriptors of this process.
    unsafe {
        if !close_range(first, -1, libc::CLOSE_RANGE_CLOEXEC) {
            for_each_descriptor(|fd| {
                if fd >= first {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            });
        }
    }
}

/// `close_range(2)` (Linux 5.9, `CLOSE_RANGE_CLOEXEC` 5.11); `last` -1 for "all".
unsafe fn close_range(first: i32, last: i32, flags: u32) -> bool {
    let last = if last < 0 {
        u32::MAX
    } else {
        last.unsigned_abs()
    };
    libc::syscall(libc::SYS_close_range, first.unsigned_abs(), last, flags) == 0
}

/// Call `action` with every open descriptor, listed from `/proc/self/fd`; without `/proc`,
/// every number below the descriptor limit (at most 65,536).
unsafe fn for_each_descriptor(mut action: impl FnMut(i32)) {
    let listed = for_each_number(c"/proc/self/fd", |fd, listing| {
        if fd != listing {
            action(fd);
        }
    });
    if !listed {
        let mut limit: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit);
        let top = i32::try_from(limit.rlim_cur.min(65_536)).unwrap_or(65_536);
        (0..top).for_each(action);
    }
}

/// Call `action` with each entry of the folder `path` whose name is a number, and the
/// descriptor of the listing; read with getdents64 into a buffer on the stack. False when
/// the folder cannot be opened.
unsafe fn for_each_number(path: &std::ffi::CStr, mut action: impl FnMut(i32, i32)) -> bool {
    let dir = libc::open(
        path.as_ptr(),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if dir < 0 {
        return false;
    }
    let mut buffer = [0u8; 4096];
    loop {
        let read = libc::syscall(libc::SYS_getdents64, dir, buffer.as_mut_ptr(), buffer.len());
        let Ok(read @ 1..) = usize::try_from(read) else {
            break;
        };
        let mut at = 0;
        while at + 19 < read {
            // struct linux_dirent64: ino u64, off i64, reclen u16, type u8, name.
            let reclen = usize::from(u16::from_ne_bytes([buffer[at + 16], buffer[at + 17]]));
            let name = &buffer[at + 19..(at + reclen).min(read)];
            if let Some(n) = name.split(|b| *b == 0).next().and_then(parse_number) {
                action(n, dir);
            }
            at += reclen.max(1);
        }
    }
    libc::close(dir);
    true
}

/// The number `digits` spell in decimal (no sign, no other character, no overflow).
fn parse_number(digits: &[u8]) -> Option<i32> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    digits.iter().try_fold(0i32, |n, d| {
        n.checked_mul(10)?.checked_add(i32::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_stat_lines_are_read_without_allocating() {
        assert_eq!(parse_number(b"17"), Some(17));
        assert_eq!(parse_number(b"."), None);
        assert_eq!(parse_number(b""), None);
        assert_eq!(parse_number(b"99999999999"), None);
        assert_eq!(stat_parent(b"42 (a) b) (c) S 7 42 42 0"), Some(7));
        assert_eq!(stat_parent(b"42 (x"), None);
        let mut buffer = [0u8; 16];
        let at = write_bytes(&mut buffer, 0, b"/p/");
        let at = write_number(&mut buffer, at, 4_194_304);
        assert_eq!(&buffer[..at], b"/p/4194304");
        assert_eq!(write_number(&mut buffer, 0, 0), 1);
    }

    #[test]
    fn the_parent_is_read_from_proc() {
        // SAFETY: getpid and getppid cannot fail.
        let (me, parent) = unsafe { (libc::getpid(), libc::getppid()) };
        // SAFETY: reads /proc only.
        unsafe {
            assert!(parent_is(me, parent));
            assert!(!parent_is(me, me));
        }
    }

    #[test]
    fn every_open_descriptor_is_listed() {
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        let mut seen = Vec::new();
        // SAFETY: reads /proc/self/fd only.
        unsafe { for_each_descriptor(|fd| seen.push(fd)) };
        assert!(seen.contains(&file.as_raw_fd()), "{seen:?}");
        assert!(seen.contains(&0) || seen.contains(&1) || seen.contains(&2));
    }
}
