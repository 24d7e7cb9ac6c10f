//! `acp-registry matrix`: `verify` plus a session and probes of every optional session
//! method; writes `matrix.json` and `matrix.md`.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::display::display_root;
use super::error::CommandError;
use super::exit::{self, Exit};
use crate::diagnostics::escape;
use crate::verify::{self, matrix, shard};

/// `matrix`'s options: `verify`'s and where the matrix goes, or the `merge` subcommand. The
/// field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Options {
    /// `matrix merge`, when given.
    #[command(subcommand)]
    pub command: Option<MatrixCommand>,
    /// The flags shared with `verify`.
    #[command(flatten)]
    pub verify: verify::Options,
    /// The matrix.json to write; matrix.md is written beside it.
    #[arg(long, value_name = "FILE", default_value = "matrix.json")]
    pub out: PathBuf,
    /// Keep the rows of the existing --out whose version and distribution did not change.
    #[arg(long)]
    pub changed_only: bool,
}

/// `matrix`'s subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum MatrixCommand {
    /// Join the matrix.json of each `matrix --shard K/N` run into the matrix.json and
    /// matrix.md one unsharded run writes.
    #[command(
        after_help = "Exit 0 when every shard was given, 1 when shards are missing (written \
with the rows there are, each missing shard named on stderr), 2 when the parts cannot be merged: \
another registry revision or selection, another shard count, a shard twice, a part claiming an \
entry of another shard (present or not), or a row the selection, its own details or its date \
contradict (each part is checked alone against the selection it lists)."
    )]
    Merge(MergeOptions),
}

/// Runs `matrix merge` when it was given, else `matrix` ([`probe`]).
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    match &options.command {
        Some(MatrixCommand::Merge(merge_options)) => merge(merge_options, out, err),
        None => probe(options, out),
    }
}

/// Runs `verify` with the session probes and writes `matrix.json` and `matrix.md`; the
/// report goes to `out` as `verify` prints it. Exit 0 once the files are written, whatever
/// the agents answered (the matrix records it).
pub fn probe(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    if options.verify.list_shards.is_some() {
        verify::list_shards(&options.verify, out)?;
        return Ok(exit::OK);
    }
    let registry = &options.verify.registry.root;
    // Every check of --out before the agents run: a launch can take minutes.
    crate::publish::output::refuse_overlap(&options.out, registry)?;
    let previous = check_out(&options.out)?;
    let (checked, mut run) = verify::prepare(&options.verify)?;
    run.probe = true;
    if options.changed_only {
        run.reuse = previous
            .as_ref()
            .map(|m| m.agents.clone())
            .unwrap_or_default();
    }
    let mut outcome = verify::run(&checked, &run)?;
    let rows = matrix::matrix(&outcome.results, &run.reuse, &now()?);
    let text = match &outcome.part {
        None => serde_json::to_string_pretty(&rows)?,
        Some(part) => serde_json::to_string_pretty(&matrix::PartDocument {
            version: rows.version,
            part: part.clone(),
            agents: rows.agents.clone(),
        })?,
    };
    write_atomically(&options.out, &(text + "\n"))?;
    write_atomically(&options.out.with_extension("md"), &matrix::markdown(&rows))?;
    outcome.report.relocate(&display_root(registry));
    verify::write(&outcome, &options.verify, out)?;
    Ok(exit::OK)
}

/// `matrix merge`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
pub struct MergeOptions {
    /// The matrix.json of each shard.
    #[arg(value_name = "PART.json", required = true)]
    pub parts: Vec<PathBuf>,
    /// The matrix.json to write; matrix.md is written beside it.
    #[arg(long, value_name = "FILE", default_value = "matrix.json")]
    pub out: PathBuf,
}

