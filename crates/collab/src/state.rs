//! The state machine (`docs/collab-protocol.md#state-machine`), replayed from the whole log.
//! Errors accumulate across history and never stop a transition, so one bad
//! event does not cascade into errors for every later one.
//!
//! State is never trusted, always replayed: `append` and `validate` replay the full log, and
//! the `currentPhase`, `proposalOwner` and `waitingFor` of `protocol.json` are only a mirror,
//! which `append` rewrites and `validate` compares with the replay. Readiness is checked only
//! for the last event, the one being appended ([`replay`]'s `candidate_readiness`).

use std::collections::BTreeSet;

use crate::markdown::Readiness;
use crate::record::{Fields, Key};
use crate::spec::action_label;

/// The derived state after a replay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    /// `None` before an `initialized` (or `blocked`) event.
    pub phase: Option<String>,
    /// The proposal owner, once known.
    pub owner: Option<String>,
    /// Who the next event is awaited from.
    pub waiting_for: Vec<String>,
    /// Reviewers yet to submit a review.
    pub reviewer_pending: BTreeSet<String>,
    /// Participants yet to accept the decisions.
    pub accept_pending: BTreeSet<String>,
    /// Seq of the latest `question_classified` (0: none since the latest input).
    pub classification_seq: i64,
    /// Seq of the latest `proposal_revised` or `decision_proposed`.
    pub latest_decision_input_seq: i64,
    /// A primary `deliverable_drafted` or `deliverable_revised` occurred.
    pub primary_drafted: bool,
    /// The primary deliverable was frozen.
    pub primary_frozen: bool,
    /// `readiness_passed` occurred.
    pub readiness_passed: bool,
}

/// Replays `events` for the given participants. When `candidate_readiness`
/// is given and the last event is a `decision_accepted`, that acceptance is
/// checked against the current readiness (`docs/collab-protocol.md#transitions`); past
/// acceptances are not re-checked
/// (`docs/collab-protocol.md#past-acceptances-are-not-re-checked`).
pub fn replay<E: Fields>(
    participants: &[String],
    events: &[E],
    candidate_readiness: Option<&Readiness>,
) -> (State, Vec<String>) {
    let mut machine = Machine::new(participants);
    for (i, event) in events.iter().enumerate() {
        let readiness = candidate_readiness.filter(|_| i + 1 == events.len());
        machine.apply(event, readiness);
    }
    machine.finish()
}

/// The state machine fed one event at a time, for a reader that keeps no log.
pub(crate) struct Machine<'a> {
    participants: &'a [String],
    state: State,
    errors: Vec<String>,
}

impl<'a> Machine<'a> {
    /// A machine before the first event.
    pub(crate) fn new(participants: &'a [String]) -> Self {
        Machine {
            participants,
            state: State::default(),
            errors: Vec::new(),
        }
    }

    /// The state after the events applied, and the replay errors in order.
    pub(crate) fn finish(self) -> (State, Vec<String>) {
        (self.state, self.errors)
    }
}

