//! The end of every process an agent started, whatever it did to its environment, session
//! or process group.
//!
//! Linux: while a run lasts the verifier is a child subreaper and not dumpable. Each agent
//! runs under a keeper (see `confine.rs`) that is registered here while we wait for it and
//! that ends only once nothing it started is left. The clean-up of one agent signals,
//! through `/proc` parent links, every descendant of its keeper (in a PID namespace they all
//! end with its init; without one, orphans are reparented to the keeper, a subreaper, so
//! they stay its descendants); nothing of another running agent is among them, which keeps
//! `-j N` safe. Only a keeper killed before its agent lets processes escape to the verifier:
//! those in the process group of a keeper of the run, or carrying the sandbox's token, are
//! killed too, and, when the caller says that it starts no children of its own during the
//! run (the command line: [`Containment::begin`]), every child that is not a keeper. When the
//! run ends, what is left of those is killed and every zombie reaped.
//! Other Unix systems: the agent's process group, best effort.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::process::{Child, Command};

#[cfg(target_os = "linux")]
use super::marker::MARKER;

/// What the clean-up must leave alone, and what a run changed in the process.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Tracking {
    /// Runs in progress (verify may run more than once at a time in one process).
    runs: usize,
    /// Keepers (the processes `spawn` returns) not yet waited for.
    keepers: BTreeSet<i32>,
    /// Every keeper of the runs in progress: the process groups of their agents.
    groups: BTreeSet<i32>,
    /// Whether every child the process gains during the run is an agent's (see `begin`).
    sole_parent: bool,
    /// Children the process had when the first run began.
    foreign: BTreeSet<i32>,
    /// `PR_GET_DUMPABLE` and `PR_GET_CHILD_SUBREAPER` before the first run.
    before: (i32, i32),
}

static TRACKING: Mutex<Tracking> = Mutex::new(Tracking {
    runs: 0,
    keepers: BTreeSet::new(),
    groups: BTreeSet::new(),
    sole_parent: false,
    foreign: BTreeSet::new(),
    before: (1, 0),
});

fn tracking() -> MutexGuard<'static, Tracking> {
    TRACKING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A verify run: while one lasts the process is a child subreaper and not dumpable; when the
/// last one ends, processes reparented to it are killed and reaped, and both are restored.
pub(crate) struct Containment(());

impl Containment {
    /// `sole_parent`: nothing else in this process starts children while the run lasts, so
    /// every process reparented to it that is not a keeper escaped one and is killed (the
    /// command line); a library caller passes false and only provable escapees are.
    pub(crate) fn begin(sole_parent: bool) -> Containment {
        let mut tracking = tracking();
        if tracking.runs == 0 {
            tracking.sole_parent = sole_parent;
            #[cfg(target_os = "linux")]
            {
                tracking.foreign = children(&proc_table());
                // SAFETY: prctl with integer arguments and a pointer to a local int.
                unsafe {
                    let mut subreaper = 0i32;
                    libc::prctl(libc::PR_GET_CHILD_SUBREAPER, &raw mut subreaper, 0, 0, 0);
                    tracking.before = (libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0), subreaper);
                    libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
                    libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
                }
            }
        }
        tracking.sole_parent &= sole_parent;
        tracking.runs += 1;
        Containment(())
    }
}

impl Drop for Containment {
    fn drop(&mut self) {
        let last = {
            let mut tracking = tracking();
            tracking.runs -= 1;
            tracking.runs == 0
        };
        if !last {
            return;
        }
        #[cfg(target_os = "linux")]
        {
            sweep();
            let mut tracking = tracking();
            let (dumpable, subreaper) = tracking.before;
            tracking.foreign.clear();
            tracking.groups.clear();
            // SAFETY: prctl with integer arguments only.
            unsafe {
                libc::prctl(libc::PR_SET_DUMPABLE, dumpable, 0, 0, 0);
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, subreaper, 0, 0, 0);
            }
        }
    }
}

