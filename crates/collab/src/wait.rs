//! `wait` (docs/collab-protocol.md#wait): poll until it is the participant's turn or
//! the collaboration ends. Between polls it blocks on a file-change
//! notification (inotify on Linux) or sleeps, bounded by `--interval`.
//!
//! It blocks instead of polling the files (`docs/collab-protocol.md#waiting`): on Linux it
//! sleeps in `poll(2)` on an inotify watch of the folder, through raw `libc` calls and with no
//! watcher thread, for at most `--interval`; elsewhere, or without inotify, it sleeps for the
//! interval. The `ready:` line is flushed before the next-action report is written.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use crate::error::CollabError;
use crate::events::read_events;
use crate::guide::Invocation;
use crate::next::{check_participant, last_seq, next_action_in, stored_waiting};
use crate::paths;
use crate::protocol;
use crate::pyfmt::join_or_none;
use crate::spec::{EVENTS_FILE, PROTOCOL_FILE};

/// The `wait` flags: the library's options and the binary's arguments at once (the doc
/// comments are the `--help` texts).
#[derive(Debug, Clone, clap::Args)]
pub struct WaitOptions {
    /// The collaboration folder
    #[arg(long)]
    pub folder: String,
    /// The participant waiting for its turn
    #[arg(long)]
    pub participant: String,
    /// Seconds between checks (at least 0.1)
    #[arg(long, default_value_t = 2.0)]
    pub interval: f64,
    /// Seconds before giving up; 0 waits forever
    // Any other value, even a negative one, is a limit.
    #[arg(long, default_value_t = 0.0)]
    pub timeout: f64,
    /// The form of the commands in the next-action report: not an argument, the
    /// environment's when parsed.
    #[arg(skip = Invocation::from_env())]
    pub invocation: Invocation,
}

/// How a wait ended (protocol and I/O errors are `Err`, exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitOutcome {
    /// `ready: …` and the next-action report were written; `next_error` is
    /// the next-action failure, if any (the wait still exits 0).
    Ready {
        /// Why it is this participant's turn.
        reason: String,
        /// The next-action failure, if any.
        next_error: Option<String>,
    },
    /// The timeout passed; the caller prints `timeout: «reason»` on stderr.
    TimedOut {
        /// Who is awaited, after which seq.
        reason: String,
    },
}

type Signature = (Option<SystemTime>, Option<SystemTime>, usize);

fn signature(folder: &Path) -> Signature {
    let mtime = |name: &str| {
        std::fs::symlink_metadata(folder.join(name))
            .and_then(|m| m.modified())
            .ok()
    };
    // Through the safe reader: a FIFO or a link here must not block or be followed.
    let lines = paths::read_text(folder, EVENTS_FILE)
        .ok()
        .flatten()
        .map_or(0, |t| t.lines().filter(|l| !l.trim().is_empty()).count());
    (mtime(PROTOCOL_FILE), mtime(EVENTS_FILE), lines)
}

