//! `validate --fix`: the certain fixes findings carry ([`Fix`]), applied to the manifests
//! through the comment-keeping editor (`manifest::edit`), each file written atomically and
//! only when it changes.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::diagnostics::{Fix, FixEdit, Report};
use crate::manifest::edit::{EditError, Editor};
use crate::manifest::MAX_MANIFEST_BYTES;
use acp_registry_core::fs;

/// One fix and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attempt {
    /// The manifest, relative to the registry root like the finding's file.
    pub file: String,
    /// The rule code of the finding.
    pub code: &'static str,
    /// The fix it carried.
    pub fix: Fix,
    /// Why it was not applied; `None` when it was (and the file written).
    pub failure: Option<String>,
}

/// Apply every fix of `report` (paths relative to `root`, before relocation), file by file
/// in sorted order. Within a file the deepest pointers go first, so a fix inside a member
/// lands before that member is renamed.
pub(crate) fn apply(root: &Path, report: &Report) -> Vec<Attempt> {
    let mut by_file: BTreeMap<&str, Vec<(&Fix, &'static str)>> = BTreeMap::new();
    for d in &report.diagnostics {
        if let Some(fix) = &d.fix {
            by_file
                .entry(&d.file)
                .or_default()
                .push((fix, d.code.as_str()));
        }
    }
    let mut attempts = Vec::new();
    for (file, mut fixes) in by_file {
        fixes.sort_by(|a, b| b.cmp(a));
        fixes.dedup();
        attempts.extend(apply_file(root, file, &fixes));
    }
    attempts
}

fn apply_file(root: &Path, file: &str, fixes: &[(&Fix, &'static str)]) -> Vec<Attempt> {
    let attempt = |(fix, code): &(&Fix, &'static str), failure: Option<String>| Attempt {
        file: file.to_string(),
        code,
        fix: (*fix).clone(),
        failure,
    };
    let mut editor = match read(root, file) {
        Ok(editor) => editor,
        Err(reason) => {
            return fixes
                .iter()
                .map(|f| attempt(f, Some(reason.clone())))
                .collect()
        }
    };
    let original = editor.text().to_string();
    let mut attempts: Vec<Attempt> = fixes
        .iter()
        .map(|f| attempt(f, edit(&mut editor, f.0).err().map(|e| e.to_string())))
        .collect();
    if editor.text() != original {
        if let Err(error) = fs::replace_file(root, Path::new(file), editor.text().as_bytes()) {
            for a in attempts.iter_mut().filter(|a| a.failure.is_none()) {
                a.failure = Some(format!("cannot write the file: {error}"));
            }
        }
    }
    attempts
}

fn read(root: &Path, file: &str) -> Result<Editor, String> {
    let bytes = fs::read_capped(root, Path::new(file), MAX_MANIFEST_BYTES)
        .map_err(|e| format!("cannot read the file: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| "the file is not UTF-8".to_string())?;
    Editor::parse(&text).map_err(|e| e.to_string())
}

fn edit(editor: &mut Editor, fix: &Fix) -> Result<(), EditError> {
    match &fix.edit {
        FixEdit::SetString(value) => {
            editor.set_or_insert(&fix.pointer, &Value::String(value.clone()))
        }
        FixEdit::RenameKey(key) => editor.rename_key(&fix.pointer, key),
        FixEdit::Remove => editor.remove(&fix.pointer),
    }
}
