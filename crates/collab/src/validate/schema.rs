//! Steps 4–5 of docs/collab-protocol.md#validation: the top level of `protocol.json` and its
//! deliverables schema.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value};

use super::validator::Validator;
use crate::paths;
use crate::protocol::Protocol;
use crate::pyfmt::{repr_list, truthy};
use crate::spec::{deliverable_spec, DELIVERABLE_TYPES, FORBIDDEN_FILES, PHASES};

/// Step 4: top-level schema.
pub(super) fn check_top_level(v: &mut Validator, protocol: &Protocol) {
    let map = &protocol.map;
    if map.get("protocol").and_then(Value::as_str) != Some("acp") {
        v.err("protocol.json protocol must be 'acp'");
    }
    let version_ok = match map.get("schemaVersion") {
        Some(Value::Number(n)) => n.as_f64() == Some(2.0),
        _ => false,
    };
    if !version_ok {
        v.err("protocol.json schemaVersion must be 2");
    }
    let phase_ok = map
        .get("currentPhase")
        .and_then(Value::as_str)
        .is_some_and(|p| PHASES.contains(&p));
    if !phase_ok {
        let mut sorted = PHASES.to_vec();
        sorted.sort();
        v.err(format!(
            "currentPhase must be one of {}",
            repr_list(&sorted)
        ));
    }
    if !truthy(map.get("objective")) {
        v.err("protocol.json objective must not be blank");
    }
    if protocol.participants().is_empty() {
        v.err("protocol.json participants must not be empty");
    }
    check_completion_gates(v, map.get("completionGates"));
    if !map.contains_key("waitingFor") {
        v.err("protocol.json waitingFor must be present");
    }
    if !map.contains_key("proposalOwner") {
        v.err("protocol.json proposalOwner must be present");
    }
}

/// Each completion gate has a known source and a text naming no obsolete file.
fn check_completion_gates(v: &mut Validator, gates: Option<&Value>) {
    let Some(gates) = gates.and_then(Value::as_array).filter(|g| !g.is_empty()) else {
        v.err("protocol.json completionGates must not be empty");
        return;
    };
    for (i, gate) in gates.iter().enumerate() {
        let text = gate.as_object().and_then(|g| {
            let source_ok = matches!(
                g.get("source").and_then(Value::as_str),
                Some("objective" | "generated")
            );
            g.get("text")
                .and_then(Value::as_str)
                .filter(|t| source_ok && !t.trim().is_empty())
        });
        let Some(text) = text else {
            v.err(format!(
                "completionGates[{}] must include source and text",
                i + 1
            ));
            continue;
        };
        for name in FORBIDDEN_FILES {
            if text.contains(name) {
                v.err(format!(
                    "completion gate must not reference obsolete file {name}"
                ));
            }
        }
    }
}

fn nonblank_str(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}

fn checklist(item: &Map<String, Value>) -> Vec<String> {
    item.get("checklist")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The required sections of a deliverable item (built-in table or custom checklist).
pub(crate) fn sections_for(item: &Map<String, Value>) -> Vec<String> {
    match item.get("type").and_then(Value::as_str) {
        Some("custom") => checklist(item),
        Some(kind) => deliverable_spec(kind)
            .map(|(_, _, s)| s.iter().map(|x| (*x).to_owned()).collect())
            .unwrap_or_default(),
        None => Vec::new(),
    }
}

fn valid_type(item: &Map<String, Value>) -> bool {
    item.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| DELIVERABLE_TYPES.contains(&t))
}

