//! `validate` (`docs/collab-protocol.md#validation`): every check, in the
//! documented order. All checks run; only an unloadable `protocol.json`
//! stops early.
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
//! - `exit_code`: the process exit code, `0`, `1` or `2` as above.
//! - `errors`, `warnings`: the messages of the text format's `ERROR: ` and
//!   `WARNING: ` lines, in the same order, without the prefixes.
//!
//! Internal failures (unreadable files, non-UTF-8 text, a `protocol.json`
//! that is not an object) print `error: …` on stderr and exit 2 in both formats.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use super::events::{read_events, Event};
use super::markdown::{
    conclusion_errors, decisions_errors, deliverable_content_errors, review_headings,
    unchecked_gates, Readiness,
};
use super::model::{
    deliverable_spec, is_sha256, CONCLUSION_FILE, DECISIONS_FILE, DELIVERABLE_EVENTS,
    DELIVERABLE_TYPES, EVENTS, FORBIDDEN_FILES, PHASES, READINESS_FILE, REQUIRED_FILES,
    REVIEW_FILE,
};
use super::paths::{self, ReadError};
use super::protocol::{self, Protocol};
use super::pyfmt::{as_int, py_repr, py_str, repr_list, repr_str, truthy};
use super::state::replay;
use super::time::parse_iso_utc_nanos;
use super::CollabError;

/// The validator's findings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub errors: Vec<String>,
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

struct Validator<'a> {
    folder: &'a Path,
    errors: Vec<String>,
    warnings: Vec<String>,
    reported_symlinks: BTreeSet<String>,
}

impl Validator<'_> {
    fn err(&mut self, msg: impl Into<String>) {
        self.errors.push(msg.into());
    }

    /// Turns a read problem into an ERROR (symlinks, once each) or an internal failure.
    fn read_problem(&mut self, e: ReadError) -> Result<(), CollabError> {
        match e {
            ReadError::Symlink(m) => {
                if self.reported_symlinks.insert(m.clone()) {
                    self.errors.push(m);
                }
                Ok(())
            }
            ReadError::Io(m) => Err(CollabError::Protocol(m)),
        }
    }

    /// Reads `base/rel`; a refused symlink is reported here, once.
    fn read(&mut self, base: &Path, rel: &str) -> Result<Doc, CollabError> {
        match paths::read_text(base, rel) {
            Ok(Some(text)) => Ok(Doc::Text(text)),
            Ok(None) => Ok(Doc::Missing),
            Err(e) => self.read_problem(e).map(|_| Doc::Refused),
        }
    }

    /// A protocol text file; missing reads as empty (step 1 reported it).
    fn read_folder_file(&mut self, name: &str) -> Result<String, CollabError> {
        let folder = self.folder;
        Ok(match self.read(folder, name)? {
            Doc::Text(text) => text,
            Doc::Missing | Doc::Refused => String::new(),
        })
    }
}

/// A file read by the validator.
enum Doc {
    Text(String),
    Missing,
    /// A symlink, already reported.
    Refused,
}

