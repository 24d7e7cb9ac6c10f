//! `acp-registry skill check SOURCE…`: someone's well-known skills index or plugin marketplace
//! checked against the files it lists (`crate::indexes`), printed like `validate`'s report.

use std::io::Write;

use super::error::CommandError;
use super::exit::{self, Exit};
use crate::diagnostics::{write_report, ReportFormat, Severity};
use crate::flags::{Loopback, NetworkFlags};
use crate::indexes::{self, CheckOptions};
use crate::net::NetConfig;

/// What `skill check` checks and how it reports; the field docs are its `--help`.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(
    after_help = "SOURCE is a site (https://example.com/docs, or a local folder: its \
.well-known/agent-skills/index.json, .well-known/skills/index.json and \
.claude-plugin/marketplace.json are checked), an index.json, a marketplace.json, a marketplace \
root or a plugin folder. Exit codes: 0 no errors (and no warnings with --deny-warnings), 1 \
errors found (or warnings with --deny-warnings), 2 a source that holds nothing to check or \
cannot be reached."
)]
pub struct Options {
    /// The sites, indexes or marketplaces to check: https URLs or local paths.
    #[arg(value_name = "SOURCE", required = true)]
    pub sources: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: ReportFormat,
    /// Exit 1 when there are warnings, not only errors.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Sites on private addresses, a proxy, extra certificate authorities.
    #[command(flatten)]
    pub network: NetworkFlags,
    /// The loopback switch (tests only).
    #[command(flatten)]
    pub loopback: Loopback,
    /// Colour the human output (set by the binary for a terminal).
    #[arg(skip)]
    pub color: bool,
}

/// Run `skill check`, print the report to `out`, return the exit code.
///
/// # Errors
/// A source that holds nothing to check or cannot be reached, or a report that cannot be
/// written.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    let mut net = NetConfig {
        allow_loopback: options.loopback.allow_loopback_for_tests,
        ..NetConfig::default()
    };
    options
        .network
        .apply(&mut net, &[], false)
        .map_err(CommandError::Usage)?;
    let check = CheckOptions {
        sources: options.sources.clone(),
        net,
    };
    let report = indexes::check(&check)?;
    write_report(&report, options.format, options.color, out)?;
    let failed =
        report.has_errors() || (options.deny_warnings && report.count(Severity::Warning) > 0);
    Ok(if failed { exit::FINDINGS } else { exit::OK })
}
