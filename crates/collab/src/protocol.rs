//! `protocol.json`: loading, the deliverable references it declares
//! (`docs/collab-protocol.md#deliverables`), and the sorted, atomic rewrite
//! (`docs/collab-protocol.md#protocoljson`, `docs/collab-protocol.md#concurrency`).
//!
//! The rewrite goes through the core's atomic write: a temporary sibling, fsync, rename, then
//! a folder fsync, so a reader, which takes no lock, sees the old file or the new one and never
//! a torn one. Its `currentPhase`, `proposalOwner` and `waitingFor` are a mirror of the
//! replayed state (`state`), never read back as the truth.

use std::path::{Path, PathBuf};

use acp_registry_core::fs::ValueBudget;
use serde_json::{Map, Value};

use crate::error::CollabError;
use crate::paths::{self, ReadError};
use crate::spec::PROTOCOL_FILE;

/// A loaded `protocol.json` plus the folder it came from.
#[derive(Debug, Clone)]
pub struct Protocol {
    /// The collaboration folder.
    pub folder: PathBuf,
    /// The decoded object.
    pub map: Map<String, Value>,
}

/// The most JSON values `protocol.json` may hold (one `init` writes holds about a hundred).
pub(crate) const MAX_PROTOCOL_VALUES: u64 = 100_000;

/// Loads `protocol.json`. The outer error is an internal failure (exit 2);
/// the inner one is a reportable load error (`missing …`, `invalid …`, symlink).
pub(crate) fn load(folder: &Path) -> Result<Result<Protocol, String>, CollabError> {
    let text = match paths::read_text(folder, PROTOCOL_FILE) {
        Ok(Some(text)) => text,
        Ok(None) => {
            return Ok(Err(format!(
                "missing protocol.json in {}",
                folder.display()
            )))
        }
        Err(ReadError::Symlink(m)) => return Ok(Err(m)),
        Err(e @ ReadError::Io(_)) => return Err(e.into()),
    };
    // Counted before the tree is built: tiny values cost dozens of times their bytes in it.
    if let Err(e) = ValueBudget::new(MAX_PROTOCOL_VALUES).spend(&text) {
        if e.classify() == serde_json::error::Category::Data {
            return Ok(Err(format!("invalid protocol.json: {e}")));
        }
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(Ok(Protocol {
            folder: folder.to_path_buf(),
            map,
        })),
        Ok(_) => Err(CollabError::ProtocolNotAnObject),
        Err(e) => Ok(Err(format!("invalid protocol.json: {e}"))),
    }
}

/// Loads `protocol.json` for commands that stop at the first problem: a folder that does not
/// exist and one without `protocol.json` are told apart, each with its way forward.
pub(crate) fn load_or_fail(folder: &Path) -> Result<Protocol, CollabError> {
    if let Some(missing) = missing_folder(folder) {
        return Err(missing);
    }
    if !paths::exists_no_follow(folder, PROTOCOL_FILE) {
        return Err(CollabError::NotACollaboration(folder.to_path_buf()));
    }
    load(folder)?.map_err(CollabError::ProtocolFile)
}

/// [`CollabError::NoFolder`], with the closest sibling folder, when `folder` does not exist.
pub(crate) fn missing_folder(folder: &Path) -> Option<CollabError> {
    let missing =
        std::fs::symlink_metadata(folder).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    missing.then(|| CollabError::NoFolder {
        folder: folder.to_path_buf(),
        closest: paths::closest_sibling(folder),
    })
}

/// Where a deliverable reference lives on disk: `base/rel`, with the symlink
/// rule applied below `base`.
#[derive(Debug, Clone)]
pub struct DocTarget {
    /// The folder the file is relative to.
    pub base: PathBuf,
    /// The file below `base`, POSIX-style.
    pub rel: String,
}

impl Protocol {
    /// Participant ids in declaration order (plain strings or `{"id": …}` objects).
    pub fn participants(&self) -> Vec<String> {
        participant_ids(self.map.get("participants"))
    }

    /// The `deliverables` object, when present.
    pub fn deliverables(&self) -> Option<&Map<String, Value>> {
        self.map.get("deliverables").and_then(Value::as_object)
    }

    fn is_external(&self) -> bool {
        self.deliverables()
            .and_then(|d| d.get("mode"))
            .and_then(Value::as_str)
            == Some("external")
    }

