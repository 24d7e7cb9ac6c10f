//! `acp-collab append`: every guard of docs/collab-protocol.md#append in order, the state machine's
//! refusals, readiness and completion gates, and the log-format rules.

use crate::support::*;
use acp_collab::{self as collab, AppendOptions, CollabError};
use serde_json::json;

fn last_line(fx: &Fx) -> serde_json::Value {
    serde_json::from_str(fx.read("events.jsonl").lines().last().unwrap()).unwrap()
}

#[test]
fn protocol_errors_print_error_line_and_exit_2() {
    let fx = Fx::new(&["server", "reader"]);
    let err = refused_stderr(
        &fx.append()
            .alias("append_event")
            .participant("reader")
            .kind("deliverable_drafted")
            .summary("x")
            .reply_to("1")
            .flag("--doc", REF)
            .flag("--role", "primary"),
    );
    // The published line, then whose turn it is and the command that waits for reader's.
    assert_eq!(
        err,
        format!(
            "error: seq 2: deliverable draft is reserved for server; got reader\n  it is \
             server's turn in phase drafting, not yours; to wait for yours run: acp-collab \
             wait --folder {} --participant reader\n",
            fx.folder_str()
        )
    );
    let err = refused_stderr(
        &fx.append()
            .participant("server")
            .kind("blocked")
            .summary("x")
            .reply_to("abc"),
    );
    assert!(
        err.ends_with("acp-collab append: error: argument --reply-to: invalid int value: 'abc'\n")
    );
}

#[test]
fn protocol_json_must_exist_decode_and_be_an_object() {
    let fx = Fx::new(&["server", "reader"]);
    std::fs::remove_file(fx.path("protocol.json")).unwrap();
    assert_eq!(
        fx.refused("server", "blocked", &[]),
        format!("missing protocol.json in {}", fx.folder_str())
    );
    fx.write("protocol.json", "");
    assert!(fx
        .refused("server", "blocked", &[])
        .starts_with("invalid protocol.json: "));
    fx.write("protocol.json", "[]");
    assert!(fx
        .refused("server", "blocked", &[])
        .contains("protocol.json must contain a JSON object"));
    let tmp = tempfile::tempdir().unwrap();
    let gone = tmp.path().join("nope");
    let err = collab::append(&AppendOptions {
        folder: gone.display().to_string(),
        participant: "a".into(),
        event: "blocked".into(),
        ..AppendOptions::default()
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("collaboration folder {} does not exist", gone.display())
    );
}

/// A misspelt `--folder` is "no such folder" with the closest collaboration folder beside it
/// (not "missing protocol.json"); a folder without protocol.json keeps the published line and
/// says it is not a collaboration folder and what to run. Every command that loads the
/// folder says the same.
#[test]
fn a_misspelt_folder_is_named_with_the_closest_collaboration_folder_beside_it() {
    let fx = Fx::new(&["server", "reader"]);
    let parent = fx.folder.parent().unwrap();
    // A folder with a closer name that is no collaboration is not what was meant.
    std::fs::create_dir(parent.join("colab")).unwrap();
    let typo = parent.join("colab-x");
    let typo_s = typo.display().to_string();
    let hint = format!(
        "error: collaboration folder {typo_s} does not exist
  did you mean --folder {}? \
         (the closest collaboration folder beside it)
",
        fx.folder_str()
    );
    let runs: [&[&str]; 4] = [
        &[
            "append",
            "--participant",
            "server",
            "--event",
            "blocked",
            "--summary",
            "s",
            "--reply-to",
            "1",
        ],
        &["next", "--participant", "server"],
        &["status"],
        &["log"],
    ];
    for args in runs {
        let out = bin()
            .arg(args[0])
            .args(["--folder", &typo_s])
            .args(&args[1..])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out), hint, "{args:?}");
    }
    assert!(!typo.exists(), "nothing is created");
    let out = bin()
        .args(["validate", "--folder", &typo_s])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains(&format!(
            "does not exist; pass the folder init created (did you mean {}?)",
            fx.folder_str()
        )),
        "{}",
        stdout(&out)
    );
}

