//! `acp-registry skill …`: the commands about Agent Skills outside a registry's own entries.
//! `skill check` checks other people's skills indexes and plugin marketplaces
//! (`skill_check`).

use std::io::Write;

use super::error::CommandError;
use super::exit::Exit;
use super::skill_check;

/// `skill`'s subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SkillCommand {
    /// Check well-known skills indexes (0.2.0 and 0.1.0) and Claude Code plugin marketplaces,
    /// local or by URL, against the files they list.
    Check(skill_check::Options),
}

/// `skill`'s options: its subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// What to do.
    #[command(subcommand)]
    pub command: SkillCommand,
}

impl Options {
    /// Colour the subcommand's human output (the binary knows whether stdout is a terminal).
    pub fn set_color(&mut self, color: bool) {
        match &mut self.command {
            SkillCommand::Check(check) => check.color = color,
        }
    }
}

/// Runs the subcommand; its report goes to `out`.
///
/// # Errors
/// A source that holds nothing to check or cannot be reached, or a report that cannot be
/// written.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    match &options.command {
        SkillCommand::Check(check) => skill_check::run(check, out),
    }
}