/// Validates an already resolved folder.
pub fn validate_in(folder: &Path) -> Result<Report, CollabError> {
    let mut v = Validator {
        folder,
        errors: Vec::new(),
        warnings: Vec::new(),
        reported_symlinks: BTreeSet::new(),
    };
    // Steps 1–2: required and forbidden files.
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
    let leftovers = if super::events::writer_active(folder) {
        Vec::new()
    } else {
        protocol::leftover_temps(folder)
    };
    for name in leftovers {
        v.warnings.push(format!(
            "{name} is a temporary file left by a writer that was killed; the next append removes it"
        ));
    }
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
    check_top_level(&mut v, &protocol);
    let deliverable_errors_before = v.errors.len();
    check_deliverables_schema(&mut v, &protocol);
    let deliverables_ok = v.errors.len() == deliverable_errors_before;

    // Step 6: event read errors (and the partial-last-line warning).
    let log = read_events(folder)?;
    v.errors.extend(log.errors.iter().cloned());
    v.warnings.extend(log.warnings.iter().cloned());
    let events = &log.events;

    check_event_shapes(&mut v, events);
    check_review_links(&mut v, &protocol, events)?;
    check_deliverable_events(&mut v, &protocol, events)?;

    // Step 10: replay; past acceptances are not re-checked against readiness.
    let participants = protocol.participants();
    let (state, replay_errors) = replay(&participants, events, None);
    v.errors.extend(replay_errors);

    // Step 11: stored vs derived state.
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

    // One pass over the log for every "is there an event …" question below.
    let mut names: BTreeSet<&str> = BTreeSet::new();
    let mut has_primary_freeze = false;
    for e in events {
        if let Some(name) = e.get("event").and_then(Value::as_str) {
            has_primary_freeze |= name == "deliverable_frozen"
                && e.get("role").and_then(Value::as_str) == Some("primary");
            names.insert(name);
        }
    }
    let has = |name: &str| names.contains(name);
    let has_completed = has("completed");
    let passed_or_completed = has("readiness_passed") || has_completed;

    // Step 12: content, only when the deliverables schema is sound.
    if deliverables_ok {
        let frozen_required = has_primary_freeze || passed_or_completed;
        check_contents(&mut v, &protocol, events, frozen_required)?;
    }

    // Step 13: readiness rules.
    let readiness_text = v.read_folder_file(READINESS_FILE)?;
    let readiness = Readiness::scan(&readiness_text);
    if has("decision_accepted") {
        if readiness.blocking {
            v.err("blocking readiness items must be cleared before decision_accepted");
        }
        if readiness.unresolved {
            v.err("unresolved readiness questions must be classified before decision_accepted");
        }
        if readiness.deferred_missing_reason {
            v.err("deferred_nonblocking readiness items require a reason before decision_accepted");
        }
    }
    if passed_or_completed {
        if readiness.blocking {
            v.err("blocking readiness items must be cleared before readiness_passed or completed");
        }
        if readiness.unresolved {
            v.err("unresolved readiness questions must be classified before readiness_passed or completed");
        }
        if readiness.deferred_missing_reason {
            v.err("deferred_nonblocking readiness items require a reason");
        }
        if !readiness.ready {
            v.err(
                "readiness.md must check 'Ready to implement' before readiness_passed or completed",
            );
        }
        if !has_primary_freeze {
            v.err("readiness_passed requires primary deliverable_frozen");
        }
    }
    // Steps 14–15: completion, or the reasonless-deferral warning.
    if has_completed {
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
    Ok(Report {
        errors: v.errors,
        warnings: v.warnings,
    })
}

/// Step 4: top-level schema.
fn check_top_level(v: &mut Validator, protocol: &Protocol) {
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
    match map.get("completionGates").and_then(Value::as_array) {
        Some(gates) if !gates.is_empty() => {
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
                match text {
                    None => v.err(format!(
                        "completionGates[{}] must include source and text",
                        i + 1
                    )),
                    Some(text) => {
                        for name in FORBIDDEN_FILES {
                            if text.contains(name) {
                                v.err(format!(
                                    "completion gate must not reference obsolete file {name}"
                                ));
                            }
                        }
                    }
                }
            }
        }
        _ => v.err("protocol.json completionGates must not be empty"),
    }
    if !map.contains_key("waitingFor") {
        v.err("protocol.json waitingFor must be present");
    }
    if !map.contains_key("proposalOwner") {
        v.err("protocol.json proposalOwner must be present");
    }
}

fn nonblank_str(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}

fn checklist(item: &serde_json::Map<String, Value>) -> Vec<String> {
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
fn sections_for(item: &serde_json::Map<String, Value>) -> Vec<String> {
    match item.get("type").and_then(Value::as_str) {
        Some("custom") => checklist(item),
        Some(kind) => deliverable_spec(kind)
            .map(|(_, _, s)| s.iter().map(|x| (*x).to_owned()).collect())
            .unwrap_or_default(),
        None => Vec::new(),
    }
}

fn valid_type(item: &serde_json::Map<String, Value>) -> bool {
    item.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| DELIVERABLE_TYPES.contains(&t))
}

