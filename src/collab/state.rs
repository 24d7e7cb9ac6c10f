//! The state machine (`docs/collab-protocol.md#state-machine`), replayed from the whole log.
//! Errors accumulate across history and never stop a transition, so one bad
//! event does not cascade into errors for every later one.

use std::collections::BTreeSet;

use serde_json::Value;

use super::events::Event;
use super::markdown::Readiness;
use super::model::action_label;
use super::pyfmt::{as_int, py_str};

/// The derived state after a replay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    /// `None` before an `initialized` (or `blocked`) event.
    pub phase: Option<String>,
    pub owner: Option<String>,
    pub waiting_for: Vec<String>,
    pub reviewer_pending: BTreeSet<String>,
    pub accept_pending: BTreeSet<String>,
    pub classification_seq: i64,
    pub latest_decision_input_seq: i64,
    pub primary_drafted: bool,
    pub primary_frozen: bool,
    pub readiness_passed: bool,
}

/// Replays `events` for the given participants. When `candidate_readiness`
/// is given and the last event is a `decision_accepted`, that acceptance is
/// checked against the current readiness (`docs/collab-protocol.md#transitions`); past
/// acceptances are not re-checked
/// (`docs/collab-protocol.md#past-acceptances-are-not-re-checked`).
pub fn replay(
    participants: &[String],
    events: &[Event],
    candidate_readiness: Option<&Readiness>,
) -> (State, Vec<String>) {
    let mut machine = Machine {
        participants,
        state: State::default(),
        errors: Vec::new(),
    };
    for (i, event) in events.iter().enumerate() {
        let readiness = candidate_readiness.filter(|_| i + 1 == events.len());
        machine.apply(event, readiness);
    }
    (machine.state, machine.errors)
}

struct Machine<'a> {
    participants: &'a [String],
    state: State,
    errors: Vec<String>,
}

