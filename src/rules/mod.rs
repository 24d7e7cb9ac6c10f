//! The offline rules, one file per family, and the engine that runs them on an entry.
//!
//! Every rule reports into a [`Sink`], which applies the [`Policy`] (severity overrides,
//! exemptions) as findings are made, so a rule never needs to know about configuration.

mod distribution;
mod files;
mod icons;
mod identity;
mod metadata;
mod policy;
mod preview;
mod registry_wide;
mod schema;
mod skills;
mod versions;

use std::path::{Path, PathBuf};

/// The catalogue lives with `Diagnostic` (the ground layer); rules name codes from here too.
pub use crate::diagnostics::{explain, nearest, rules_markdown, Code, Family, UnknownCode};
pub use distribution::{
    normalized_json, package_name_and_pin, reserved_env, targets, url_versions, Targets,
};
pub use icons::check_icon;
pub use metadata::url_problem;
pub use policy::{is_enforced, Level, Policy, DEFAULT_REQUIRED_OS, ENFORCED};
pub use registry_wide::{check_duplicate_ids, check_quarantine, Quarantine};
pub use schema::{
    agent_validator, published_agent_validator, registry_validator, violations, Violation,
    AGENT_SCHEMA, REGISTRY_SCHEMA,
};
pub use skills::MAX_SKILL_BYTES;
pub use versions::{PreviewVersion, Version};

use crate::diagnostics::{Diagnostic, Severity};
use crate::fs::{self, ReadError};
use crate::manifest::Node;
use crate::source::{SourceFile, Span};

/// Collects findings for one entry (or the registry), applying the policy on the way in.
pub struct Sink<'p> {
    policy: &'p Policy,
    entry: Option<String>,
    pub diagnostics: Vec<Diagnostic>,
}

impl<'p> Sink<'p> {
    pub fn new(policy: &'p Policy, entry: Option<String>) -> Self {
        Self {
            policy,
            entry,
            diagnostics: Vec::new(),
        }
    }

    pub fn push(&mut self, diagnostic: Diagnostic) {
        if let Some(d) = self.policy.apply(self.entry.as_deref(), diagnostic) {
            self.diagnostics.push(d);
        }
    }

    pub fn policy(&self) -> &Policy {
        self.policy
    }

    /// Whether findings of `code` are kept for this sink's entry: a rule skips the work
    /// whose every finding the policy would drop.
    pub fn keeps(&self, code: Code) -> bool {
        self.policy.keeps(code, self.entry.as_deref())
    }
}

/// A parsed manifest: its source and its span-carrying tree.
#[derive(Debug, Clone)]
pub struct ManifestDoc {
    pub source: SourceFile,
    pub root: Node,
}

impl ManifestDoc {
    /// The span of the value at `pointer`, or of the nearest existing ancestor.
    pub fn span(&self, pointer: &str) -> Span {
        let mut pointer = pointer;
        loop {
            if let Some((node, _)) = self.root.pointer(pointer) {
                return node.span;
            }
            match pointer.rfind('/') {
                Some(i) => pointer = &pointer[..i],
                None => return Span::new(self.root.span.start, self.root.span.start + 1),
            }
        }
    }

    /// The span of the key naming the value at `pointer` (falls back to the value span).
    pub fn key_span(&self, pointer: &str) -> Span {
        match self.root.pointer(pointer) {
            Some((_, Some(key))) => key,
            _ => self.span(pointer),
        }
    }

    /// A finding pointing at the value at `pointer`.
    pub fn at(&self, code: Code, pointer: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, message)
            .at(&self.source, self.span(pointer))
            .pointer(pointer)
    }

    /// A finding pointing at the key of the member at `pointer`.
    pub fn at_key(&self, code: Code, pointer: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, message)
            .at(&self.source, self.key_span(pointer))
            .pointer(pointer)
    }

    pub fn id(&self) -> Option<&str> {
        self.root.get_str("id")
    }
}

/// One registry entry folder to check.
#[derive(Debug, Clone)]
pub struct EntryDir {
    /// Folder name (the expected id).
    pub name: String,
    pub path: PathBuf,
    /// Path shown in findings, relative to the registry root (`/`-separated).
    pub display: String,
}

/// Everything the rules learned about one entry.
#[derive(Debug, Clone)]
pub struct EntryReport {
    pub entry: EntryDir,
    pub manifest: Option<ManifestDoc>,
    /// Icon files present, by file name (`icon.svg`, `icon-light.svg`, `icon-dark.svg`).
    pub icons: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    pub sources: Vec<SourceFile>,
}

impl EntryReport {
    /// The text of a file of this entry that the rules read (icons, README.md, SKILL.md).
    pub fn file_text(&self, name: &str) -> Option<&str> {
        let path = display_path(&self.entry, name);
        self.sources
            .iter()
            .find(|s| s.path == path)
            .map(|s| &*s.text)
    }

    pub fn id(&self) -> &str {
        self.manifest
            .as_ref()
            .and_then(ManifestDoc::id)
            .unwrap_or(&self.entry.name)
    }
}

