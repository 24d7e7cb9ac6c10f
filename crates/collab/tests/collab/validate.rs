//! `acp-collab validate`: every check (`docs/collab-protocol.md#validation`), each failing and passing,
//! output formats, exit codes, and the differences from the published scripts.

use crate::support::*;
use acp_collab as collab;
use serde_json::json;

fn completed() -> Fx {
    let fx = Fx::new(&["server", "reader"]);
    fx.run_all();
    fx.assert_valid();
    fx
}

fn has(errors: &[String], msg: &str) -> bool {
    errors.iter().any(|e| e == msg)
}

#[track_caller]
fn assert_has(errors: &[String], msg: &str) {
    assert!(has(errors, msg), "missing {msg:?} in {errors:#?}");
}

/// The binary's `validate --folder <fx>`.
fn validate_bin(fx: &Fx) -> std::process::Output {
    bin()
        .args(["validate", "--folder", &fx.folder_str()])
        .output()
        .unwrap()
}

#[test]
fn text_output_and_exit_codes_for_pass_warn_and_fail() {
    let fx = Fx::new(&["server", "reader"]);
    let out = validate_bin(&fx);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "ACP validation passed\n".into())
    );
    fx.replace("readiness.md", "- [unresolved]", "- [deferred_nonblocking]");
    let out = validate_bin(&fx);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "ACP validation passed with warnings\nWARNING: deferred_nonblocking readiness items should include a reason\n"
    );
    std::fs::write(fx.path("state.log"), "").unwrap();
    let out = validate_bin(&fx);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stdout(&out),
        "ACP validation failed\nERROR: state.log is not part of the protocol; remove it and use events.jsonl/readiness.md instead\nWARNING: deferred_nonblocking readiness items should include a reason\n"
    );
}

#[test]
fn json_output_carries_status_exit_code_errors_and_warnings() {
    let fx = Fx::new(&["server", "reader"]);
    let run = || {
        bin()
            .args(["validate", "--folder", &fx.folder_str(), "--format", "json"])
            .output()
            .unwrap()
    };
    let out = run();
    assert_eq!(
        stdout(&out),
        "{\"version\":1,\"status\":\"passed\",\"exit_code\":0,\"errors\":[],\"warnings\":[]}\n"
    );
    std::fs::write(fx.path("opinions.md"), "").unwrap();
    fx.replace("readiness.md", "- [unresolved]", "- [deferred_nonblocking]");
    let out = run();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["status"], "failed");
    assert_eq!(v["exit_code"], 2);
    assert_eq!(v["errors"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["warnings"][0],
        "deferred_nonblocking readiness items should include a reason"
    );
}

#[test]
fn missing_and_forbidden_files() {
    let fx = Fx::new(&["server", "reader"]);
    for name in ["proposal.md", "review.md", "conclusion.md"] {
        std::fs::remove_file(fx.path(name)).unwrap();
    }
    for name in ["discussion.md", "opinions.md"] {
        std::fs::write(fx.path(name), "").unwrap();
    }
    assert_eq!(
        fx.errors(),
        vec![
            "missing proposal.md",
            "missing review.md",
            "missing conclusion.md",
            "discussion.md is not part of the protocol; remove it and use events.jsonl/readiness.md instead",
            "opinions.md is not part of the protocol; remove it and use events.jsonl/readiness.md instead",
        ]
    );
    std::fs::remove_file(fx.path("protocol.json")).unwrap();
    let errors = fx.errors();
    assert_eq!(
        errors[0],
        format!("missing protocol.json in {}", fx.folder_str())
    );
    assert_eq!(errors[1], "missing protocol.json");
    fx.write("protocol.json", "{");
    let errors = fx.errors();
    assert!(
        errors[0].starts_with("invalid protocol.json: "),
        "{errors:?}"
    );
    assert_eq!(errors.len(), 6);
}

#[test]
fn a_nonexistent_folder_is_one_error() {
    let tmp = tempfile::tempdir().unwrap();
    let nope = tmp.path().join("nope");
    let report = collab::validate(nope.to_str().unwrap()).unwrap();
    assert_eq!(
        report.errors,
        [format!(
            "collaboration folder {} does not exist; pass the folder init created",
            nope.display()
        )]
    );
    assert_eq!(report.exit_code(), 2);
    // An existing folder without the files still names each one.
    std::fs::create_dir(&nope).unwrap();
    let report = collab::validate(nope.to_str().unwrap()).unwrap();
    assert_eq!(report.errors.len(), 8);
    assert_eq!(report.errors[7], "missing conclusion.md");
}

