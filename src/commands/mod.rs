//! Commands: what each subcommand does, between argument parsing (the binaries) and the
//! domain (`registry`, `rules`). Each returns an exit code; output goes to the writers given.

pub mod build;
pub mod explain;
pub mod fmt;
pub mod matrix;
pub mod new;
pub mod online;
pub mod pack;
pub mod update;
pub mod validate;
pub mod verify;

use std::io::IsTerminal;
use std::path::{Component, Path};

use crate::diagnostics::Report;

/// Exit codes shared by every command.
pub mod exit {
    pub const OK: u8 = 0;
    pub const FINDINGS: u8 = 1;
    pub const FAILURE: u8 = 2;
}

/// Colour on a terminal unless `NO_COLOR` is set (to anything non-empty).
pub fn use_color() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// The same for output written to stderr.
pub fn use_color_stderr() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

/// The registry folder as findings show it: relative to the working directory, as the user
/// named it (`.` gives `""`, `./registry/` gives `registry`), so GitHub annotations and
/// editors find the files. An absolute path stays absolute unless it is inside the working
/// directory.
pub fn display_root(registry: &Path) -> String {
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
pub fn relocated(report: &Report, registry: &Path) -> Report {
    let mut report = report.clone();
    report.relocate(&display_root(registry));
    report
}

#[cfg(test)]
mod tests {
    use super::*;

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
