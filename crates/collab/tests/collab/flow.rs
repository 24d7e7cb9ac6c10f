//! End-to-end flows, next-action guidance for every phase and role, and `wait`.

use std::time::Duration;

use crate::support::*;
use acp_collab::{self as collab, next, Invocation, WaitOptions, WaitOutcome};
use acp_test_kit::{Append, Run};

/// Runs the binary, which must succeed; returns its stdout.
fn run_ok(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// The binary's `command --folder <fx> --participant <who>`.
fn participant_run(fx: &Fx, command: &str, who: &str) -> std::process::Output {
    bin()
        .args([command, "--folder", &fx.folder_str(), "--participant", who])
        .output()
        .unwrap()
}

/// `init_collaboration` through the binary: server and reader, a design spec.
fn init_via_binary(f: &str) -> String {
    let mut args = vec!["init_collaboration"];
    args.extend(acp_test_kit::collab::two_party_init_flags(f, "Ship it"));
    run_ok(&args)
}

#[test]
fn happy_path_with_two_participants_passes_validation_via_the_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("run");
    let f = folder.to_str().unwrap();
    let out = init_via_binary(f);
    assert!(out.starts_with("Initialized ACP schema v2 collaboration folder: /"));
    let fx_write = |rel: &str, edit: &dyn Fn(String) -> String| {
        let p = folder.join(rel);
        std::fs::write(&p, edit(std::fs::read_to_string(&p).unwrap())).unwrap();
    };
    let ap = |who: &str, event: &str, reply: &str, extra: &[&str]| {
        let append = extra.iter().fold(
            Append::new(crate::COLLAB, f)
                .alias("append_event")
                .participant(who)
                .kind(event)
                .summary("s")
                .reply_to(reply),
            Append::arg,
        );
        let run = Run::of(&mut append.command());
        assert_eq!(run.code, 0, "{append:?}: {}{}", run.stdout, run.stderr);
        run.stdout
    };
    assert_eq!(
        ap(
            "server",
            "deliverable_drafted",
            "1",
            &["--doc", REF, "--role", "primary"]
        ),
        format!("appended seq 2: deliverable_drafted\nrun: acp-collab next --folder {f} --participant server\n")
    );
    ap("server", "proposal_submitted", "2", &[]);
    fx_write("review.md", &|t| {
        format!("{t}\n## 2026-11-30T00:00:00Z - reader - seq 4\n")
    });
    ap("reader", "review_submitted", "3", &[]);
    ap("server", "proposal_revised", "4", &[]);
    fx_write("readiness.md", &|t| t.replace("[unresolved]", "[resolved]"));
    ap("server", "question_classified", "5", &[]);
    ap("reader", "decision_accepted", "6", &[]);
    ap("server", "decision_accepted", "7", &[]);
    fx_write(REF, &|t| {
        t.replace("Status: Draft", "Status: Frozen")
            .replace("\n\n\n\n", "\n\nText.\n\n")
            .replace("Open Questions\n\n\n", "Open Questions\n\nNone.\n")
    });
    let sha = acp_test_kit::sha256_hex(&std::fs::read(folder.join(REF)).unwrap());
    ap(
        "server",
        "deliverable_frozen",
        "8",
        &["--doc", REF, "--role", "primary", "--sha256", &sha],
    );
    fx_write("readiness.md", &|t| t.replace("- [ ]", "- [x]"));
    ap("server", "readiness_passed", "9", &[]);
    fx_write("conclusion.md", &|t| {
        t.replace("- [blocked]", "- [proceed]")
    });
    assert_eq!(
        ap("server", "completed", "10", &["--doc", "conclusion.md"]),
        format!("appended seq 11: completed\nrun: acp-collab validate --folder {f}\n")
    );
    let out = bin()
        .args(["validate_collaboration", "--folder", f])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "ACP validation passed\n");
    assert_eq!(out.status.code(), Some(0));
    let out = bin()
        .args(["next", "--folder", f, "--participant", "reader"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains(
        "\nnext action: stop; collaboration is complete.\nrun: acp-collab validate --folder "
    ));
}

