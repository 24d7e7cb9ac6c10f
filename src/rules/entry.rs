//! The entry model the rules fill in: an entry folder, its parsed manifest (with the
//! JSON-pointer to span look-ups findings are placed by) and the report about it.

use std::path::PathBuf;

use super::{Code, Diagnostic};
use crate::manifest::Node;
use crate::source::{SourceFile, Span};

/// A parsed manifest: its source and its span-carrying tree.
#[derive(Debug, Clone)]
pub struct ManifestDoc {
    /// The file as read.
    pub source: SourceFile,
    /// Its parsed tree.
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

    /// The id the manifest declares, when a string.
    pub fn id(&self) -> Option<&str> {
        self.root.get_str("id")
    }
}

/// One registry entry folder to check.
#[derive(Debug, Clone)]
pub struct EntryDir {
    /// Folder name (the expected id).
    pub name: String,
    /// Where the folder is on disk.
    pub path: PathBuf,
    /// Path shown in findings, relative to the registry root (`/`-separated).
    pub display: String,
}

/// Everything the rules learned about one entry.
#[derive(Debug, Clone)]
pub struct EntryReport {
    /// The folder.
    pub entry: EntryDir,
    /// The parsed manifest, when it could be read and parsed.
    pub manifest: Option<ManifestDoc>,
    /// Icon files present, by file name (`icon.svg`, `icon-light.svg`, `icon-dark.svg`).
    pub icons: Vec<String>,
    /// Its findings, policy applied.
    pub diagnostics: Vec<Diagnostic>,
    /// The files read, for excerpts and for `build`.
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

    /// The declared id, or the folder name without one.
    pub fn id(&self) -> &str {
        self.manifest
            .as_ref()
            .and_then(ManifestDoc::id)
            .unwrap_or(&self.entry.name)
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
