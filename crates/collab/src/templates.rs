//! The files `init` writes (`docs/collab-protocol.md#markdown-templates`). Headings and markers are
//! exact; the prose between them is this project's wording.

/// Inputs shared by the templates.
pub(crate) struct TemplateInput<'a> {
    /// The trimmed objective.
    pub objective: &'a str,
    /// The participant ids; the first is the owner.
    pub participants: &'a [String],
    /// The objective gates.
    pub objective_gates: &'a [String],
    /// The generated deliverable gates.
    pub generated_gates: &'a [String],
    /// The primary deliverable type.
    pub kind: &'a str,
    /// The primary deliverable's ref.
    pub primary_ref: &'a str,
    /// The deliverables directory.
    pub dir: &'a str,
}

/// The six generated completion gates, in order.
pub(crate) fn generated_gates(kind: &str, primary_ref: &str) -> Vec<String> {
    vec![
        format!("Primary deliverable exists: `{primary_ref}`"),
        format!("Primary deliverable has required `{kind}` sections"),
        "Every accepted decision has `Reflected in`".to_owned(),
        "Every accepted decision is reflected in the primary deliverable".to_owned(),
        "Primary deliverable status is `Frozen`".to_owned(),
        // spec::SNAPSHOT_GATE (templates imports nothing; a test keeps the two equal).
        "Primary deliverable SHA-256 snapshot recorded".to_owned(),
    ]
}

/// The primary deliverable skeleton, byte-exact (docs/collab-protocol.md#deliverables).
pub(crate) fn deliverable(title: &str, kind: &str, sections: &[String]) -> String {
    let body: Vec<String> = sections.iter().map(|s| format!("## {s}\n\n")).collect();
    format!(
        "# {title}\n\nDeliverable type: `{kind}`\nStatus: Draft\n\n{}\n",
        body.join("\n\n")
    )
}

/// One Markdown list line per item: `- «before»item«after»`.
fn push_items(s: &mut String, before: &str, items: &[String], after: &str) {
    for item in items {
        s.push_str(&format!("- {before}{item}{after}\n"));
    }
}

/// `README.md`: what the folder is and what each file is for.
pub(crate) fn readme(t: &TemplateInput) -> String {
    let mut s = String::from("# ACP Collaboration Workspace\n\nObjective:\n");
    s.push_str(t.objective);
    s.push_str("\n\nParticipants:\n");
    push_items(&mut s, "`", t.participants, "`");
    s.push_str("\nObjective Gates:\n");
    push_items(&mut s, "", t.objective_gates, "");
    s.push_str(&format!(
        "\nPrimary Deliverable:\n- Type: `{}`\n- Path: `{}`\n\n",
        t.kind, t.primary_ref
    ));
    s.push_str(&format!(
        "Protocol Files:\n\
- `protocol.json`: the collaboration's configuration and current state; commands rewrite it.\n\
- `events.jsonl`: the append-only event log; add to it only with `acp-collab append`.\n\
- `proposal.md`: the owner's current proposal.\n\
- `review.md`: one structured review per `review_submitted` event.\n\
- `decisions.md`: accepted decisions with stable ids.\n\
- `readiness.md`: question classification, gates and the readiness checklist.\n\
- `conclusion.md`: the final receipt, written before `completed`.\n\
- `{}/`: where the deliverables live.\n",
        t.dir
    ));
    s
}

/// `proposal.md`.
pub(crate) fn proposal(t: &TemplateInput) -> String {
    format!(
        "# Proposal\n\n## Purpose\n\n{}\n\n## Current Proposal\n\nThe initial proposal is pending; the owner writes it here before proposal_submitted.\n\n## Deliverable Draft\n\n- Primary: `{}`\n\n## Review Focus\n\n- Proposal coherence.\n- Primary deliverable completeness.\n- Accepted decision traceability.\n- Implementation readiness.\n",
        t.objective, t.primary_ref
    )
}