/// Waits for the participant's turn, writing `waiting:`/`ready:` lines (and,
/// when ready, the next-action report) to `out`, flushing each line.
pub fn wait_for_turn(opts: &WaitOptions, out: &mut dyn Write) -> Result<WaitOutcome, CollabError> {
    let folder = paths::resolve_folder(&opts.folder);
    let start = Instant::now();
    // Out-of-range values (inf, huge) become "a very long time" rather than a panic.
    let seconds =
        |s: f64| Duration::try_from_secs_f64(s).unwrap_or(Duration::from_secs(u32::MAX.into()));
    let interval = seconds(opts.interval.max(0.1));
    let watcher = watch::Watcher::new(&folder);
    let mut last_signature: Option<Signature> = None;
    let io = CollabError::WaitOutput;
    loop {
        let protocol = protocol::load_or_fail(&folder)?;
        check_participant(&protocol, &opts.participant)?;
        let log = read_events(&folder)?;
        if !log.errors.is_empty() {
            return Err(CollabError::Log(log.errors));
        }
        let phase = protocol.map.get("currentPhase").and_then(|v| v.as_str());
        let waiting = stored_waiting(&protocol);
        let ready_reason = match phase {
            Some(p @ ("completed" | "blocked")) => Some(format!("phase is {p}")),
            _ if waiting.contains(&opts.participant) => {
                Some(format!("{} is listed in waitingFor", opts.participant))
            }
            _ => None,
        };
        if let Some(reason) = ready_reason {
            writeln!(out, "ready: {reason}").map_err(io)?;
            out.flush().map_err(io)?;
            let next_error = match next_action_in(&folder, &opts.participant, &opts.invocation) {
                Ok(next) => {
                    out.write_all(next.render().as_bytes()).map_err(io)?;
                    out.flush().map_err(io)?;
                    None
                }
                Err(e) => Some(e.to_string()),
            };
            return Ok(WaitOutcome::Ready { reason, next_error });
        }
        let who = join_or_none(&waiting);
        let reason = match last_seq(&log.events) {
            Some(seq) => format!("waiting for {who} after seq {seq}"),
            None => format!("waiting for {who}"),
        };
        let sig = signature(&folder);
        if last_signature.as_ref() != Some(&sig) {
            writeln!(out, "waiting: {reason}").map_err(io)?;
            out.flush().map_err(io)?;
            last_signature = Some(sig);
        }
        let mut pause = interval;
        // NaN and infinity never expire, as in Python's comparison.
        if opts.timeout != 0.0 && opts.timeout.is_finite() {
            let limit = seconds(opts.timeout.max(0.0));
            let elapsed = start.elapsed();
            if elapsed >= limit {
                return Ok(WaitOutcome::TimedOut { reason });
            }
            pause = pause.min(limit - elapsed);
        }
        match &watcher {
            Some(w) => w.wait(pause),
            None => std::thread::sleep(pause),
        }
    }
}

#[cfg(target_os = "linux")]
mod watch {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::time::Duration;

    /// An inotify instance watching the collaboration folder's entries.
    pub(super) struct Watcher {
        fd: libc::c_int,
    }

    impl Watcher {
        /// `None` when inotify is unavailable; the caller then sleeps instead.
        pub(super) fn new(folder: &Path) -> Option<Self> {
            let path = CString::new(folder.as_os_str().as_bytes()).ok()?;
            // SAFETY: plain syscalls on a descriptor this struct owns.
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            if fd < 0 {
                return None;
            }
            let mask = libc::IN_MODIFY
                | libc::IN_CLOSE_WRITE
                | libc::IN_CREATE
                | libc::IN_DELETE
                | libc::IN_MOVED_FROM
                | libc::IN_MOVED_TO
                | libc::IN_ATTRIB
                | libc::IN_DELETE_SELF;
            // SAFETY: `path` is a valid NUL-terminated string; `fd` is ours.
            let wd = unsafe { libc::inotify_add_watch(fd, path.as_ptr(), mask) };
            let watcher = Watcher { fd };
            (wd >= 0).then_some(watcher)
        }

        /// Blocks until something in the folder changes or `timeout` passes.
        pub(super) fn wait(&self, timeout: Duration) {
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
            // SAFETY: `pfd` is a valid pollfd for the duration of the call.
            let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
            if ready > 0 {
                // Drain the queued events; their content is not needed, only the wake-up.
                let mut buf = [0u8; 4096];
                loop {
                    // SAFETY: `buf` is writable for its full length.
                    let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
                    if n <= 0 {
                        break;
                    }
                }
            }
        }
    }

    impl Drop for Watcher {
        fn drop(&mut self) {
            // SAFETY: `fd` came from inotify_init1 and is closed once.
            unsafe { libc::close(self.fd) };
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod watch {
    use std::path::Path;
    use std::time::Duration;

    /// Without a notification API here, waiting is a plain sleep.
    pub(super) struct Watcher;

    impl Watcher {
        pub(super) fn new(_folder: &Path) -> Option<Self> {
            Some(Watcher)
        }

        pub(super) fn wait(&self, timeout: Duration) {
            std::thread::sleep(timeout);
        }
    }
}