/// A folder without protocol.json keeps the published line and says it is not a collaboration
/// folder and what to run; a missing folder with nothing near it gets the `init` to run.
#[test]
fn a_folder_that_is_no_collaboration_says_so_and_what_to_run() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().canonicalize().unwrap().join("colab");
    std::fs::create_dir(&plain).unwrap();
    let out = bin()
        .args([
            "next",
            "--folder",
            plain.to_str().unwrap(),
            "--participant",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "error: missing protocol.json in {p}\n  {p} is not a collaboration folder (init \
             writes protocol.json there): pass the folder init created, or make this one with: \
             acp-collab init --folder {p} --participant <you> --participant <them> --objective \
             <text> --completion <gate> --primary-deliverable-type <type>\n",
            p = plain.display()
        )
    );

    // With no collaboration folder beside it and no near name: how to create one, the path
    // escaped for the terminal.
    let empty = tempfile::tempdir().unwrap();
    let hostile = empty.path().join("new\x1b[31mcollab");
    let out = bin()
        .args(["status", "--folder", hostile.to_str().unwrap()])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!err.contains('\x1b'), "{err:?}");
    assert!(
        err.contains("does not exist\n  no folder beside it has a close name; create the collaboration with: acp-collab init --folder "),
        "{err}"
    );
}

/// After an append, the command the sender runs next: `next` while it is still its turn,
/// `wait` when it is someone else's, `validate` once the collaboration is over; in the form
/// `append` was run in (the launchers' when they ran it).
#[test]
fn append_prints_the_command_to_run_next() {
    let fx = Fx::new(&["server", "reader"]);
    let f = fx.folder_str();
    let run = |who: &str, event: &str, reply: &str, extra: &[&str]| {
        let append = fx
            .append()
            .participant(who)
            .kind(event)
            .summary("s")
            .reply_to(reply);
        let append = extra.iter().fold(append, |a, x| a.arg(*x));
        let out = append.command().output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(
        run("server", "deliverable_drafted", "1", &["--doc", REF, "--role", "primary"]),
        format!(
            "appended seq 2: deliverable_drafted\nrun: acp-collab next --folder {f} --participant server\n"
        )
    );
    assert_eq!(
        run("server", "proposal_submitted", "2", &[]),
        format!(
            "appended seq 3: proposal_submitted\nrun: acp-collab wait --folder {f} --participant server\n"
        )
    );
    fx.write_review_heading("reader");
    let scripts = fx.tmp.path().join("my scripts");
    let out = fx
        .append()
        .participant("reader")
        .kind("review_submitted")
        .summary("s")
        .reply_to("3")
        .command()
        .env("ACP_COLLAB_SCRIPTS", &scripts)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&out),
        format!(
            "appended seq 4: review_submitted\nrun: python3 '{}/wait_for_turn.py' --folder {f} --participant reader\n",
            scripts.display()
        )
    );
    assert_eq!(
        run("reader", "blocked", "4", &[]),
        format!("appended seq 5: blocked\nrun: acp-collab validate --folder {f}\n")
    );
}

#[test]
fn unknown_events_and_unlisted_participants_are_refused() {
    let fx = Fx::new(&["server", "reader"]);
    assert_eq!(fx.refused("server", "nope", &[]), "unknown event 'nope'");
    assert_eq!(
        fx.refused("ghost", "blocked", &[]),
        "participant 'ghost' is not listed in protocol.json"
    );
}

#[test]
fn event_log_read_errors_are_joined_and_refused() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit("events.jsonl", |t| format!("{t}not json\n[1,2]\n   \n"));
    let err = fx.refused("server", "blocked", &[("reply_to", "1")]);
    assert!(
        err.starts_with("events.jsonl line 2: invalid JSON: "),
        "{err}"
    );
    assert!(
        err.ends_with("; events.jsonl line 3: event must be an object"),
        "{err}"
    );
    std::fs::remove_file(fx.path("events.jsonl")).unwrap();
    assert_eq!(
        fx.refused("server", "blocked", &[("reply_to", "1")]),
        "missing events.jsonl"
    );
}

#[test]
fn reply_to_must_exist_and_is_required_after_initialized() {
    let fx = Fx::new(&["server", "reader"]);
    assert_eq!(
        fx.refused("server", "blocked", &[("reply_to", "7")]),
        "reply_to must point to an existing event"
    );
    assert_eq!(
        fx.refused("server", "blocked", &[("reply_to", "")]),
        "reply_to is required after initialized"
    );
}

