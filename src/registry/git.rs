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

/// The text of `file` (relative to `root`, `/`-separated) at `revision`: `Ok(None)` when the
/// revision has no such file, it is larger than `limit` bytes or not UTF-8.
pub fn file_at(
    root: &Path,
    revision: &str,
    file: &str,
    limit: u64,
) -> Result<Option<String>, GitError> {
    // `./` makes the path relative to `root` (`-C root`), wherever the work tree starts.
    let object = format!("{revision}:./{file}");
    let Ok(size) = git(root, &["cat-file", "-s", &object]) else {
        return Ok(None);
    };
    if size.trim().parse::<u64>().map_or(true, |size| size > limit) {
        return Ok(None);
    }
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "blob", &object])
        .output()
        .map_err(GitError::Spawn)?;
    Ok(output
        .status
        .success()
        .then(|| String::from_utf8(output.stdout).ok())
        .flatten())
}

/// The manifests of a registry at one git revision: what `--verify-archives` compares a
/// mismatching pin with to tell `archive-retagged` from `sha256-mismatch`.
#[derive(Debug, Clone)]
pub struct Baseline {
    root: std::path::PathBuf,
    revision: String,
}

impl Baseline {
    /// `revision` (`--changed-since`, else `HEAD`) of the git work tree holding `root`;
    /// `None` outside git or when the revision does not name a commit.
    pub fn at(root: &Path, revision: &str) -> Option<Baseline> {
        git(
            root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{revision}^{{commit}}"),
            ],
        )
        .ok()?;
        Some(Baseline {
            root: root.to_path_buf(),
            revision: revision.to_string(),
        })
    }
}

impl crate::online::Baseline for Baseline {
    fn manifest_at_base(&self, file: &str) -> Option<String> {
        file_at(
            &self.root,
            &self.revision,
            file,
            crate::manifest::MAX_MANIFEST_BYTES,
        )
        .ok()
        .flatten()
    }

    fn revision(&self) -> &str {
        &self.revision
    }
}