#[test]
fn top_level_schema_checks() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit_protocol(|p| {
        p["protocol"] = json!("ACP");
        p["schemaVersion"] = json!("2");
        p["currentPhase"] = json!("done");
        p["objective"] = json!("");
        p["participants"] = json!([1, {"name": "x"}]);
        p["completionGates"] = json!([{"source": "objective"}, "plain", {"source": "generated", "text": "see state.log and opinions.md"}]);
        let m = p.as_object_mut().unwrap();
        m.remove("waitingFor");
        m.remove("proposalOwner");
    });
    let errors = fx.errors();
    assert_eq!(
        errors[..10],
        [
            "protocol.json protocol must be 'acp'",
            "protocol.json schemaVersion must be 2",
            "currentPhase must be one of ['blocked', 'completed', 'decision_review', 'drafting', 'readiness_check', 'reviewing', 'revising']",
            "protocol.json objective must not be blank",
            "protocol.json participants must not be empty",
            "completionGates[1] must include source and text",
            "completionGates[2] must include source and text",
            "completion gate must not reference obsolete file state.log",
            "completion gate must not reference obsolete file opinions.md",
            "protocol.json waitingFor must be present",
        ]
    );
    assert_eq!(errors[10], "protocol.json proposalOwner must be present");
}

#[test]
fn top_level_schema_accepts_what_the_scripts_accept() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit_protocol(|p| {
        p["schemaVersion"] = json!(2.0);
        p["objective"] = json!("   ");
        p["participants"] = json!(["server", {"id": "reader"}]);
    });
    fx.assert_valid();
    fx.edit_protocol(|p| p["completionGates"] = json!([]));
    assert_has(
        &fx.errors(),
        "protocol.json completionGates must not be empty",
    );
}

#[test]
fn deliverables_schema_checks() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit_protocol(|p| p["deliverables"] = json!({}));
    assert_eq!(
        fx.errors(),
        vec!["protocol.json deliverables.primary is required"]
    );
    fx.edit_protocol(|p| {
        p["deliverables"] = json!({
            "mode": "cloud", "dir": "../d", "primary": {"type": "memo", "file": "x.txt"},
            "supporting": [
                "dropped",
                {"type": "nope", "file": "s.md"},
                {"type": "adr", "file": "s.txt"},
                {"type": "adr", "file": "a/../s.md"},
                {"type": "adr", "file": "s.md"},
                {"type": "adr", "file": "x.txt"}
            ],
            "attachments": [1, {"file": ""}, {"file": "/etc/passwd"}, {"file": "data.bin"}]
        });
    });
    assert_eq!(
        fx.errors(),
        vec![
            "deliverables.mode must be internal or external",
            "deliverables.dir must be relative and must not contain ..",
            "primary deliverable type is invalid",
            "primary deliverable file must be Markdown",
            "supporting deliverable type is invalid",
            "supporting deliverable file must be Markdown",
            "supporting deliverable file must be relative and must not contain ..",
            "supporting deliverable files must be unique",
            "supporting deliverable file must be Markdown",
            "attachments must be objects",
            "attachment file is required",
            "attachment file must be relative and must not contain ..",
        ]
    );
    fx.edit_protocol(|p| {
        p["repoRoot"] = json!(".");
        p["deliverables"] = json!({
            "mode": "internal", "dir": " ", "primary": {"type": "custom", "file": "/x.md", "checklist": " "},
            "supporting": [{"type": "adr", "file": "/x.md"}]
        });
    });
    let errors = fx.errors();
    assert_eq!(
        errors[..5],
        [
            "repoRoot is not allowed for internal deliverables",
            "deliverables.dir is required",
            "primary deliverable file must be relative and must not contain ..",
            "custom primary deliverable requires checklist",
            "supporting deliverable file must be relative and must not contain ..",
        ]
    );
    fx.edit_protocol(|p| {
        p.as_object_mut().unwrap().remove("repoRoot");
        p["deliverables"]["dir"] = json!("deliverables");
        p["deliverables"]["primary"] = json!("design-spec.md");
        p["deliverables"]["supporting"] = json!([]);
    });
    assert_eq!(
        fx.errors(),
        vec!["protocol.json deliverables.primary is required"]
    );
}

#[test]
fn supporting_file_may_not_reuse_the_primary_file() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit_protocol(|p| {
        p["deliverables"]["supporting"] = json!([{"type": "adr", "file": "design-spec.md"}]);
    });
    assert_eq!(
        fx.errors(),
        vec!["supporting deliverable must not reuse the primary deliverable file"]
    );
}

fn external(repo_root: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().canonicalize().unwrap().join("repo/run");
    let mut opts = init_options(&folder, &["a", "b"]);
    opts.deliverables_mode = "external".into();
    opts.repo_root = Some(repo_root.into());
    collab::init(&opts).unwrap();
    (tmp, folder)
}

fn validate_errors(folder: &std::path::Path) -> Vec<String> {
    collab::validate(folder.to_str().unwrap()).unwrap().errors
}

