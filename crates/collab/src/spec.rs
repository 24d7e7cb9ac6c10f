//! The protocol's fixed tables: phases, events, files, deliverable types and their
//! sections, action labels (`docs/collab-protocol.md#files`, `docs/collab-protocol.md#events`).

/// The seven phases, in the order docs/collab-protocol.md#state-machine lists them.
pub(crate) const PHASES: [&str; 7] = [
    "drafting",
    "reviewing",
    "revising",
    "decision_review",
    "readiness_check",
    "completed",
    "blocked",
];

/// The thirteen events, sorted (the order `--event` offers them in).
pub const EVENTS: [&str; 13] = [
    "blocked",
    "completed",
    "decision_accepted",
    "decision_proposed",
    "deliverable_drafted",
    "deliverable_frozen",
    "deliverable_revised",
    "initialized",
    "proposal_revised",
    "proposal_submitted",
    "question_classified",
    "readiness_passed",
    "review_submitted",
];

/// The three deliverable events.
pub(crate) const DELIVERABLE_EVENTS: [&str; 3] = [
    "deliverable_drafted",
    "deliverable_revised",
    "deliverable_frozen",
];

/// Required files, in the order the validator reports them missing.
pub const REQUIRED_FILES: [&str; 7] = [
    "protocol.json",
    "events.jsonl",
    "proposal.md",
    "review.md",
    "decisions.md",
    "readiness.md",
    "conclusion.md",
];

/// Files that must never exist in a collaboration folder.
pub(crate) const FORBIDDEN_FILES: [&str; 3] = ["state.log", "discussion.md", "opinions.md"];

/// The configuration and state mirror.
pub(crate) const PROTOCOL_FILE: &str = "protocol.json";
/// The event log.
pub(crate) const EVENTS_FILE: &str = "events.jsonl";
/// Question classification, gates and the readiness checklist.
pub(crate) const READINESS_FILE: &str = "readiness.md";
/// The generated completion gate whose tick says the snapshot line of `readiness.md` holds the
/// frozen primary deliverable's SHA-256 (`templates::generated_gates` writes the same text).
pub(crate) const SNAPSHOT_GATE: &str = "Primary deliverable SHA-256 snapshot recorded";
/// The section of `readiness.md` that holds the snapshot line.
pub(crate) const SNAPSHOT_HEADING: &str = "## Deliverable Snapshot";
/// The snapshot line's label, in that section.
pub(crate) const SNAPSHOT_LABEL: &str = "- SHA-256:";
/// The final receipt.
pub(crate) const CONCLUSION_FILE: &str = "conclusion.md";
/// One structured review per `review_submitted`.
pub(crate) const REVIEW_FILE: &str = "review.md";
/// Accepted decisions with stable ids.
pub(crate) const DECISIONS_FILE: &str = "decisions.md";

/// Advisory lock file taken around every append (docs/collab-protocol.md#concurrency).
pub(crate) const LOCK_FILE: &str = ".acp-collab.lock";

/// Required H2 headings of `conclusion.md`.
pub(crate) const CONCLUSION_HEADINGS: [&str; 9] = [
    "Decision Outcome",
    "Rationale",
    "Deliverable Receipt",
    "Accepted Decisions Summary",
    "Readiness Result",
    "Assumptions",
    "Deferred Follow-ups",
    "Implementation Blockers",
    "Next Action",
];

/// Outcome labels recognised in `conclusion.md`; only the first three can be completed.
pub(crate) const OUTCOMES: [&str; 4] = ["proceed", "do_not_proceed", "defer", "blocked"];

/// Deliverable types accepted by `--primary-deliverable-type`, sorted.
pub const DELIVERABLE_TYPES: [&str; 7] = [
    "adr",
    "custom",
    "decision-memo",
    "design-spec",
    "implementation-plan",
    "review-report",
    "test-plan",
];

/// A built-in deliverable type: its title, default file and required sections
/// (`custom` has no default file and takes its sections from the checklist).
struct DeliverableSpec {
    kind: &'static str,
    title: &'static str,
    file: Option<&'static str>,
    sections: &'static [&'static str],
}

/// One entry per deliverable type (docs/collab-protocol.md#deliverables).
const DELIVERABLE_SPECS: [DeliverableSpec; 7] = [
    DeliverableSpec {
        kind: "adr",
        title: "Architecture Decision Record",
        file: Some("adr.md"),
        sections: &[
            "Status",
            "Context",
            "Decision",
            "Alternatives Considered",
            "Consequences",
            "Follow-ups",
        ],
    },
    DeliverableSpec {
        kind: "design-spec",
        title: "Design Spec",
        file: Some("design-spec.md"),
        sections: &[
            "Problem",
            "Goals",
            "Non-goals",
            "Proposed Design",
            "Interfaces / Contracts",
            "Failure Modes",
            "Validation Plan",
            "Open Questions",
        ],
    },
    DeliverableSpec {
        kind: "implementation-plan",
        title: "Implementation Plan",
        file: Some("implementation-plan.md"),
        sections: &[
            "Scope",
            "Phases",
            "Tasks",
            "Dependencies",
            "Rollout / Migration",
            "Tests",
            "Risks",
            "Exit Criteria",
        ],
    },
    DeliverableSpec {
        kind: "decision-memo",
        title: "Decision Memo",
        file: Some("decision-memo.md"),
        sections: &[
            "Question",
            "Recommendation",
            "Options",
            "Tradeoffs",
            "Decision",
            "Next Action",
        ],
    },
    DeliverableSpec {
        kind: "review-report",
        title: "Review Report",
        file: Some("review-report.md"),
        sections: &[
            "Scope",
            "Findings",
            "Risks",
            "Required Changes",
            "Open Questions",
            "Recommendation",
        ],
    },
    DeliverableSpec {
        kind: "test-plan",
        title: "Test Plan",
        file: Some("test-plan.md"),
        sections: &[
            "Scope",
            "Test Matrix",
            "Fixtures",
            "Automation",
            "Manual Tests",
            "Exit Criteria",
        ],
    },
    DeliverableSpec {
        kind: "custom",
        title: "Custom Deliverable",
        file: None,
        sections: &[],
    },
];

