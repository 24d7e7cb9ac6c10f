//! Commands: what each subcommand does, between argument parsing (the binaries) and the
//! domain (`registry`, `rules`). Each `run` returns `Result<`[`Exit`]`, `[`CommandError`]`>`;
//! output goes to the writers given, coloured only when its [`Stream`] allows.

pub mod build;
pub mod explain;
pub mod fmt;
pub mod init;
pub mod matrix;
pub mod new;
pub mod online;
pub mod pack;
mod template;
pub mod update;
pub mod validate;
pub mod verify;

use std::io::IsTerminal;
use std::path::{Component, Path};

use crate::diagnostics::Report;

// Shared with `acp-collab`, so they live in the core.
pub use acp_registry_core::cli::{failure_line, manual};

/// The registry root every command reads when `--registry` is not given.
pub const DEFAULT_REGISTRY: &str = "registry";

/// The exit code of a command that ran: one of [`exit`]'s constants. A plain `u8`, so the
/// binaries hand it to `ExitCode::from` as it is.
pub type Exit = u8;

/// Exit codes shared by every command.
pub mod exit {
    use super::Exit;

    /// Success: nothing to report (or only what does not fail the run).
    pub const OK: Exit = 0;
    /// Findings (or differences with `--check`).
    pub const FINDINGS: Exit = 1;
    /// Usage or I/O failure: what a [`CommandError`](super::CommandError) exits with.
    pub const FAILURE: Exit = 2;
    /// `build --last-good`: published, with failing entries held back in their previous form
    /// or left out (the findings say which).
    pub const HELD_BACK: Exit = 3;
}

/// Why a command could not run (exit 2); findings are never errors. Shown as the failure
/// it wraps (its display and its sources), so the message names the path or flag to change.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// A flag names something that does not exist or cannot be used.
    #[error("{0}")]
    Usage(String),
    /// A failure of the domain (registry, output folder, network, launch, package) or of
    /// writing the report.
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// Each failure a command passes on through `?`.
macro_rules! failed_from {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for CommandError {
            fn from(error: $error) -> Self {
                CommandError::Failed(error.into())
            }
        })*
    };
}

failed_from!(
    std::io::Error,
    serde_json::Error,
    crate::registry::RegistryError,
    crate::publish::BuildError,
    crate::registry::git::GitError,
    crate::publish::last_good::LastGoodError,
    crate::registry::quarantine::QuarantineError,
    crate::online::OnlineError,
    crate::verify::VerifyError,
    crate::verify::matrix::MatrixError,
    crate::update::UpdateError,
    crate::pack::PackError,
    crate::diagnostics::UnknownCode,
    init::InitError,
    new::NewError,
);

/// A standard stream a command writes its report or progress to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    /// Whether the stream is a terminal (progress bars are drawn only there).
    pub fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }

    /// Colour on a terminal unless `NO_COLOR` is set (to anything non-empty).
    pub fn use_color(self) -> bool {
        std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && self.is_terminal()
    }
}

/// The registry folder as findings show it: relative to the working directory, as the user
/// named it (`.` gives `""`, `./registry/` gives `registry`), so GitHub annotations and
/// editors find the files. An absolute path stays absolute unless it is inside the working
/// directory.
pub(crate) fn display_root(registry: &Path) -> String {
    display_root_in(registry, std::env::current_dir().ok().as_deref())
}

fn display_root_in(registry: &Path, cwd: Option<&Path>) -> String {
    let inside = cwd.filter(|_| registry.is_absolute()).and_then(|cwd| {
        let lexical = registry.strip_prefix(cwd).ok().map(Path::to_path_buf);
        lexical.or_else(|| {
            // The same folder through a link (a temp dir under /tmp on macOS, say).
            let (real, real_cwd) = (registry.canonicalize().ok()?, cwd.canonicalize().ok()?);
            real.strip_prefix(real_cwd).ok().map(Path::to_path_buf)
        })
    });
    slash_path(inside.as_deref().unwrap_or(registry))
}

/// `path` `/`-separated, without `.` components or a trailing separator.
fn slash_path(path: &Path) -> String {
    let mut root = String::new();
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => root.push_str(&prefix.as_os_str().to_string_lossy()),
            Component::RootDir => root.push('/'),
            Component::CurDir => {}
            Component::ParentDir => parts.push("..".into()),
            Component::Normal(name) => parts.push(name.to_string_lossy().into_owned()),
        }
    }
    format!("{root}{}", parts.join("/"))
}

/// A copy of `report` with every path as the user named `registry` ([`display_root`]).
pub(crate) fn relocated(report: &Report, registry: &Path) -> Report {
    let mut report = report.clone();
    report.relocate(&display_root(registry));
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error and its sources, outermost first, as the binaries print them.
    fn chain(error: &CommandError) -> impl Iterator<Item = &dyn std::error::Error> {
        std::iter::successors(Some(error as &dyn std::error::Error), |e| e.source())
    }

    #[test]
    fn a_command_error_shows_the_wrapped_failure_and_its_sources_once() {
        let wrapped = std::io::Error::other("cannot read `x`: no such file");
        let shown = CommandError::from(wrapped);
        assert_eq!(
            failure_line(chain(&shown)),
            "error: cannot read `x`: no such file"
        );
        let usage = CommandError::Usage("--agent a: no entry".into());
        assert_eq!(failure_line(chain(&usage)), "error: --agent a: no entry");
    }

    #[test]
    fn display_root_is_the_registry_as_named_relative_to_the_working_directory() {
        let cwd = Path::new("/work/repo");
        let root = |p: &str| display_root_in(Path::new(p), Some(cwd));
        assert_eq!(root("."), "");
        assert_eq!(root("./"), "");
        assert_eq!(root("registry/"), "registry");
        assert_eq!(root("./x"), "x");
        assert_eq!(root("./a/./b/"), "a/b");
        assert_eq!(root("../other/registry"), "../other/registry");
        assert_eq!(root("/work/repo/registry"), "registry");
        assert_eq!(root("/work/repo"), "");
        assert_eq!(root("/elsewhere/registry"), "/elsewhere/registry");
        assert_eq!(root("/"), "/");
    }

    #[test]
    fn relocating_prefixes_files_and_sources_and_keeps_the_root_alone() {
        use crate::diagnostics::{Code, Diagnostic};
        use crate::source::SourceFile;
        let mut report = Report::default();
        report
            .diagnostics
            .push(Diagnostic::new(Code::Schema, "m").in_file("a/agent.json"));
        let source = SourceFile::new("a/agent.json", "{}");
        report.sources.insert(source.path.clone(), source);
        let mut kept = report.clone();
        kept.relocate("");
        assert_eq!(kept.diagnostics[0].file, "a/agent.json");
        report.relocate("registry");
        assert_eq!(report.diagnostics[0].file, "registry/a/agent.json");
        assert_eq!(
            report.sources["registry/a/agent.json"].path,
            "registry/a/agent.json"
        );
        report.relocate("/");
        assert_eq!(report.diagnostics[0].file, "/registry/a/agent.json");
    }
}