#[test]
fn external_mode_repo_root_checks() {
    let (_t, folder) = external("..");
    assert!(validate_errors(&folder).is_empty());
    let (_t, folder) = external(".");
    assert!(validate_errors(&folder).is_empty());
    let (_t, folder) = external("../sibling");
    assert_eq!(
        validate_errors(&folder),
        vec!["collaboration folder must be inside repoRoot"]
    );
    let (_t, folder) = external("..");
    let edit = |root: serde_json::Value| {
        let path = folder.join("protocol.json");
        let mut p: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        p["repoRoot"] = root;
        std::fs::write(&path, p.to_string()).unwrap();
    };
    edit(json!("missing-dir"));
    assert_has(
        &validate_errors(&folder),
        "repoRoot must resolve to an existing directory",
    );
    edit(json!("/abs"));
    assert_has(&validate_errors(&folder), "repoRoot must be relative");
    edit(json!(" "));
    assert_has(
        &validate_errors(&folder),
        "repoRoot is required for external deliverables",
    );
}

#[test]
fn external_mode_event_docs_use_the_external_ref() {
    let (_t, folder) = external("..");
    let append = |doc: &str| {
        collab::append(&collab::AppendOptions {
            folder: folder.display().to_string(),
            participant: "a".into(),
            event: "deliverable_drafted".into(),
            summary: "s".into(),
            doc: Some(doc.into()),
            reply_to: Some(1),
            role: Some("primary".into()),
            sha256: None,
        })
    };
    assert!(append("deliverables/design-spec.md").is_err());
    assert_eq!(append("external:design-spec.md").unwrap().seq, 2);
    assert!(validate_errors(&folder).is_empty());
}

#[test]
fn event_log_read_errors_and_the_partial_line_warning() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit("events.jsonl", |t| format!("{t}\nplain text\n[1,2]\n  \n"));
    let errors = fx.errors();
    assert!(
        errors[0].starts_with("events.jsonl line 3: invalid JSON: "),
        "{errors:?}"
    );
    assert_eq!(errors[1], "events.jsonl line 4: event must be an object");
    assert_eq!(
        errors.len(),
        2,
        "bad lines are skipped, so no seq errors: {errors:?}"
    );

    let fx = Fx::new(&["server", "reader"]);
    fx.edit("events.jsonl", |t| format!("{t}{{\"seq\":2,\"fro"));
    let report = fx.validate();
    assert_eq!(
        report.exit_code(),
        1,
        "a partial last line is only a warning"
    );
    assert_eq!(
        report.warnings,
        vec!["events.jsonl line 2 is an incomplete last line (no newline, not valid JSON) and was ignored; remove it or restore the rest of the line"]
    );
}

fn replace_line(fx: &Fx, seq: usize, f: impl FnOnce(&mut serde_json::Value)) {
    fx.edit("events.jsonl", |t| {
        let mut lines: Vec<String> = t.lines().map(str::to_owned).collect();
        let mut v: serde_json::Value = serde_json::from_str(&lines[seq - 1]).unwrap();
        f(&mut v);
        lines[seq - 1] = v.to_string();
        lines.join("\n") + "\n"
    });
}

#[test]
fn event_shape_checks() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.ok("server", "blocked", &[]);
    replace_line(&fx, 2, |v| {
        let m = v.as_object_mut().unwrap();
        m.remove("summary");
        m.remove("role");
        m.insert("doc".into(), json!(3));
        m.insert("event".into(), json!("deliverable_frozen"));
        m.insert("at".into(), json!("2026-11-30T00:00:00"));
    });
    replace_line(&fx, 3, |v| {
        v["seq"] = json!("4");
        v["event"] = json!("nope");
        v["reply_to"] = json!(9);
        v["at"] = json!("2000-01-01T00:00:00+05:00");
    });
    fx.edit("events.jsonl", |t| {
        format!("{t}{{\"seq\":4,\"from\":\"server\",\"event\":\"deliverable_drafted\",\"at\":\"1999-01-01T00:00:00Z\",\"summary\":\"\"}}\n")
    });
    let errors = fx.errors();
    for msg in [
        "seq 2: missing required field summary",
        "seq 2: deliverable events require role",
        "seq 2: deliverable events require doc",
        "seq 2: deliverable_frozen requires sha256",
        "seq 2: at must be an ISO-8601 timestamp",
        "events.jsonl: expected seq 3, found 4",
        "seq 4: unknown event 'nope'",
        "seq 4: reply_to must point to an earlier event",
        "seq 4: reply_to is required after initialized",
        "seq 4: at must not be earlier than the previous event",
    ] {
        assert_has(&errors, msg);
    }
    assert!(
        !errors
            .iter()
            .any(|e| e.contains("seq 4: at must be an ISO")),
        "offsets are accepted"
    );
}

#[test]
fn a_string_seq_prints_plainly_and_fractional_utc_times_pass() {
    let fx = Fx::new(&["server", "reader"]);
    fx.ok("server", "blocked", &[]);
    replace_line(&fx, 2, |v| v["at"] = json!("2999-01-01T00:00:00.250Z"));
    fx.assert_valid();
    replace_line(&fx, 2, |v| v["seq"] = json!("2"));
    assert_has(&fx.errors(), "events.jsonl: expected seq 2, found 2");
}