/// Whether this process is dumpable now.
#[cfg(target_os = "linux")]
pub(super) fn dumpable() -> bool {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 }
}

/// The registration of a keeper: the clean-up leaves it alone until this is dropped, which
/// must be once it was waited for.
pub(crate) struct Registration(Option<i32>);

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            tracking().keepers.remove(&pid);
        }
    }
}

/// Spawn and register `command`, retrying briefly on "text file busy": a binary just
/// unpacked can still be open for writing in a child that another thread forked before its
/// exec closed the descriptor (agents are prepared in parallel), which makes exec fail with
/// ETXTBSY.
pub(super) fn spawn_registered(command: &mut Command) -> std::io::Result<(Child, Registration)> {
    const ETXTBSY: i32 = 26;
    let mut delay = Duration::from_millis(10);
    let mut attempt = || -> std::io::Result<(Child, Registration)> {
        // Registered under the lock: a clean-up never sees the new child unregistered.
        let mut tracking = tracking();
        let child = command.spawn()?;
        let pid = child.id().and_then(|p| i32::try_from(p).ok());
        tracking.keepers.extend(pid);
        tracking.groups.extend(pid);
        Ok((child, Registration(pid)))
    };
    for _ in 0..8 {
        match attempt() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) => {
                std::thread::sleep(delay);
                delay *= 2;
            }
            other => return other,
        }
    }
    attempt()
}

