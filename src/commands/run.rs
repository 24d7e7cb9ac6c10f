//! `acp-registry run <ID> [-- ARGS…]`: start an agent with the standard streams passed
//! through, installing it first when needed, so an editor's agent-server setting can point
//! at it. On Unix the agent replaces this process (`exec`): the editor talks to the agent
//! directly and its signals reach it. Elsewhere the agent is spawned and waited for, and its
//! exit code is this command's.
//!
//! Standard output belongs to the agent (the ACP channel): notes, warnings and progress go to
//! standard error only. With a fresh cached registry and the agent installed, nothing is
//! asked over the network.

use std::io::Write;

use super::client::{ClientFlags, Session};
use super::error::CommandError;
use super::exit::Exit;

/// `run`'s options; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(mut_arg("allow_loopback_for_tests", |arg| arg.help(
    "TEST ONLY: allow loopback addresses, over plain http too (see `validate`)"
)))]
pub struct Options {
    /// The agent's id in the registry.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Arguments given to the agent after the registry's (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
    /// The registry, the cache and what to choose.
    #[command(flatten)]
    pub client: ClientFlags,
}

/// Starts the agent (see the module doc). On Unix it returns only on failure.
///
/// # Errors
/// What `install` refuses, or an agent that cannot be started (the message names it).
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    let session = Session::open(&options.client)?;
    let (installed, _) = session.installed(&options.id, err)?;
    let mut command = installed.command(&options.args);
    out.flush()?;
    err.flush()?;
    let failed = |e: std::io::Error| {
        CommandError::Usage(format!(
            "cannot start {} {} ({}): {e}",
            super::client_text::t(&installed.id),
            super::client_text::t(&installed.version),
            super::client_text::t(&installed.program.display().to_string())
        ))
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        // Only returns when the agent could not be started.
        Err(failed(command.exec()))
    }
    #[cfg(not(unix))]
    {
        let status = command.status().map_err(failed)?;
        Ok(status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            .unwrap_or(1))
    }
}