#[test]
fn review_heading_checks() {
    let fx = Fx::new(&["server", "amy", "zed"]);
    fx.draft();
    fx.submit();
    fx.review("amy");
    fx.ok("zed", "review_submitted", &[]);
    assert_eq!(
        fx.validate().errors,
        vec!["seq 5: review_submitted requires matching review.md heading"]
    );
    fx.edit("review.md", |t| {
        format!("{t}\n## t - amy - seq 5   \n##   t - zed - seq 3\n## t - zed - seq 99\n")
    });
    assert_eq!(
        fx.errors(),
        vec![
            "review.md heading seq 5: participant 'amy' does not match event from 'zed'",
            "review.md heading seq 3: matching event is proposal_submitted, not review_submitted",
            "review.md heading seq 99: no matching event",
        ]
    );
    fx.edit("review.md", |_| {
        "# Review\n## t - amy - seq 4\n## t - zed - seq 5\n".into()
    });
    assert_eq!(
        fx.errors(),
        vec![
            "review.md must declare Reviewed primary deliverable",
            "review.md must declare Review Scope",
            "review.md Review Scope must include Primary deliverable completeness",
            "review.md must reference the primary deliverable",
        ]
    );
}

#[test]
fn a_frozen_deliverable_edited_afterwards_fails_forever() {
    let fx = completed();
    fx.edit(REF, |t| format!("{t}x"));
    assert_eq!(
        fx.errors(),
        vec!["seq 9: deliverable_frozen sha256 does not match current file"]
    );
    fx.edit(REF, |t| {
        t.replace("Status: Frozen", "Status: In Review")
            .replace("## Goals\n\nWritten.", "## Goals\n\n")
    });
    assert_eq!(
        fx.errors(),
        vec![
            "seq 9: deliverable_frozen sha256 does not match current file",
            "primary deliverable status must be Frozen",
            "primary deliverable section must not be empty when frozen: Goals",
        ]
    );
    std::fs::remove_file(fx.path(REF)).unwrap();
    assert_eq!(
        fx.errors(),
        vec![
            "seq 9: deliverable_frozen doc does not exist",
            "primary deliverable missing: deliverables/design-spec.md",
        ]
    );
}

#[test]
fn a_frozen_draft_with_empty_sections_is_caught_only_by_the_validator() {
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    let sha = fx.deliverable_sha();
    fx.ok(
        "server",
        "deliverable_frozen",
        &[("role", "primary"), ("doc", REF), ("sha256", &sha)],
    );
    let errors = fx.errors();
    assert_eq!(errors[0], "primary deliverable status must be Frozen");
    assert_eq!(errors.len(), 9);
    assert_eq!(
        errors[8],
        "primary deliverable section must not be empty when frozen: Open Questions"
    );
}

#[test]
fn deliverable_content_checks_without_freeze() {
    let fx = Fx::new(&["server", "reader"]);
    fx.write(REF, "# X\nStatus:Draft\n## Problem\n### Goals\n");
    let errors = fx.errors();
    assert_eq!(
        errors[0],
        "primary deliverable missing required section: Goals"
    );
    assert_eq!(errors.len(), 7);
    fx.write(REF, "# X\nStatus: draft\n");
    assert_eq!(
        fx.errors()[0],
        "primary deliverable must include Status: Draft, In Review, or Frozen"
    );
}

#[test]
fn supporting_deliverable_checks() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit_protocol(|p| {
        p["deliverables"]["supporting"] = json!([
            {"type": "test-plan", "file": "tp.md", "frozen": true},
            {"type": "custom", "file": "c.md"},
            {"type": "adr", "file": "gone.md"}
        ]);
    });
    fx.write(
        "deliverables/tp.md",
        "Status: Draft\n## Scope\n\n## Test Matrix\nrows\n",
    );
    fx.write("deliverables/c.md", "no status\n");
    fx.ok(
        "reader",
        "deliverable_frozen",
        &[
            ("role", "supporting"),
            ("doc", "deliverables/c.md"),
            ("sha256", &acp_test_kit::sha256_hex(b"no status\n")),
        ],
    );
    let errors = fx.errors();
    assert_eq!(
        errors,
        vec![
            "supporting deliverable requires deliverable_frozen: deliverables/tp.md",
            "supporting deliverable has freeze event but is not marked frozen: deliverables/c.md",
            "supporting deliverable deliverables/tp.md status must be Frozen",
            "supporting deliverable deliverables/tp.md section must not be empty when frozen: Scope",
            "supporting deliverable deliverables/tp.md missing required section: Fixtures",
            "supporting deliverable deliverables/tp.md missing required section: Automation",
            "supporting deliverable deliverables/tp.md missing required section: Manual Tests",
            "supporting deliverable deliverables/tp.md missing required section: Exit Criteria",
            "supporting deliverable deliverables/c.md must include Status",
            "supporting deliverable missing: deliverables/gone.md",
        ]
    );
}

