//! `acp-registry skill …`: the skill command group (`install`, `uninstall`, `list`), parsed
//! here and run by `skill_install`.

use std::io::Write;

use super::error::CommandError;
use super::exit::Exit;
use super::skill_install::{self, InstallOptions, ListOptions, UninstallOptions};

/// `skill`'s options: one subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// What to do.
    #[command(subcommand)]
    pub command: SkillCommand,
}

/// The `skill` subcommands; the doc comments are their `--help`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SkillCommand {
    /// Install skills from a site (its well-known index), a marketplace or a registry folder
    /// where agents read skills, every file verified first.
    Install(InstallOptions),
    /// Remove what skill install wrote (never a folder it did not write).
    Uninstall(UninstallOptions),
    /// Show the skills skill install wrote, where they came from and which clients see them.
    List(ListOptions),
}

/// Runs one `skill` subcommand; warnings go to `err`.
///
/// # Errors
/// A source that cannot be read or verified, a folder in the way, or a failed write.
pub fn run(
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, CommandError> {
    match &options.command {
        SkillCommand::Install(o) => skill_install::install(o, out, err),
        SkillCommand::Uninstall(o) => skill_install::uninstall(o, out),
        SkillCommand::List(o) => skill_install::list(o, out),
    }
}
