//! Steps 6–10 of docs/collab-protocol.md#validation in one pass over `events.jsonl`: each
//! line is decoded straight into a [`Record`] borrowing from the text, checked for its shape
//! (7), its review link (8), its deliverable doc and freeze hash (9), replayed (10), and
//! dropped. Only what later steps ask about is kept, so the cost grows with the log's length
//! and memory does not (BENCHMARKS.md). Each step keeps its own findings; they are reported
//! step by step, as if each step had read the whole log.
//!
//! A [`Record`] has a typed slot for each of the nine known keys and borrows its strings from
//! the one text buffer. Step 9 resolves each deliverable doc and hashes each file once, however
//! often the log names it; step 10 replays through `state::Machine`, the same machine as every
//! other command. The other commands keep `events::Event`s instead (small member vectors,
//! built from the same decoder).

use std::collections::{BTreeMap, BTreeSet};

use super::validator::Validator;
use crate::error::CollabError;
use crate::events::{read_log_text, scan};
use crate::markdown::{review_headings, ReviewHeading};
use crate::paths;
use crate::protocol::{DocTarget, Protocol};
use crate::pyfmt::repr_str;
use crate::record::{repr, shown, Field, Fields, Key, Record};
use crate::spec::{is_sha256, DELIVERABLE_EVENTS, EVENTS, REVIEW_FILE};
use crate::state::{Machine, State};
use acp_registry_core::time::parse_iso_utc_nanos;

/// What steps 11–15 need from the log.
pub(super) struct LogFacts {
    /// The replayed state (step 11 compares it with `protocol.json`).
    pub(super) state: State,
    /// Which of [`EVENTS`] occur, one bit each.
    seen: u16,
    /// A `deliverable_frozen` with role `primary` occurs.
    pub(super) has_primary_freeze: bool,
    /// The seq and `sha256` of the first primary `deliverable_frozen` with a string `sha256`.
    pub(super) primary_freeze_sha: Option<(String, String)>,
    /// The docs of `deliverable_frozen` events with role `supporting`.
    pub(super) frozen_supporting_docs: BTreeSet<String>,
}

impl LogFacts {
    /// Whether an event of this name occurs.
    pub(super) fn has(&self, name: &str) -> bool {
        EVENTS
            .binary_search(&name)
            .is_ok_and(|i| self.seen & (1 << i) != 0)
    }