/// `matrix merge`: join the shards' parts into the `matrix.json` and `matrix.md` one unsharded
/// run writes. Exit 0 when every shard was given, 1 when shards are missing (the files are
/// written with the rows there are; `err` names each missing shard), 2 when the parts cannot
/// be merged (nothing is written).
pub fn merge(
    options: &MergeOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    let usage = |e: &dyn std::fmt::Display| CommandError::Usage(e.to_string());
    let now = now_seconds()?;
    let parts = options
        .parts
        .iter()
        .map(|path| matrix::read::part(path, now).map_err(|e| usage(&e)))
        .collect::<Result<Vec<_>, _>>()?;
    check_out(&options.out)?;
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if let Some(part) = options.parts.iter().find(|p| same(p, &options.out)) {
        return Err(CommandError::Usage(format!(
            "--out `{}` is the part `{}`; write the merged matrix to another file",
            options.out.display(),
            part.display()
        )));
    }
    let given = parts.len();
    let merged = shard::merge(parts).map_err(|e| usage(&e))?;
    let text = serde_json::to_string_pretty(&merged.matrix)? + "\n";
    write_atomically(&options.out, &text)?;
    write_atomically(
        &options.out.with_extension("md"),
        &matrix::markdown(&merged.matrix),
    )?;
    writeln!(
        out,
        "{}",
        escape::terminal(&format!(
            "merged {given} of {} shards ({} rows) into {}",
            merged.count,
            merged.matrix.agents.len(),
            options.out.display()
        ))
    )?;
    for (shard, entries) in &merged.missing {
        writeln!(
            err,
            "warning: shard {shard} is missing: no part was given for it, so its {entries} {} no rows",
            if *entries == 1 { "entry has" } else { "entries have" }
        )?;
    }
    Ok(if merged.missing.is_empty() {
        exit::OK
    } else {
        exit::FINDINGS
    })
}

/// The time rows are stamped with: now, or `ACP_REGISTRY_TEST_NOW` (tests only, so that runs
/// can be compared byte for byte).
fn now() -> Result<String, CommandError> {
    match std::env::var(TEST_NOW_ENV) {
        Ok(text) => acp_registry_core::time::parse_iso_utc_seconds(&text)
            .map(acp_registry_core::time::format_utc)
            .ok_or_else(|| {
                CommandError::Usage(format!("{TEST_NOW_ENV}={text}: not an ISO 8601 time"))
            }),
        Err(_) => Ok(acp_registry_core::time::utc_now()),
    }
}

/// [`now`] in seconds since the Unix epoch: what rows are checked against when read.
fn now_seconds() -> Result<i64, CommandError> {
    let now = now()?;
    acp_registry_core::time::parse_iso_utc_seconds(&now)
        .ok_or_else(|| CommandError::Usage(format!("{now}: not an ISO 8601 time")))
}

/// TEST ONLY: the time `matrix` stamps its rows with instead of now.
pub(crate) const TEST_NOW_ENV: &str = "ACP_REGISTRY_TEST_NOW";

/// Refuse an `--out` (and the `matrix.md` beside it) that `matrix` may not replace; the
/// matrix already there, if any.
fn check_out(out: &Path) -> Result<Option<matrix::Matrix>, CommandError> {
    check_folder(out)?;
    let kind = |path: &Path| {
        acp_registry_core::fs::kind(path)
            .map_err(|e| CommandError::Usage(format!("--out `{}`: {e}", path.display())))
    };
    // Read first: an existing file that is not a matrix is refused, never overwritten.
    let previous = match kind(out)? {
        None => None,
        // Rows set aside (forged, damaged, dated in the future) are not reused: run again.
        Some(_) => Some(
            matrix::read::read(out, now_seconds()?)
                .map_err(|e| {
                    CommandError::Usage(format!(
                        "{e}; --out must name a matrix.json written by acp-registry (or a new file)"
                    ))
                })?
                .matrix,
        ),
    };
    let md = out.with_extension("md");
    if kind(&md)?.is_some() && !ours(&md) {
        return Err(CommandError::Usage(format!(
            "{} exists and was not written by acp-registry matrix; move it or choose another --out",
            md.display()
        )));
    }
    Ok(previous)
}

