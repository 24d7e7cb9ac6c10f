//! Step 12 of docs/collab-protocol.md#validation: deliverable content, `decisions.md` and
//! attachments.

use std::collections::BTreeSet;

use serde_json::Value;

use super::schema::sections_for;
use super::validator::{Doc, Validator};
use crate::error::CollabError;
use crate::markdown::{decisions_errors, deliverable_content_errors};
use crate::paths;
use crate::protocol::Protocol;
use crate::spec::DECISIONS_FILE;

/// Step 12. `frozen_docs` are the docs of supporting `deliverable_frozen` events.
pub(super) fn check_contents(
    v: &mut Validator,
    protocol: &Protocol,
    frozen_docs: &BTreeSet<String>,
    primary_frozen_required: bool,
) -> Result<(), CollabError> {
    if let Some(primary) = protocol.primary() {
        let file = primary
            .get("file")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let primary_ref = protocol.primary_ref().unwrap_or_default();
        let missing = format!("primary deliverable missing: {primary_ref}");
        let sections = sections_for(primary);
        check_deliverable(v, protocol, file, &missing, |text| {
            deliverable_content_errors(text, &sections, primary_frozen_required, None)
        })?;
    }
    for item in protocol.supporting() {
        let Some(file) = item.get("file").and_then(Value::as_str) else {
            continue;
        };
        let r = protocol.ref_for(file);
        let frozen_required =
            item.get("frozen") == Some(&Value::Bool(true)) || frozen_docs.contains(&r);
        let missing = format!("supporting deliverable missing: {r}");
        let sections = sections_for(item);
        check_deliverable(v, protocol, file, &missing, |text| {
            deliverable_content_errors(text, &sections, frozen_required, Some(&r))
        })?;
    }
    match v.read(v.folder, DECISIONS_FILE)? {
        Doc::Refused => {}
        Doc::Missing => v.err("missing decisions.md"),
        Doc::Text(text) => {
            let mut refs = vec![protocol.primary_ref().unwrap_or_default()];
            refs.extend(protocol.supporting_refs());
            v.errors.extend(decisions_errors(&text, &refs));
        }
    }
    check_attachments(v, protocol)
}

/// Reads one declared deliverable file and checks its content with `errors_of`.
fn check_deliverable(
    v: &mut Validator,
    protocol: &Protocol,
    file: &str,
    missing: &str,
    errors_of: impl FnOnce(&str) -> Vec<String>,
) -> Result<(), CollabError> {
    match protocol.target_for_file(file) {
        Err(msg) => v.err(msg),
        Ok(target) => match v.read(&target.base, &target.rel)? {
            Doc::Refused => {}
            Doc::Missing => v.err(missing),
            Doc::Text(text) => v.errors.extend(errors_of(&text)),
        },
    }
    Ok(())
}

/// Every declared attachment exists (and is no link).
fn check_attachments(v: &mut Validator, protocol: &Protocol) -> Result<(), CollabError> {
    let attachments: Vec<String> = protocol
        .deliverables()
        .and_then(|d| d.get("attachments"))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("file").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for file in attachments {
        match protocol.target_for_file(&file) {
            Err(msg) => v.err(msg),
            Ok(target) => match paths::check_no_symlink(&target.base, &target.rel) {
                Err(e) => v.read_problem(e)?,
                Ok(()) if !target.base.join(&target.rel).exists() => {
                    v.err(format!("attachment missing: {file}"));
                }
                Ok(()) => {}
            },
        }
    }
    Ok(())
}