/// Title, default file and required sections of a deliverable type; `None` for an unknown
/// type.
pub fn deliverable_spec(
    kind: &str,
) -> Option<(&'static str, Option<&'static str>, &'static [&'static str])> {
    DELIVERABLE_SPECS
        .iter()
        .find(|spec| spec.kind == kind)
        .map(|spec| (spec.title, spec.file, spec.sections))
}

/// The action label used in "reserved for" errors (docs/collab-protocol.md#replay).
pub(crate) fn action_label(event: &str) -> &'static str {
    match event {
        "deliverable_drafted" => "deliverable draft",
        "deliverable_revised" => "deliverable revision",
        "deliverable_frozen" => "deliverable freeze",
        "proposal_submitted" => "proposal submission",
        "review_submitted" => "review submission",
        "proposal_revised" => "proposal revision",
        "decision_proposed" => "decision proposal",
        "question_classified" => "question classification",
        "decision_accepted" => "decision acceptance",
        "readiness_passed" => "readiness pass",
        "completed" => "completion",
        _ => "event",
    }
}

/// True for a 64-character lowercase hexadecimal SHA-256 digest.
pub(crate) fn is_sha256(value: &str) -> bool {
    use acp_registry_core::fs::digest::{is_sha256_hex, HexCase};
    is_sha256_hex(value, HexCase::Lower)
}

// The action lines of `next`, word for word as the published scripts print them (guide reads
// them to plan the follow-up commands, so they belong to the protocol's tables, not to `next`).

/// `drafting`, for a listed participant.
pub const DRAFT: &str = "draft the primary deliverable, append deliverable_drafted, update proposal.md, then append proposal_submitted.";
/// `drafting`, for the others.
pub const WAIT_PROPOSAL: &str = "wait for the proposal owner to submit the proposal.";
/// `reviewing`, for a listed reviewer who did not send the proposal.
pub const REVIEW: &str = "review proposal.md and the primary deliverable, update review.md with Review Scope, then append review_submitted.";
/// `reviewing`, for the owner.
pub const OWNER_WAIT_REVIEW: &str = "wait for the listed reviewer(s); do not edit proposal.md or deliverables while reviewing unless blocking the collaboration.";
/// `reviewing`, for the others.
pub const WAIT_REVIEW: &str =
    "wait for the listed reviewer(s) to submit review_submitted or blocked.";
/// `revising`, for a listed participant after someone else's review.
pub const REVISE: &str = "revise proposal.md and deliverables as needed, append deliverable_revised if the deliverable changed, then append proposal_revised.";
/// `revising`, for the others.
pub const WAIT_REVISE: &str = "wait for the proposal owner to revise.";
/// `decision_review` with unclassified input, for the owner.
pub const CLASSIFY: &str = "classify the open questions in readiness.md, then append question_classified before anyone appends decision_accepted.";
/// `decision_review` with unclassified input, for the others.
pub const WAIT_CLASSIFY: &str = "wait for the proposal owner to classify readiness.md questions and append question_classified.";
/// `decision_review`, for a listed participant who has not accepted yet.
pub const ACCEPT: &str =
    "review decisions.md and append decision_accepted only if decisions are explicit.";
/// `decision_review`, for the others.
pub const WAIT_ACCEPT: &str = "wait for remaining participants to accept decisions.";
/// `readiness_check`, for everyone but the owner.
pub const WAIT_OWNER_READINESS: &str = "wait for the proposal owner to freeze the primary deliverable, pass readiness and complete the collaboration.";
/// `readiness_check`: open readiness items remain.
pub const CLEAR_READINESS: &str =
    "classify readiness.md questions and clear blockers before readiness_passed.";
/// `readiness_check`: `Ready to implement` is not ticked.
pub const CHECKLIST: &str = "complete the final design checklist in readiness.md.";
/// `readiness_check`: the primary deliverable is not frozen yet.
pub const FREEZE: &str = "freeze the primary deliverable with deliverable_frozen, run validate_collaboration.py, then append readiness_passed.";
/// `readiness_check`: frozen, `readiness_passed` not appended yet.
pub const PASS_READINESS: &str = "run validate_collaboration.py, then append readiness_passed.";
/// `readiness_check`: passed, but `conclusion.md` is not complete.
pub const WRITE_CONCLUSION: &str = "write conclusion.md with the final outcome, deliverable receipt, readiness result, and next action.";
/// `readiness_check`: everything is ready for `completed`.
pub const COMPLETE: &str =
    "run validate_collaboration.py, then append completed with doc=conclusion.md.";
/// `completed`.
pub const STOP: &str = "stop; collaboration is complete.";
/// `blocked`.
pub const RESOLVE_BLOCKER: &str = "resolve the blocker or start a new collaboration round.";
/// An unknown phase (exit 1).
pub const INVALID_PHASE: &str = "run validate_collaboration.py; current phase is invalid.";
