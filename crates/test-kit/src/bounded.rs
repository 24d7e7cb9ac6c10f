//! Running a binary on hostile input under a timeout and an address-space limit, so a reader
//! that blocks on a FIFO or reads without bound fails the test instead of hanging the suite.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Run;

/// How long a bounded run may take before it is killed and the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(20);
/// Address-space limit of the child: reading an endless device must not take the machine.
pub const MEMORY_LIMIT: u64 = 4 << 30;

/// `bin` at a path uid 65534 can execute: the checkout may sit below a folder only its owner
/// can enter (a `mktemp -d` clone is mode 700). A hard link when the temporary folder is on
/// the same file system (no copy, and no written file to exec), else a copy; the folder lives
/// as long as the returned guard.
fn reachable_copy(bin: &str) -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::tempdir().unwrap();
    std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = folder.path().join(Path::new(bin).file_name().unwrap());
    let others_may_run = std::fs::metadata(bin).unwrap().permissions().mode() & 0o005 == 0o005;
    if !others_may_run || std::fs::hard_link(bin, &copy).is_err() {
        std::fs::copy(bin, &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (folder, copy)
}

/// Spawn, waiting out "text file busy": a fresh copy cannot be executed while a child that
/// another test thread forked meanwhile still holds the copy's write descriptor (it closes
/// at that child's exec).
fn spawn(command: &mut Command) -> std::process::Child {
    let mut attempts = 0;
    loop {
        match command.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 100 => {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            started => return started.expect("the binary starts"),
        }
    }
}

/// Run `bin` under [`TIMEOUT`] and [`MEMORY_LIMIT`]; `unprivileged` drops to uid/gid 65534
/// when running as root (permissions mean nothing to root). With `--registry DIR` among the
/// arguments it runs inside DIR with `--registry .`.
pub fn run_bin(bin: &str, args: &[&str], unprivileged: bool) -> Run {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let dropping = unprivileged && unsafe { libc::geteuid() } == 0;
    let reachable = dropping.then(|| reachable_copy(bin));
    let mut command = Command::new(reachable.as_ref().map_or(Path::new(bin), |(_, p)| p));
    // Findings name paths as the registry was named: run inside it with `--registry .` so
    // they read `<entry>/<file>`.
    let mut args: Vec<&str> = args.to_vec();
    if let Some(i) = args.iter().position(|a| *a == "--registry") {
        command.current_dir(args[i + 1]);
        args[i + 1] = ".";
    }
    command
        .args(&args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe libc calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: MEMORY_LIMIT,
                rlim_max: MEMORY_LIMIT,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            if dropping {
                let ok = libc::setgroups(0, std::ptr::null()) == 0
                    && libc::setgid(65534) == 0
                    && libc::setuid(65534) == 0;
                if !ok {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = spawn(&mut command);
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{bin} {args:?} did not finish within {TIMEOUT:?} (blocked or reading forever)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}
