//! `acp-registry install <ID>`: install an agent of the registry into the cache (download,
//! check, unpack; npx and uvx packages pre-installed), or say it already is.

use std::io::Write;

use super::client::{ClientFlags, Session};
use super::client_text::t;
use super::error::CommandError;
use super::exit::{self, Exit};

/// `install`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(mut_arg("allow_loopback_for_tests", |arg| arg.help(
    "TEST ONLY: allow loopback addresses, over plain http too (see `validate`)"
)))]
pub struct Options {
    /// The agent's id in the registry.
    #[arg(value_name = "ID")]
    pub id: String,
    /// The registry, the cache and what to choose.
    #[command(flatten)]
    pub client: ClientFlags,
}

/// Installs the agent and prints where it is; notes, warnings and progress go to `err`.
///
/// # Errors
/// An unknown id, a version or release that cannot be used, a refused or failed install
/// (nothing of it is left in the cache).
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    let session = Session::open(&options.client)?;
    let (installed, new) = session.installed(&options.id, err)?;
    writeln!(
        out,
        "{} {} {} ({}, {}): {}",
        if new {
            "installed"
        } else {
            "already installed:"
        },
        t(&installed.id),
        t(&installed.version),
        installed.kind,
        t(&installed.platform),
        t(&installed.dir.display().to_string())
    )?;
    Ok(exit::OK)
}
