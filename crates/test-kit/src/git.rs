//! git with a fixed identity and no signing, so that commits work on any machine.

use std::path::Path;
use std::process::Command;

/// `git ARGS` in `dir` under a test identity, not yet run.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir);
    command
}

/// Runs `git ARGS` in `dir`, asserting it succeeds; its standard output, trimmed.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = command(dir, args).output().expect("git starts");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `git init` then one commit of everything in `dir`.
pub fn init_and_commit(dir: &Path, message: &str) {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}
