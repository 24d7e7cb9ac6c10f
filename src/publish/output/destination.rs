//! Where an output may go: not overlapping the registry, a folder (or nothing), holding only
//! paths this tool wrote and nobody changed since, and removable.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use super::ownership::{read_listing, OWNERSHIP_FILE};
use super::read::{entries, join, shown};
use crate::publish::error::{io, BuildError};
use acp_registry_core::fs::digest::hex;
use acp_registry_core::fs::{self, Kind};

/// At most this many problem paths are listed (and looked for) in a refusal.
const LISTED_LIMIT: usize = 50;
/// `<registry>/dist` may hold the output: discovery never treats `dist` as an entry.
const OUTPUT_IN_REGISTRY: &str = "dist";

/// The output folder: as the user named it (for messages) and with links resolved (where
/// it is written, so a link the user chose as `--out` is kept and its target replaced).
#[derive(Debug, Clone)]
pub(crate) struct Destination {
    /// As the user named it.
    pub shown: PathBuf,
    /// Absolute, links resolved.
    pub path: PathBuf,
}

/// `path` absolute with every link resolved: the longest existing prefix canonicalised,
/// the rest (which does not exist, so holds no link) appended.
fn resolved(path: &Path) -> Result<PathBuf, BuildError> {
    let absolute = std::path::absolute(path).map_err(io(path))?;
    let parts: Vec<Component> = absolute.components().collect();
    for existing in (1..=parts.len()).rev() {
        let head: PathBuf = parts[..existing].iter().collect();
        match std::fs::canonicalize(&head) {
            Ok(mut out) => {
                for part in &parts[existing..] {
                    match part {
                        Component::ParentDir => {
                            out.pop();
                        }
                        Component::CurDir => {}
                        other => out.push(other),
                    }
                }
                return Ok(out);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(path)(e)),
        }
    }
    Ok(absolute)
}

/// Refuse an output (a folder or a file) that overlaps the registry, links resolved on both
/// sides: inside it, except below `<registry>/dist` (discovery never reads it as an entry, so
/// a registry at the repository root builds into `dist/` there), or holding it. Every command
/// that writes somewhere named by `--out` asks this first.
pub(crate) fn refuse_overlap(out: &Path, registry: &Path) -> Result<(), BuildError> {
    let (path, registry_path) = (resolved(out)?, resolved(registry)?);
    let inside = path.starts_with(&registry_path)
        && !path.starts_with(registry_path.join(OUTPUT_IN_REGISTRY));
    if inside || registry_path.starts_with(&path) {
        return Err(BuildError::OverlapsRegistry {
            out: out.to_path_buf(),
            registry: registry.to_path_buf(),
        });
    }
    Ok(())
}

/// Refuse an output that overlaps the registry ([`refuse_overlap`]), is not a
/// folder, holds paths this tool did not write, or cannot be removed.
pub(crate) fn check_destination(out: &Path, registry: &Path) -> Result<Destination, BuildError> {
    refuse_overlap(out, registry)?;
    let path = resolved(out)?;
    let destination = Destination {
        shown: out.to_path_buf(),
        path,
    };
    match std::fs::symlink_metadata(&destination.path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(destination),
        Err(e) => return Err(io(out)(e)),
        Ok(meta) if !meta.is_dir() => return Err(BuildError::NotAFolder(out.to_path_buf())),
        Ok(_) => {}
    }
    let mut problems = Problems::default();
    removable(&destination.path, Kind::Dir, "", &mut problems);
    judge_folder(&destination.path, "", &mut problems)?;
    problems.into_result(out)?;
    Ok(destination)
}

/// What stops a folder from being replaced, in walk order.
#[derive(Default)]
struct Problems {
    foreign: Vec<String>,
    stuck: Vec<String>,
    truncated: bool,
    /// A non-empty folder without any manifest of ours (e.g. an older acp-registry's output).
    unmarked: bool,
}

impl Problems {
    fn full(&self) -> bool {
        self.foreign.len() + self.stuck.len() >= LISTED_LIMIT
    }

    fn foreign(&mut self, path: &str, why: &str) {
        if self.full() {
            self.truncated = true;
        } else {
            self.foreign.push(format!("{} ({why})", shown(path)));
        }
    }

    fn stuck(&mut self, path: &str, error: &std::io::Error) {
        if self.full() {
            self.truncated = true;
        } else {
            self.stuck.push(format!("{} ({error})", shown(path)));
        }
    }