/// Terminate every process of the agent `launched` started: SIGTERM to each member, up to
/// `grace` for them to exit, then SIGKILL to whatever is left, listed again until nothing
/// is; members reparented to us are reaped. On Linux `launched` is the keeper, which is
/// left to end by itself once its agent is gone (killing it first would let orphans escape);
/// elsewhere, or without `/proc`, its process group is signalled too.
#[cfg(unix)]
pub(crate) async fn terminate(launched: Option<u32>, token: &str, grace: Duration) {
    let Some(launched) = launched.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let group = !cfg!(target_os = "linux") || !std::path::Path::new("/proc/self/stat").exists();
    let signal_all = |pids: &[i32], signal: i32| {
        // SAFETY: kill(2) with a pid and a signal number.
        unsafe {
            if group {
                libc::kill(-launched, signal);
            }
            for pid in pids {
                libc::kill(*pid, signal);
            }
        }
    };
    signal_all(&members(launched, token), libc::SIGTERM);
    let deadline = std::time::Instant::now() + grace;
    loop {
        if settle(launched, token).is_empty() {
            return;
        }
        if std::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Members may fork while they are killed: list them again until none is left.
    for _ in 0..100 {
        let left = settle(launched, token);
        if left.is_empty() {
            return;
        }
        signal_all(&left, libc::SIGKILL);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(not(unix))]
pub(crate) async fn terminate(_launched: Option<u32>, _token: &str, _grace: Duration) {}

/// Reap the members that are our children; those still alive.
#[cfg(unix)]
fn settle(launched: i32, token: &str) -> Vec<i32> {
    let pids = members(launched, token);
    reap(&pids, launched);
    alive(&pids)
}

/// Every process of the agent but the keeper: the keeper's descendants, processes that
/// escaped a keeper (see `escaped`), orphans reparented to init that carry the sandbox's
/// token (where we could not be a subreaper), and their descendants.
#[cfg(target_os = "linux")]
fn members(keeper: i32, token: &str) -> Vec<i32> {
    let table = proc_table();
    let mut found = vec![keeper];
    add_descendants(&mut found, &table, 0);
    let from = found.len();
    let marker = format!("{MARKER}={token}");
    for pid in escaped(&table, &marker) {
        if !found.contains(&pid) {
            found.push(pid);
        }
    }
    for process in &table {
        let pid = process.pid;
        if process.parent == 1 && !found.contains(&pid) && environ_has(pid, &marker) {
            found.push(pid);
        }
    }
    add_descendants(&mut found, &table, from);
    found.remove(0);
    found
}

#[cfg(all(unix, not(target_os = "linux")))]
fn members(agent: i32, _token: &str) -> Vec<i32> {
    vec![agent]
}

/// Our children that escaped a keeper killed before its agent: neither a keeper nor a child
/// from before the run, and provably an agent's (in the process group of a keeper of the
/// run, or carrying `marker`), or any such child when the caller is the sole parent.
#[cfg(target_os = "linux")]
fn escaped(table: &[Process], marker: &str) -> Vec<i32> {
    let me = std::process::id().cast_signed();
    let tracking = tracking();
    table
        .iter()
        .filter(|p| p.parent == me)
        .filter(|p| !tracking.keepers.contains(&p.pid) && !tracking.foreign.contains(&p.pid))
        .filter(|p| {
            tracking.sole_parent || tracking.groups.contains(&p.group) || environ_has(p.pid, marker)
        })
        .map(|p| p.pid)
        .collect()
}

#[cfg(target_os = "linux")]
fn children(table: &[Process]) -> BTreeSet<i32> {
    let me = std::process::id().cast_signed();
    table
        .iter()
        .filter(|p| p.parent == me)
        .map(|p| p.pid)
        .collect()
}

/// At the end of the run: kill what escaped the keepers and reap it, until nothing is left.
#[cfg(target_os = "linux")]
fn sweep() {
    for _ in 0..100 {
        let table = proc_table();
        // Any sandbox of this process: tokens start with its pid.
        let mut found = escaped(&table, &format!("{MARKER}={}-", std::process::id()));
        add_descendants(&mut found, &table, 0);
        reap(&found, 0);
        let left = alive(&found);
        if left.is_empty() {
            return;
        }
        for pid in left {
            // SAFETY: kill(2) with a pid and a signal number.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Appends to `found` every descendant in `table` of `found[from..]`, including those of
/// the processes it appends.
#[cfg(target_os = "linux")]
fn add_descendants(found: &mut Vec<i32>, table: &[Process], from: usize) {
    let mut i = from;
    while i < found.len() {
        let parent = found[i];
        for process in table {
            if process.parent == parent && !found.contains(&process.pid) {
                found.push(process.pid);
            }
        }
        i += 1;
    }
}

/// One line of the process table.
#[cfg(target_os = "linux")]
struct Process {
    pid: i32,
    parent: i32,
    group: i32,
}

#[cfg(target_os = "linux")]
fn proc_table() -> Vec<Process> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(process)
        .collect()
}

#[cfg(target_os = "linux")]
fn process(pid: i32) -> Option<Process> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace().skip(1);
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some(Process { pid, parent, group })
}

/// Whether a variable of `pid`'s environment starts with `marker`.
#[cfg(target_os = "linux")]
fn environ_has(pid: i32, marker: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
        env.split(|b| *b == 0)
            .any(|var| var.starts_with(marker.as_bytes()))
    })
}

#[cfg(unix)]
fn alive(pids: &[i32]) -> Vec<i32> {
    pids.iter()
        .copied()
        .filter(|pid| {
            // A zombie still answers kill(0); read its state where we can.
            #[cfg(target_os = "linux")]
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                let state = stat
                    .rfind(')')
                    .and_then(|i| stat[i + 1..].split_whitespace().next());
                return state != Some("Z") && state != Some("X");
            }
            // SAFETY: signal 0 only checks existence.
            unsafe { libc::kill(*pid, 0) == 0 }
        })
        .collect()
}

/// Reap exited members reparented to us (never `launched`: tokio waits for it).
#[cfg(unix)]
fn reap(pids: &[i32], launched: i32) {
    for pid in pids.iter().filter(|p| **p != launched) {
        let mut status = 0;
        // SAFETY: non-blocking wait for one specific pid; ECHILD when it is not our child.
        unsafe {
            libc::waitpid(*pid, &raw mut status, libc::WNOHANG);
        }
    }
}