#[test]
fn happy_path_with_three_participants_passes_validation() {
    let fx = Fx::new(&["server", "zed", "amy"]);
    fx.draft();
    fx.submit();
    assert_eq!(
        fx.protocol()["waitingFor"],
        serde_json::json!(["amy", "zed"])
    );
    fx.review("zed");
    assert_eq!(fx.protocol()["waitingFor"], serde_json::json!(["amy"]));
    fx.review("amy");
    assert_eq!(fx.protocol()["currentPhase"], "revising");
    fx.revise();
    fx.classify();
    assert_eq!(
        fx.protocol()["waitingFor"],
        serde_json::json!(["amy", "server", "zed"])
    );
    fx.all_accept();
    assert_eq!(fx.protocol()["currentPhase"], "readiness_check");
    fx.freeze();
    fx.pass_readiness();
    fx.complete();
    assert_eq!(fx.protocol()["currentPhase"], "completed");
    assert_eq!(fx.last_seq(), 13);
    fx.assert_valid();
}

#[test]
fn next_action_texts_for_every_phase_and_role() {
    let fx = Fx::new(&["server", "reader", "amy"]);
    assert_eq!(fx.next("server"), next::DRAFT);
    assert_eq!(fx.next("reader"), next::WAIT_PROPOSAL);
    fx.draft();
    fx.submit();
    assert_eq!(fx.next("reader"), next::REVIEW);
    assert_eq!(fx.next("server"), next::OWNER_WAIT_REVIEW);
    fx.review("reader");
    assert_eq!(
        fx.next("reader"),
        next::WAIT_REVIEW,
        "a reviewer who already reviewed waits"
    );
    fx.review("amy");
    assert_eq!(fx.next("server"), next::REVISE);
    assert_eq!(fx.next("reader"), next::WAIT_REVISE);
    fx.revise();
    assert_eq!(
        fx.next("server"),
        next::CLASSIFY,
        "corrected guidance: classify before anyone accepts"
    );
    assert_eq!(fx.next("reader"), next::WAIT_CLASSIFY);
    fx.classify();
    assert_eq!(fx.next("reader"), next::ACCEPT);
    fx.ok("reader", "decision_accepted", &[]);
    assert_eq!(fx.next("reader"), next::WAIT_ACCEPT);
    assert_eq!(fx.next("server"), next::ACCEPT);
    // A new decision re-opens classification; after it, earlier acceptors are asked again.
    fx.ok("server", "decision_proposed", &[]);
    assert_eq!(fx.next("server"), next::CLASSIFY);
    fx.ok("server", "question_classified", &[]);
    assert_eq!(
        fx.next("reader"),
        next::ACCEPT,
        "corrected guidance: re-listed acceptors accept again"
    );
    fx.all_accept();
    assert_eq!(
        fx.next("reader"),
        next::WAIT_OWNER_READINESS,
        "corrected guidance: non-owners wait"
    );
    fx.replace("readiness.md", "- [resolved]", "- [blocking]");
    assert_eq!(fx.next("server"), next::CLEAR_READINESS);
    fx.replace("readiness.md", "- [blocking]", "- [resolved]");
    assert_eq!(fx.next("server"), next::CHECKLIST);
    fx.tick_all();
    assert_eq!(
        fx.next("server"),
        next::FREEZE,
        "corrected guidance: freeze comes first"
    );
    fx.freeze();
    assert_eq!(fx.next("server"), next::PASS_READINESS);
    fx.ok("server", "readiness_passed", &[]);
    assert_eq!(fx.next("server"), next::WRITE_CONCLUSION);
    fx.write_conclusion("defer");
    assert_eq!(fx.next("server"), next::COMPLETE);
    fx.ok("server", "completed", &[("doc", "conclusion.md")]);
    assert_eq!(fx.next("amy"), next::STOP);
    fx.ok("amy", "blocked", &[]);
    assert_eq!(fx.next("server"), next::RESOLVE_BLOCKER);
    fx.assert_valid();
}

#[test]
fn next_action_prints_state_lines_and_exits_1_on_an_invalid_phase() {
    let fx = Fx::new(&["server", "reader"]);
    let out = participant_run(&fx, "next_action", "reader");
    assert_eq!(
        stdout(&out),
        format!("phase: drafting\nproposal owner: server\nwaiting for: server\nlast event: seq 1 initialized from server\nnext action: wait for the proposal owner to submit the proposal.\nrun: acp-collab wait --folder {} --participant reader  # returns when it is your turn, then prints what to do\n", fx.folder_str())
    );
    fx.edit_protocol(|p| {
        p.as_object_mut().unwrap().remove("currentPhase");
        p["waitingFor"] = serde_json::json!([]);
    });
    let out = participant_run(&fx, "next", "reader");
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("phase: None\n"));
    assert!(stdout(&out).contains("waiting for: none\n"));
    assert!(stdout(&out).ends_with(&format!(
        "next action: {}\nrun: acp-collab validate --folder {}\n",
        next::INVALID_PHASE,
        fx.folder_str()
    )));
}