/// Step 5 of docs/collab-protocol.md#validation: the deliverables schema.
fn check_deliverables_schema(v: &mut Validator, protocol: &Protocol) {
    const PRIMARY_REQUIRED: &str = "protocol.json deliverables.primary is required";
    let Some(d) = protocol.deliverables().filter(|d| !d.is_empty()) else {
        v.err(PRIMARY_REQUIRED);
        return;
    };
    let mode = d.get("mode").and_then(Value::as_str);
    if !matches!(mode, Some("internal" | "external")) {
        v.err("deliverables.mode must be internal or external");
    }
    if mode == Some("internal") && protocol.map.contains_key("repoRoot") {
        v.err("repoRoot is not allowed for internal deliverables");
    }
    if mode == Some("external") {
        match nonblank_str(protocol.map.get("repoRoot")) {
            None => v.err("repoRoot is required for external deliverables"),
            Some(root) if root.starts_with('/') || Path::new(root).is_absolute() => {
                v.err("repoRoot must be relative")
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
    match nonblank_str(d.get("dir")) {
        None => v.err("deliverables.dir is required"),
        Some(dir) if paths::escapes(dir) => {
            v.err("deliverables.dir must be relative and must not contain ..")
        }
        Some(_) => {}
    }
    let Some(primary) = d.get("primary").and_then(Value::as_object) else {
        v.err(PRIMARY_REQUIRED);
        return;
    };
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
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for item in protocol.supporting() {
        if !valid_type(item) {
            v.err("supporting deliverable type is invalid");
        }
        let file = item.get("file").and_then(Value::as_str);
        match file {
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
    if let Some(attachments) = d.get("attachments").and_then(Value::as_array) {
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
                    v.err("attachment file must be relative and must not contain ..")
                }
                Some(_) => {}
            }
        }
    }
}

/// A value as `str()` prints it, formatted on demand.
struct Shown<'a>(Option<&'a Value>);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&py_str(self.0))
    }
}

/// Step 7 of docs/collab-protocol.md#validation: per-event shape.
fn check_event_shapes(v: &mut Validator, events: &[Event]) {
    let mut earlier: BTreeSet<i64> = BTreeSet::new();
    let mut previous_at: Option<i128> = None;
    for (i, event) in events.iter().enumerate() {
        let position = i as i64 + 1;
        let seq = event.get("seq");
        // Formatted only when a message needs it.
        let s = Shown(seq);
        if as_int(seq) != Some(position) {
            v.err(format!("events.jsonl: expected seq {position}, found {s}"));
        }
        for field in ["seq", "from", "event", "at", "summary"] {
            if !event.contains_key(field) {
                v.err(format!("seq {s}: missing required field {field}"));
            }
        }
        let name_value = event.get("event");
        let name = name_value.and_then(Value::as_str);
        if !name.is_some_and(|n| EVENTS.contains(&n)) {
            v.err(format!("seq {s}: unknown event {}", py_repr(name_value)));
        }
        if name.is_some_and(|n| n.starts_with("deliverable_")) {
            if !matches!(
                event.get("role").and_then(Value::as_str),
                Some("primary" | "supporting")
            ) {
                v.err(format!("seq {s}: deliverable events require role"));
            }
            if !event.get("doc").is_some_and(Value::is_string) {
                v.err(format!("seq {s}: deliverable events require doc"));
            }
            if name == Some("deliverable_frozen")
                && !event
                    .get("sha256")
                    .and_then(Value::as_str)
                    .is_some_and(is_sha256)
            {
                v.err(format!("seq {s}: deliverable_frozen requires sha256"));
            }
        }
        match event.get("reply_to").filter(|r| !r.is_null()) {
            None if name != Some("initialized") => {
                v.err(format!("seq {s}: reply_to is required after initialized"));
            }
            None => {}
            Some(reply_to) => {
                // Python's `isinstance(x, int)`: floats such as 2.0 do not qualify.
                let points_back = reply_to.as_i64().is_some_and(|r| earlier.contains(&r));
                if !points_back {
                    v.err(format!("seq {s}: reply_to must point to an earlier event"));
                }
            }
        }
        match event
            .get("at")
            .and_then(Value::as_str)
            .and_then(parse_iso_utc_nanos)
        {
            None => v.err(format!("seq {s}: at must be an ISO-8601 timestamp")),
            Some(at) => {
                if previous_at.is_some_and(|p| at < p) {
                    v.err(format!(
                        "seq {s}: at must not be earlier than the previous event"
                    ));
                }
                previous_at = Some(at);
            }
        }
        if let Some(n) = as_int(seq) {
            earlier.insert(n);
        }
    }
}