#[test]
fn decisions_numbering_and_reflection_checks() {
    let fx = Fx::new(&["server", "reader"]);
    fx.write(
        "decisions.md",
        "# Decisions\n### D1. First\n- Decision: a\n- Reflected in: deliverables/design-spec.md\n\
### D3. Gap\n- Decision: b\n- Reflected in: elsewhere.md\n\
### D3. Again\nnothing\n\
### Free form\n- Decision: c\n- Reflected in: deliverables/design-spec.md\n\
### D01. Padded\n- Decision: d\n- Reflected in: deliverables/design-spec.md\n#### D9. not a heading\n",
    );
    assert_eq!(
        fx.errors(),
        vec![
            "accepted decision ids must be sequential",
            "accepted decision D3 Reflected in must point to declared deliverable",
            "duplicate accepted decision id D3",
            "accepted decision D3 requires Decision",
            "accepted decision D3 requires Reflected in",
            "accepted decision headings must use D<number>",
            "accepted decision ids must be sequential",
        ]
    );
    fx.write("decisions.md", "");
    fx.assert_valid();
    std::fs::remove_file(fx.path("decisions.md")).unwrap();
    assert_eq!(
        fx.errors(),
        vec!["missing decisions.md", "missing decisions.md"]
    );
}

#[test]
fn attachments_must_exist() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit_protocol(|p| {
        p["deliverables"]["attachments"] = json!([{"file": "data.bin"}, {"file": "here.bin"}]);
    });
    fx.write("deliverables/here.bin", "x");
    assert_eq!(fx.errors(), vec!["attachment missing: data.bin"]);
}

#[test]
fn replay_and_stored_state_checks() {
    let fx = completed();
    // Delete event 5 (proposal_revised).
    fx.edit("events.jsonl", |t| {
        t.lines()
            .enumerate()
            .filter(|(i, _)| *i != 4)
            .flat_map(|(_, l)| [l, "\n"])
            .collect()
    });
    let errors = fx.errors();
    assert_eq!(errors[0], "events.jsonl: expected seq 5, found 6");
    assert_has(&errors, "events.jsonl: expected seq 10, found 11");
    assert_has(&errors, "seq 6: reply_to must point to an earlier event");
    assert_has(
        &errors,
        "seq 6: question_classified is not allowed from phase revising",
    );

    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.submit();
    fx.edit_protocol(|p| {
        p["currentPhase"] = json!("drafting");
        p["proposalOwner"] = json!("reader");
        p["waitingFor"] = json!(["server"]);
    });
    assert_eq!(
        fx.errors(),
        vec![
            "protocol.json currentPhase is drafting, expected reviewing",
            "protocol.json proposalOwner is 'reader', expected 'server'",
            "protocol.json waitingFor is ['server'], expected ['reader']",
        ]
    );
    fx.write("events.jsonl", "");
    assert_eq!(
        fx.errors(),
        vec!["protocol.json waitingFor is ['server'], expected []"]
    );
}

#[test]
fn readiness_rules_after_acceptance_and_readiness_passed() {
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    fx.replace(
        "readiness.md",
        "- [resolved]",
        "- [blocking] b\n- [resolved] TBD\n- [deferred_nonblocking] d\n- [resolved]",
    );
    assert_eq!(
        fx.errors(),
        vec![
            "blocking readiness items must be cleared before decision_accepted",
            "unresolved readiness questions must be classified before decision_accepted",
            "deferred_nonblocking readiness items require a reason before decision_accepted",
        ],
        "reported once, not per past acceptance"
    );
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    fx.freeze();
    fx.pass_readiness();
    fx.edit("readiness.md", |t| {
        t.replace("- [x] Ready to implement", "- [ ] Ready to implement")
            .replace(
                "- [resolved]",
                "- [deferred_nonblocking] later\nReason: next line does not count\n- [resolved]",
            )
    });
    assert_eq!(
        fx.errors(),
        vec![
            "deferred_nonblocking readiness items require a reason before decision_accepted",
            "deferred_nonblocking readiness items require a reason",
            "readiness.md must check 'Ready to implement' before readiness_passed or completed",
        ]
    );
    fx.edit("readiness.md", |t| {
        t.replace(
            "- [ ] Ready to implement",
            "- [X] Ready to implementation later",
        )
        .replace(
            "- [deferred_nonblocking] later",
            "- [deferred_nonblocking] later, REASON: scope",
        )
    });
    fx.assert_valid();
}