#[test]
fn next_and_wait_refuse_unknown_participants_and_missing_logs() {
    let fx = Fx::new(&["server", "reader"]);
    for cmd in ["next", "wait"] {
        let out = participant_run(&fx, cmd, "ghost");
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            stderr(&out),
            "error: participant 'ghost' is not listed in protocol.json\n"
        );
    }
    std::fs::remove_file(fx.path("events.jsonl")).unwrap();
    let out = participant_run(&fx, "next", "server");
    assert_eq!(stderr(&out), "error: missing events.jsonl\n");
}

fn wait_opts(fx: &Fx, who: &str, timeout: f64) -> WaitOptions {
    WaitOptions {
        folder: fx.folder_str(),
        participant: who.to_owned(),
        interval: 0.1,
        timeout,
        invocation: Invocation::default(),
    }
}

#[test]
fn wait_returns_ready_first_when_it_is_the_participants_turn() {
    let fx = Fx::new(&["server", "reader"]);
    let out = participant_run(&fx, "wait_for_turn", "server");
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.starts_with("ready: server is listed in waitingFor\nphase: drafting\n"),
        "{text}"
    );
    assert!(text.contains(&format!("next action: {}\n", next::DRAFT)));
}

#[test]
fn wait_returns_on_a_terminal_phase() {
    let fx = Fx::new(&["server", "reader"]);
    fx.ok("server", "blocked", &[]);
    let mut out = Vec::new();
    let r = collab::wait_for_turn(&wait_opts(&fx, "reader", 0.0), &mut out).unwrap();
    assert_eq!(
        r,
        WaitOutcome::Ready {
            reason: "phase is blocked".into(),
            next_error: None
        }
    );
    assert!(String::from_utf8(out)
        .unwrap()
        .starts_with("ready: phase is blocked\n"));
}

#[test]
fn wait_times_out_with_exit_1_and_the_waiting_reason() {
    let fx = Fx::new(&["server", "reader"]);
    let out = bin()
        .args([
            "wait",
            "--folder",
            &fx.folder_str(),
            "--participant",
            "reader",
            "--timeout",
            "0.2",
            "--interval",
            "0.05",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "waiting: waiting for server after seq 1\n");
    assert_eq!(stderr(&out), "timeout: waiting for server after seq 1\n");
}

#[test]
fn wait_wakes_when_an_append_hands_over_the_turn() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    let folder = fx.folder_str();
    let waiter = std::thread::spawn(move || {
        let opts = WaitOptions {
            folder,
            participant: "reader".into(),
            interval: 2.0,
            timeout: 0.0,
            invocation: Invocation::default(),
        };
        let mut out = Vec::new();
        let outcome = collab::wait_for_turn(&opts, &mut out).unwrap();
        (outcome, String::from_utf8(out).unwrap())
    });
    // Give the waiter a moment to print its first `waiting:` line; correctness
    // does not depend on it (the first poll sees whichever state exists).
    std::thread::sleep(Duration::from_millis(100));
    fx.submit();
    let (outcome, text) = waiter.join().unwrap();
    assert!(matches!(outcome, WaitOutcome::Ready { .. }));
    assert!(
        text.contains("ready: reader is listed in waitingFor\n"),
        "{text}"
    );
    assert!(text.contains(&format!("next action: {}\n", next::REVIEW)));
}

#[test]
fn wait_accepts_extreme_intervals_and_timeouts_without_panicking() {
    let fx = Fx::new(&["server", "reader"]);
    for (interval, timeout) in [(f64::INFINITY, -1.0), (f64::NAN, 1e300), (1e300, -5.0)] {
        let opts = WaitOptions {
            folder: fx.folder_str(),
            participant: if timeout > 0.0 { "server" } else { "reader" }.into(),
            interval,
            timeout,
            invocation: Invocation::default(),
        };
        let outcome = collab::wait_for_turn(&opts, &mut Vec::new()).unwrap();
        if timeout > 0.0 {
            assert!(matches!(outcome, WaitOutcome::Ready { .. }));
        } else {
            assert!(matches!(outcome, WaitOutcome::TimedOut { .. }));
        }
    }
}
