//! Files and syntax: layout of an entry folder, size limits, encoding, JSONC syntax and
//! duplicate keys.

use std::collections::BTreeSet;

use super::entry::{display_path, EntryDir, ManifestDoc};
use super::read::{read_text, read_text_if_present};
use super::sink::Sink;
use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::{jsonc, MAX_MANIFEST_BYTES, MAX_README_BYTES};
use acp_registry_core::fs::Kind;
use acp_registry_core::source::{SourceFile, Span};

/// Files an entry folder may hold (besides the `skill/` folder).
pub(crate) const ENTRY_FILES: [&str; 5] = [
    "agent.json",
    "icon.svg",
    "icon-light.svg",
    "icon-dark.svg",
    "README.md",
];

/// What an entry folder contains.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    pub files: BTreeSet<String>,
    pub dirs: BTreeSet<String>,
}

/// List an entry folder. Known file names go to `files` whatever they are, so that reading
/// them reports a link, a special file or a folder in their place; other links and special
/// files are reported here. `None` (reported) when the folder cannot be listed.
pub(crate) fn list_entry(entry: &EntryDir, sink: &mut Sink) -> Option<Listing> {
    let children = match acp_registry_core::fs::list_dir(&entry.path) {
        Ok(children) => children,
        Err(e) => {
            sink.push(super::read::unlistable(&entry.display, &e));
            return None;
        }
    };
    let mut listing = Listing::default();
    for child in children {
        let name = child.name();
        let display = display_path(entry, &name);
        if ENTRY_FILES.contains(&name.as_str()) {
            listing.files.insert(name);
        } else if let Some(refused) = super::read::refused(child.kind, &display) {
            sink.push(refused);
        } else if name == "skill" && child.kind != Kind::Dir {
            sink.push(
                Diagnostic::new(
                    Code::FileUnreadable,
                    format!("cannot read {display}/: it is a file, not a folder"),
                )
                .in_file(display)
                .help("skill/ must be a folder holding SKILL.md; replace the file with it"),
            );
        } else if child.kind == Kind::Dir {
            listing.dirs.insert(name);
        } else {
            listing.files.insert(name);
        }
    }
    report_unexpected(entry, &listing, sink);
    Some(listing)
}

fn report_unexpected(entry: &EntryDir, listing: &Listing, sink: &mut Sink) {
    for name in &listing.files {
        if !ENTRY_FILES.contains(&name.as_str()) {
            sink.push(
                Diagnostic::new(
                    Code::UnexpectedFile,
                    format!("`{name}` is not part of an entry's layout"),
                )
                .in_file(display_path(entry, name))
                .help(unexpected_help(name)),
            );
        }
    }
    for name in &listing.dirs {
        if name != "skill" {
            sink.push(
                Diagnostic::new(Code::UnexpectedFile, format!("folder `{name}/` is not part of an entry's layout"))
                    .in_file(display_path(entry, name))
                    .help("an entry may hold agent.json, icon.svg, icon-light.svg, icon-dark.svg, README.md and skill/"),
            );
        }
    }
}

fn unexpected_help(name: &str) -> String {
    match crate::diagnostics::nearest(name, ENTRY_FILES) {
        Some(expected) => format!("did you mean `{expected}`? Rename the file, or remove it"),
        None => "an entry may hold agent.json, icon.svg, icon-light.svg, icon-dark.svg, README.md and skill/; remove the file".into(),
    }
}

/// Read, size-check, decode and parse `agent.json`; report syntax and duplicate keys.
pub(crate) fn load_manifest(entry: &EntryDir, sink: &mut Sink) -> Option<ManifestDoc> {
    let display = display_path(entry, "agent.json");
    // Only absence is missing: a link, a folder or an unreadable file is reported by reading.
    let Some(text) = read_text_if_present(
        &entry.path,
        "agent.json",
        &display,
        MAX_MANIFEST_BYTES,
        sink,
    ) else {
        sink.push(
            Diagnostic::new(
                Code::MissingManifest,
                format!("folder `{}` has no agent.json", entry.display),
            )
            .in_file(entry.display.clone())
            .help("add agent.json, or prefix the folder name with `_` if it is not an entry"),
        );
        return None;
    };
    let text = text?;
    let source = SourceFile::new(display, text);
    let root = match jsonc::parse(&source.text) {
        Ok(root) => root,
        Err(error) => {
            let span = error.span;
            sink.push(
                Diagnostic::new(
                    Code::JsoncSyntax,
                    format!("invalid JSONC: {}", error.message),
                )
                .at(&source, Span::new(span.start, span.end.max(span.start)))
                .help("only comments and trailing commas are allowed beyond strict JSON"),
            );
            return None;
        }
    };
    for duplicate in root.duplicate_keys() {
        let first = source.position(duplicate.first.start);
        sink.push(
            Diagnostic::new(
                Code::DuplicateKey,
                format!("key `{}` appears more than once in this object", duplicate.key),
            )
            .at(&source, duplicate.span)
            .pointer(duplicate.pointer.clone())
            .help(format!(
                "first defined at line {}, column {}; clients keep only one of them, remove the other",
                first.line, first.column
            )),
        );
    }
    Some(ManifestDoc { source, root })
}

/// Size and encoding of README.md; the readable README is kept for the site.
pub(crate) fn check_readme(
    entry: &EntryDir,
    listing: &Listing,
    sink: &mut Sink,
) -> Option<SourceFile> {
    if !listing.files.contains("README.md") {
        return None;
    }
    let display = display_path(entry, "README.md");
    let text = read_text(&entry.path, "README.md", &display, MAX_README_BYTES, sink)?;
    Some(SourceFile::new(display, text))
}
