//! `acp-registry matrix`: `verify` plus a session and probes of every optional session
//! method; writes `matrix.json` and `matrix.md`.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::exit;
use super::verify::{self as verify_command, prepare};
use crate::verify::{self, matrix};

#[derive(Debug, Clone)]
pub struct Options {
    pub common: verify_command::Options,
    /// The `matrix.json` to write (`matrix.md` goes beside it).
    pub out: PathBuf,
    /// Reuse rows of the existing `out` whose version and distribution did not change.
    pub changed_only: bool,
}

pub fn run(options: &Options, out: &mut dyn Write) -> anyhow::Result<u8> {
    // Read first: an existing file that is not a matrix is refused, never overwritten.
    let previous = match crate::fs::kind(&options.out)? {
        None => None,
        Some(_) => Some(matrix::read(&options.out).map_err(|e| {
            anyhow::anyhow!(
                "{e}; --out must name a matrix.json written by acp-registry (or a new file)"
            )
        })?),
    };
    let md = options.out.with_extension("md");
    if crate::fs::kind(&md)?.is_some() && !ours(&md) {
        anyhow::bail!(
            "{} exists and was not written by acp-registry matrix; move it or choose another --out",
            md.display()
        );
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