impl Machine<'_> {
    /// Applies one event; `readiness` checks an acceptance being appended.
    pub(crate) fn apply(&mut self, event: &impl Fields, readiness: Option<&Readiness>) {
        let Some(name) = event.text(Key::Event) else {
            return;
        };
        if name.starts_with("deliverable_") && event.text(Key::Role) != Some("primary") {
            // Supporting (or role-less) deliverable events carry no state.
            return;
        }
        let seq_text = event.shown(Key::Seq);
        let actor = event.shown(Key::From);
        let ctx = Ctx {
            name,
            seq: &seq_text,
            seq_num: event.int(Key::Seq),
            sender: event.text(Key::From),
            actor: &actor,
        };
        match name {
            "initialized" => self.initialized(&ctx),
            "blocked" => {
                self.state.phase = Some("blocked".to_owned());
                self.state.waiting_for.clear();
            }
            "deliverable_drafted" | "deliverable_revised" | "deliverable_frozen" => {
                self.primary_deliverable(&ctx);
            }
            "proposal_submitted" => self.proposal_submitted(&ctx),
            "review_submitted" => self.review_submitted(&ctx),
            "proposal_revised" | "decision_proposed" => self.decision_input(&ctx),
            "question_classified" => self.question_classified(&ctx),
            "decision_accepted" => self.decision_accepted(&ctx, readiness),
            "readiness_passed" => self.readiness_passed(&ctx),
            "completed" => self.completed(&ctx, event.text(Key::Doc)),
            _ => {}
        }
    }

    fn error(&mut self, ctx: &Ctx, message: &str) {
        self.errors.push(format!("seq {}: {message}", ctx.seq));
    }

    fn initialized(&mut self, ctx: &Ctx) {
        if ctx.seq_num != Some(1) {
            self.errors.push("initialized must be seq 1".to_owned());
        }
        if !ctx
            .sender
            .is_some_and(|s| self.participants.iter().any(|p| p == s))
        {
            self.error(
                ctx,
                "initialized participant is not listed in protocol.json",
            );
        }
        let st = &mut self.state;
        st.phase = Some("drafting".to_owned());
        st.owner = ctx.sender.map(str::to_owned);
        st.waiting_for = vec![ctx.actor.to_owned()];
    }

    /// `deliverable_drafted`, `deliverable_revised` and `deliverable_frozen` of the primary.
    fn primary_deliverable(&mut self, ctx: &Ctx) {
        let allowed: &[&str] = match ctx.name {
            "deliverable_drafted" => &["drafting", "revising", "decision_review"],
            "deliverable_revised" => &["revising", "decision_review"],
            _ => &["readiness_check"],
        };
        if self.state.primary_frozen {
            match ctx.name {
                "deliverable_revised" => {
                    self.error(
                        ctx,
                        "deliverable_revised is not allowed after deliverable_frozen",
                    );
                }
                "deliverable_frozen" => {
                    self.error(ctx, "primary deliverable can be frozen only once");
                }
                _ => {}
            }
        }
        self.phase_check(ctx, allowed);
        self.owner_check(ctx);
        if ctx.name == "deliverable_frozen" {
            self.state.primary_frozen = true;
        } else {
            self.state.primary_drafted = true;
        }
    }

    fn proposal_submitted(&mut self, ctx: &Ctx) {
        self.phase_check(ctx, &["drafting", "revising"]);
        if !self.state.primary_drafted {
            self.error(
                ctx,
                "proposal_submitted requires prior primary deliverable_drafted",
            );
        }
        self.owner_check(ctx);
        let reviewers: BTreeSet<String> = self
            .participants
            .iter()
            .filter(|p| Some(p.as_str()) != ctx.sender)
            .cloned()
            .collect();
        if reviewers.is_empty() {
            self.error(ctx, "proposal_submitted requires at least one reviewer");
        }
        let st = &mut self.state;
        st.owner = ctx.sender.map(str::to_owned);
        st.phase = Some("reviewing".to_owned());
        st.waiting_for = reviewers.iter().cloned().collect();
        st.reviewer_pending = reviewers;
    }

    fn review_submitted(&mut self, ctx: &Ctx) {
        self.phase_check(ctx, &["reviewing"]);
        let allowed: Vec<String> = self.state.reviewer_pending.iter().cloned().collect();
        self.actor_check(ctx, &allowed);
        let st = &mut self.state;
        settle(
            st,
            ctx.sender,
            |st| &mut st.reviewer_pending,
            "revising",
            "reviewing",
        );
    }

    /// `proposal_revised` and `decision_proposed`: a new input for the decision.
    fn decision_input(&mut self, ctx: &Ctx) {
        let allowed: &[&str] = if ctx.name == "proposal_revised" {
            &["revising"]
        } else {
            &["revising", "decision_review"]
        };
        self.phase_check(ctx, allowed);
        self.owner_check(ctx);
        let st = &mut self.state;
        st.phase = Some("decision_review".to_owned());
        st.waiting_for = owner_list(&st.owner);
        st.latest_decision_input_seq = ctx.seq_num.unwrap_or(0);
        st.classification_seq = 0;
    }

    fn question_classified(&mut self, ctx: &Ctx) {
        self.phase_check(ctx, &["decision_review"]);
        self.owner_check(ctx);
        let st = &mut self.state;
        st.phase = Some("decision_review".to_owned());
        st.classification_seq = ctx.seq_num.unwrap_or(0);
        st.accept_pending = self.participants.iter().cloned().collect();
        st.waiting_for = st.accept_pending.iter().cloned().collect();
    }

    fn decision_accepted(&mut self, ctx: &Ctx, readiness: Option<&Readiness>) {
        self.phase_check(ctx, &["decision_review"]);
        let st = &self.state;
        if st.latest_decision_input_seq != 0
            && st.classification_seq <= st.latest_decision_input_seq
        {
            self.error(ctx, "decision_accepted requires question_classified after the latest proposal or decision");
        }
        let allowed: Vec<String> = self.state.accept_pending.iter().cloned().collect();
        self.actor_check(ctx, &allowed);
        for message in readiness
            .map(|r| r.gate_problems(BEFORE_ACCEPTANCE))
            .unwrap_or_default()
        {
            self.error(ctx, message);
        }
        let st = &mut self.state;
        settle(
            st,
            ctx.sender,
            |st| &mut st.accept_pending,
            "readiness_check",
            "decision_review",
        );
    }

    fn readiness_passed(&mut self, ctx: &Ctx) {
        self.phase_check(ctx, &["readiness_check"]);
        if !self.state.primary_frozen {
            self.error(ctx, "readiness_passed requires primary deliverable_frozen");
        }
        self.owner_check(ctx);
        let st = &mut self.state;
        st.readiness_passed = true;
        st.waiting_for = owner_list(&st.owner);
    }

    fn completed(&mut self, ctx: &Ctx, doc: Option<&str>) {
        let st = &self.state;
        if st.phase.as_deref() != Some("readiness_check") || !st.readiness_passed {
            self.error(ctx, "completed requires a prior readiness_passed event");
        }
        if doc != Some("conclusion.md") {
            self.error(ctx, "completed must reference conclusion.md");
        }
        self.owner_check(ctx);
        let st = &mut self.state;
        st.phase = Some("completed".to_owned());
        st.waiting_for.clear();
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
    seq_num: Option<i64>,
    sender: Option<&'a str>,
    actor: &'a str,
}

fn owner_list(owner: &Option<String>) -> Vec<String> {
    owner.iter().cloned().collect()
}

/// The readiness gate messages of an acceptance being appended (docs/collab-protocol.md#transitions).
pub(crate) const BEFORE_ACCEPTANCE: [&str; 3] = [
    "blocking readiness items must be cleared before decision_accepted",
    "unresolved readiness questions must be classified before decision_accepted",
    "deferred_nonblocking readiness items require a reason before decision_accepted",
];

/// One of the pending participants (reviewers or acceptors) has answered: when none is
/// left the phase moves on to `done` and waits for the owner, else it stays `open`,
/// waiting for the rest.
fn settle(
    st: &mut State,
    sender: Option<&str>,
    pending: fn(&mut State) -> &mut BTreeSet<String>,
    done: &str,
    open: &str,
) {
    if let Some(s) = sender {
        pending(st).remove(s);
    }
    let left: Vec<String> = pending(st).iter().cloned().collect();
    if left.is_empty() {
        st.phase = Some(done.to_owned());
        st.waiting_for = owner_list(&st.owner);
    } else {
        st.phase = Some(open.to_owned());
        st.waiting_for = left;
    }
}