#[test]
fn an_empty_log_accepts_initialized_from_anyone_without_reply_to() {
    let fx = Fx::new(&["server", "reader"]);
    fx.write("events.jsonl", "");
    assert_eq!(
        fx.refused(
            "reader",
            "deliverable_drafted",
            &[("reply_to", ""), ("doc", REF), ("role", "primary")]
        ),
        "seq 1: deliverable_drafted is not allowed from phase None"
    );
    assert_eq!(fx.ok("reader", "initialized", &[("reply_to", "")]), 1);
    assert_eq!(fx.protocol()["proposalOwner"], "reader");
    assert_eq!(last_line(&fx).get("reply_to"), None);
}

#[test]
fn deliverable_events_need_role_doc_and_a_declared_ref() {
    let fx = Fx::new(&["server", "reader"]);
    assert_eq!(
        fx.refused("server", "deliverable_drafted", &[("doc", REF)]),
        "deliverable events require role"
    );
    assert_eq!(
        fx.refused(
            "server",
            "deliverable_drafted",
            &[("role", "primary"), ("doc", "")]
        ),
        "deliverable events require doc"
    );
    let abs = fx.path(REF).display().to_string();
    for doc in [
        "../../etc/passwd",
        abs.as_str(),
        "./deliverables/design-spec.md",
    ] {
        assert_eq!(
            fx.refused(
                "server",
                "deliverable_drafted",
                &[("role", "primary"), ("doc", doc)]
            ),
            "doc must reference the primary deliverable"
        );
    }
    assert_eq!(
        fx.refused(
            "server",
            "deliverable_drafted",
            &[("role", "supporting"), ("doc", REF)]
        ),
        "doc must reference a declared supporting deliverable"
    );
}

#[test]
fn freeze_checks_sha_format_existence_and_hash_before_the_phase() {
    let fx = Fx::new(&["server", "reader"]);
    let upper = fx.deliverable_sha().to_uppercase();
    let freeze = |sha: &str| {
        fx.refused(
            "server",
            "deliverable_frozen",
            &[("role", "primary"), ("doc", REF), ("sha256", sha)],
        )
    };
    assert_eq!(freeze(""), "deliverable_frozen requires sha256");
    assert_eq!(freeze(&upper), "deliverable_frozen requires sha256");
    assert_eq!(
        freeze(&"0".repeat(64)),
        "deliverable_frozen sha256 does not match current file"
    );
    let sha = fx.deliverable_sha();
    assert_eq!(
        freeze(&sha),
        "seq 2: deliverable_frozen is not allowed from phase drafting"
    );
    std::fs::remove_file(fx.path(REF)).unwrap();
    assert_eq!(freeze(&sha), "deliverable_frozen doc does not exist");
}

#[cfg(unix)]
#[test]
fn freeze_refuses_to_hash_through_a_symlink() {
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    let outside = fx.tmp.path().join("copy.md");
    std::fs::copy(fx.path(REF), &outside).unwrap();
    std::fs::remove_file(fx.path(REF)).unwrap();
    std::os::unix::fs::symlink(&outside, fx.path(REF)).unwrap();
    let sha = acp_test_kit::sha256_hex(&std::fs::read(&outside).unwrap());
    let err = fx.refused(
        "server",
        "deliverable_frozen",
        &[("role", "primary"), ("doc", REF), ("sha256", &sha)],
    );
    assert!(
        err.contains("deliverables/design-spec.md is a symlink"),
        "{err}"
    );
}

#[test]
fn payload_omits_empty_optional_fields_and_keeps_free_text_verbatim() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.ok(
        "server",
        "proposal_submitted",
        &[
            ("doc", "../../etc/passwd"),
            ("role", "primary"),
            ("sha256", "notahash"),
        ],
    );
    let line = last_line(&fx);
    assert_eq!(line["doc"], "../../etc/passwd");
    assert_eq!(line["sha256"], "notahash");
    assert_eq!(line["reply_to"], 2);
    fx.review("reader");
    let line = last_line(&fx);
    for key in ["doc", "role", "sha256"] {
        assert!(line.get(key).is_none(), "{key}");
    }
    let keys: Vec<&String> = line.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 6);
    fx.assert_valid();
}

#[test]
fn wrong_senders_are_refused_with_the_reserved_message() {
    let fx = Fx::new(&["server", "amy", "zed"]);
    fx.draft();
    fx.submit();
    assert_eq!(
        fx.refused("server", "review_submitted", &[]),
        "seq 4: review submission is reserved for amy, zed; got server"
    );
    fx.review("zed");
    assert_eq!(
        fx.refused("zed", "review_submitted", &[]),
        "seq 5: review submission is reserved for amy; got zed"
    );
    fx.review("amy");
    assert_eq!(
        fx.refused("amy", "proposal_revised", &[]),
        "seq 6: proposal revision is reserved for server; got amy"
    );
    fx.revise();
    fx.classify();
    fx.ok("amy", "decision_accepted", &[]);
    assert_eq!(
        fx.refused("amy", "decision_accepted", &[]),
        "seq 9: decision acceptance is reserved for server, zed; got amy"
    );
}