/// Run every offline per-entry rule on one entry folder.
pub fn check_entry(entry: &EntryDir, policy: &Policy) -> EntryReport {
    let mut sink = Sink::new(policy, Some(entry.name.clone()));
    let mut sources = Vec::new();
    let Some(listing) = files::list_entry(entry, &mut sink) else {
        // The folder could not be listed: reported as unreadable, not as missing its manifest.
        return without_manifest(entry, sink);
    };
    if !listing.files.contains("agent.json") {
        files::load_manifest(entry, &mut sink); // reports missing-manifest
        return without_manifest(entry, sink);
    }
    let manifest = files::load_manifest(entry, &mut sink);
    if let Some(doc) = &manifest {
        sources.push(doc.source.clone());
        identity::check(doc, &entry.name, &mut sink);
        metadata::check(doc, &mut sink);
        distribution::check(doc, &mut sink);
        preview::check(doc, &mut sink);
        // The schema runs last so it can leave out errors a specific rule already reported
        // (a specific warning does not hide a schema error).
        let reported = sink
            .diagnostics
            .iter()
            .filter(|d| d.file == doc.source.path && d.severity == Severity::Error)
            .filter_map(|d| d.pointer.clone())
            .collect();
        let instance = distribution::normalized_json(&doc.root);
        schema::check(doc, &instance, &reported, &mut sink);
    }
    let icons = icons::check(entry, &listing, &mut sink, &mut sources);
    sources.extend(files::check_readme(entry, &listing, &mut sink));
    skills::check(entry, &listing, &mut sink, &mut sources);
    EntryReport {
        entry: entry.clone(),
        manifest,
        icons,
        diagnostics: sink.diagnostics,
        sources,
    }
}

/// The report of an entry whose manifest could not even be looked for or is missing.
fn without_manifest(entry: &EntryDir, sink: Sink) -> EntryReport {
    EntryReport {
        entry: entry.clone(),
        manifest: None,
        icons: Vec::new(),
        diagnostics: sink.diagnostics,
        sources: Vec::new(),
    }
}

/// Join a folder's display path and a file name.
pub fn display_path(entry: &EntryDir, file: &str) -> String {
    if entry.display.is_empty() || entry.display == "." {
        file.to_string()
    } else {
        format!("{}/{file}", entry.display)
    }
}

/// Read `base/rel` through [`crate::fs`] (no link followed, regular files only, at most
/// `limit` bytes), reporting every refusal as a finding on `display` (the shown `base/rel`).
pub(crate) fn read_text(
    base: &Path,
    rel: &str,
    display: &str,
    limit: u64,
    sink: &mut Sink,
) -> Option<String> {
    match fs::read_capped(base, Path::new(rel), limit) {
        Ok(bytes) => decode_utf8(bytes, display, sink),
        Err(ReadError::Link { rel: link }) => {
            // Name the link itself, which may be a folder on the way to the file.
            let link = link.to_string_lossy().replace('\\', "/");
            let shown = match display.strip_suffix(rel) {
                Some(prefix) if !link.is_empty() => format!("{prefix}{link}"),
                _ => display.to_string(),
            };
            sink.push(link_finding(&shown));
            None
        }
        Err(error) => {
            sink.push(read_failure(&error, display));
            None
        }
    }
}

/// The finding for a path that could not be read.
pub fn read_failure(error: &ReadError, display: &str) -> Diagnostic {
    match error {
        ReadError::Link { .. } => link_finding(display),
        ReadError::NotRegular(special) => special_finding(display, *special),
        ReadError::TooLarge { limit, reported } => {
            let size = reported.map_or("over".to_string(), |n| format!("{n} bytes, over"));
            Diagnostic::new(
                Code::FileTooLarge,
                format!("{display} is {size} the {} KiB limit", limit / 1024),
            )
            .in_file(display)
            .help("shrink the file; it is not parsed while over the limit")
        }
        ReadError::IsDir => Diagnostic::new(
            Code::FileUnreadable,
            format!("cannot read {display}: it is a folder, not a file"),
        )
        .in_file(display)
        .help("replace the folder with the file, or remove it"),
        ReadError::NotDir { rel } => Diagnostic::new(
            Code::FileUnreadable,
            format!(
                "cannot read {display}: `{}` is a file, not a folder",
                rel.display()
            ),
        )
        .in_file(display)
        .help("replace the file with a folder, or remove it"),
        _ => Diagnostic::new(
            Code::FileUnreadable,
            format!("cannot read {display}: {error}"),
        )
        .in_file(display)
        .help("make it readable by the user running acp-registry (check its permissions)"),
    }
}

/// The finding for a path a registry may not hold at all: a link or a FIFO, socket or
/// device. `None` for regular files and folders.
pub fn refused(kind: fs::Kind, display: &str) -> Option<Diagnostic> {
    match kind {
        fs::Kind::Link => Some(link_finding(display)),
        fs::Kind::Special(special) => Some(special_finding(display, special)),
        fs::Kind::File | fs::Kind::Dir => None,
    }
}

fn link_finding(display: &str) -> Diagnostic {
    Diagnostic::new(
        Code::FileLink,
        format!("{display} is a symbolic link; links are never followed in a registry"),
    )
    .in_file(display)
    .help("replace the link with the file (or folder) itself")
}

fn special_finding(display: &str, special: fs::Special) -> Diagnostic {
    Diagnostic::new(
        Code::FileNotRegular,
        format!("{display} is {special}, not a regular file"),
    )
    .in_file(display)
    .help("replace it with a regular file, or remove it")
}

/// Decode UTF-8 (a BOM is tolerated and dropped), reporting the first bad byte.
pub(crate) fn decode_utf8(bytes: Vec<u8>, display: &str, sink: &mut Sink) -> Option<String> {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.replace_range(..3, "");
            }
            Some(text)
        }
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let prefix = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
            let source = SourceFile::new(display, prefix);
            sink.push(
                Diagnostic::new(
                    Code::NotUtf8,
                    format!("{display} is not valid UTF-8 (byte offset {valid})"),
                )
                .at(&source, Span::new(valid, valid))
                .help("re-save the file as UTF-8"),
            );
            None
        }
    }
}
