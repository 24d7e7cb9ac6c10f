//! The `acp-collab append` command line, written once for every test that appends through the
//! binary rather than the library.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `acp-collab append --folder F [--participant P] [--event E] …`, flags in the order they were
/// given. [`Append::alias`] runs it under another name (`append_event`, the script-era name).
#[derive(Debug, Clone)]
pub struct Append {
    program: PathBuf,
    name: String,
    folder: PathBuf,
    args: Vec<OsString>,
}

impl Append {
    /// `program append --folder folder`, no other flag yet.
    pub fn new(program: impl AsRef<Path>, folder: impl AsRef<Path>) -> Append {
        Append {
            program: program.as_ref().to_path_buf(),
            name: "append".to_owned(),
            folder: folder.as_ref().to_path_buf(),
            args: Vec::new(),
        }
    }

    /// The subcommand under another name.
    #[must_use]
    pub fn alias(mut self, name: &str) -> Append {
        name.clone_into(&mut self.name);
        self
    }

    /// `--participant who`.
    #[must_use]
    pub fn participant(self, who: &str) -> Append {
        self.flag("--participant", who)
    }

    /// `--event kind`.
    #[must_use]
    pub fn kind(self, kind: &str) -> Append {
        self.flag("--event", kind)
    }

    /// `--summary text`.
    #[must_use]
    pub fn summary(self, text: &str) -> Append {
        self.flag("--summary", text)
    }

    /// `--reply-to seq` (a string, so that a test can pass one that is not a number).
    #[must_use]
    pub fn reply_to(self, seq: &str) -> Append {
        self.flag("--reply-to", seq)
    }

    /// `flag value`.
    #[must_use]
    pub fn flag(self, flag: &str, value: impl Into<OsString>) -> Append {
        self.arg(flag).arg(value)
    }

    /// One more argument as it is.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Append {
        self.args.push(arg.into());
        self
    }

    /// The command, not started.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .arg(&self.name)
            .arg("--folder")
            .arg(&self.folder)
            .args(&self.args);
        command
    }
}

/// A deliverable as its author finishes it: `Status: Frozen`, and a line of text under every
/// `## ` section heading of the skeleton `init` wrote.
pub fn finish_deliverable(text: &str) -> String {
    let body: Vec<String> = text
        .replace("Status: Draft", "Status: Frozen")
        .lines()
        .map(|l| {
            if l.starts_with("## ") {
                format!("{l}\n\nWritten.")
            } else {
                l.to_owned()
            }
        })
        .collect();
    body.join("\n") + "\n"
}

/// The flags of `init_collaboration` (binary or packaged script) for the two-participant
/// collaboration the tests run: server and reader, one completion gate, a design spec.
pub fn two_party_init_flags<'a>(folder: &'a str, objective: &'a str) -> [&'a str; 12] {
    [
        "--folder",
        folder,
        "--participant",
        "server",
        "--participant",
        "reader",
        "--objective",
        objective,
        "--completion",
        "Gate A",
        "--primary-deliverable-type",
        "design-spec",
    ]
}