#[test]
fn readiness_passed_without_a_freeze_is_reported() {
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    fx.freeze();
    fx.pass_readiness();
    // Rewrite the freeze into a supporting-role event so no primary freeze remains.
    replace_line(&fx, 9, |v| v["event"] = json!("deliverable_drafted"));
    let errors = fx.errors();
    assert_has(
        &errors,
        "readiness_passed requires primary deliverable_frozen",
    );
    assert_has(
        &errors,
        "seq 10: readiness_passed requires primary deliverable_frozen",
    );
}

#[test]
fn completion_checks_gates_and_conclusion_variants() {
    const ONE_OUTCOME: &str = "conclusion.md must declare exactly one final outcome";
    const PLACEHOLDERS: &str =
        "conclusion.md must not contain unresolved placeholders before completed";
    const PRIMARY: &str = "conclusion.md must reference the primary deliverable";
    let fx = completed();
    fx.replace("readiness.md", "- [x] Gate A", "- [ ] Gate A");
    assert_eq!(
        fx.errors(),
        vec!["completion gates must be checked before completed: Gate A"]
    );
    fx.tick_all();
    let conclusion = fx.read("conclusion.md");
    let check = |text: String, expected: &[&str]| {
        fx.write("conclusion.md", &text);
        assert_eq!(fx.validate().errors, expected, "{text}");
    };
    check(conclusion.clone(), &[]);
    check(
        conclusion
            .replace("- [proceed] Build it.", "- [proceed]\nBuild it.")
            .replace("- None recorded yet.", "- [defer] later"),
        &[ONE_OUTCOME],
    );
    // (text replaced, its replacement, the errors)
    let cases: [(&str, &str, &[&str]); 7] = [
        (
            "- [proceed] Build it.",
            "- [PROCEED] Build it.",
            &[ONE_OUTCOME],
        ),
        ("- [proceed] Build it.", "- [proceed]\nBuild it.", &[]),
        (
            "- [proceed]",
            "- [blocked]",
            &["conclusion.md outcome cannot be completed while blocked"],
        ),
        ("- None.", "No unresolved items.", &[PLACEHOLDERS]),
        ("- None.", "TODOs and unresolvedness", &[]),
        (
            "## Rationale",
            "### Rationale",
            &["conclusion.md is missing required sections: Rationale"],
        ),
        ("deliverables/design-spec.md", "the spec", &[PRIMARY]),
    ];
    for (from, to, expected) in cases {
        check(conclusion.replace(from, to), expected);
    }
    check(
        "## Decision Outcome\n- [proceed] a\n- [defer] b\nTODO\n## Rationale\n".into(),
        &[
            "conclusion.md is missing required sections: Deliverable Receipt, Accepted Decisions Summary, Readiness Result, Assumptions, Deferred Follow-ups, Implementation Blockers, Next Action",
            ONE_OUTCOME,
            PLACEHOLDERS,
            PRIMARY,
        ],
    );
}

#[test]
fn blocked_after_completed_and_repeated_readiness_pass_still_validate() {
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    fx.freeze();
    fx.pass_readiness();
    fx.ok("server", "readiness_passed", &[]);
    fx.complete();
    fx.ok("reader", "blocked", &[]);
    fx.assert_valid();
}

#[cfg(unix)]
#[test]
fn symlinks_inside_the_folder_are_errors_that_name_the_path() {
    let fx = Fx::new(&["server", "reader"]);
    let outside = fx.tmp.path().join("review-copy.md");
    std::fs::copy(fx.path("review.md"), &outside).unwrap();
    std::fs::remove_file(fx.path("review.md")).unwrap();
    std::os::unix::fs::symlink(&outside, fx.path("review.md")).unwrap();
    let out = bin()
        .args(["validate", "--folder", &fx.folder_str()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "ERROR: {}/review.md is a symlink;",
            fx.folder_str()
        )),
        "{text}"
    );

    let fx = Fx::new(&["server", "reader"]);
    let outside = fx.tmp.path().join("spec.md");
    std::fs::copy(fx.path(REF), &outside).unwrap();
    std::fs::remove_file(fx.path(REF)).unwrap();
    std::os::unix::fs::symlink(&outside, fx.path(REF)).unwrap();
    let errors = fx.errors();
    assert_eq!(errors.len(), 1);
    assert!(errors[0].ends_with("deliverables/design-spec.md is a symlink; symlinks are not allowed inside a collaboration folder or deliverables directory, replace it with a regular file or directory"));
}

#[test]
fn internal_failures_exit_2_with_an_error_line() {
    let fx = Fx::new(&["server", "reader"]);
    std::fs::remove_file(fx.path("readiness.md")).unwrap();
    std::fs::create_dir(fx.path("readiness.md")).unwrap();
    let out = validate_bin(&fx);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: cannot read "),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty());

    let fx = Fx::new(&["server", "reader"]);
    std::fs::write(fx.path("review.md"), b"\xff\xfe").unwrap();
    let out = validate_bin(&fx);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("review.md is not valid UTF-8"));

    fx.write("protocol.json", "[]");
    for args in [
        vec!["validate", "--folder", &fx.folder_str()],
        vec![
            "next",
            "--folder",
            &fx.folder_str(),
            "--participant",
            "server",
        ],
    ] {
        let out = bin().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).starts_with("error: protocol.json must contain a JSON object"));
    }
}

