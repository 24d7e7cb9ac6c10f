//! `acp-registry skill …`: the commands about Agent Skills beyond a registry's own checks:
//! `check` (other people's skills indexes and plugin marketplaces, `skill_check`), and
//! `install`, `uninstall`, `list` (the one installer, run by `skill_install`).

use std::io::Write;

use super::error::CommandError;
use super::exit::Exit;
use super::skill_check;
use super::skill_install::{self, InstallOptions, ListOptions, UninstallOptions};

/// The `skill` subcommands; the doc comments are their `--help`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SkillCommand {
    /// Check well-known skills indexes (0.2.0 and 0.1.0) and Claude Code plugin marketplaces,
    /// local or by URL, against the files they list.
    Check(skill_check::Options),
    /// Install skills from a site (its well-known index), a marketplace or a registry folder
    /// where agents read skills, every file verified first.
    Install(InstallOptions),
    /// Remove what skill install wrote (never a folder it did not write).
    Uninstall(UninstallOptions),
    /// Show the skills skill install wrote, where they came from and which clients see them.
    List(ListOptions),
}

/// `skill`'s options: one subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// What to do.
    #[command(subcommand)]
    pub command: SkillCommand,
}

impl Options {
    /// Colour the human output of `check` (the binary knows whether stdout is a terminal).
    pub fn set_color(&mut self, color: bool) {
        if let SkillCommand::Check(check) = &mut self.command {
            check.color = color;
        }
    }
}

/// Runs one `skill` subcommand; its report goes to `out`, warnings to `err`.
///
/// # Errors
/// A source that holds nothing to check, cannot be reached, read or verified, a folder in the
/// way, or a failed write.
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    match &options.command {
        SkillCommand::Check(check) => skill_check::run(check, out),
        SkillCommand::Install(o) => skill_install::install(o, out, err),
        SkillCommand::Uninstall(o) => skill_install::uninstall(o, out),
        SkillCommand::List(o) => skill_install::list(o, out),
    }
}