    fn note(&mut self, record: &Record) {
        let Some(name) = record.text(Key::Event) else {
            return;
        };
        if let Ok(i) = EVENTS.binary_search(&name) {
            self.seen |= 1 << i;
        }
        if name == "deliverable_frozen" {
            match record.text(Key::Role) {
                Some("primary") => {
                    self.has_primary_freeze = true;
                    if self.primary_freeze_sha.is_none() {
                        if let Some(sha) = record.text(Key::Sha256) {
                            let seq = shown(record.get(Key::Seq));
                            self.primary_freeze_sha = Some((seq, sha.to_owned()));
                        }
                    }
                }
                Some("supporting") => {
                    if let Some(doc) = record.text(Key::Doc) {
                        if !self.frozen_supporting_docs.contains(doc) {
                            self.frozen_supporting_docs.insert(doc.to_owned());
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Steps 6–10: reads and checks the log, appending the findings to `v` in step order.
pub(super) fn check_log(v: &mut Validator, protocol: &Protocol) -> Result<LogFacts, CollabError> {
    let text = read_log_text(v.folder)?;
    // Step 8 needs the headings before the pass; its read problem is reported in its place.
    let earlier_errors = std::mem::take(&mut v.errors);
    let review_text = v.read_folder_file(REVIEW_FILE)?;
    let review_read_errors = std::mem::take(&mut v.errors);
    let participants = protocol.participants();
    let mut pass = Pass {
        shapes: Shapes::default(),
        reviews: Reviews::new(review_headings(&review_text)),
        deliverables: Deliverables::default(),
        machine: Machine::new(&participants),
        facts: LogFacts {
            state: State::default(),
            seen: 0,
            has_primary_freeze: false,
            primary_freeze_sha: None,
            frozen_supporting_docs: BTreeSet::new(),
        },
    };
    // Freeze-hash read problems land in `v.errors`, which holds step 9's findings meanwhile.
    let reading = match &text {
        Ok(text) => scan(text, |record| pass.event(v, protocol, record))?,
        Err(message) => crate::events::Reading {
            errors: vec![message.clone()],
            ..Default::default()
        },
    };
    let step9 = std::mem::replace(&mut v.errors, earlier_errors);
    v.errors.extend(reading.errors);
    v.warnings.extend(reading.warnings);
    v.errors.extend(pass.shapes.errors);
    v.errors.extend(review_read_errors);
    pass.reviews.finish(v, protocol, &review_text);
    v.errors.extend(step9);
    pass.deliverables.finish(v, protocol);
    let (state, replay_errors) = pass.machine.finish();
    v.errors.extend(replay_errors);
    pass.facts.state = state;
    Ok(pass.facts)
}

/// The per-step state of the pass.
struct Pass<'a, 'p> {
    shapes: Shapes,
    reviews: Reviews<'a>,
    deliverables: Deliverables,
    machine: Machine<'p>,
    facts: LogFacts,
}

impl<'a> Pass<'a, '_> {
    fn event(
        &mut self,
        v: &mut Validator,
        protocol: &Protocol,
        record: &Record<'a>,
    ) -> Result<(), CollabError> {
        self.shapes.check(record);
        self.reviews.note(record);
        self.deliverables.check(v, protocol, record)?;
        self.machine.apply(record, None);
        self.facts.note(record);
        Ok(())
    }
}

/// A member as `str()` prints it, formatted only when a message needs it.
struct Shown<'r, 'a>(Option<&'r Field<'a>>);

impl std::fmt::Display for Shown<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&shown(self.0))
    }
}

/// The seqs seen so far: `1..=run` without a gap, and the others. A sound log never
/// leaves the run, so a look-up is a comparison.
#[derive(Default)]
struct Seqs {
    run: i64,
    others: BTreeSet<i64>,
}

impl Seqs {
    fn insert(&mut self, n: i64) {
        if n == self.run + 1 {
            self.run = n;
            while self.others.remove(&(self.run + 1)) {
                self.run += 1;
            }
        } else if n > self.run || n < 1 {
            self.others.insert(n);
        }
    }

    fn contains(&self, n: i64) -> bool {
        (1..=self.run).contains(&n) || self.others.contains(&n)
    }
}

/// Step 7: per-event shape.
#[derive(Default)]
struct Shapes {
    errors: Vec<String>,
    position: i64,
    earlier: Seqs,
    previous_at: Option<i128>,
}

impl Shapes {
    fn check(&mut self, event: &Record) {
        self.position += 1;
        let position = self.position;
        let seq = event.get(Key::Seq);
        let s = Shown(seq);
        if seq.and_then(Field::as_int) != Some(position) {
            self.err(format!("events.jsonl: expected seq {position}, found {s}"));
        }
        for key in [Key::Seq, Key::From, Key::Event, Key::At, Key::Summary] {
            if event.get(key).is_none() {
                self.err(format!("seq {s}: missing required field {}", key.name()));
            }
        }
        let name = event.text(Key::Event);
        if name.is_none_or(|n| EVENTS.binary_search(&n).is_err()) {
            self.err(format!(
                "seq {s}: unknown event {}",
                repr(event.get(Key::Event))
            ));
        }
        if name.is_some_and(|n| n.starts_with("deliverable_")) {
            self.check_deliverable(event, name, &s);
        }
        self.check_reply_to(event, name, &s);
        self.check_at(event, &s);
        if let Some(n) = seq.and_then(Field::as_int) {
            self.earlier.insert(n);
        }
    }

    fn err(&mut self, message: String) {
        self.errors.push(message);
    }

    fn check_deliverable(&mut self, event: &Record, name: Option<&str>, s: &Shown) {
        if !matches!(event.text(Key::Role), Some("primary" | "supporting")) {
            self.err(format!("seq {s}: deliverable events require role"));
        }
        if event.text(Key::Doc).is_none() {
            self.err(format!("seq {s}: deliverable events require doc"));
        }
        if name == Some("deliverable_frozen") && !event.text(Key::Sha256).is_some_and(is_sha256) {
            self.err(format!("seq {s}: deliverable_frozen requires sha256"));
        }
    }

    fn check_reply_to(&mut self, event: &Record, name: Option<&str>, s: &Shown) {
        match event.get(Key::ReplyTo).filter(|r| !r.is_null()) {
            None if name != Some("initialized") => {
                self.err(format!("seq {s}: reply_to is required after initialized"));
            }
            None => {}
            Some(reply_to) => {
                // Python's `isinstance(x, int)`: floats such as 2.0 do not qualify.
                let points_back = reply_to.as_i64().is_some_and(|r| self.earlier.contains(r));
                if !points_back {
                    self.err(format!("seq {s}: reply_to must point to an earlier event"));
                }
            }
        }
    }

    fn check_at(&mut self, event: &Record, s: &Shown) {
        match event.text(Key::At).and_then(parse_iso_utc_nanos) {
            None => self.err(format!("seq {s}: at must be an ISO-8601 timestamp")),
            Some(at) => {
                if self.previous_at.is_some_and(|p| at < p) {
                    self.err(format!(
                        "seq {s}: at must not be earlier than the previous event"
                    ));
                }
                self.previous_at = Some(at);
            }
        }
    }
}

/// Step 8: `review.md` headings against the `review_submitted` events
/// (docs/collab-protocol.md#review-headings).
struct Reviews<'a> {
    headings: Vec<ReviewHeading>,
    heading_seqs: BTreeSet<i64>,
    /// The last event with each heading's seq.
    by_seq: BTreeMap<i64, Record<'a>>,
    /// Reviews without a heading, sorted as reported (numbers first), shown once each.
    missing: BTreeSet<(bool, i64, String)>,
    count: usize,
}

impl<'a> Reviews<'a> {
    fn new(headings: Vec<ReviewHeading>) -> Self {
        let heading_seqs = headings.iter().filter_map(|h| h.seq).collect();
        Reviews {
            headings,
            heading_seqs,
            by_seq: BTreeMap::new(),
            missing: BTreeSet::new(),
            count: 0,
        }
    }

    fn note(&mut self, event: &Record<'a>) {
        let seq = event.int(Key::Seq);
        if let Some(n) = seq.filter(|n| self.heading_seqs.contains(n)) {
            self.by_seq.insert(n, event.clone());
        }
        if event.text(Key::Event) == Some("review_submitted") {
            self.count += 1;
            if !seq.is_some_and(|n| self.heading_seqs.contains(&n)) {
                let key = (seq.is_none(), seq.unwrap_or(0), event.shown(Key::Seq));
                self.missing.insert(key);
            }
        }
    }

    fn finish(self, v: &mut Validator, protocol: &Protocol, text: &str) {
        for (_, _, s) in &self.missing {
            v.err(format!(
                "seq {s}: review_submitted requires matching review.md heading"
            ));
        }
        for h in &self.headings {
            let n = &h.seq_text;
            match h.seq.and_then(|s| self.by_seq.get(&s)) {
                None => v.err(format!("review.md heading seq {n}: no matching event")),
                Some(e) if e.text(Key::Event) != Some("review_submitted") => v.err(format!(
                    "review.md heading seq {n}: matching event is {}, not review_submitted",
                    e.shown(Key::Event)
                )),
                Some(e) if e.text(Key::From) != Some(h.participant.as_str()) => v.err(format!(
                    "review.md heading seq {n}: participant {} does not match event from {}",
                    repr_str(&h.participant),
                    repr(e.get(Key::From))
                )),
                Some(_) => {}
            }
        }
        if self.count > 0 {
            check_review_scope(v, protocol, text);
        }
    }
}

/// The declarations `review.md` needs once a review was submitted.
fn check_review_scope(v: &mut Validator, protocol: &Protocol, text: &str) {
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

/// A deliverable doc resolved once, and its hash once read.
struct Resolved {
    target: Result<DocTarget, String>,
    hash: Option<Option<String>>,
}

/// Step 9: deliverable events and freeze hashes. Logs repeat the same few docs, so each
/// (role, doc) is resolved once and each file hashed once.
#[derive(Default)]
struct Deliverables {
    primary_freezes: usize,
    frozen_supporting: BTreeSet<String>,
    /// By role (primary, supporting), then doc.
    resolved: [BTreeMap<String, Resolved>; 2],
}

impl Deliverables {
    fn check(
        &mut self,
        v: &mut Validator,
        protocol: &Protocol,
        event: &Record,
    ) -> Result<(), CollabError> {
        let Some(name) = event
            .text(Key::Event)
            .filter(|n| DELIVERABLE_EVENTS.contains(n))
        else {
            return Ok(());
        };
        let Some(role) = event
            .text(Key::Role)
            .filter(|r| matches!(*r, "primary" | "supporting"))
        else {
            return Ok(());
        };
        let Some(doc) = event.text(Key::Doc) else {
            return Ok(());
        };
        let s = Shown(event.get(Key::Seq));
        let primary = role == "primary";
        let docs = &mut self.resolved[usize::from(!primary)];
        if !docs.contains_key(doc) {
            let target = protocol.resolve_doc(role, doc);
            docs.insert(doc.to_owned(), Resolved { target, hash: None });
        }
        let resolved = docs.get_mut(doc).expect("resolved above");
        let target = match &resolved.target {
            Ok(target) => target,
            Err(msg) => {
                v.err(format!("seq {s}: {msg}"));
                return Ok(());
            }
        };
        if name != "deliverable_frozen" {
            return Ok(());
        }
        if primary {
            self.primary_freezes += 1;
        } else if !self.frozen_supporting.contains(doc) {
            self.frozen_supporting.insert(doc.to_owned());
        }
        let Some(sha) = event.text(Key::Sha256).filter(|h| is_sha256(h)) else {
            v.err(format!("seq {s}: deliverable_frozen requires sha256"));
            return Ok(());
        };
        // Only a successful read is kept: a refused one is read (and reported once) again.
        if resolved.hash.is_none() {
            match paths::sha256_file(&target.base, &target.rel) {
                Ok(hash) => resolved.hash = Some(hash),
                Err(e) => return v.read_problem(e),
            }
        }
        match resolved.hash.as_ref().and_then(Option::as_deref) {
            None => v.err(format!("seq {s}: deliverable_frozen doc does not exist")),
            Some(actual) if actual != sha => v.err(format!(
                "seq {s}: deliverable_frozen sha256 does not match current file"
            )),
            Some(_) => {}
        }
        Ok(())
    }

    /// After the pass: one primary freeze at most, supporting freezes against `frozen`.
    fn finish(self, v: &mut Validator, protocol: &Protocol) {
        if self.primary_freezes > 1 {
            v.err("primary deliverable can be frozen only once");
        }
        for item in protocol.supporting() {
            let Some(file) = item.get("file").and_then(serde_json::Value::as_str) else {
                continue;
            };
            let r = protocol.ref_for(file);
            let marked = item.get("frozen") == Some(&serde_json::Value::Bool(true));
            let has_event = self.frozen_supporting.contains(&r);
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
    }
}