    fn dir(&self) -> &str {
        self.deliverables()
            .and_then(|d| d.get("dir"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The primary deliverable object, when declared.
    pub fn primary(&self) -> Option<&Map<String, Value>> {
        self.deliverables()?.get("primary")?.as_object()
    }

    /// The reference string for a declared deliverable file.
    pub fn ref_for(&self, file: &str) -> String {
        if self.is_external() {
            format!("external:{file}")
        } else {
            paths::posix_join(self.dir(), file)
        }
    }

    /// The primary ref, when the primary file is declared as a string.
    pub fn primary_ref(&self) -> Option<String> {
        let file = self.primary()?.get("file")?.as_str()?;
        Some(self.ref_for(file))
    }

    /// Supporting items that are objects, in declaration order.
    pub fn supporting(&self) -> Vec<&Map<String, Value>> {
        self.deliverables()
            .and_then(|d| d.get("supporting"))
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_object).collect())
            .unwrap_or_default()
    }

    /// Refs of supporting items whose file is a string.
    pub fn supporting_refs(&self) -> Vec<String> {
        self.supporting()
            .iter()
            .filter_map(|item| item.get("file").and_then(Value::as_str))
            .map(|f| self.ref_for(f))
            .collect()
    }

    /// The directory deliverable files are relative to in external mode:
    /// `resolve(folder/repoRoot/dir)`.
    pub fn external_root(&self) -> Result<PathBuf, String> {
        let root = self
            .map
            .get("repoRoot")
            .and_then(Value::as_str)
            .ok_or_else(|| "repoRoot is required for external deliverables".to_owned())?;
        Ok(paths::resolve_lexically_with_links(
            &self.folder.join(root).join(self.dir()),
        ))
    }

    /// Where the file behind a declared file name lives.
    pub fn target_for_file(&self, file: &str) -> Result<DocTarget, String> {
        if self.is_external() {
            Ok(DocTarget {
                base: self.external_root()?,
                rel: file.to_owned(),
            })
        } else {
            Ok(DocTarget {
                base: self.folder.clone(),
                rel: paths::posix_join(self.dir(), file),
            })
        }
    }

    /// Resolves an event `doc` for a deliverable role: it must equal a declared
    /// ref exactly (docs/collab-protocol.md#deliverables), then it is located on disk.
    pub fn resolve_doc(&self, role: &str, doc: &str) -> Result<DocTarget, String> {
        let file = if role == "primary" {
            self.primary()
                .and_then(|p| p.get("file"))
                .and_then(Value::as_str)
                .filter(|f| self.ref_for(f) == doc)
                .ok_or_else(|| "doc must reference the primary deliverable".to_owned())?
        } else {
            self.supporting()
                .into_iter()
                .filter_map(|item| item.get("file").and_then(Value::as_str))
                .find(|f| self.ref_for(f) == doc)
                .ok_or_else(|| "doc must reference a declared supporting deliverable".to_owned())?
        };
        self.target_for_file(file)
    }

    /// Completion gate texts: object gates give `text`, plain strings count too.
    pub fn completion_gate_texts(&self) -> Vec<String> {
        strings_or_member(self.map.get("completionGates"), "text")
    }

    /// Rewrites `protocol.json` atomically.
    pub fn save(&self) -> Result<(), CollabError> {
        write_atomic(&self.folder, &self.map)
    }
}

/// Participant ids from a `participants` value.
pub(crate) fn participant_ids(value: Option<&Value>) -> Vec<String> {
    strings_or_member(value, "id")
}

/// The items of a list that are strings, or objects whose `key` is a string (others are
/// skipped); a non-list gives none.
fn strings_or_member(list: Option<&Value>, key: &str) -> Vec<String> {
    let items = list
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    items
        .iter()
        .filter_map(|item| match item {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => o.get(key).and_then(Value::as_str).map(str::to_owned),
            _ => None,
        })
        .collect()
}

/// Serialises like Python's `json.dumps(indent=2, sort_keys=True,
/// ensure_ascii=False)` plus a trailing newline. Keys are sorted here rather
/// than relying on `serde_json`'s map order, which a feature flag can change.
pub(crate) fn to_sorted_pretty(map: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_value(&mut out, &Value::Object(map.clone()), 0);
    out.push('\n');
    out
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    let pad = |out: &mut String, d: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(d));
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                write_value(out, item, depth + 1);
            }
            pad(out, depth);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_value(out, &map[key], depth + 1);
            }
            pad(out, depth);
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Writes `protocol.json` via `.protocol.json.<unique>.tmp`, fsync, rename (and a folder
/// fsync, through `acp_registry_core::fs::atomic`), so readers only ever see a complete file
/// (docs/collab-protocol.md#concurrency).
pub(crate) fn write_atomic(folder: &Path, map: &Map<String, Value>) -> Result<(), CollabError> {
    paths::check_no_symlink(folder, PROTOCOL_FILE)?;
    let path = folder.join(PROTOCOL_FILE);
    acp_registry_core::fs::atomic::write(&path, to_sorted_pretty(map).as_bytes())
        .map_err(|source| CollabError::Write { path, source })
}

/// Regular files named like [`write_atomic`]'s temporary (`.protocol.json.<unique>.tmp`),
/// sorted: only a writer killed between create and rename leaves one.
pub(crate) fn leftover_temps(folder: &Path) -> Vec<String> {
    let Ok(children) = acp_registry_core::fs::list_dir(folder) else {
        return Vec::new();
    };
    children
        .iter()
        .filter(|c| c.kind == acp_registry_core::fs::Kind::File)
        .map(acp_registry_core::fs::Child::name)
        .filter(|n| n.starts_with(".protocol.json.") && n.ends_with(".tmp"))
        .collect()
}

/// Removes what killed writers left. Call only under the append lock: then no writer is
/// between create and rename, so every temporary file found is a leftover.
pub(crate) fn remove_leftover_temps(folder: &Path) {
    for name in leftover_temps(folder) {
        let _ = std::fs::remove_file(folder.join(name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorted_pretty_matches_python_json_dumps() {
        let v = json!({"b": [], "a": {"z": 1, "y": ["é"]}, "c": {}});
        let text = to_sorted_pretty(v.as_object().unwrap());
        assert_eq!(
            text,
            "{\n  \"a\": {\n    \"y\": [\n      \"é\"\n    ],\n    \"z\": 1\n  },\n  \"b\": [],\n  \"c\": {}\n}\n"
        );
    }
}
