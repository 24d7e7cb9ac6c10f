//! `--quarantine-retagged`: members added to `quarantine.json` (`{"<id>": "<reason>"}`, the
//! public registry's shape) through the comment-keeping editor, in id order, the file
//! replaced atomically, or created when the registry has none. An id already quarantined
//! keeps the reason a person wrote.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::manifest::edit::{Editor, Position};
use crate::manifest::{jsonc, MAX_MANIFEST_BYTES};
use acp_registry_core::fs;

/// The file, at the registry root.
pub(crate) const QUARANTINE_FILE: &str = "quarantine.json";

/// What became of one id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Quarantined {
    /// The member was added with this reason.
    Added(String),
    /// The id was quarantined already; its reason is left as written.
    Already(String),
}

/// Why `quarantine.json` could not be changed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum QuarantineError {
    /// Reading or writing the file failed.
    #[error("cannot {what} {QUARANTINE_FILE}: {source}")]
    Io {
        /// `read`, `write` or `create`.
        what: &'static str,
        /// The failure.
        source: fs::ReadError,
    },
    /// The file is not what the registry reads.
    #[error(
        "{QUARANTINE_FILE} is {0}; fix it (`acp-registry validate` says where), then run again"
    )]
    Invalid(String),
}

/// Add `reasons` (id → reason) to the registry's `quarantine.json`.
pub(crate) fn add(
    root: &Path,
    reasons: &BTreeMap<String, String>,
) -> Result<Vec<(String, Quarantined)>, QuarantineError> {
    let path = root.join(QUARANTINE_FILE);
    let existing = matches!(fs::kind(&path), Ok(Some(_)));
    let text = if existing {
        let bytes = fs::read_capped(root, Path::new(QUARANTINE_FILE), MAX_MANIFEST_BYTES).map_err(
            |source| QuarantineError::Io {
                what: "read",
                source,
            },
        )?;
        String::from_utf8(bytes).map_err(|_| QuarantineError::Invalid("not UTF-8".into()))?
    } else {
        "{\n}\n".to_string()
    };
    let current = current_reasons(&text)?;
    let mut editor = Editor::parse(&text).map_err(|e| QuarantineError::Invalid(e.to_string()))?;
    let mut outcome = Vec::new();
    for (id, reason) in reasons {
        if let Some(old) = current.get(id) {
            outcome.push((id.clone(), Quarantined::Already(old.clone())));
            continue;
        }
        editor
            .insert("", id, &Value::String(reason.clone()), Position::Sorted)
            .map_err(|e| QuarantineError::Invalid(e.to_string()))?;
        outcome.push((id.clone(), Quarantined::Added(reason.clone())));
    }
    if editor.text() != text {
        let written = if existing {
            fs::replace_file(root, Path::new(QUARANTINE_FILE), editor.text().as_bytes())
        } else {
            fs::write_new(&path, editor.text().as_bytes())
        };
        written.map_err(|source| QuarantineError::Io {
            what: if existing { "write" } else { "create" },
            source,
        })?;
    }
    Ok(outcome)
}

/// The members of the file as the registry reads them; anything but an object of strings is
/// refused, so nothing is added to a file the rules would reject.
fn current_reasons(text: &str) -> Result<BTreeMap<String, String>, QuarantineError> {
    let root = jsonc::parse(text)
        .map_err(|e| QuarantineError::Invalid(format!("not valid JSON: {}", e.message)))?;
    let members = root
        .as_object()
        .ok_or_else(|| QuarantineError::Invalid("not an object of id to reason".into()))?;
    members
        .iter()
        .map(|m| match m.value.as_str() {
            Some(reason) => Ok((m.key.clone(), reason.to_string())),
            None => Err(QuarantineError::Invalid(format!(
                "not an object of id to reason (`{}`)",
                m.key
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reasons(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(id, reason)| ((*id).to_string(), (*reason).to_string()))
            .collect()
    }

    #[test]
    fn members_go_in_id_order_and_comments_stay() {
        let dir = tempfile::tempdir().unwrap();
        let text = "// kept\n{\n  \"alpha\": \"a\", // why\n  \"zeta\": \"z\"\n}\n";
        std::fs::write(dir.path().join(QUARANTINE_FILE), text).unwrap();
        let outcome = add(dir.path(), &reasons(&[("mid", "m"), ("alpha", "new")])).unwrap();
        assert_eq!(
            outcome,
            [
                ("alpha".to_string(), Quarantined::Already("a".into())),
                ("mid".to_string(), Quarantined::Added("m".into())),
            ]
        );
        let written = std::fs::read_to_string(dir.path().join(QUARANTINE_FILE)).unwrap();
        assert_eq!(
            written,
            "// kept\n{\n  \"alpha\": \"a\", // why\n  \"mid\": \"m\",\n  \"zeta\": \"z\"\n}\n"
        );
    }

    #[test]
    fn an_absent_file_is_created_in_the_public_shape() {
        let dir = tempfile::tempdir().unwrap();
        add(dir.path(), &reasons(&[("b", "x \"y\""), ("a", "z")])).unwrap();
        let written = std::fs::read_to_string(dir.path().join(QUARANTINE_FILE)).unwrap();
        let value: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(value, serde_json::json!({"a": "z", "b": "x \"y\""}));
        assert!(written.find("\"a\"") < written.find("\"b\""), "{written}");
    }

    #[test]
    fn a_file_the_rules_reject_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let text = "{\"a\": 1}\n";
        std::fs::write(dir.path().join(QUARANTINE_FILE), text).unwrap();
        let error = add(dir.path(), &reasons(&[("b", "x")])).unwrap_err();
        assert!(error.to_string().contains("`a`"), "{error}");
        let after = std::fs::read_to_string(dir.path().join(QUARANTINE_FILE)).unwrap();
        assert_eq!(after, text);
    }
}
