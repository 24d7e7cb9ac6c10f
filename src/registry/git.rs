//! `--changed-since`: which entry folders changed since a git revision, and their manifests
//! at that revision (for the change rules).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::rules::SKILLS_DIR;

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
        // Everything is read from the local repository: a partial clone fails instead.
        .env("GIT_NO_LAZY_FETCH", "1")
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
pub(crate) fn work_tree_prefix(dir: &Path) -> Option<String> {
    let prefix = git(dir, &["rev-parse", "--show-prefix"]).ok()?;
    Some(
        prefix
            .trim_end_matches(['\n', '\r'])
            .trim_end_matches('/')
            .to_string(),
    )
}

/// Names of root-level folders of `root` with files changed since `rev`: committed changes,
/// uncommitted ones and untracked files (so a new entry in a pull request counts). A
/// stand-alone skill's folder is named `skills/<name>`.
pub(crate) fn changed_folders(root: &Path, rev: &str) -> Result<BTreeSet<String>, GitError> {
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
    // `--no-renames`: a renamed folder lists its old name too (removed, for the change rules).
    let diff = git(
        root,
        &[
            "diff",
            "--name-only",
            "--no-renames",
            "--relative",
            rev,
            "--",
            ".",
        ],
    )?;
    let untracked = git(
        root,
        &["ls-files", "--others", "--exclude-standard", "--", "."],
    )?;
    // Both listings are relative to `root` (`-C root`, `--relative`, `-- .`).
    Ok(diff
        .lines()
        .chain(untracked.lines())
        .filter_map(|path| {
            let (folder, rest) = path.split_once('/')?;
            // A stand-alone skill is selected as `skills/<name>`, like an entry folder.
            match rest.split_once('/') {
                Some((skill, _)) if folder == SKILLS_DIR => Some(format!("{SKILLS_DIR}/{skill}")),
                _ => Some(folder.to_string()),
            }
        })
        .collect())
}

/// Every entry manifest at `rev` among `folders` (root-level folder names of `root`): folder
/// → text. Read from git's object store only (`GIT_NO_LAZY_FETCH`: a partial clone fails
/// rather than fetching). A folder is left out when its `agent.json` is not a regular file at
/// `rev` (absent, a link, a submodule), is over the manifest size limit or is not UTF-8:
/// what cannot be compared is not guessed at.
pub(crate) fn manifests_at(
    root: &Path,
    rev: &str,
    folders: &BTreeSet<String>,
) -> Result<BTreeMap<String, String>, GitError> {
    let listing = git(root, &["ls-tree", "-r", "-z", "-l", rev])?;
    let mut wanted: Vec<(String, String)> = Vec::new();
    for record in listing.split('\0') {
        let Some((meta, path)) = record.split_once('\t') else {
            continue;
        };
        let Some(folder) = path.strip_suffix("/agent.json") else {
            continue;
        };
        let mut fields = meta.split_whitespace();
        let (mode, kind, object, size) =
            (fields.next(), fields.next(), fields.next(), fields.next());
        let regular = matches!(mode, Some("100644" | "100755")) && kind == Some("blob");
        let small = size
            .and_then(|s| s.parse::<u64>().ok())
            .is_some_and(|s| s <= crate::manifest::MAX_MANIFEST_BYTES);
        if regular && small && !folder.contains('/') && folders.contains(folder) {
            if let Some(object) = object {
                wanted.push((folder.to_string(), object.to_string()));
            }
        }
    }
    let mut input = String::new();
    for (_, object) in &wanted {
        input.push_str(object);
        input.push('\n');
    }
    let output = git_with_input(root, &["cat-file", "--batch"], input.into_bytes())?;
    let mut blobs = BatchReader { rest: &output };
    let mut found = BTreeMap::new();
    for (folder, _) in wanted {
        if let Some(text) = blobs
            .next_blob()
            .and_then(|b| String::from_utf8(b.to_vec()).ok())
        {
            found.insert(folder, text);
        }
    }
    Ok(found)
}

/// Reads `git cat-file --batch` answers in request order: `<oid> blob <size>\n<bytes>\n`,
/// or `<oid> missing\n`.
struct BatchReader<'a> {
    rest: &'a [u8],
}

impl<'a> BatchReader<'a> {
    fn next_blob(&mut self) -> Option<&'a [u8]> {
        let newline = self.rest.iter().position(|b| *b == b'\n')?;
        let header = std::str::from_utf8(&self.rest[..newline]).ok()?;
        self.rest = &self.rest[newline + 1..];
        let mut fields = header.split(' ');
        let (_, kind, size) = (fields.next(), fields.next(), fields.next());
        let size: usize = size?.parse().ok()?;
        let blob = self.rest.get(..size)?;
        self.rest = self.rest.get(size + 1..).unwrap_or_default();
        (kind == Some("blob")).then_some(blob)
    }
}

/// `git` with `input` on stdin, written from a thread so a large answer cannot block it.
fn git_with_input(root: &Path, args: &[&str], input: Vec<u8>) -> Result<Vec<u8>, GitError> {
    use std::io::Write as _;
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_NO_LAZY_FETCH", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GitError::Spawn)?;
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(stdin) = stdin.as_mut() {
            // A failed write shows as git's own failure below.
            let _ = stdin.write_all(&input);
        }
    });
    let output = child.wait_with_output().map_err(GitError::Spawn)?;
    let _ = writer.join();
    if !output.status.success() {
        return Err(GitError::Failed {
            command: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(output.stdout)
}

/// The text of `file` (relative to `root`, `/`-separated) at `revision`: `Ok(None)` when the
/// revision has no such file, it is larger than `limit` bytes or not UTF-8.
pub(crate) fn file_at(
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
    match git_with_input(root, &["cat-file", "blob", &object], Vec::new()) {
        Ok(bytes) => Ok(String::from_utf8(bytes).ok()),
        Err(GitError::Failed { .. }) => Ok(None),
        Err(other) => Err(other),
    }
}

/// The manifests of a registry at one git revision: what `--verify-archives` compares a
/// mismatching pin with to tell `archive-retagged` from `sha256-mismatch`.
#[derive(Debug, Clone)]
pub(crate) struct Baseline {
    root: std::path::PathBuf,
    revision: String,
}

impl Baseline {
    /// `revision` (`--changed-since`, else `HEAD`) of the git work tree holding `root`;
    /// `None` outside git or when the revision does not name a commit.
    pub(crate) fn at(root: &Path, revision: &str) -> Option<Baseline> {
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