#[test]
fn the_lock_file_is_ignored_and_a_killed_writers_temporary_file_is_a_warning() {
    let fx = completed();
    assert!(fx.path(".acp-collab.lock").exists());
    fx.assert_valid();
    std::fs::write(fx.path(".protocol.json.abc.tmp"), "{").unwrap();
    let report = acp_collab::validate(&fx.folder_str()).unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(
        report.warnings,
        [".protocol.json.abc.tmp is a temporary file left by a writer that was killed; the next append removes it"]
    );
}

#[test]
fn a_temporary_file_is_not_reported_while_an_append_holds_the_lock() {
    let fx = completed();
    std::fs::write(fx.path(".protocol.json.abc.tmp"), "{").unwrap();
    let lock = std::fs::File::open(fx.path(".acp-collab.lock")).unwrap();
    lock.lock().unwrap();
    fx.assert_valid();
}

#[test]
fn deliverable_event_docs_are_checked_against_declared_refs() {
    let fx = completed();
    replace_line(&fx, 2, |v| {
        v["doc"] = json!("./deliverables/design-spec.md");
    });
    replace_line(&fx, 3, |v| {
        v["event"] = json!("deliverable_drafted");
        v["role"] = json!("supporting");
        v["doc"] = json!("notes.md");
    });
    // A second primary freeze of the same file.
    let freeze = fx.read("events.jsonl").lines().nth(8).unwrap().to_owned();
    replace_line(&fx, 10, |v| {
        let f: serde_json::Value = serde_json::from_str(&freeze).unwrap();
        for key in ["event", "doc", "role", "sha256"] {
            v[key] = f[key].clone();
        }
    });
    let errors = fx.errors();
    assert_has(&errors, "seq 2: doc must reference the primary deliverable");
    assert_has(
        &errors,
        "seq 3: doc must reference a declared supporting deliverable",
    );
    assert_has(&errors, "primary deliverable can be frozen only once");
    assert_has(
        &errors,
        "seq 10: primary deliverable can be frozen only once",
    );
}

#[test]
fn readiness_markers_follow_the_published_matching_rules() {
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    // Wrong case, `*` bullets and backticked labels are not markers.
    fx.replace(
        "readiness.md",
        "- [resolved]",
        "- [Blocking] no\n* [blocking] no\n- `[blocking]` no\n- [resolved]",
    );
    fx.assert_valid();
    // No space between `-` and `[` still counts.
    fx.replace("readiness.md", "- [Blocking] no", "-[blocking] yes");
    assert_eq!(
        fx.errors(),
        vec!["blocking readiness items must be cleared before decision_accepted"]
    );
}

#[test]
fn reply_to_must_be_an_integer_seq() {
    let fx = Fx::new(&["server", "reader"]);
    fx.ok("server", "blocked", &[]);
    replace_line(&fx, 2, |v| v["reply_to"] = json!(1.0));
    assert_eq!(
        fx.errors(),
        vec!["seq 2: reply_to must point to an earlier event"]
    );
    replace_line(&fx, 2, |v| v["reply_to"] = json!(null));
    assert_eq!(
        fx.errors(),
        vec!["seq 2: reply_to is required after initialized"]
    );
}

#[test]
fn a_deleted_review_file_reports_headings_and_content() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.submit();
    fx.review("reader");
    std::fs::remove_file(fx.path("review.md")).unwrap();
    assert_eq!(
        fx.errors(),
        vec![
            "missing review.md",
            "seq 4: review_submitted requires matching review.md heading",
            "review.md must declare Reviewed primary deliverable",
            "review.md must declare Review Scope",
            "review.md Review Scope must include Primary deliverable completeness",
            "review.md must reference the primary deliverable",
        ]
    );
}

