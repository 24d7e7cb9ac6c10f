//! Driving a collaboration without guessing: `next` prints the next seq, what to write and
//! the exact commands; `append` names every bad flag at once; `status` and `log`.

mod collab_support;

use acp_registry::collab::{self, Invocation};
use collab_support::*;

fn report(fx: &Fx, who: &str) -> Vec<String> {
    collab::next_action(&fx.folder_str(), who).unwrap().lines
}

fn after_next_action(lines: &[String]) -> Vec<String> {
    let at = lines
        .iter()
        .position(|l| l.starts_with("next action: "))
        .unwrap();
    lines[at + 1..].to_vec()
}

#[test]
fn next_gives_the_reviewer_its_seq_heading_and_command_with_reply_to() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    let submitted = fx.submit();
    let extra = after_next_action(&report(&fx, "reader"));
    assert_eq!(extra[0], "next seq: 4");
    assert!(
        extra[1].starts_with("write first: append your review to review.md under the heading `## "),
        "{}",
        extra[1]
    );
    assert!(extra[1].contains(" - reader - seq 4`"), "{}", extra[1]);
    let folder = fx.folder_str();
    assert_eq!(
        extra[2],
        format!(
            "run: acp-collab append --folder {folder} --participant reader --event review_submitted \
             --reply-to {submitted} --summary '<one line: what you did>'  # becomes seq 4"
        )
    );
    // Whoever is only waiting gets the published five lines and the command that waits.
    assert_eq!(
        after_next_action(&report(&fx, "server")),
        [format!(
            "run: acp-collab wait --folder {folder} --participant server  # returns when it is \
             your turn, then prints what to do"
        )]
    );
}

#[test]
fn the_printed_commands_succeed_when_run_as_printed() {
    let fx = Fx::new(&["server", "reader"]);
    let lines = report(&fx, "server");
    let runs: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("run: "))
        .collect();
    assert_eq!(runs.len(), 2, "{lines:?}");
    assert!(runs[0].contains(
        "--event deliverable_drafted --reply-to 1 --role primary --doc deliverables/design-spec.md"
    ));
    assert!(runs[1].contains("--event proposal_submitted --reply-to 2"));
    for run in runs {
        let command = run.replace("acp-collab", env!("CARGO_BIN_EXE_acp-collab"));
        let out = std::process::Command::new("sh")
            .args(["-c", &command])
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {}", stderr(&out));
    }
    assert_eq!(fx.protocol()["currentPhase"], "reviewing");
}

#[test]
fn launchers_get_their_own_command_form_and_the_owner_gets_the_freeze_hash() {
    let fx = Fx::new(&["server", "reader"]);
    let scripts = Invocation::Scripts("/opt/skill/scripts".into());
    let lines = collab::next_action_with(&fx.folder_str(), "server", &scripts)
        .unwrap()
        .lines;
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("run: python3 /opt/skill/scripts/append_event.py --folder ")),
        "{lines:?}"
    );

    fx.to_readiness_check();
    fx.tick_all();
    fx.finish_deliverable();
    let extra = after_next_action(&report(&fx, "server"));
    let sha = fx.deliverable_sha();
    assert!(extra.iter().any(|l| l.contains(&format!("--event deliverable_frozen --reply-to {} --role primary --doc deliverables/design-spec.md --sha256 {sha} ", fx.last_seq()))), "{extra:?}");
    fx.freeze();
    let extra = after_next_action(&report(&fx, "server"));
    assert!(
        extra
            .iter()
            .any(|l| l.starts_with("run: acp-collab validate --folder ")),
        "{extra:?}"
    );
    assert!(
        extra.iter().any(|l| l.contains("--event readiness_passed")),
        "{extra:?}"
    );
}

#[test]
fn append_names_every_missing_or_invalid_flag_at_once() {
    let fx = Fx::new(&["server", "reader"]);
    let out = bin()
        .args([
            "append",
            "--folder",
            &fx.folder_str(),
            "--participant",
            "server",
        ])
        .args(["--event", "deliverable_frozen", "--summary", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    // The first message is the one the published script prints.
    assert_eq!(
        lines[0],
        "error: reply_to is required after initialized; deliverable events require role; deliverable events require doc"
    );
    assert!(
        lines[1].starts_with("  --reply-to: pass --reply-to N"),
        "{err}"
    );
    assert!(
        lines[1].ends_with("the last is seq 1 (initialized from server)"),
        "{err}"
    );
    assert!(
        lines[2].starts_with("  --role: pass --role primary"),
        "{err}"
    );
    assert_eq!(
        lines[3],
        "  --doc: the primary deliverable is --doc deliverables/design-spec.md"
    );
    assert_eq!(lines.len(), 4, "{err}");

    let err = fx.refused(
        "server",
        "deliverable_frozen",
        &[
            ("reply_to", "9"),
            ("role", "primary"),
            ("doc", REF),
            ("sha256", "abc"),
        ],
    );
    assert_eq!(
        err,
        "reply_to must point to an existing event; deliverable_frozen requires sha256"
    );
}

#[test]
fn status_shows_phase_owner_waiting_last_events_and_open_questions() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.submit();
    let out = bin()
        .args(["status", "--folder", &fx.folder_str()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for line in [
        "phase: reviewing",
        "proposal owner: server",
        "waiting for: reader",
        "participants: server, reader",
        "primary deliverable: deliverables/design-spec.md",
        "events: 3",
        "open questions: 1",
        "  - [unresolved] The initial deliverable review has not been completed.",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
    }
    assert!(text.contains("\n  seq 3  "), "{text}");
    assert!(text.contains("proposal_submitted (reply to 2): "), "{text}");
    let out = bin()
        .args(["status", "--folder", &fx.folder_str(), "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["phase"], "reviewing");
    assert_eq!(doc["waiting_for"], serde_json::json!(["reader"]));
    assert_eq!(doc["last_events"].as_array().unwrap().len(), 3);
}

#[test]
fn log_prints_every_event_or_those_after_a_seq_as_text_or_json_lines() {
    let fx = Fx::new(&["server", "reader"]);
    fx.draft();
    fx.submit();
    let run = |args: &[&str]| {
        let out = bin()
            .args(["log", "--folder", &fx.folder_str()])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let all = run(&[]);
    assert_eq!(all.lines().count(), 3);
    assert!(all.lines().nth(1).unwrap().starts_with("seq 2  "), "{all}");
    assert!(all.contains(
        "deliverable_drafted (reply to 1, role primary, doc deliverables/design-spec.md): "
    ));
    let since = run(&["--since", "2", "--format", "json"]);
    let events: Vec<serde_json::Value> = since
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["event"], "proposal_submitted");
    assert_eq!(events[0]["seq"], 3);
}
