//! The end of every process an agent started, whatever it did to its environment, session
//! or process group.
//!
//! Linux: while a run lasts the verifier is a child subreaper and not dumpable. Each agent
//! runs under a keeper (see `confine.rs`) that is registered here while we wait for it.
//! The clean-up of one agent signals, through `/proc` parent links, every descendant of its
//! keeper (in a PID namespace they all end with its init; without one, orphans are
//! reparented to the keeper, a subreaper, so they stay its descendants), plus any process
//! reparented to the verifier itself that is neither a registered keeper nor a child the
//! process had before the run: those escaped a keeper that ended first, and are no running
//! agent's. Nothing that belongs to another running agent is touched, which keeps `-j N`
//! safe. When the run ends, what is left of those is killed and every zombie reaped.
//! Other Unix systems: the agent's process group, best effort.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::process::{Child, Command};

#[cfg(target_os = "linux")]
use super::MARKER;

/// What the clean-up must leave alone, and what a run changed in the process.
struct Tracking {
    /// Runs in progress (verify may run more than once at a time in one process).
    runs: usize,
    /// Keepers (the processes `spawn` returns) not yet waited for.
    keepers: BTreeSet<i32>,
    /// Children the process had when the first run began.
    foreign: BTreeSet<i32>,
    /// `PR_GET_DUMPABLE` and `PR_GET_CHILD_SUBREAPER` before the first run.
    before: (i32, i32),
}

static TRACKING: Mutex<Tracking> = Mutex::new(Tracking {
    runs: 0,
    keepers: BTreeSet::new(),
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
    pub(crate) fn begin() -> Containment {
        let mut tracking = tracking();
        if tracking.runs == 0 {
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
            // SAFETY: prctl with integer arguments only.
            unsafe {
                libc::prctl(libc::PR_SET_DUMPABLE, dumpable, 0, 0, 0);
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, subreaper, 0, 0, 0);
            }
        }
    }
}

/// Whether this process is dumpable now (always, where the notion does not exist).
pub(super) fn dumpable() -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only.
    return unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) } != 0;
    #[cfg(not(target_os = "linux"))]
    true
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

/// Terminate every process of the agent `launched` started (the keeper on Linux): SIGTERM
/// to its group and each member, up to `grace` for them to exit, then SIGKILL to whatever is
/// left, listed again until nothing is; members reparented to us are reaped.
#[cfg(unix)]
pub(crate) async fn terminate(launched: Option<u32>, token: &str, grace: Duration) {
    let Some(launched) = launched.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let signal_all = |pids: &[i32], signal: i32| {
        // SAFETY: kill(2) with a pid and a signal number.
        unsafe {
            libc::kill(-launched, signal);
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
/// escaped a keeper (see the module's documentation), orphans reparented to init that carry
/// the sandbox's token (where we could not be a subreaper), and their descendants.
#[cfg(target_os = "linux")]
fn members(keeper: i32, token: &str) -> Vec<i32> {
    let table = proc_table();
    let mut found = vec![keeper];
    add_descendants(&mut found, &table, 0);
    let from = found.len();
    let marker = format!("{MARKER}={token}");
    for pid in escaped(&table) {
        if !found.contains(&pid) {
            found.push(pid);
        }
    }
    for (pid, ppid) in &table {
        if *ppid == 1 && !found.contains(pid) && environ_has(*pid, &marker) {
            found.push(*pid);
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

/// Our children that no keeper registration or earlier ownership explains.
#[cfg(target_os = "linux")]
fn escaped(table: &[(i32, i32)]) -> Vec<i32> {
    let tracking = tracking();
    children(table)
        .into_iter()
        .filter(|pid| !tracking.keepers.contains(pid) && !tracking.foreign.contains(pid))
        .collect()
}

#[cfg(target_os = "linux")]
fn children(table: &[(i32, i32)]) -> BTreeSet<i32> {
    let me = std::process::id().cast_signed();
    table
        .iter()
        .filter(|(_, ppid)| *ppid == me)
        .map(|(pid, _)| *pid)
        .collect()
}

/// At the end of the run: kill what escaped the keepers and reap it, until nothing is left.
#[cfg(target_os = "linux")]
fn sweep() {
    for _ in 0..100 {
        let table = proc_table();
        let mut found = escaped(&table);
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

/// Appends to `found` every descendant in `table` (pid, parent pid) of `found[from..]`,
/// including those of the processes it appends.
#[cfg(target_os = "linux")]
fn add_descendants(found: &mut Vec<i32>, table: &[(i32, i32)], from: usize) {
    let mut i = from;
    while i < found.len() {
        let parent = found[i];
        for (pid, ppid) in table {
            if *ppid == parent && !found.contains(pid) {
                found.push(*pid);
            }
        }
        i += 1;
    }
}

#[cfg(target_os = "linux")]
fn proc_table() -> Vec<(i32, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect()
}

#[cfg(target_os = "linux")]
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn environ_has(pid: i32, marker: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == marker.as_bytes()))
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