#[test]
fn phase_rules_of_the_transition_table() {
    let fx = Fx::new(&["server", "reader"]);
    assert_eq!(
        fx.refused("server", "proposal_submitted", &[]),
        "seq 2: proposal_submitted requires prior primary deliverable_drafted"
    );
    assert_eq!(
        fx.refused("server", "review_submitted", &[]),
        "seq 2: review_submitted is not allowed from phase drafting; seq 2: review submission is reserved for no participant; got server"
    );
    fx.draft();
    fx.draft();
    fx.submit();
    assert_eq!(
        fx.refused(
            "server",
            "deliverable_drafted",
            &[("role", "primary"), ("doc", REF)]
        ),
        "seq 5: deliverable_drafted is not allowed from phase reviewing"
    );
    fx.review("reader");
    fx.revise();
    fx.resolve_readiness();
    assert_eq!(
        fx.refused("reader", "decision_accepted", &[]),
        "seq 7: decision_accepted requires question_classified after the latest proposal or decision; seq 7: decision acceptance is reserved for no participant; got reader"
    );
    fx.classify();
    fx.all_accept();
    assert_eq!(
        fx.refused("server", "readiness_passed", &[]),
        "seq 10: readiness_passed requires primary deliverable_frozen"
    );
    assert_eq!(
        fx.refused("server", "completed", &[("doc", "conclusion.md")]),
        "seq 10: completed requires a prior readiness_passed event"
    );
    fx.freeze();
    let sha = fx.deliverable_sha();
    assert_eq!(
        fx.refused(
            "server",
            "deliverable_frozen",
            &[("role", "primary"), ("doc", REF), ("sha256", &sha)]
        ),
        "seq 11: primary deliverable can be frozen only once"
    );
    assert_eq!(
        fx.refused("server", "deliverable_revised", &[("role", "primary"), ("doc", REF)]),
        "seq 11: deliverable_revised is not allowed after deliverable_frozen; seq 11: deliverable_revised is not allowed from phase readiness_check"
    );
    fx.pass_readiness();
    fx.ok("server", "readiness_passed", &[]);
    assert_eq!(
        fx.refused("server", "completed", &[]),
        "seq 13: completed must reference conclusion.md"
    );
    assert_eq!(
        fx.refused("reader", "completed", &[("doc", "conclusion.md")]),
        "seq 13: completion is reserved for server; got reader"
    );
    fx.complete();
    assert_eq!(
        fx.refused("server", "proposal_submitted", &[]),
        "seq 14: proposal_submitted is not allowed from phase completed"
    );
    fx.ok("reader", "blocked", &[]);
    assert_eq!(fx.protocol()["currentPhase"], "blocked");
    assert_eq!(fx.protocol()["waitingFor"], json!([]));
    fx.ok("server", "blocked", &[]);
    fx.assert_valid();
}

#[test]
fn a_new_decision_requires_reclassification_which_relists_everyone() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.submit();
    fx.review("reader");
    fx.revise();
    fx.classify();
    fx.ok("reader", "decision_accepted", &[]);
    fx.ok("server", "decision_proposed", &[]);
    assert_eq!(
        fx.refused("server", "decision_accepted", &[]),
        "seq 9: decision_accepted requires question_classified after the latest proposal or decision"
    );
    fx.ok("server", "question_classified", &[]);
    assert_eq!(fx.protocol()["waitingFor"], json!(["reader", "server"]));
    fx.all_accept();
    assert_eq!(fx.protocol()["currentPhase"], "readiness_check");
}

#[test]
fn a_second_proposal_round_relists_all_reviewers() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.submit();
    fx.review("reader");
    fx.submit();
    assert_eq!(fx.protocol()["currentPhase"], "reviewing");
    assert_eq!(fx.protocol()["waitingFor"], json!(["reader"]));
}

#[test]
fn proposal_submitted_requires_at_least_one_reviewer() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit_protocol(|p| p["participants"] = json!(["server"]));
    fx.draft();
    assert_eq!(
        fx.refused("server", "proposal_submitted", &[]),
        "seq 3: proposal_submitted requires at least one reviewer"
    );
}