    fn into_result(self, out: &Path) -> Result<(), BuildError> {
        let more = if self.truncated { "\n  …" } else { "" };
        let list = |paths: &[String]| format!("  {}{more}", paths.join("\n  "));
        if !self.foreign.is_empty() {
            let hint = if self.unmarked {
                format!("\n(there is no {OWNERSHIP_FILE}: an output written by an earlier acp-registry must be deleted by hand once)")
            } else {
                String::new()
            };
            return Err(BuildError::ForeignOutput {
                out: out.to_path_buf(),
                paths: format!("{}{hint}", list(&self.foreign)),
            });
        }
        if !self.stuck.is_empty() {
            return Err(BuildError::ReadOnlyOutput {
                out: out.to_path_buf(),
                paths: list(&self.stuck),
            });
        }
        Ok(())
    }
}

/// Judge `dir` by its own manifest (none: every path in it is foreign).
fn judge_folder(dir: &Path, shown_prefix: &str, problems: &mut Problems) -> Result<(), BuildError> {
    let listing = read_listing(dir);
    if listing.is_none() && !entries(dir).map_err(io(dir))?.is_empty() {
        problems.unmarked = true;
        if std::fs::symlink_metadata(dir.join(OWNERSHIP_FILE)).is_ok() {
            let display = join(shown_prefix, OWNERSHIP_FILE);
            problems.foreign(&display, "not a manifest acp-registry wrote");
        }
    }
    judge(
        dir,
        "",
        &listing.unwrap_or_default(),
        shown_prefix,
        problems,
    )
}

/// Every path under `dir` must be listed in `listing` (keys relative to the listing's
/// folder, `key` being `dir`'s) with an unchanged digest, or lie in a sub-folder carrying a
/// valid manifest of its own (e.g. `site/` replaced by `acp-registry site`). Listed files
/// that are missing are fine: replacing the folder loses nothing of anyone's.
fn judge(
    dir: &Path,
    key: &str,
    listing: &BTreeMap<String, String>,
    shown_prefix: &str,
    problems: &mut Problems,
) -> Result<(), BuildError> {
    for (name, kind) in entries(dir).map_err(io(dir))? {
        if problems.full() {
            problems.truncated = true;
            return Ok(());
        }
        let path = dir.join(&name);
        let display = join(shown_prefix, &name.to_string_lossy());
        let Some(name) = name.to_str() else {
            problems.foreign(&display, "a name that is not UTF-8");
            continue;
        };
        let rel = join(key, name);
        removable(&path, kind, &display, problems);
        match kind {
            Kind::Link => problems.foreign(&display, "a symbolic link"),
            Kind::Special(_) => problems.foreign(&display, "not a regular file"),
            Kind::Dir if read_listing(&path).is_some() => judge_folder(&path, &display, problems)?,
            Kind::Dir => judge(&path, &rel, listing, &display, problems)?,
            Kind::File if rel == OWNERSHIP_FILE => {}
            Kind::File => match listing.get(&rel) {
                None => problems.foreign(&display, "not written by acp-registry"),
                Some(digest) if file_digest(&path).ok().as_ref() != Some(digest) => {
                    problems.foreign(&display, "changed since acp-registry wrote it");
                }
                Some(_) => {}
            },
        }
    }
    Ok(())
}

/// Whether this process may remove `path` (a folder also needs its entries removable):
/// `access(2)` sees modes, read-only mounts and the immutable/append-only attributes that
/// stop even root, so the old output is never half removed.
fn removable(path: &Path, kind: Kind, display: &str, problems: &mut Problems) {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mode = match kind {
            Kind::Dir => libc::W_OK | libc::X_OK,
            Kind::File => libc::W_OK,
            Kind::Link | Kind::Special(_) => return,
        };
        let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return;
        };
        // SAFETY: a valid NUL-terminated path for the duration of the call.
        let result =
            unsafe { libc::faccessat(libc::AT_FDCWD, c_path.as_ptr(), mode, libc::AT_EACCESS) };
        if result != 0 {
            let error = std::io::Error::last_os_error();
            problems.stuck(if display.is_empty() { "." } else { display }, &error);
        }
    }
    #[cfg(not(unix))]
    let _ = (path, kind, display, problems);
}

fn file_digest(path: &Path) -> std::io::Result<String> {
    let mut file = fs::open_path(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 64 * 1024];
    loop {
        match file.read(&mut buffer)? {
            0 => return Ok(hex(&hasher.finalize())),
            n => hasher.update(&buffer[..n]),
        }
    }
}