/// Finds the last event with a given seq: by position when every event's seq is its
/// position (a sound log, checked once), else through a map built only then.
enum BySeq<'a> {
    Sound(&'a [Event]),
    Map(BTreeMap<i64, &'a Event>),
}

impl<'a> BySeq<'a> {
    fn new(events: &'a [Event]) -> Self {
        let sound = events
            .iter()
            .enumerate()
            .all(|(i, e)| as_int(e.get("seq")) == Some(i as i64 + 1));
        if sound {
            return BySeq::Sound(events);
        }
        let map = events
            .iter()
            .filter_map(|e| as_int(e.get("seq")).map(|n| (n, e)))
            .collect();
        BySeq::Map(map)
    }

    fn get(&self, seq: i64) -> Option<&'a Event> {
        match self {
            BySeq::Sound(events) => usize::try_from(seq)
                .ok()
                .and_then(|s| s.checked_sub(1))
                .and_then(|i| events.get(i)),
            BySeq::Map(map) => map.get(&seq).copied(),
        }
    }
}

/// Step 8: `review.md` headings and content (docs/collab-protocol.md#review-headings).
fn check_review_links(
    v: &mut Validator,
    protocol: &Protocol,
    events: &[Event],
) -> Result<(), CollabError> {
    let text = v.read_folder_file(REVIEW_FILE)?;
    let headings = review_headings(&text);
    let heading_seqs: BTreeSet<i64> = headings.iter().filter_map(|h| h.seq).collect();
    let is_review = |e: &Event| e.get("event").and_then(Value::as_str) == Some("review_submitted");
    let mut missing: BTreeMap<(bool, i64, String), ()> = BTreeMap::new();
    let reviews: Vec<&Event> = events.iter().filter(|e| is_review(e)).collect();
    for e in &reviews {
        let seq = as_int(e.get("seq"));
        if !seq.is_some_and(|n| heading_seqs.contains(&n)) {
            missing.insert((seq.is_none(), seq.unwrap_or(0), py_str(e.get("seq"))), ());
        }
    }
    for (_, _, s) in missing.keys() {
        v.err(format!(
            "seq {s}: review_submitted requires matching review.md heading"
        ));
    }
    let by_seq = if headings.is_empty() {
        BySeq::Sound(&[])
    } else {
        BySeq::new(events)
    };
    for h in &headings {
        let n = &h.seq_text;
        match h.seq.and_then(|s| by_seq.get(s)) {
            None => v.err(format!("review.md heading seq {n}: no matching event")),
            Some(e) if !is_review(e) => v.err(format!(
                "review.md heading seq {n}: matching event is {}, not review_submitted",
                py_str(e.get("event"))
            )),
            Some(e) if e.get("from").and_then(Value::as_str) != Some(h.participant.as_str()) => v
                .err(format!(
                    "review.md heading seq {n}: participant {} does not match event from {}",
                    repr_str(&h.participant),
                    py_repr(e.get("from"))
                )),
            Some(_) => {}
        }
    }
    if !reviews.is_empty() {
        if !text.contains("Reviewed primary deliverable:") {
            v.err("review.md must declare Reviewed primary deliverable");
        }
        if !text.contains("Review Scope:") {
            v.err("review.md must declare Review Scope");
        }
        if !text.contains("Primary deliverable completeness") {
            v.err("review.md Review Scope must include Primary deliverable completeness");
        }
        if !protocol.primary_ref().is_some_and(|r| text.contains(&r)) {
            v.err("review.md must reference the primary deliverable");
        }
    }
    Ok(())
}