/// `review.md`, with the heading rule and a review template.
pub(crate) fn review(t: &TemplateInput) -> String {
    format!(
        "# Review\n\nAppend one structured review below for every review_submitted event.\n\nHeading rule: `## <UTC timestamp> - <participant_id> - seq <event seq>` where the seq is the one the review_submitted event will get.\n\nTemplate:\n\n## <timestamp> - <participant_id> - seq <event seq>\n\nContext:\n- Read `proposal.md` after event seq `<seq>`.\n- Reviewed primary deliverable: `{}`\n- Reviewed supporting deliverables: none.\n\nReview Scope:\n- Proposal coherence\n- Primary deliverable completeness\n- Accepted decision traceability\n- Implementation readiness\n\nPosition:\n- ...\nConcerns:\n- ...\nRequired Changes:\n- ...\nQuestions:\n- ...\n",
        t.primary_ref
    )
}

/// `decisions.md`, with the first decision: the primary deliverable.
pub(crate) fn decisions(t: &TemplateInput) -> String {
    format!(
        "# Decisions\n\nRecord only accepted decisions here, with stable ids, each traced to a declared deliverable.\n\n## Accepted Decisions\n\n### D1. Initial deliverable declaration\n- Decision: The primary deliverable for this collaboration is `{r}`.\n- Rationale: Every collaboration produces one declared primary deliverable.\n- Reflected in: `{r}#proposed-design`\n",
        r = t.primary_ref
    )
}

/// `readiness.md`: classification, the gates unticked, the checklist.
pub(crate) fn readiness(t: &TemplateInput) -> String {
    let mut s = String::from(
        "# Readiness\n\nClassify every open question and tick the gates before readiness_passed.\n\n## Open Question Classification\n\n- [unresolved] The initial deliverable review has not been completed.\n\nAllowed statuses:\n- `[resolved]`\n- `[deferred_nonblocking]` with `Reason: ...`\n- `[blocking]`\n\n## Blocking Issues\n\n- None.\n\n## Objective Gates\n\n",
    );
    push_items(&mut s, "[ ] ", t.objective_gates, "");
    s.push_str("\n## Generated Deliverable Gates\n\n");
    push_items(&mut s, "[ ] ", t.generated_gates, "");
    s.push_str(&format!(
        "\n## Deliverable Snapshot\n\n- Primary: `{}`\n- SHA-256:\n\n## Supporting Deliverables\n\n- None.\n\n## Attachments\n\n- None.\n\n## Deferred Follow-ups\n\n- None.\n\n## Implementation Blockers\n\n- None.\n\n## Ready to Implement\n\n- [ ] Ready to implement\n",
        t.primary_ref
    ));
    s
}

/// `conclusion.md`: the nine sections, outcome `[blocked]` until replaced.
pub(crate) fn conclusion(t: &TemplateInput) -> String {
    format!(
        "# Conclusion\n\nThis file is the receipt of the collaboration, not the deliverable itself.\n\n## Decision Outcome\n\n- [blocked] The collaboration is not complete yet.\n\nAllowed final outcomes:\n- `[proceed]` the deliverable is ready to act on.\n- `[do_not_proceed]` the objective should not be pursued.\n- `[defer]` the decision is postponed.\n\n## Rationale\n\nWritten by the proposal owner before completed.\n\n## Deliverable Receipt\n\n- Primary: `{}`\n- Type: `{}`\n- SHA-256:\n- Supporting: none\n- Attachments: none\n\n## Accepted Decisions Summary\n\n- See `decisions.md`.\n\n## Readiness Result\n\n- Objective gates: not passed\n- Generated deliverable gates: not passed\n- Readiness file: `readiness.md`\n\n## Assumptions\n\n- None recorded yet.\n\n## Deferred Follow-ups\n\n- None.\n\n## Implementation Blockers\n\n- None.\n\n## Next Action\n\nFinish the protocol phases, then replace the outcome above.\n",
        t.primary_ref, t.kind
    )
}
