//! Registry-wide rules: duplicate ids and `quarantine.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::entry::{EntryReport, Manifest};
use super::sink::Sink;
use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::fields::Fields;
use crate::manifest::{self, jsonc};
use acp_registry_core::source::SourceFile;

/// Every entry declaring an id that another entry also declares.
pub(crate) fn check_duplicate_ids(entries: &[EntryReport], sink: &mut Sink) {
    let mut by_id: BTreeMap<&str, Vec<&Manifest>> = BTreeMap::new();
    for entry in entries {
        if let Some(manifest) = &entry.manifest {
            if let Some(id) = manifest.id() {
                by_id.entry(id).or_default().push(manifest);
            }
        }
    }
    for (id, manifests) in by_id {
        if manifests.len() < 2 {
            continue;
        }
        let files: Vec<&str> = manifests.iter().map(|m| m.source().path.as_str()).collect();
        for doc in manifests.iter().filter_map(|m| m.doc()) {
            let others: Vec<&str> = files
                .iter()
                .copied()
                .filter(|f| *f != doc.source.path)
                .collect();
            sink.push(
                doc.at(
                    Code::DuplicateId,
                    "/id",
                    format!("id `{id}` is also declared by {}", others.join(", ")),
                )
                .help("ids are unique in the registry: rename one of the entries"),
            );
        }
    }
}

/// Parsed `quarantine.json`: id → reason.
#[derive(Debug, Clone, Default)]
pub struct Quarantine {
    /// The file, when there is one (findings point into it).
    pub source: Option<SourceFile>,
    /// Quarantined id → reason.
    pub ids: BTreeMap<String, String>,
    spans: BTreeMap<String, acp_registry_core::source::Span>,
}

impl Quarantine {
    /// Read `quarantine.json` from the registry root, if present.
    pub fn load(root: &Path, sink: &mut Sink) -> Quarantine {
        // Only absence means "no quarantine": a link or a special file is reported by reading.
        if matches!(
            acp_registry_core::fs::kind(&root.join("quarantine.json")),
            Ok(None)
        ) {
            return Quarantine::default();
        }
        let limit = manifest::MAX_MANIFEST_BYTES;
        let Some(text) =
            super::read::read_text(root, "quarantine.json", "quarantine.json", limit, sink)
        else {
            return Quarantine::default();
        };
        let source = SourceFile::new("quarantine.json", text);
        let mut quarantine = Quarantine {
            source: Some(source.clone()),
            ..Default::default()
        };
        let root = match jsonc::parse(&source.text) {
            Ok(root) => root,
            Err(e) => {
                sink.push(
                    Diagnostic::new(
                        Code::QuarantineFormat,
                        format!("quarantine.json is not valid JSON: {}", e.message),
                    )
                    .at(&source, e.span),
                );
                return quarantine;
            }
        };
        let mut fields = Fields::new(&source, Code::QuarantineFormat);
        let members = fields.object(
            &root,
            "quarantine.json must be an object of id to reason",
            "write `{\"<id>\": \"<reason>\"}`",
        );
        for member in members.unwrap_or_default() {
            let message = format!("the reason for `{}` is not a string", member.key);
            let help = "give the reason as a string";
            if let Some(reason) = fields.string(&member.value, message, help) {
                let id = member.key.clone();
                quarantine.ids.insert(id.clone(), reason.to_string());
                quarantine.spans.insert(id, member.key_span);
            }
        }
        for finding in fields.findings {
            sink.push(finding);
        }
        quarantine
    }
}

/// Quarantined ids that no entry declares.
pub(crate) fn check_quarantine(
    quarantine: &Quarantine,
    known_ids: &BTreeSet<&str>,
    sink: &mut Sink,
) {
    let Some(source) = &quarantine.source else {
        return;
    };
    for (id, span) in &quarantine.spans {
        if !known_ids.contains(id.as_str()) {
            sink.push(
                Diagnostic::new(
                    Code::QuarantineUnknownId,
                    format!("quarantined id `{id}` is not in the registry"),
                )
                .at(source, *span)
                .help("remove the stale entry"),
            );
        }
    }
}
