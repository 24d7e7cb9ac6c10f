//! `acp-registry verify`: launch each agent's distributions as an editor would and check its
//! `initialize` answer; one line per agent and distribution, then the findings in the
//! chosen format. The options, the planning and the printing are the verify domain's
//! ([`crate::verify`]); this is the command's order of work and its exit code.

use std::io::Write;

use super::display::display_root;
use super::error::CommandError;
use super::exit::{self, Exit};
use crate::verify;
pub use crate::verify::Options;

/// Launches the selected agents and writes one line each and the findings to `out`; exit 1
/// when a finding is an error. With `--list-shards`, prints the shards and launches nothing.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    if options.list_shards.is_some() {
        verify::list_shards(options, out)?;
        return Ok(exit::OK);
    }
    let (checked, run) = verify::prepare(options)?;
    let mut outcome = verify::run(&checked, &run)?;
    outcome
        .report
        .relocate(&display_root(&options.registry.root));
    verify::write(&outcome, options, out)?;
    Ok(if outcome.report.has_errors() {
        exit::FINDINGS
    } else {
        exit::OK
    })
}
