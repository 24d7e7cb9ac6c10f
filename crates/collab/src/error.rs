//! `CollabError`, the one failure type of every collaboration command, and `FlagProblem`, one
//! bad `append` flag. In a file of its own so that the modules that fail (nearly all) import it
//! from here and not from the crate root, which re-exports them: the root names every module,
//! so a module naming the root would close a cycle.
//!
//! There is one kind per way a command can fail (`Usage`, `Refused`, `Flags`,
//! `Read`, `ProtocolFile`, …, `Create`, `Write`, `Console`), not just a usage and a protocol
//! error, but they are all printed in one place and all exit 2: `cli::run` prints `Usage` in
//! argparse's `usage: …` then `acp-collab «subcommand»: error: «message»` form, `Refused` and
//! `Flags` with their hints, and the rest as `error: «message»`. So a validator exit 1 always
//! means warnings only (`docs/collab-protocol.md#internal-failures-exit-2`). Only `Console`, a
//! failure to print at all, is left to the binary.

use std::path::PathBuf;

use crate::paths::{ReadError, Sibling};

/// A command failure; every kind exits 2. [`Usage`](CollabError::Usage) is printed
/// argparse-style, [`Refused`](CollabError::Refused) and [`Flags`](CollabError::Flags) with
/// their hints, [`Console`](CollabError::Console) by the binary, and every other kind as
/// `error: «message»`, worded as the published scripts word it.
#[derive(Debug, thiserror::Error)]
pub enum CollabError {
    /// Invalid arguments: printed argparse-style, `usage: …` then
    /// `«command»: error: «message»`.
    #[error("{0}")]
    Usage(String),
    /// A protocol refusal and the way forward: printed as `error: «message»` (the published
    /// text, unchanged), then `  «hint»` (whose turn it is and what to run).
    #[error("{message}")]
    Refused {
        /// The refusal, as the published scripts word it.
        message: String,
        /// What to do instead, with the command to run.
        hint: String,
    },
    /// `append` flags that are missing or invalid, all of them at once: printed as
    /// `error: «messages joined with '; '»` (the first being the published one), then one
    /// `  --«flag»: «what to pass»` line each.
    #[error("{}", .0.iter().map(|p| p.message.as_str()).collect::<Vec<_>>().join("; "))]
    Flags(Vec<FlagProblem>),