#[test]
fn acceptance_is_gated_on_the_current_readiness_file() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.submit();
    fx.review("reader");
    fx.revise();
    fx.replace("readiness.md", "- [unresolved] The", "- [resolved] The");
    fx.ok("server", "question_classified", &[]);
    // Edited after the classification: the acceptance reads readiness.md as it is now.
    fx.replace("readiness.md", "- [resolved] The", "- [unresolved] The");
    assert_eq!(
        fx.refused("reader", "decision_accepted", &[]),
        "seq 7: unresolved readiness questions must be classified before decision_accepted"
    );
    fx.replace(
        "readiness.md",
        "- [unresolved] The",
        "- [blocking] Open.\n- [deferred_nonblocking] Later.\n- [resolved] TBD the",
    );
    assert_eq!(
        fx.refused("reader", "decision_accepted", &[]),
        "seq 7: blocking readiness items must be cleared before decision_accepted; seq 7: unresolved readiness questions must be classified before decision_accepted; seq 7: deferred_nonblocking readiness items require a reason before decision_accepted"
    );
    fx.edit("readiness.md", |t| {
        t.replace("- [blocking] Open.\n", "")
            .replace("Later.", "Later. Reason: not needed now.")
            .replace("TBD the", "the")
    });
    fx.ok("reader", "decision_accepted", &[]);
}

#[test]
fn readiness_gates_apply_to_readiness_passed_and_completed() {
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    fx.freeze();
    assert_eq!(
        fx.refused("server", "readiness_passed", &[]),
        "readiness.md must check 'Ready to implement' first"
    );
    fx.tick_all();
    fx.replace(
        "readiness.md",
        "- [resolved]",
        "- [blocking] x\n- [unresolved] y\n- [deferred_nonblocking] z\n- [resolved]",
    );
    assert_eq!(
        fx.refused("server", "readiness_passed", &[]),
        "blocking readiness items must be cleared first; unresolved readiness questions must be classified first; deferred_nonblocking readiness items require a reason"
    );
    fx.replace(
        "readiness.md",
        "- [blocking] x\n- [unresolved] y\n- [deferred_nonblocking] z\n",
        "",
    );
    fx.ok("server", "readiness_passed", &[]);
    // Past acceptances are not re-checked: an item added after them does not wedge unrelated appends.
    fx.replace(
        "readiness.md",
        "- [resolved]",
        "- [blocking] late\n- [resolved]",
    );
    assert_eq!(
        fx.refused("server", "completed", &[("doc", "conclusion.md")]),
        "blocking readiness items must be cleared first"
    );
    fx.ok("reader", "blocked", &[]);
}

#[test]
fn completion_needs_ticked_gates_and_a_finished_conclusion() {
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    fx.freeze();
    fx.pass_readiness();
    fx.replace("readiness.md", "- [x] Gate A", "- [ ] Gate A");
    assert_eq!(
        fx.refused("server", "completed", &[("doc", "conclusion.md")]),
        "completion gates must be checked first: Gate A"
    );
    fx.tick_all();
    assert_eq!(
        fx.refused("server", "completed", &[("doc", "conclusion.md")]),
        "conclusion.md outcome cannot be completed while blocked"
    );
    fx.write(
        "conclusion.md",
        "## Decision Outcome\n- [proceed] a\n- [defer] b\nTODO\n## Rationale\n",
    );
    assert_eq!(
        fx.refused("server", "completed", &[("doc", "conclusion.md")]),
        "conclusion.md is missing required sections: Deliverable Receipt, Accepted Decisions Summary, Readiness Result, Assumptions, Deferred Follow-ups, Implementation Blockers, Next Action; conclusion.md must declare exactly one final outcome; conclusion.md must not contain unresolved placeholders before completed; conclusion.md must reference the primary deliverable"
    );
}

#[test]
fn supporting_deliverable_events_are_accepted_from_anyone_in_any_phase() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit_protocol(|p| {
        p["deliverables"]["supporting"] =
            json!([{"type": "test-plan", "file": "tp.md", "frozen": true}]);
    });
    fx.write("deliverables/tp.md", "# T\nStatus: Frozen\n");
    let sha = acp_test_kit::sha256_hex(b"# T\nStatus: Frozen\n");
    let doc = "deliverables/tp.md";
    fx.ok(
        "reader",
        "deliverable_drafted",
        &[("role", "supporting"), ("doc", doc)],
    );
    fx.ok(
        "reader",
        "deliverable_frozen",
        &[("role", "supporting"), ("doc", doc), ("sha256", &sha)],
    );
    assert_eq!(fx.protocol()["currentPhase"], "drafting");
}

