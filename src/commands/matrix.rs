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
/// report goes to `out` as `verify` prints it. Exit 0 once the files are written, whatever
/// the agents answered (the matrix records it).
pub fn run(options: &Options, out: &mut dyn Write) -> Result<u8, CommandError> {
    // Every check of --out before the agents run: a launch can take minutes.
    crate::registry::output::refuse_overlap(&options.out, &options.common.registry)?;
    check_folder(&options.out)?;
    let kind = |path: &Path| {
        crate::fs::kind(path)
            .map_err(|e| CommandError::Usage(format!("--out `{}`: {e}", path.display())))
    };
    // Read first: an existing file that is not a matrix is refused, never overwritten.
    let previous = match kind(&options.out)? {
        None => None,
        Some(_) => Some(matrix::read(&options.out).map_err(|e| {
            CommandError::Usage(format!(
                "{e}; --out must name a matrix.json written by acp-registry (or a new file)"
            ))
        })?),
    };
    let md = options.out.with_extension("md");
    if kind(&md)?.is_some() && !ours(&md) {
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
    let now = crate::time::utc_now();
    let rows = matrix::matrix(&outcome.results, &run.reuse, &now);
    write_atomically(&options.out, &(serde_json::to_string_pretty(&rows)? + "\n"))?;
    write_atomically(&md, &matrix::markdown(&rows))?;
    verify_command::write(&mut outcome, &options.common, out)?;
    Ok(exit::OK)
}

/// Whether `path` is a regular file starting with the heading `matrix.md` files have.
fn ours(path: &Path) -> bool {
    let parent = folder_of(path).unwrap_or(Path::new("."));
    let Some(name) = path.file_name() else {
        return false;
    };
    crate::fs::read_capped(parent, Path::new(name), 64 * 1024 * 1024)
        .is_ok_and(|bytes| bytes.starts_with(matrix::MARKDOWN_HEADING.as_bytes()))
}

fn write_atomically(path: &Path, text: &str) -> Result<(), CommandError> {
    let failed = |e: std::io::Error| {
        let message = format!("cannot write `{}`: {e}", path.display());
        CommandError::Failed(std::io::Error::new(e.kind(), message).into())
    };
    if let Some(folder) = folder_of(path) {
        std::fs::create_dir_all(folder).map_err(failed)?;
    }
    crate::fs::atomic::write(path, text.as_bytes()).map_err(failed)
}

/// The folder `path` goes in, when it names one (`matrix.json` alone names none).
fn folder_of(path: &Path) -> Option<&Path> {
    path.parent().filter(|p| !p.as_os_str().is_empty())
}

/// Refuse, before any agent runs, an `--out` whose folder is something other than a folder.
fn check_folder(out: &Path) -> Result<(), CommandError> {
    let mut folder = folder_of(out);
    while let Some(dir) = folder {
        match crate::fs::kind(dir) {
            Ok(None) => folder = folder_of(dir),
            Ok(Some(crate::fs::Kind::Dir)) => return Ok(()),
            // A link to a folder is fine: the file is written through it.
            Ok(Some(_)) if dir.is_dir() => return Ok(()),
            Ok(Some(_)) => {
                return Err(CommandError::Usage(format!(
                    "--out `{}`: `{}` is not a folder; choose another --out",
                    out.display(),
                    dir.display()
                )))
            }
            Err(e) => {
                return Err(CommandError::Usage(format!(
                    "--out `{}`: cannot read `{}`: {e}",
                    out.display(),
                    dir.display()
                )))
            }
        }
    }
    Ok(())
}
