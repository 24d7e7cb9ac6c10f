//! `verify` and `matrix` run inside a registry of test agents (`acp_test_kit::wheel` writes
//! them), as `verify.rs`, `verify_fixtures.rs` and `net_faults.rs` run them.

use std::path::Path;
use std::process::Command;

pub(crate) use acp_test_kit::Run;

/// Held by every test that runs `verify` inside the test process: its run folders are named by
/// the process id, so a test that checks none of its own is left behind must not see another
/// test's, still running, as its own.
pub(crate) fn in_process() -> std::sync::MutexGuard<'static, ()> {
    static IN_PROCESS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    IN_PROCESS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `acp-registry ARGS --registry .` inside `root`, loopback allowed, with a `GITHUB_TOKEN`
/// the sandbox must not pass on.
pub(crate) fn command(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(crate::REGISTRY);
    command
        .args(args)
        .args(["--registry", "."])
        .current_dir(root)
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env("GITHUB_TOKEN", "secret-token");
    command
}

pub(crate) fn run_command(command: &mut Command) -> Run {
    Run::of(command)
}

/// [`command`] with `--no-cache`, run to the end.
pub(crate) fn run(root: &Path, args: &[&str]) -> Run {
    run_command(command(root, args).arg("--no-cache"))
}