/// Whether `path` is a regular file starting with the heading `matrix.md` files have.
fn ours(path: &Path) -> bool {
    let parent = folder_of(path).unwrap_or(Path::new("."));
    let Some(name) = path.file_name() else {
        return false;
    };
    acp_registry_core::fs::read_capped(parent, Path::new(name), 64 * 1024 * 1024)
        .is_ok_and(|bytes| bytes.starts_with(matrix::MARKDOWN_HEADING.as_bytes()))
}

fn write_atomically(path: &Path, text: &str) -> Result<(), CommandError> {
    let failed = |e: std::io::Error| {
        let message = format!("cannot write `{}`: {e}", path.display());
        CommandError::Failed(std::io::Error::new(e.kind(), message).into())
    };
    if let Some(folder) = folder_of(path) {
        // Missing folders are made one by one, never through a link (one planted while
        // the agents ran included): below the current folder for a relative `--out`, else
        // below the deepest folder that exists (the user named it).
        let (base, rel) = below_named(folder);
        acp_registry_core::fs::create_dirs_below(&base, &rel).map_err(|e| match e {
            acp_registry_core::fs::ReadError::Io(e) => failed(e),
            e => out_link(path, &e),
        })?;
    }
    acp_registry_core::fs::atomic::write(path, text.as_bytes()).map_err(failed)
}

/// Split `folder` into the folder the user named, followed as it is, and the part below it,
/// which is never gone through a link. The named folder is the current one for a relative
/// path (a checkout, which can hold links, is what a relative path names), else the deepest
/// existing folder; a `..` moves it up to where the `..` points.
fn below_named(folder: &Path) -> (PathBuf, PathBuf) {
    use std::path::Component;
    let parts: Vec<Component<'_>> = folder.components().collect();
    let split = parts
        .iter()
        .rposition(|c| matches!(c, Component::ParentDir))
        .map_or(0, |i| i + 1);
    let mut base: PathBuf = parts[..split].iter().collect();
    let mut rest = parts[split..].iter();
    if folder.is_absolute() {
        while let Some(next) = rest.clone().next() {
            if !base.join(next).is_dir() {
                break;
            }
            base.push(next);
            rest.next();
        }
    }
    if base.as_os_str().is_empty() {
        base.push(".");
    }
    (base, rest.collect())
}

/// `--out` refused: a link (or a file) where `matrix` would go through a folder.
fn out_link(out: &Path, e: &acp_registry_core::fs::ReadError) -> CommandError {
    CommandError::Usage(format!(
        "--out `{}`: {e}; matrix never writes through a link below the current folder (a \
         checkout can hold one) nor in the folders it creates: name the folder the link \
         points to instead",
        out.display()
    ))
}

/// The folder `path` goes in, when it names one (`matrix.json` alone names none).
fn folder_of(path: &Path) -> Option<&Path> {
    path.parent().filter(|p| !p.as_os_str().is_empty())
}

/// Refuse, before any agent runs, an `--out` whose folder is something other than a folder.
fn check_folder(out: &Path) -> Result<(), CommandError> {
    if let Some(folder) = folder_of(out) {
        let (base, rel) = below_named(folder);
        let checked = acp_registry_core::fs::no_link_below(&base, &rel);
        if let Err(e @ acp_registry_core::fs::ReadError::Link { .. }) = checked {
            return Err(out_link(out, &e));
        }
    }
    let mut folder = folder_of(out);
    while let Some(dir) = folder {
        match acp_registry_core::fs::kind(dir) {
            Ok(None) => folder = folder_of(dir),
            Ok(Some(acp_registry_core::fs::Kind::Dir)) => return Ok(()),
            // A link to a folder the user named (an absolute `--out`) is followed.
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