/// Step 9 of docs/collab-protocol.md#validation: deliverable events and hashes.
fn check_deliverable_events(
    v: &mut Validator,
    protocol: &Protocol,
    events: &[Event],
) -> Result<(), CollabError> {
    let mut primary_freezes = 0;
    let mut frozen_supporting: BTreeSet<String> = BTreeSet::new();
    let mut resolved = BTreeMap::new();
    for e in events {
        let Some(name) = e
            .get("event")
            .and_then(Value::as_str)
            .filter(|n| DELIVERABLE_EVENTS.contains(n))
        else {
            continue;
        };
        let Some(role) = e
            .get("role")
            .and_then(Value::as_str)
            .filter(|r| matches!(*r, "primary" | "supporting"))
        else {
            continue;
        };
        let Some(doc) = e.get("doc").and_then(Value::as_str) else {
            continue;
        };
        let s = py_str(e.get("seq"));
        // Logs repeat the same few docs: resolve each (role, doc) once.
        let target = match resolved
            .entry((role, doc))
            .or_insert_with(|| protocol.resolve_doc(role, doc))
        {
            Ok(t) => &*t,
            Err(msg) => {
                v.err(format!("seq {s}: {msg}"));
                continue;
            }
        };
        if name != "deliverable_frozen" {
            continue;
        }
        if role == "primary" {
            primary_freezes += 1;
        } else {
            frozen_supporting.insert(doc.to_owned());
        }
        let Some(sha) = e
            .get("sha256")
            .and_then(Value::as_str)
            .filter(|h| is_sha256(h))
        else {
            v.err(format!("seq {s}: deliverable_frozen requires sha256"));
            continue;
        };
        match paths::sha256_file(&target.base, &target.rel) {
            Ok(None) => v.err(format!("seq {s}: deliverable_frozen doc does not exist")),
            Ok(Some(actual)) if actual != sha => v.err(format!(
                "seq {s}: deliverable_frozen sha256 does not match current file"
            )),
            Ok(Some(_)) => {}
            Err(e) => v.read_problem(e)?,
        }
    }
    if primary_freezes > 1 {
        v.err("primary deliverable can be frozen only once");
    }
    for item in protocol.supporting() {
        let Some(file) = item.get("file").and_then(Value::as_str) else {
            continue;
        };
        let r = protocol.ref_for(file);
        let marked = item.get("frozen") == Some(&Value::Bool(true));
        let has_event = frozen_supporting.contains(&r);
        if marked && !has_event {
            v.err(format!(
                "supporting deliverable requires deliverable_frozen: {r}"
            ));
        } else if has_event && !marked {
            v.err(format!(
                "supporting deliverable has freeze event but is not marked frozen: {r}"
            ));
        }
    }
    Ok(())
}

/// Step 12: deliverable content, decisions and attachments.
fn check_contents(
    v: &mut Validator,
    protocol: &Protocol,
    events: &[Event],
    primary_frozen_required: bool,
) -> Result<(), CollabError> {
    let primary_ref = protocol.primary_ref().unwrap_or_default();
    if let Some(primary) = protocol.primary() {
        let file = primary
            .get("file")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match protocol.target_for_file(file) {
            Err(msg) => v.err(msg),
            Ok(target) => match v.read(&target.base, &target.rel)? {
                Doc::Refused => {}
                Doc::Missing => v.err(format!("primary deliverable missing: {primary_ref}")),
                Doc::Text(text) => v.errors.extend(deliverable_content_errors(
                    &text,
                    &sections_for(primary),
                    primary_frozen_required,
                    None,
                )),
            },
        }
    }
    let frozen_events: BTreeSet<&str> = events
        .iter()
        .filter(|e| {
            e.get("event").and_then(Value::as_str) == Some("deliverable_frozen")
                && e.get("role").and_then(Value::as_str) == Some("supporting")
        })
        .filter_map(|e| e.get("doc").and_then(Value::as_str))
        .collect();
    for item in protocol.supporting() {
        let Some(file) = item.get("file").and_then(Value::as_str) else {
            continue;
        };
        let r = protocol.ref_for(file);
        let frozen_required =
            item.get("frozen") == Some(&Value::Bool(true)) || frozen_events.contains(r.as_str());
        match protocol.target_for_file(file) {
            Err(msg) => v.err(msg),
            Ok(target) => match v.read(&target.base, &target.rel)? {
                Doc::Refused => {}
                Doc::Missing => v.err(format!("supporting deliverable missing: {r}")),
                Doc::Text(text) => v.errors.extend(deliverable_content_errors(
                    &text,
                    &sections_for(item),
                    frozen_required,
                    Some(&r),
                )),
            },
        }
    }
    match v.read(v.folder, DECISIONS_FILE)? {
        Doc::Refused => {}
        Doc::Missing => v.err("missing decisions.md"),
        Doc::Text(text) => {
            let mut refs = vec![primary_ref];
            refs.extend(protocol.supporting_refs());
            v.errors.extend(decisions_errors(&text, &refs));
        }
    }
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
                    v.err(format!("attachment missing: {file}"))
                }
                Ok(()) => {}
            },
        }
    }
    Ok(())
}
