//! `validate` (`docs/collab-protocol.md#validation`): every check, in the
//! documented order. All checks run; only an unloadable `protocol.json`
//! stops early.
//!
//! One file per group of steps: `schema` (4–5), `log` (6–10, one pass over `events.jsonl`),
//! `content` (12); this file has the rest (1–3, 11, 13–15), and `validator` the state they
//! share. Step 11 compares the mirror in `protocol.json` (`currentPhase`, `proposalOwner`,
//! `waitingFor`) with the replayed state, which is the one trusted. Past acceptances are not
//! re-checked against the current `readiness.md`; its problems are reported once, by the
//! readiness steps (`docs/collab-protocol.md#past-acceptances-are-not-re-checked`).
//!
//! # JSON output (`--format json`)
//!
//! One line, keys in this order:
//!
//! ```json
//! {"version":1,"status":"failed","exit_code":2,"errors":["…"],"warnings":["…"]}
//! ```
//!
//! - `version`: the shape's version, `1`.
//! - `status`: `"passed"`, `"passed_with_warnings"` or `"failed"`.
//! - `exit_code`: the process exit code: `0` passed, `1` warnings only, `2` errors.
//! - `errors`, `warnings`: the messages of the text format's `ERROR: ` and
//!   `WARNING: ` lines, in the same order, without the prefixes.
//!
//! Internal failures (unreadable files, non-UTF-8 text, a `protocol.json`
//! that is not an object) print `error: …` on stderr and exit 2 in both formats.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::error::CollabError;
use crate::markdown::{conclusion_errors, snapshot, unchecked_gates, Readiness};
use crate::paths;
use crate::protocol::{self, Protocol};
use crate::pyfmt::{py_repr, py_str, repr_list, repr_str};
use crate::spec::{
    CONCLUSION_FILE, FORBIDDEN_FILES, READINESS_FILE, REQUIRED_FILES, SNAPSHOT_GATE,
};
use crate::state::{State, BEFORE_ACCEPTANCE};

mod content;
mod log;
pub(crate) mod schema;
mod validator;

use validator::Validator;

/// The validator's findings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The `ERROR: ` messages, in check order.
    pub errors: Vec<String>,
    /// The `WARNING: ` messages, in check order.
    pub warnings: Vec<String>,
}

impl Report {
    /// 2 with errors, 1 with warnings only, else 0.
    pub fn exit_code(&self) -> i32 {
        if !self.errors.is_empty() {
            2
        } else if !self.warnings.is_empty() {
            1
        } else {
            0
        }
    }

    /// The text format of docs/collab-protocol.md#validate.
    pub fn render_text(&self) -> String {
        let mut out = String::from(match self.exit_code() {
            2 => "ACP validation failed\n",
            1 => "ACP validation passed with warnings\n",
            _ => "ACP validation passed\n",
        });
        for e in &self.errors {
            out.push_str(&format!("ERROR: {e}\n"));
        }
        for w in &self.warnings {
            out.push_str(&format!("WARNING: {w}\n"));
        }
        out
    }

    /// The JSON format documented in the module docs.
    pub fn render_json(&self) -> String {
        let status = match self.exit_code() {
            2 => "failed",
            1 => "passed_with_warnings",
            _ => "passed",
        };
        format!(
            "{{\"version\":1,\"status\":\"{status}\",\"exit_code\":{},\"errors\":{},\"warnings\":{}}}\n",
            self.exit_code(),
            Value::from(self.errors.clone()),
            Value::from(self.warnings.clone())
        )
    }
}

/// Validates the folder given on the command line.
pub fn validate(folder: &str) -> Result<Report, CollabError> {
    validate_in(&paths::resolve_folder(folder))
}

/// Validates an already resolved folder: every step of docs/collab-protocol.md#validation, in
/// order; only an unloadable `protocol.json` stops early.
pub(crate) fn validate_in(folder: &Path) -> Result<Report, CollabError> {
    // One finding, not one per file that a missing folder cannot hold.
    if std::fs::symlink_metadata(folder).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        let meant = match paths::closest_sibling(folder) {
            Some(s) if s.collaboration => format!(" (did you mean {}?)", s.path.display()),
            _ => String::new(),
        };
        return Ok(Report {
            errors: vec![format!(
                "collaboration folder {} does not exist; pass the folder init created{meant}",
                folder.display()
            )],
            warnings: Vec::new(),
        });
    }
    let mut v = Validator {
        folder,
        errors: Vec::new(),
        warnings: Vec::new(),
        reported_symlinks: BTreeSet::new(),
    };
    check_files(&mut v);
    // Step 3: load protocol.json.
    let protocol = match protocol::load(folder)? {
        Ok(p) => p,
        Err(load_error) => {
            let mut errors = vec![load_error];
            errors.append(&mut v.errors);
            return Ok(Report {
                errors,
                warnings: Vec::new(),
            });
        }
    };
    schema::check_top_level(&mut v, &protocol);
    let deliverable_errors_before = v.errors.len();
    schema::check_deliverables(&mut v, &protocol);
    let deliverables_ok = v.errors.len() == deliverable_errors_before;
    let facts = log::check_log(&mut v, &protocol)?;
    check_stored_state(&mut v, &protocol, &facts.state);
    let passed_or_completed = facts.has("readiness_passed") || facts.has("completed");
    // Step 12: content, only when the deliverables schema is sound.
    if deliverables_ok {
        let frozen_required = facts.has_primary_freeze || passed_or_completed;
        content::check_contents(
            &mut v,
            &protocol,
            &facts.frozen_supporting_docs,
            frozen_required,
        )?;
    }
    check_readiness(&mut v, &protocol, &facts)?;
    Ok(Report {
        errors: v.errors,
        warnings: v.warnings,
    })
}

