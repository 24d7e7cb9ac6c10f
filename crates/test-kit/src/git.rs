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

/// Runs `git ARGS` in `dir`: its standard output, trimmed, or an error with its standard error.
pub fn try_git(dir: &Path, args: &[&str]) -> std::io::Result<String> {
    let out = command(dir, args).output()?;
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Runs `git ARGS` in `dir`, asserting it succeeds; its standard output, trimmed.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) -> String {
    try_git(dir, args).unwrap_or_else(|e| panic!("{e}"))
}

/// `git init` then one commit, `base`, of everything in `dir`.
pub fn init_base(dir: &Path) -> std::io::Result<()> {
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-qm", "base"],
    ] {
        try_git(dir, args)?;
    }
    Ok(())
}