    /// A file of the folder is (or lies under) a symlink, or cannot be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// `protocol.json` is missing, a link or not JSON (what [`protocol::load`](crate::protocol::load) reports).
    #[error("{0}")]
    ProtocolFile(String),
    /// `protocol.json` is JSON but not an object.
    #[error(
        "protocol.json must contain a JSON object; restore it from the collaboration's history"
    )]
    ProtocolNotAnObject,
    /// A `--folder` that does not exist, and the folder beside it its name most likely meant:
    /// printed with a hint, that folder or how to create one.
    #[error("collaboration folder {} does not exist", .folder.display())]
    NoFolder {
        /// The folder, resolved.
        folder: PathBuf,
        /// The closest sibling folder, if any is close.
        closest: Option<Sibling>,
    },
    /// A `--folder` that exists without `protocol.json` (the published message): printed with
    /// a hint saying it is not a collaboration folder and what to run.
    #[error("missing protocol.json in {}", .0.display())]
    NotACollaboration(PathBuf),
    /// `events.jsonl` is missing, a link, or has lines that do not decode (the messages).
    #[error("{}", .0.join("; "))]
    Log(Vec<String>),
    /// `events.jsonl` ends with a line without its newline (its first 40 bytes).
    #[error("events.jsonl ends with an incomplete line ({0}); remove it or restore the rest of the line")]
    IncompleteLine(String),
    /// `append` of an event the protocol does not have.
    #[error("unknown event '{0}'")]
    UnknownEvent(String),
    /// A participant `protocol.json` does not list.
    #[error("participant '{0}' is not listed in protocol.json")]
    UnknownParticipant(String),
    /// `readiness.md` has open items the event needs cleared (the gate messages).
    #[error("{}", .0.join("; "))]
    Readiness(Vec<&'static str>),
    /// `completed` without `--doc conclusion.md`.
    #[error("completed must reference conclusion.md")]
    CompletedWithoutConclusion,
    /// `completed` with completion gates left unchecked in `readiness.md`.
    #[error("completion gates must be checked first: {}", .0.join(", "))]
    UncheckedGates(Vec<String>),
    /// `completed` with an incomplete `conclusion.md` (the problems).
    #[error("{}", .0.join("; "))]
    Conclusion(Vec<String>),

    /// `init --folder` names something that is not a folder.
    #[error("{} exists and is not a directory; choose another --folder", .0.display())]
    NotAFolder(PathBuf),
    /// A folder could not be created.
    #[error("cannot create {}: {source}", path.display())]
    Create {
        /// The folder.
        path: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// A file of the folder could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// The append lock file could not be opened (or is not a regular file).
    #[error("cannot open {}: {message}", path.display())]
    OpenLock {
        /// The lock file.
        path: PathBuf,
        /// Why not.
        message: String,
    },
    /// The append lock could not be taken.
    #[error("cannot lock {}: {source}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// The event line could not be appended to `events.jsonl`.
    #[error("cannot append to {}: {source}", path.display())]
    Append {
        /// The log.
        path: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// `wait` could not write its progress lines.
    #[error("cannot write output: {0}")]
    WaitOutput(#[source] std::io::Error),

    /// A skill could not be installed, uninstalled or listed (the core's installer).
    #[error(transparent)]
    Skill(#[from] acp_registry_core::skill_install::SkillInstallError),
    /// The current folder cannot be read.
    #[error("cannot read the current folder: {0}")]
    CurrentFolder(#[source] std::io::Error),
    /// The running executable cannot be found (the skill's scripts run it).
    #[error("cannot find the running acp-collab: {0}")]
    CurrentExe(#[source] std::io::Error),

    /// Standard input or output failed (printing a result, or the ACP connection): the
    /// binary prints it as its failure line.
    #[error(transparent)]
    Console(std::io::Error),
}

/// One missing or invalid `append` flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagProblem {
    /// The flag without dashes (`reply-to`).
    pub flag: &'static str,
    /// The published message (`reply_to is required after initialized`).
    pub message: String,
    /// What to pass instead.
    pub hint: String,
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::PathBuf;

    use super::CollabError;
    use crate::paths::ReadError;
    use acp_registry_core::skill_install::SkillInstallError;

    /// Each typed failure prints the text its `Protocol(String)` used to carry, byte for
    /// byte: agents and the published scripts' users match on these lines.
    #[test]
    fn each_failure_prints_the_published_message() {
        let dir = || PathBuf::from("c/x");
        let os = || io::Error::other("denied");
        let cases: Vec<(CollabError, &str)> = vec![
            (ReadError::Io("cannot read c/x: denied".into()).into(), "cannot read c/x: denied"),
            (CollabError::ProtocolFile("invalid protocol.json: eof".into()), "invalid protocol.json: eof"),
            (CollabError::ProtocolNotAnObject, "protocol.json must contain a JSON object; restore it from the collaboration's history"),
            (CollabError::NoFolder { folder: dir(), closest: None }, "collaboration folder c/x does not exist"),
            (CollabError::NotACollaboration(dir()), "missing protocol.json in c/x"),
            (CollabError::Log(vec!["line 2: bad".into(), "line 3: bad".into()]), "line 2: bad; line 3: bad"),
            (CollabError::IncompleteLine("{\"seq\"".into()), "events.jsonl ends with an incomplete line ({\"seq\"); remove it or restore the rest of the line"),
            (CollabError::UnknownEvent("hello".into()), "unknown event 'hello'"),
            (CollabError::UnknownParticipant("ghost".into()), "participant 'ghost' is not listed in protocol.json"),
            (CollabError::Readiness(vec!["a", "b"]), "a; b"),
            (CollabError::CompletedWithoutConclusion, "completed must reference conclusion.md"),
            (CollabError::UncheckedGates(vec!["one".into(), "two".into()]), "completion gates must be checked first: one, two"),
            (CollabError::Conclusion(vec!["x".into(), "y".into()]), "x; y"),
            (CollabError::NotAFolder(dir()), "c/x exists and is not a directory; choose another --folder"),
            (CollabError::Create { path: dir(), source: os() }, "cannot create c/x: denied"),
            (CollabError::Write { path: dir(), source: os() }, "cannot write c/x: denied"),
            (CollabError::OpenLock { path: dir(), message: "denied".into() }, "cannot open c/x: denied"),
            (CollabError::Lock { path: dir(), source: os() }, "cannot lock c/x: denied"),
            (CollabError::Append { path: dir(), source: os() }, "cannot append to c/x: denied"),
            (CollabError::WaitOutput(os()), "cannot write output: denied"),
            (SkillInstallError::NoHome.into(), "HOME is not set; pass --project DIR"),
            (SkillInstallError::UnknownAgent { name: "vim".into(), known: vec!["universal", "claude"] }.into(), "unknown agent 'vim'; use one of: universal, claude (see skill install --list)"),
            (SkillInstallError::Install { path: dir(), message: "denied".into() }.into(), "cannot install into c/x: denied"),
            (SkillInstallError::InTheWay { dir: dir(), what: "exists and is not a folder".into() }.into(), "c/x exists and is not a folder; pass --force to replace it"),
            (SkillInstallError::SkillLink { path: dir(), tool: "acp-collab skill" }.into(), "c/x is a symbolic link; acp-collab skill never writes or deletes through a link (it could point anywhere): replace it with a real folder, pass the folder it points to as --project, or, for a folder above the skill folder that you trust (a dotfiles link), pass --follow-links"),
            (SkillInstallError::EditedInstall(dir()).into(), "c/x is an install of this skill edited since; pass --force to remove the files the install wrote (others are kept)"),
            (SkillInstallError::ForeignInstall { dir: dir(), tool: "acp-collab skill" }.into(), "c/x was not written by acp-collab skill install; remove it yourself if you mean to"),
            (CollabError::CurrentFolder(os()), "cannot read the current folder: denied"),
            (CollabError::CurrentExe(os()), "cannot find the running acp-collab: denied"),
            (CollabError::Console(os()), "denied"),
        ];
        for (error, message) in cases {
            assert_eq!(error.to_string(), message, "{error:?}");
        }
    }
}