/// Steps 1–2: required and forbidden files, and leftovers of killed writers.
fn check_files(v: &mut Validator) {
    let folder = v.folder;
    for name in REQUIRED_FILES {
        if !paths::exists_no_follow(folder, name) {
            v.err(format!("missing {name}"));
        }
    }
    for name in FORBIDDEN_FILES {
        if paths::exists_no_follow(folder, name) {
            v.err(format!(
                "{name} is not part of the protocol; remove it and use events.jsonl/readiness.md instead"
            ));
        }
    }
    // While an append holds the lock its temporary file is expected, not a leftover.
    let leftovers = if crate::events::writer_active(folder) {
        Vec::new()
    } else {
        protocol::leftover_temps(folder)
    };
    for name in leftovers {
        v.warnings.push(format!(
            "{name} is a temporary file left by a writer that was killed; the next append removes it"
        ));
    }
}

/// Step 11: the state mirror of `protocol.json` against the replayed state.
fn check_stored_state(v: &mut Validator, protocol: &Protocol, state: &State) {
    let map = &protocol.map;
    if let Some(phase) = &state.phase {
        if map.get("currentPhase").and_then(Value::as_str) != Some(phase.as_str()) {
            v.err(format!(
                "protocol.json currentPhase is {}, expected {phase}",
                py_str(map.get("currentPhase"))
            ));
        }
    }
    if let (Some(stored), Some(owner)) = (map.get("proposalOwner"), &state.owner) {
        if stored.as_str() != Some(owner.as_str()) {
            v.err(format!(
                "protocol.json proposalOwner is {}, expected {}",
                py_repr(Some(stored)),
                repr_str(owner)
            ));
        }
    }
    if let Some(stored) = map.get("waitingFor") {
        if *stored != Value::from(state.waiting_for.clone()) {
            v.err(format!(
                "protocol.json waitingFor is {}, expected {}",
                py_repr(Some(stored)),
                repr_list(&state.waiting_for)
            ));
        }
    }
}

/// The readiness gate messages of the validator once readiness passed or completed.
const BEFORE_READINESS_PASSED: [&str; 3] = [
    "blocking readiness items must be cleared before readiness_passed or completed",
    "unresolved readiness questions must be classified before readiness_passed or completed",
    "deferred_nonblocking readiness items require a reason",
];

/// Steps 13–15: readiness rules, then completion or the reasonless-deferral warning.
fn check_readiness(
    v: &mut Validator,
    protocol: &Protocol,
    facts: &log::LogFacts,
) -> Result<(), CollabError> {
    let readiness_text = v.read_folder_file(READINESS_FILE)?;
    let readiness = Readiness::scan(&readiness_text);
    if facts.has("decision_accepted") {
        for message in readiness.gate_problems(BEFORE_ACCEPTANCE) {
            v.err(message);
        }
    }
    if facts.has("readiness_passed") || facts.has("completed") {
        for message in readiness.gate_problems(BEFORE_READINESS_PASSED) {
            v.err(message);
        }
        if !readiness.ready {
            v.err(
                "readiness.md must check 'Ready to implement' before readiness_passed or completed",
            );
        }
        if !facts.has_primary_freeze {
            v.err("readiness_passed requires primary deliverable_frozen");
        }
    }
    if facts.has("completed") {
        let unchecked = unchecked_gates(&readiness_text, &protocol.completion_gate_texts());
        if !unchecked.is_empty() {
            v.err(format!(
                "completion gates must be checked before completed: {}",
                unchecked.join(", ")
            ));
        }
        let conclusion = v.read_folder_file(CONCLUSION_FILE)?;
        let primary_ref = protocol.primary_ref().unwrap_or_default();
        v.errors
            .extend(conclusion_errors(&conclusion, &primary_ref));
    } else if readiness.deferred_missing_reason {
        v.warnings
            .push("deferred_nonblocking readiness items should include a reason".to_owned());
    }
    check_snapshot(v, protocol, facts, &readiness_text);
    Ok(())
}

/// The snapshot line of `readiness.md` (docs/collab-protocol.md#readiness): a ticked snapshot
/// gate over an empty line, or a line that is not the frozen primary deliverable's SHA-256, is
/// a warning (the line is for people; the freeze event is what validation checks).
fn check_snapshot(v: &mut Validator, protocol: &Protocol, facts: &log::LogFacts, text: &str) {
    let gate = [SNAPSHOT_GATE.to_owned()];
    let ticked = protocol.completion_gate_texts().contains(&gate[0])
        && unchecked_gates(text, &gate).is_empty();
    let value = snapshot(text).unwrap_or_default();
    let frozen = facts.primary_freeze_sha.as_ref();
    let line = "the snapshot line of readiness.md (`- SHA-256:` under `## Deliverable Snapshot`)";
    match frozen {
        _ if value.is_empty() && !ticked => {}
        None if value.is_empty() => v.warnings.push(format!(
            "readiness.md ticks '{SNAPSHOT_GATE}' but {line} is empty and the primary \
             deliverable is not frozen; untick the gate until deliverable_frozen is appended \
             (the append fills the line)"
        )),
        Some((seq, sha)) if value.is_empty() => v.warnings.push(format!(
            "readiness.md ticks '{SNAPSHOT_GATE}' but {line} is empty; write `{sha}` there, \
             the sha256 of the primary deliverable_frozen (seq {seq})"
        )),
        Some((seq, sha)) if value != *sha => v.warnings.push(format!(
            "{line} holds {value}, not {sha}, the sha256 of the primary deliverable_frozen \
             (seq {seq}); write `{sha}` there"
        )),
        _ => {}
    }
}
