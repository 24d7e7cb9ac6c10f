//! `acp-registry pack`: build one platform's archive of an entry and record it in the
//! manifest, or (`--check`) compare an existing archive with the manifest.

use std::io::Write;

use super::error::CommandError;
use super::exit::{self, Exit};
use crate::diagnostics::escape;
use crate::pack;
pub use crate::pack::PackOptions;

/// `pack`'s options; `check` writes nothing. The field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// The inputs of the package.
    #[command(flatten)]
    pub pack: PackOptions,
    /// Write nothing: exit 1 unless the archive in --out is the one agent.json records (and,
    /// with --binary, the one these inputs build).
    #[arg(long)]
    pub check: bool,
}

/// The tar entries' time: `SOURCE_DATE_EPOCH` when it is a number, else 0.
pub fn source_date_epoch() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Runs `pack` and reports on `out`: 0 done (or `--check` found the archive recorded), 1
/// `--check` found differences; usage and I/O failures are errors (exit 2).
pub fn run(opts: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    if opts.check {
        let problems = pack::check(&opts.pack)?;
        for problem in &problems {
            writeln!(out, "{}", escape::terminal(problem))?;
        }
        if problems.is_empty() {
            writeln!(
                out,
                "{} `{}`: the archive matches agent.json",
                opts.pack.id, opts.pack.target
            )?;
            return Ok(exit::OK);
        }
        return Ok(exit::FINDINGS);
    }
    let packed = pack::pack(&opts.pack)?;
    let p = &packed.package;
    writeln!(out, "wrote {} ({} bytes)", p.path.display(), p.bytes.len())?;
    writeln!(out, "sha256 {}", p.sha256)?;
    let what = if packed.manifest_changed {
        "updated"
    } else {
        "unchanged"
    };
    writeln!(
        out,
        "{what} {} ({} and version {})",
        packed.manifest_path, p.platform.key, p.version
    )?;
    Ok(exit::OK)
}
