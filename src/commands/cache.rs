//! `acp-registry cache gc [--dry-run]`: remove the installs the registry no longer
//! references (any version other than an entry's current one, and agents it no longer
//! lists) and stale temporary files; `--dry-run` only lists them.

use std::io::Write;

use super::client::{ClientFlags, Session};
use super::client_text::t;
use super::error::CommandError;
use super::exit::{self, Exit};

/// `cache`'s subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum CacheCommand {
    /// Remove installs of versions the registry no longer lists, and stale temporary files.
    Gc(GcOptions),
}

/// `cache`'s options: its subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// What to do with the cache.
    #[command(subcommand)]
    pub command: CacheCommand,
}

/// `cache gc`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(mut_arg("allow_loopback_for_tests", |arg| arg.help(
    "TEST ONLY: allow loopback addresses, over plain http too (see `validate`)"
)))]
pub struct GcOptions {
    /// List what would be removed; remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The registry (what it references is kept) and the cache.
    #[command(flatten)]
    pub client: ClientFlags,
}

/// Runs the subcommand; what is removed goes to `out`, notes to `err`.
///
/// # Errors
/// A registry or cache that cannot be read, a removal that fails.
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    match &options.command {
        CacheCommand::Gc(gc) => collect(gc, out, err),
    }
}

fn collect(
    options: &GcOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    let session = Session::open(&options.client)?;
    let registry = session.registry(err)?;
    let report = session.store.gc(&registry.document, options.dry_run)?;
    let verb = if options.dry_run {
        "would remove"
    } else {
        "removed"
    };
    for path in &report.removed {
        writeln!(out, "{verb} {}", t(&path.display().to_string()))?;
    }
    for id in &report.busy {
        writeln!(
            err,
            "note: {} skipped: another process is installing it",
            t(id)
        )?;
    }
    if report.removed.is_empty() {
        writeln!(out, "nothing to remove")?;
    } else {
        let mib = report.bytes as f64 / (1024.0 * 1024.0);
        writeln!(
            out,
            "{} {} item(s), {mib:.1} MiB",
            if options.dry_run {
                "would free"
            } else {
                "freed"
            },
            report.removed.len()
        )?;
    }
    Ok(exit::OK)
}
