//! `--changed-since`: which entry folders changed since a git revision.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Why `--changed-since` could not ask git.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started (not installed, not on `PATH`).
    #[error("cannot run git: {0}")]
    Spawn(std::io::Error),
    /// git ran and failed (an unknown revision, not a repository).
    #[error("git {command} failed: {stderr}")]
    Failed {
        /// The git command line, for the message.
        command: String,
        /// What git printed on stderr.
        stderr: String,
    },
}

fn git(root: &Path, args: &[&str]) -> Result<String, GitError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(GitError::Spawn)?;
    if !output.status.success() {
        return Err(GitError::Failed {
            command: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Where `dir` is inside its git work tree, `/`-separated (`""` at the top level, `registry`
/// for a sub-folder); `None` outside git or without git.
pub fn work_tree_prefix(dir: &Path) -> Option<String> {
    let prefix = git(dir, &["rev-parse", "--show-prefix"]).ok()?;
    Some(
        prefix
            .trim_end_matches(['\n', '\r'])
            .trim_end_matches('/')
            .to_string(),
    )
}

/// Names of root-level folders of `root` with files changed since `rev`: committed changes,
/// uncommitted ones and untracked files (so a new entry in a pull request counts).
pub fn changed_folders(root: &Path, rev: &str) -> Result<BTreeSet<String>, GitError> {
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(|_| GitError::Failed {
        command: format!("rev-parse {rev}"),
        stderr: format!("unknown revision `{rev}`"),
    })?;
    let diff = git(root, &["diff", "--name-only", "--relative", rev, "--", "."])?;
    let untracked = git(
        root,
        &["ls-files", "--others", "--exclude-standard", "--", "."],
    )?;
    // Both listings are relative to `root` (`-C root`, `--relative`, `-- .`).
    Ok(diff
        .lines()
        .chain(untracked.lines())
        .filter_map(|path| path.split_once('/').map(|(folder, _)| folder.to_string()))
        .collect())
}
