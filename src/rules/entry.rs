//! The entry model the rules fill in: an entry folder, its parsed manifest (with the
//! JSON-pointer to span look-ups findings are placed by) and the report about it.
//!
//! A rule reports at a JSON pointer; `ManifestDoc::at` and `ManifestDoc::at_key` place it on the
//! exact value or key. A `Manifest` keeps its span tree only while its entry's rules and the
//! published-form check run, then only the text and the id: the tree is most of a parsed entry
//! (about 6 KB of 9 KB at 10,000 entries), and holding them all cost `build` gigabytes at 100,000
//! entries. The few later readers (a duplicate id, `build`, `verify`, `update`, `--online`)
//! parse the text again, which costs microseconds.

use std::borrow::Cow;
use std::path::PathBuf;

use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::Node;
use acp_registry_core::source::{SourceFile, Span};

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

/// A manifest that parsed, as an [`EntryReport`] keeps it. The span tree is held while the
/// entry's rules run; after [`Manifest::release_tree`] only the text (and the id) stays, and
/// [`Manifest::doc`] parses it again on demand: the trees are most of a checked registry's
/// memory, and the registry-wide steps need them for a few entries at a time.
#[derive(Debug, Clone)]
pub struct Manifest {
    id: Option<String>,
    object: bool,
    kept: Kept,
}

#[derive(Debug, Clone)]
enum Kept {
    Tree(ManifestDoc),
    Text(SourceFile),
}

impl Manifest {
    /// Keep `doc`, tree included.
    pub fn new(doc: ManifestDoc) -> Self {
        Manifest {
            id: doc.id().map(str::to_string),
            object: doc.root.as_object().is_some(),
            kept: Kept::Tree(doc),
        }
    }

    /// The file as read.
    pub fn source(&self) -> &SourceFile {
        match &self.kept {
            Kept::Tree(doc) => &doc.source,
            Kept::Text(source) => source,
        }
    }

    /// The id the manifest declares, when a string.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Whether the top level is an object (what `build` can publish).
    pub fn is_object(&self) -> bool {
        self.object
    }

    /// The parsed manifest: the held tree, or the kept text parsed again (the same text the
    /// rules checked, so it parses as it did; `None` only if it somehow does not).
    pub fn doc(&self) -> Option<Cow<'_, ManifestDoc>> {
        match &self.kept {
            Kept::Tree(doc) => Some(Cow::Borrowed(doc)),
            Kept::Text(source) => {
                let root = crate::manifest::parse(&source.text).ok()?;
                Some(Cow::Owned(ManifestDoc {
                    source: source.clone(),
                    root,
                }))
            }
        }
    }

    /// Drop the span tree, keeping the text.
    pub fn release_tree(&mut self) {
        if let Kept::Tree(doc) = &self.kept {
            self.kept = Kept::Text(doc.source.clone());
        }
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
    /// The manifest, when it could be read and parsed.
    pub manifest: Option<Manifest>,
    /// Icon files present, by file name (`icon.svg`, `icon-light.svg`, `icon-dark.svg`).
    pub icons: Vec<String>,
    /// Its findings, policy applied.
    pub diagnostics: Vec<Diagnostic>,
    /// The files read, for excerpts and for `build`.
    pub sources: Vec<SourceFile>,
    /// The entry's skill as `build` publishes it (`skill/<name>/`, every file read once),
    /// when its front matter and folder allow.
    pub(crate) skills: Vec<super::skills::checked::CheckedSkill>,
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
            .and_then(Manifest::id)
            .unwrap_or(&self.entry.name)
    }

    /// The parsed manifest, when it could be read and parsed (see [`Manifest::doc`]).
    pub fn manifest_doc(&self) -> Option<Cow<'_, ManifestDoc>> {
        self.manifest.as_ref().and_then(Manifest::doc)
    }
}

/// Join a folder's display path and a file name.
pub(crate) fn display_path(entry: &EntryDir, file: &str) -> String {
    if entry.display.is_empty() || entry.display == "." {
        file.to_string()
    } else {
        format!("{}/{file}", entry.display)
    }
}