/// Step 5 of docs/collab-protocol.md#validation: the deliverables schema.
pub(super) fn check_deliverables(v: &mut Validator, protocol: &Protocol) {
    const PRIMARY_REQUIRED: &str = "protocol.json deliverables.primary is required";
    let Some(d) = protocol.deliverables().filter(|d| !d.is_empty()) else {
        v.err(PRIMARY_REQUIRED);
        return;
    };
    check_mode(v, protocol, d.get("mode").and_then(Value::as_str));
    match nonblank_str(d.get("dir")) {
        None => v.err("deliverables.dir is required"),
        Some(dir) if paths::escapes(dir) => {
            v.err("deliverables.dir must be relative and must not contain ..");
        }
        Some(_) => {}
    }
    let Some(primary) = d.get("primary").and_then(Value::as_object) else {
        v.err(PRIMARY_REQUIRED);
        return;
    };
    let primary_file = check_primary(v, primary);
    check_supporting(v, protocol, primary_file);
    if let Some(attachments) = d.get("attachments").and_then(Value::as_array) {
        check_attachments(v, attachments);
    }
}

/// `deliverables.mode` and, for external deliverables, `repoRoot`.
fn check_mode(v: &mut Validator, protocol: &Protocol, mode: Option<&str>) {
    if !matches!(mode, Some("internal" | "external")) {
        v.err("deliverables.mode must be internal or external");
    }
    if mode == Some("internal") && protocol.map.contains_key("repoRoot") {
        v.err("repoRoot is not allowed for internal deliverables");
    }
    if mode != Some("external") {
        return;
    }
    match nonblank_str(protocol.map.get("repoRoot")) {
        None => v.err("repoRoot is required for external deliverables"),
        Some(root) if root.starts_with('/') || Path::new(root).is_absolute() => {
            v.err("repoRoot must be relative");
        }
        Some(root) => {
            let resolved = paths::resolve_lexically_with_links(&v.folder.join(root));
            if !resolved.is_dir() {
                v.err("repoRoot must resolve to an existing directory");
            } else if !v.folder.starts_with(&resolved) {
                v.err("collaboration folder must be inside repoRoot");
            }
        }
    }
}

/// The primary item's type, file and checklist; returns its file.
fn check_primary<'p>(v: &mut Validator, primary: &'p Map<String, Value>) -> Option<&'p str> {
    if !valid_type(primary) {
        v.err("primary deliverable type is invalid");
    }
    let primary_file = primary.get("file").and_then(Value::as_str);
    match primary_file {
        Some(f) if f.ends_with(".md") => {
            if paths::escapes(f) {
                v.err("primary deliverable file must be relative and must not contain ..");
            }
        }
        _ => v.err("primary deliverable file must be Markdown"),
    }
    if primary.get("type").and_then(Value::as_str) == Some("custom")
        && checklist(primary).is_empty()
    {
        v.err("custom primary deliverable requires checklist");
    }
    primary_file
}

/// Supporting items: type, a unique Markdown file other than the primary's.
fn check_supporting(v: &mut Validator, protocol: &Protocol, primary_file: Option<&str>) {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for item in protocol.supporting() {
        if !valid_type(item) {
            v.err("supporting deliverable type is invalid");
        }
        match item.get("file").and_then(Value::as_str) {
            Some(f) if f.ends_with(".md") => {
                if paths::escapes(f) {
                    v.err("supporting deliverable file must be relative and must not contain ..");
                } else if seen.contains(f) {
                    v.err("supporting deliverable files must be unique");
                } else if Some(f) == primary_file {
                    v.err("supporting deliverable must not reuse the primary deliverable file");
                }
                seen.insert(f);
            }
            _ => v.err("supporting deliverable file must be Markdown"),
        }
    }
}

/// Attachments: objects with a relative file.
fn check_attachments(v: &mut Validator, attachments: &[Value]) {
    for item in attachments {
        let Some(obj) = item.as_object() else {
            v.err("attachments must be objects");
            continue;
        };
        match obj
            .get("file")
            .and_then(Value::as_str)
            .filter(|f| !f.is_empty())
        {
            None => v.err("attachment file is required"),
            Some(f) if paths::escapes(f) => {
                v.err("attachment file must be relative and must not contain ..");
            }
            Some(_) => {}
        }
    }
}