impl Machine<'_> {
    fn apply(&mut self, event: &Event, readiness: Option<&Readiness>) {
        let Some(name) = event.get("event").and_then(Value::as_str) else {
            return;
        };
        if name.starts_with("deliverable_")
            && event.get("role").and_then(Value::as_str) != Some("primary")
        {
            // Supporting (or role-less) deliverable events carry no state.
            return;
        }
        let seq_text = py_str(event.get("seq"));
        let seq_num = as_int(event.get("seq")).unwrap_or(0);
        let sender = event.get("from").and_then(Value::as_str);
        let actor = py_str(event.get("from"));
        let ctx = Ctx {
            name,
            seq: &seq_text,
            sender,
            actor: &actor,
        };
        let st = &mut self.state;
        match name {
            "initialized" => {
                if as_int(event.get("seq")) != Some(1) {
                    self.errors.push("initialized must be seq 1".to_owned());
                }
                if !sender.is_some_and(|s| self.participants.iter().any(|p| p == s)) {
                    self.errors.push(format!(
                        "seq {seq_text}: initialized participant is not listed in protocol.json"
                    ));
                }
                let st = &mut self.state;
                st.phase = Some("drafting".to_owned());
                st.owner = sender.map(str::to_owned);
                st.waiting_for = vec![actor.clone()];
            }
            "blocked" => {
                st.phase = Some("blocked".to_owned());
                st.waiting_for.clear();
            }
            "deliverable_drafted" => {
                self.phase_check(&ctx, &["drafting", "revising", "decision_review"]);
                self.owner_check(&ctx);
                self.state.primary_drafted = true;
            }
            "deliverable_revised" => {
                if st.primary_frozen {
                    self.errors.push(format!(
                        "seq {seq_text}: deliverable_revised is not allowed after deliverable_frozen"
                    ));
                }
                self.phase_check(&ctx, &["revising", "decision_review"]);
                self.owner_check(&ctx);
                self.state.primary_drafted = true;
            }
            "deliverable_frozen" => {
                if st.primary_frozen {
                    self.errors.push(format!(
                        "seq {seq_text}: primary deliverable can be frozen only once"
                    ));
                }
                self.phase_check(&ctx, &["readiness_check"]);
                self.owner_check(&ctx);
                self.state.primary_frozen = true;
            }
            "proposal_submitted" => {
                self.phase_check(&ctx, &["drafting", "revising"]);
                if !self.state.primary_drafted {
                    self.errors.push(format!(
                        "seq {seq_text}: proposal_submitted requires prior primary deliverable_drafted"
                    ));
                }
                self.owner_check(&ctx);
                let st = &mut self.state;
                st.owner = sender.map(str::to_owned);
                let reviewers: BTreeSet<String> = self
                    .participants
                    .iter()
                    .filter(|p| Some(p.as_str()) != sender)
                    .cloned()
                    .collect();
                if reviewers.is_empty() {
                    self.errors.push(format!(
                        "seq {seq_text}: proposal_submitted requires at least one reviewer"
                    ));
                }
                st.phase = Some("reviewing".to_owned());
                st.waiting_for = reviewers.iter().cloned().collect();
                st.reviewer_pending = reviewers;
            }
            "review_submitted" => {
                self.phase_check(&ctx, &["reviewing"]);
                let allowed: Vec<String> = self.state.reviewer_pending.iter().cloned().collect();
                self.actor_check(&ctx, &allowed);
                let st = &mut self.state;
                if let Some(s) = sender {
                    st.reviewer_pending.remove(s);
                }
                if st.reviewer_pending.is_empty() {
                    st.phase = Some("revising".to_owned());
                    st.waiting_for = owner_list(&st.owner);
                } else {
                    st.phase = Some("reviewing".to_owned());
                    st.waiting_for = st.reviewer_pending.iter().cloned().collect();
                }
            }
            "proposal_revised" | "decision_proposed" => {
                let allowed: &[&str] = if name == "proposal_revised" {
                    &["revising"]
                } else {
                    &["revising", "decision_review"]
                };
                self.phase_check(&ctx, allowed);
                self.owner_check(&ctx);
                let st = &mut self.state;
                st.phase = Some("decision_review".to_owned());
                st.waiting_for = owner_list(&st.owner);
                st.latest_decision_input_seq = seq_num;
                st.classification_seq = 0;
            }
            "question_classified" => {
                self.phase_check(&ctx, &["decision_review"]);
                self.owner_check(&ctx);
                let st = &mut self.state;
                st.phase = Some("decision_review".to_owned());
                st.classification_seq = seq_num;
                st.accept_pending = self.participants.iter().cloned().collect();
                st.waiting_for = st.accept_pending.iter().cloned().collect();
            }
            "decision_accepted" => {
                self.phase_check(&ctx, &["decision_review"]);
                let st = &self.state;
                if st.latest_decision_input_seq != 0
                    && st.classification_seq <= st.latest_decision_input_seq
                {
                    self.errors.push(format!(
                        "seq {seq_text}: decision_accepted requires question_classified after the latest proposal or decision"
                    ));
                }
                let allowed: Vec<String> = self.state.accept_pending.iter().cloned().collect();
                self.actor_check(&ctx, &allowed);
                if let Some(r) = readiness {
                    if r.blocking {
                        self.errors.push(format!(
                            "seq {seq_text}: blocking readiness items must be cleared before decision_accepted"
                        ));
                    }
                    if r.unresolved {
                        self.errors.push(format!(
                            "seq {seq_text}: unresolved readiness questions must be classified before decision_accepted"
                        ));
                    }
                    if r.deferred_missing_reason {
                        self.errors.push(format!(
                            "seq {seq_text}: deferred_nonblocking readiness items require a reason before decision_accepted"
                        ));
                    }
                }
                let st = &mut self.state;
                if let Some(s) = sender {
                    st.accept_pending.remove(s);
                }
                if st.accept_pending.is_empty() {
                    st.phase = Some("readiness_check".to_owned());
                    st.waiting_for = owner_list(&st.owner);
                } else {
                    st.phase = Some("decision_review".to_owned());
                    st.waiting_for = st.accept_pending.iter().cloned().collect();
                }
            }
            "readiness_passed" => {
                self.phase_check(&ctx, &["readiness_check"]);
                if !self.state.primary_frozen {
                    self.errors.push(format!(
                        "seq {seq_text}: readiness_passed requires primary deliverable_frozen"
                    ));
                }
                self.owner_check(&ctx);
                let st = &mut self.state;
                st.readiness_passed = true;
                st.waiting_for = owner_list(&st.owner);
            }
            "completed" => {
                if st.phase.as_deref() != Some("readiness_check") || !st.readiness_passed {
                    self.errors.push(format!(
                        "seq {seq_text}: completed requires a prior readiness_passed event"
                    ));
                }
                if event.get("doc").and_then(Value::as_str) != Some("conclusion.md") {
                    self.errors.push(format!(
                        "seq {seq_text}: completed must reference conclusion.md"
                    ));
                }
                self.owner_check(&ctx);
                let st = &mut self.state;
                st.phase = Some("completed".to_owned());
                st.waiting_for.clear();
            }
            _ => {}
        }
    }

    fn phase_check(&mut self, ctx: &Ctx, allowed: &[&str]) {
        let phase = self.state.phase.as_deref();
        if !phase.is_some_and(|p| allowed.contains(&p)) {
            self.errors.push(format!(
                "seq {}: {} is not allowed from phase {}",
                ctx.seq,
                ctx.name,
                phase.unwrap_or("None")
            ));
        }
    }

    /// Owner-only events; before any owner exists there is no one to check against.
    fn owner_check(&mut self, ctx: &Ctx) {
        if let Some(owner) = self.state.owner.clone() {
            self.actor_check(ctx, &[owner]);
        }
    }

    fn actor_check(&mut self, ctx: &Ctx, allowed: &[String]) {
        if ctx.sender.is_some_and(|s| allowed.iter().any(|a| a == s)) {
            return;
        }
        let mut sorted = allowed.to_vec();
        sorted.sort();
        let who = if sorted.is_empty() {
            "no participant".to_owned()
        } else {
            sorted.join(", ")
        };
        self.errors.push(format!(
            "seq {}: {} is reserved for {}; got {}",
            ctx.seq,
            action_label(ctx.name),
            who,
            ctx.actor
        ));
    }
}

struct Ctx<'a> {
    name: &'a str,
    seq: &'a str,
    sender: Option<&'a str>,
    actor: &'a str,
}

fn owner_list(owner: &Option<String>) -> Vec<String> {
    owner.iter().cloned().collect()
}