#[test]
fn a_duplicated_seq_breaks_classification_for_later_acceptances() {
    let fx = completed();
    replace_line(&fx, 6, |v| v["seq"] = json!(5));
    let errors = fx.errors();
    assert_eq!(errors[0], "events.jsonl: expected seq 6, found 5");
    assert_has(&errors, "seq 7: reply_to must point to an earlier event");
    assert_has(
        &errors,
        "seq 7: decision_accepted requires question_classified after the latest proposal or decision",
    );
    assert_has(
        &errors,
        "seq 8: decision_accepted requires question_classified after the latest proposal or decision",
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_deliverables_directory_is_refused() {
    let fx = Fx::new(&["server", "reader"]);
    let outside = fx.tmp.path().join("elsewhere");
    std::fs::rename(fx.path("deliverables"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, fx.path("deliverables")).unwrap();
    let errors = fx.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("/deliverables is a symlink"),
        "{errors:?}"
    );
}

use acp_test_kit::rss;

#[test]
fn a_line_over_the_acp_line_cap_is_refused_by_every_reader_in_bounded_memory() {
    // 60 MiB of tiny values on one line: about 2 GB once decoded.
    let fx = Fx::new(&["server", "reader"]);
    let zeros = "0,".repeat(30 << 20);
    let line = format!(
        "{{\"seq\":2,\"from\":\"server\",\"event\":\"blocked\",\"at\":\"2026-01-01T00:00:00Z\",\"summary\":\"s\",\"reply_to\":1,\"x\":[{zeros}0]}}\n"
    );
    drop(zeros);
    let mut events = std::fs::OpenOptions::new()
        .append(true)
        .open(fx.path("events.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut events, line.as_bytes()).unwrap();
    let expected = format!(
        "events.jsonl line 2 is {} bytes, over the 8 MiB line limit, and was not read",
        line.len() - 1
    );
    drop(line);
    let folder = fx.folder_str();
    let f = folder.as_str();
    let readers: [&[&str]; 5] = [
        &["validate", "--folder", f],
        &["status", "--folder", f],
        &["log", "--folder", f],
        &["next", "--folder", f, "--participant", "reader"],
        &[
            "wait",
            "--folder",
            f,
            "--participant",
            "reader",
            "--timeout",
            "5",
        ],
    ];
    let mut commands: Vec<(&str, std::process::Command)> = readers
        .iter()
        .map(|args| {
            let mut command = bin();
            command.args(*args);
            (args[0], command)
        })
        .collect();
    commands.push((
        "append",
        fx.append()
            .participant("server")
            .kind("blocked")
            .summary("x")
            .reply_to("1")
            .command(),
    ));
    for (name, mut command) in commands {
        let (output, peak) = rss::run_measured(&mut command);
        let text = format!("{}{}", stdout(&output), stderr(&output));
        assert!(
            peak < 300 << 20,
            "{name}: peaked at {} MB, over the 300 MB bound",
            peak >> 20
        );
        assert!(
            text.contains(&expected) && output.status.code() == Some(2),
            "{command:?}: {:?} {text}",
            output.status
        );
    }
}

/// The snapshot line of readiness.md holds the frozen primary deliverable's SHA-256: the
/// freeze writes it, `readiness_passed` and `completed` write it again over an editor's older
/// copy, and `validate` warns about a ticked snapshot gate over an empty line, or a line that
/// is not the frozen SHA-256.
#[test]
fn the_readiness_snapshot_line_holds_the_frozen_sha256() {
    const LINE: &str =
        "the snapshot line of readiness.md (`- SHA-256:` under `## Deliverable Snapshot`)";
    const GATE: &str = "Primary deliverable SHA-256 snapshot recorded";
    let fx = Fx::new(&["server", "reader"]);
    // Ticked before anything is frozen.
    let template = fx.read("readiness.md");
    fx.tick_all();
    let r = fx.validate();
    assert!(
        r.warnings.contains(&format!(
            "readiness.md ticks '{GATE}' but {LINE} is empty and the primary deliverable is not \
             frozen; untick the gate until deliverable_frozen is appended (the append fills the line)"
        )),
        "{}",
        r.render_text()
    );
    fx.write("readiness.md", &template);

    fx.to_readiness_check();
    let before = fx.read("readiness.md");
    assert!(before.contains("- SHA-256:\n"), "{before}");
    fx.freeze();
    let sha = fx.deliverable_sha();
    let line = format!("- SHA-256: `{sha}`\n");
    assert_eq!(
        fx.read("readiness.md"),
        before.replace("- SHA-256:\n", &line)
    );
    // An editor saves its older copy over it: passing readiness fills the line again.
    fx.write("readiness.md", &before);
    fx.pass_readiness();
    assert!(fx.read("readiness.md").contains(&line));
    // Emptied again: a warning that names the SHA-256 to write; completing fills it.
    fx.replace("readiness.md", &line, "- SHA-256:\n");
    let r = fx.validate();
    assert_eq!(
        (r.exit_code(), r.warnings.clone()),
        (
            1,
            vec![format!(
                "readiness.md ticks '{GATE}' but {LINE} is empty; write `{sha}` there, the \
                 sha256 of the primary deliverable_frozen (seq 9)"
            )]
        ),
        "{}",
        r.render_text()
    );
    fx.complete();
    assert!(fx.read("readiness.md").contains(&line));
    fx.assert_valid();
    // Another value is a warning too.
    let other = "0".repeat(64);
    fx.replace("readiness.md", &sha, &other);
    assert_eq!(
        fx.validate().warnings,
        vec![format!(
            "{LINE} holds {other}, not {sha}, the sha256 of the primary deliverable_frozen \
             (seq 9); write `{sha}` there"
        )]
    );
}
