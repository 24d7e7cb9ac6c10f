//! Commands: what each subcommand does, between argument parsing (the binaries) and the
//! domain (`registry`, `rules`). Each command module holds its `Options`, which derive
//! `clap::Args` and are what the binary parses (their field docs are the `--help` text), and a
//! `run` returning `Result<`[`Exit`]`, `[`CommandError`]`>`; output goes to the writers given,
//! coloured only when the binary found the [`Stream`] allows it.
//!
//! No command imports another: what several share is here (exit codes, errors, paths as the
//! user named them), in [`online`] (the `--online` flag groups), in `template`, in
//! `crate::flags` (flag groups and unit parsers) and in `crate::diagnostics` (`--format`
//! and its renderers). A test below keeps it so.
//!
//! Paths as the user named them: rules report paths relative to the registry root, and a command
//! relocates the report once (`display_root`: relative to the working directory as `--registry`
//! named it; for SARIF the registry's place in its git work tree, under `uriBaseId` `SRCROOT`),
//! so annotations attach to pull-request lines in either layout.
//!
//! Errors: the library's are `thiserror` types (`RegistryError`, `BuildError`, `GitError`,
//! `SiteError`, …, one variant per failure); a command wraps them in [`CommandError`] without
//! changing their message. Only the binary uses `anyhow`, to print an error's cause chain once
//! (`failure_line`). Bad input is always a finding with a file and a fix; I/O and usage failures
//! exit 2 with a message naming the path or the flag to change.

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
use crate::manifest::edit::{EditError, Editor};
use acp_registry_core::source::SourceFile;

// Shared with `acp-collab`, so they live in the core.
pub use crate::flags::DEFAULT_REGISTRY;
pub use acp_registry_core::cli::{failure_line, manual};

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
    crate::verify::matrix::MatrixError,
    crate::update::UpdateError,
    crate::pack::PackError,
    crate::diagnostics::UnknownCode,
    init::InitError,
    new::NewError,
);

impl From<crate::verify::VerifyError> for CommandError {
    fn from(error: crate::verify::VerifyError) -> Self {
        match error {
            crate::verify::VerifyError::Usage(message) => CommandError::Usage(message),
            error => CommandError::Failed(error.into()),
        }
    }
}

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

/// `rel` (a `/`-separated path) under the displayed registry root.
pub(crate) fn join_display(root: &str, rel: &str) -> String {
    match root {
        "" => rel.to_string(),
        _ if root.ends_with('/') => format!("{root}{rel}"),
        _ => format!("{root}/{rel}"),
    }
}

/// The canonical layout of a manifest's text (what `fmt` writes and `new` scaffolds), or why
/// there is none; `display` names the file in the message.
pub(crate) fn formatted(text: &str, display: &str) -> Result<String, String> {
    let mut editor = Editor::parse(text).map_err(|error| match error {
        EditError::Parse(syntax) => {
            let source = SourceFile::new(display, text);
            let (start, _) = source.range(syntax.span);
            format!(
                "{display}:{}:{}: not valid JSONC: {}; fix it first (`acp-registry validate` explains)",
                start.line, start.column, syntax.message
            )
        }
        other => format!("{display}: {other}"),
    })?;
    editor
        .format()
        .map_err(|error| format!("{display}: {error}"))?;
    Ok(editor.into_text())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Each command module's source: none may name another (see the module doc).
    const COMMANDS: [(&str, &str); 10] = [
        ("build", include_str!("build.rs")),
        ("explain", include_str!("explain.rs")),
        ("fmt", include_str!("fmt.rs")),
        ("init", include_str!("init.rs")),
        ("matrix", include_str!("matrix.rs")),
        ("new", include_str!("new.rs")),
        ("pack", include_str!("pack.rs")),
        ("update", include_str!("update.rs")),
        ("validate", include_str!("validate.rs")),
        ("verify", include_str!("verify.rs")),
    ];

    /// The other commands `source` (the module `name`) names through `super::` or
    /// `commands::`, grouped imports (`super::{a, b}`) included.
    fn commands_named<'a>(name: &str, source: &'a str) -> BTreeSet<&'a str> {
        let mut named = BTreeSet::new();
        for prefix in ["super::", "commands::"] {
            for (at, _) in source.match_indices(prefix) {
                let rest = &source[at + prefix.len()..];
                let paths = match rest.strip_prefix('{') {
                    Some(group) => &group[..group.find('}').unwrap_or(group.len())],
                    None => rest,
                };
                for path in paths.split(',') {
                    let mut segments = path
                        .trim()
                        .split(|c: char| !c.is_alphanumeric() && c != '_');
                    let module = segments.next().unwrap_or_default();
                    if module != name && COMMANDS.iter().any(|(command, _)| *command == module) {
                        named.insert(module);
                    }
                    if rest.strip_prefix('{').is_none() {
                        break;
                    }
                }
            }
        }
        named
    }

    #[test]
    fn no_command_imports_another_command() {
        for (name, source) in COMMANDS {
            let named = commands_named(name, source);
            assert!(
                named.is_empty(),
                "commands::{name} names commands {named:?}: move what they share to commands/mod.rs, crate::flags or crate::diagnostics"
            );
        }
    }

    #[test]
    fn the_scan_finds_a_command_named_alone_or_in_a_group() {
        let named = |source| {
            commands_named("new", source)
                .into_iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(
            named("use super::validate::{render, Format};"),
            ["validate"]
        );
        assert_eq!(named("use super::{exit, fmt, Exit};"), ["fmt"]);
        assert_eq!(named("let x = crate::commands::verify::run;"), ["verify"]);
        assert_eq!(
            named("use super::template::fill; use super::{exit, new};"),
            Vec::<&str>::new()
        );
        assert_eq!(named("use crate::verify::Options;"), Vec::<&str>::new());
    }

    /// `validate --online` and `update` flatten the same endpoint flags: the same command
    /// line gives the same overrides and loopback switch.
    #[test]
    fn validate_online_and_update_read_the_endpoint_flags_the_same_way() {
        let endpoints = ["--npm-registry", "http://n", "--pypi-url", "http://p"];
        let endpoints = [&endpoints[..], &["--github-api", "http://g"]].concat();
        let endpoints = [&endpoints[..], &["--allow-loopback-for-tests"]].concat();
        let validate: validate::Options =
            crate::flags::parse(&[&["--online"], &endpoints[..]].concat()).expect("validate");
        let update: update::Options = crate::flags::parse(&endpoints).expect("update");
        assert!(validate.online.enabled());
        for flags in [&validate.online.endpoints, &update.endpoints] {
            let overrides = flags.overrides();
            assert_eq!(overrides.npm.as_deref(), Some("http://n"));
            assert_eq!(overrides.pypi.as_deref(), Some("http://p"));
            assert_eq!(overrides.github_api.as_deref(), Some("http://g"));
            assert!(flags.loopback.allow_loopback_for_tests);
        }
        let config = crate::registry::Config::default();
        let online = online::options(&validate.online, &config);
        assert_eq!(online.endpoints.github_api, "http://g");
        assert!(online.net.allow_loopback);
    }

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
        use acp_registry_core::source::SourceFile;
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
