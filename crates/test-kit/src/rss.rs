//! A child's peak resident memory, for tests that hold a command to a memory bound: the
//! `VmHWM` of `/proc/<pid>/status`, polled until the child exits. Not `wait4`'s
//! `ru_maxrss`: Linux carries that across `exec`, so it would count the test process's own
//! memory that the child shared between fork and exec.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a measured command may run before it is killed (and the test fails).
const TIMEOUT: Duration = Duration::from_secs(120);

/// Run `command` to completion (stdin closed, stdout and stderr captured): its output and
/// its peak resident set size in bytes.
pub fn run_measured(command: &mut Command) -> (Output, u64) {
    // `spawn` returns once the child has exec'd, so every reading is of the new program.
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let status_file = format!("/proc/{}/status", child.id());
    let started = Instant::now();
    let mut peak = 0;
    let status = loop {
        // The high-water mark only grows; once the child is a zombie the line is gone.
        if let Some(kib) = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|text| high_water_kib(&text))
        {
            peak = peak.max(kib * 1024);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            panic!("{command:?} did not finish within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let output = Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    (output, peak)
}

/// The peak resident set size of the running process `pid` so far, in KiB (`None` once it is
/// gone or a zombie).
pub fn high_water_of(pid: u32) -> Option<u64> {
    high_water_kib(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// The `VmHWM:` line of a `/proc/<pid>/status` text, in KiB.
fn high_water_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
