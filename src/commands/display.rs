//! Paths as the user named them: the registry root findings show ([`display_root`]) and the
//! paths joined under it.

use std::path::{Component, Path};

use crate::diagnostics::Report;

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
pub(super) fn slash_path(path: &Path) -> String {
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
