//! `acp-registry matrix`: `verify` plus a session and probes of every optional session
//! method; writes `matrix.json` and `matrix.md`.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::verify::{self as verify_command, prepare};
use super::{exit, CommandError};
use crate::verify::{self, matrix};

/// `matrix`'s options: `verify`'s and where the matrix goes.
#[derive(Debug, Clone)]
pub struct Options {
    /// The flags shared with `verify`.
    pub common: verify_command::Options,
    /// The `matrix.json` to write (`matrix.md` goes beside it).
    pub out: PathBuf,
    /// Reuse rows of the existing `out` whose version and distribution did not change.
    pub changed_only: bool,
}

/// Runs `verify` with the session probes and writes `matrix.json` and `matrix.md`; the
/// report goes to `out` as `verify` prints it, with the same exit code.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<u8, CommandError> {
    // Read first: an existing file that is not a matrix is refused, never overwritten.
    let previous = match crate::fs::kind(&options.out)? {
        None => None,
        Some(_) => Some(matrix::read(&options.out).map_err(|e| {
            CommandError::Usage(format!(
                "{e}; --out must name a matrix.json written by acp-registry (or a new file)"
            ))
        })?),
    };
    let md = options.out.with_extension("md");
    if crate::fs::kind(&md)?.is_some() && !ours(&md) {
        return Err(CommandError::Usage(format!(
            "{} exists and was not written by acp-registry matrix; move it or choose another --out",
            md.display()
        )));
    }
    let (checked, mut run) = prepare(&options.common)?;
    run.probe = true;
    if options.changed_only {
        run.reuse = previous
            .as_ref()
            .map(|m| m.agents.clone())
            .unwrap_or_default();
    }
    let mut outcome = verify::run(&checked, &run)?;
    let now = crate::collab::time::utc_now();
    let rows = matrix::matrix(&outcome.results, &run.reuse, &now);
    write_atomically(&options.out, &(serde_json::to_string_pretty(&rows)? + "\n"))?;
    write_atomically(&md, &matrix::markdown(&rows))?;
    verify_command::write(&mut outcome, &options.common, out)?;
    Ok(exit::OK)
}

/// Whether `path` is a regular file starting with the heading `matrix.md` files have.
fn ours(path: &Path) -> bool {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(name) = path.file_name() else {
        return false;
    };
    crate::fs::read_capped(parent, Path::new(name), 64 * 1024 * 1024)
        .is_ok_and(|bytes| bytes.starts_with(matrix::MARKDOWN_HEADING.as_bytes()))
}

fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    crate::fs::atomic::write(path, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}
