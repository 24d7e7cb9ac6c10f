//! `--check`: a fresh build compared with the existing folder, file by file as it is
//! produced, without writing anything.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::read::{entries, join, shown};
use super::tree::{hashed, FileSink, Tree};
use crate::publish::error::{io, BuildError};
use acp_registry_core::fs::{self, Kind};

/// A difference between a fresh build and an existing folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Difference {
    /// A file of the build is not in the folder.
    Missing(String),
    /// A path of the folder is not in the build.
    Extra(String),
    /// The folder's file differs, or is not a regular file.
    Changed(String),
}

impl Difference {
    fn path(&self) -> &str {
        match self {
            Difference::Missing(p) | Difference::Extra(p) | Difference::Changed(p) => p,
        }
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let label = match self {
            Difference::Missing(_) => "missing ",
            Difference::Extra(_) => "extra   ",
            Difference::Changed(_) => "changed ",
        };
        write!(f, "{label} {}", shown(self.path()))
    }
}

/// Every path under `root` with its own type (links not followed).
fn list_paths(
    root: &Path,
    prefix: &str,
    out: &mut BTreeMap<String, (PathBuf, Kind)>,
) -> Result<(), BuildError> {
    for (name, kind) in entries(root).map_err(io(root))? {
        let relative = join(prefix, &name.to_string_lossy());
        let path = root.join(&name);
        if kind == Kind::Dir {
            list_paths(&path, &relative, out)?;
        } else {
            out.insert(relative, (path, kind));
        }
    }
    Ok(())
}

/// Compare a fresh build with the folder `out` (sorted by path), file by file as they are
/// produced. Links and special files are differences, never read.
pub(crate) fn compare(out: &Path, tree: &impl Tree) -> Result<Vec<Difference>, BuildError> {
    let mut existing = BTreeMap::new();
    if std::fs::symlink_metadata(out).is_ok_and(|m| m.is_dir()) {
        list_paths(out, "", &mut existing)?;
    }
    let comparison = Comparison {
        existing: &existing,
        differences: Mutex::new(Vec::new()),
    };
    tree.produce(&comparison)?;
    let mut differences = comparison
        .differences
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let planned: BTreeSet<&str> = tree.paths().into_iter().collect();
    for path in existing.keys() {
        if !planned.contains(path.as_str()) {
            differences.push(Difference::Extra(path.clone()));
        }
    }
    differences.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(differences)
}

/// The existing output as a [`FileSink`]: notes each produced file that is missing there
/// or differs.
struct Comparison<'a> {
    existing: &'a BTreeMap<String, (PathBuf, Kind)>,
    differences: Mutex<Vec<Difference>>,
}

impl FileSink for Comparison<'_> {
    fn file(
        &self,
        path: &str,
        content: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<String, BuildError> {
        let (digest, difference) = match self.existing.get(path) {
            Some((disk, Kind::File)) => {
                let mut read = |disk| {
                    let file = std::io::BufReader::new(fs::open_path(disk)?);
                    let (same, digest) = hashed(SameBytes::new(file), content)?;
                    Ok::<_, std::io::Error>((digest, same.at_end()?))
                };
                let (digest, same) = read(disk).map_err(io(disk))?;
                (
                    digest,
                    (!same).then(|| Difference::Changed(path.to_string())),
                )
            }
            other => {
                let (_, digest) = hashed(std::io::sink(), content).map_err(io(Path::new(path)))?;
                let difference = match other {
                    None => Difference::Missing(path.to_string()),
                    Some(_) => Difference::Changed(path.to_string()),
                };
                (digest, Some(difference))
            }
        };
        if let Some(difference) = difference {
            self.differences
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(difference);
        }
        Ok(digest)
    }
}

/// A writer that checks the bytes written equal those read from `disk`.
struct SameBytes<R> {
    disk: R,
    same: bool,
    scratch: Vec<u8>,
}

impl<R: Read> SameBytes<R> {
    fn new(disk: R) -> Self {
        SameBytes {
            disk,
            same: true,
            scratch: Vec::new(),
        }
    }

    /// Whether everything matched and the file holds nothing more.
    fn at_end(mut self) -> std::io::Result<bool> {
        Ok(self.same && self.disk.read(&mut [0])? == 0)
    }
}

impl<R: Read> Write for SameBytes<R> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.same {
            self.scratch.resize(buf.len(), 0);
            match self.disk.read_exact(&mut self.scratch) {
                Ok(()) => self.same = self.scratch == buf,
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => self.same = false,
                Err(e) => return Err(e),
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
