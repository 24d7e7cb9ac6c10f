//! Why an install, uninstall or list failed ([`SkillInstallError`]); the messages name the
//! folder and what to do, and the tool (`acp-collab skill`, `acp-registry skill`).

use std::path::PathBuf;

/// Why a skill could not be installed, uninstalled or listed.
#[derive(Debug, thiserror::Error)]
pub enum SkillInstallError {
    /// A user-level skill command without a home folder.
    #[error("HOME is not set; pass --project DIR")]
    NoHome,
    /// `--agent` names no known agent (the known ones listed).
    #[error("unknown agent '{name}'; use one of: {} (see skill install --list)", known.join(", "))]
    UnknownAgent {
        /// The agent as given.
        name: String,
        /// Every known agent.
        known: Vec<&'static str>,
    },
    /// A skill folder could not be read, written or removed.
    #[error("cannot install into {}: {message}", path.display())]
    Install {
        /// The file or folder.
        path: PathBuf,
        /// Why not.
        message: String,
    },
    /// An install would replace something without `--force` (what is there).
    #[error("{} {what}; pass --force to replace it", dir.display())]
    InTheWay {
        /// The skill folder.
        dir: PathBuf,
        /// What is in the way, e.g. `exists and is not a folder`.
        what: String,
    },
    /// A skill folder, or a folder on the way to it below the home or project folder, is a
    /// symbolic link: nothing is written or deleted through one.
    #[error("{} is a symbolic link; {tool} never writes or deletes through a link (it could point anywhere): replace it with a real folder, pass the folder it points to as --project, or, for a folder above the skill folder that you trust (a dotfiles link), pass --follow-links", path.display())]
    SkillLink {
        /// The link.
        path: PathBuf,
        /// The command group, e.g. `acp-collab skill`.
        tool: &'static str,
    },
    /// An uninstall of an install edited since, without `--force`.
    #[error("{} is an install of this skill edited since; pass --force to remove the files the install wrote (others are kept)", .0.display())]
    EditedInstall(PathBuf),
    /// An uninstall of a folder no install wrote.
    #[error("{} was not written by {tool} install; remove it yourself if you mean to", dir.display())]
    ForeignInstall {
        /// The skill folder.
        dir: PathBuf,
        /// The command group, e.g. `acp-collab skill`.
        tool: &'static str,
    },
    /// The skill's name breaks the Agent Skills rule (it is the folder's name too).
    #[error(
        "`{0}` is not a skill name (1-64 lowercase letters, digits and single hyphens inside)"
    )]
    BadName(String),
    /// A file path of the skill could leave its folder, or is the record's.
    #[error("skill `{name}`: refusing the file `{path}`: {why}")]
    BadFile {
        /// The skill.
        name: String,
        /// The path, escaped.
        path: String,
        /// Why.
        why: &'static str,
    },
}

impl SkillInstallError {
    pub(crate) fn io(path: &std::path::Path, e: impl std::fmt::Display) -> Self {
        SkillInstallError::Install {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}