#[test]
fn an_incomplete_last_line_is_refused_and_a_complete_one_gets_its_newline() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit("events.jsonl", |t| format!("{t}{{\"seq\":2,\"from\":\"ser"));
    let err = refused_stderr(
        &fx.append()
            .participant("server")
            .kind("blocked")
            .summary("x")
            .reply_to("1"),
    );
    assert_eq!(
        err,
        "error: events.jsonl ends with an incomplete line ({\"seq\":2,\"from\":\"ser); remove it or restore the rest of the line\n"
    );
    // A reader ignores it (with a warning) instead of failing.
    let next = collab::next_action(&fx.folder_str(), "server").unwrap();
    assert_eq!(next.exit_code, 0);
    fx.edit("events.jsonl", |t| {
        t.trim_end_matches("{\"seq\":2,\"from\":\"ser")
            .trim_end()
            .to_owned()
    });
    assert!(!fx.read("events.jsonl").ends_with('\n'));
    assert_eq!(fx.ok("server", "blocked", &[]), 2);
    assert_eq!(fx.read("events.jsonl").lines().count(), 2);
    fx.assert_valid();
}

#[test]
fn protocol_json_mirrors_the_replayed_state_and_keeps_unknown_keys() {
    let fx = Fx::new(&["server", "reader"]);
    fx.edit_protocol(|p| p["zzCustom"] = json!({"b": 1, "a": "é"}));
    fx.draft();
    fx.submit();
    let text = fx.read("protocol.json");
    assert!(
        text.contains("\"zzCustom\": {\n    \"a\": \"é\",\n    \"b\": 1\n  }\n}\n"),
        "{text}"
    );
    let p = fx.protocol();
    assert_eq!(p["currentPhase"], "reviewing");
    assert_eq!(p["waitingFor"], json!(["reader"]));
    assert_eq!(p["proposalOwner"], "server");
    let leftovers: Vec<_> = std::fs::read_dir(&fx.folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn errors_are_protocol_errors_not_usage_errors() {
    let fx = Fx::new(&["server", "reader"]);
    assert!(matches!(
        fx.try_append("ghost", "blocked", &[]),
        Err(CollabError::UnknownParticipant(_))
    ));
}

#[test]
fn question_classified_is_refused_while_readiness_items_are_open_with_the_command_to_rerun() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.submit();
    fx.review("reader");
    let revised = fx.revise();
    let folder = fx.folder_str();
    let err = refused_stderr(
        &fx.append()
            .participant("server")
            .kind("question_classified")
            .reply_to(&revised.to_string())
            .summary("classified"),
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines[0],
        "error: unresolved readiness questions must be classified before question_classified"
    );
    assert!(
        lines[1].starts_with(
            "  open in readiness.md: - [unresolved] The initial deliverable review has not been completed.; mark each question"
        ),
        "{err}"
    );
    let again = format!(
        "acp-collab append --folder {folder} --participant server --event question_classified \
         --reply-to {revised} --summary classified"
    );
    assert!(
        lines[1].ends_with(&format!("then run again: {again}")),
        "{err}"
    );
    assert_eq!(lines.len(), 2, "{err}");
    // Nothing was appended; once classified, the printed command works and nobody is stranded.
    assert_eq!(fx.last_seq(), revised);
    fx.replace("readiness.md", "- [unresolved] The", "- [resolved] The");
    let command = again.replace("acp-collab", crate::COLLAB);
    let out = std::process::Command::new("sh")
        .args(["-c", &command])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    fx.ok("reader", "decision_accepted", &[]);
    fx.ok("server", "decision_accepted", &[]);
    assert_eq!(fx.protocol()["currentPhase"], "readiness_check");
}

#[test]
fn a_classification_that_would_strand_the_acceptors_is_refused_for_blockers_and_reasonless_deferrals(
) {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.submit();
    fx.review("reader");
    fx.revise();
    fx.replace(
        "readiness.md",
        "- [unresolved] The",
        "- [blocking] Open.\n- [deferred_nonblocking] The",
    );
    assert_eq!(
        fx.refused("server", "question_classified", &[]),
        "blocking readiness items must be cleared before question_classified; \
         deferred_nonblocking readiness items require a reason before question_classified"
    );
}
