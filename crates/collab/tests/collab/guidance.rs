//! Driving a collaboration without guessing: `next` prints the next seq, what to write and
//! the exact commands; `append` names every bad flag at once; `status` and `log`.

use std::path::Path;

use crate::support::*;
use acp_collab::{self as collab, Invocation};

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
        let command = run.replace("acp-collab", crate::COLLAB);
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
    let err = refused_stderr(
        &fx.append()
            .participant("server")
            .kind("deliverable_frozen")
            .summary("x"),
    );
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

/// One participant of [`a_collaboration_runs_from_init_to_completion_on_the_commands_next_prints`]:
/// it runs the command it was last given and, in the report it gets, does the `write first:`
/// edit and every `run:` command, in order. Its only knowledge is how to write each file.
struct Agent<'a> {
    who: &'a str,
    folder: &'a Path,
    /// The command init printed for this participant: run again after each of its events.
    home: String,
    transcript: Vec<String>,
}

impl Agent<'_> {
    fn shell(&mut self, command: &str) -> String {
        // A wait that never returns would hang the test; a generous limit turns it into a failure.
        let command = if command.contains("wait_for_turn.py") {
            format!("{command} --timeout 60")
        } else {
            command.replace("'<one line: what you did>'", "'done as told'")
        };
        let out = std::process::Command::new("sh")
            .args(["-c", &command])
            .env_remove("ACP_COLLAB_SCRIPTS")
            .output()
            .unwrap();
        let text = stdout(&out);
        self.transcript
            .push(format!("$ {command}\n{text}{}", stderr(&out)));
        assert!(
            matches!(out.status.code(), Some(0 | 1)) && !text.is_empty(),
            "{} failed:\n{}",
            self.who,
            self.transcript.join("\n")
        );
        text
    }

    /// Plays the participant until its report says the collaboration is complete.
    fn play(&mut self) {
        let mut command = self.home.clone();
        for _ in 0..40 {
            let report = self.shell(&command);
            if let Some(write) = report.lines().find_map(|l| l.strip_prefix("write first: ")) {
                author(self.folder, self.who, write);
            }
            let runs: Vec<String> = report
                .lines()
                .filter_map(|l| l.strip_prefix("run: "))
                .map(|l| l.split("  # ").next().unwrap().to_owned())
                .collect();
            let (last, appends) = runs.split_last().expect("every report ends with a command");
            for run in appends {
                self.shell(run);
            }
            if last.contains("append_event.py") {
                self.shell(last);
                command = self.home.clone();
            } else if last.contains("validate_collaboration.py") {
                let out = self.shell(last);
                if report.contains("collaboration is complete") {
                    assert_eq!(out, "ACP validation passed\n");
                    return;
                }
                command = self.home.clone();
            } else {
                command = last.clone();
            }
        }
        panic!(
            "{} never finished:\n{}",
            self.who,
            self.transcript.join("\n")
        );
    }
}

/// Writes what a `write first:` line asks for, as an author would: the file it names first.
fn author(folder: &Path, who: &str, write: &str) {
    let edit = |rel: &str, f: &dyn Fn(String) -> String| {
        let path = folder.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, f(text)).unwrap();
    };
    let quoted: Vec<&str> = write.split('`').skip(1).step_by(2).collect();
    if write.starts_with("append your review to review.md") {
        let (heading, primary) = (quoted[0], quoted[1]);
        edit("review.md", &|t| {
            format!(
                "{t}\n{heading}\n\nReview Scope:\n- Primary deliverable completeness\n\n\
                 Position:\n- {who} agrees with `{primary}`.\n"
            )
        });
    } else if write.starts_with("readiness.md:") {
        edit("readiness.md", &|t| {
            t.replace("- [unresolved]", "- [resolved]")
                .replace("- [ ] ", "- [x] ")
        });
    } else if write.starts_with("conclusion.md:") {
        edit("conclusion.md", &|t| {
            t.replace(
                "- [blocked] The collaboration is not complete yet.",
                "- [proceed] Build it.",
            )
        });
        edit("readiness.md", &|t| t.replace("- [ ] ", "- [x] "));
    } else if write.contains("set `Status: Frozen`") {
        edit(quoted[0], &|t| acp_test_kit::collab::finish_deliverable(&t));
    }
    // Drafting and revising: the skeleton init wrote is the draft.
}

#[test]
fn a_collaboration_runs_from_init_to_completion_on_the_commands_next_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let install = bin()
        .args(["skill", "install", "--project", root.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(install.status.success(), "{}", stderr(&install));
    let scripts = root.join(".agents/skills/agent-collaboration-protocol/scripts");
    let folder = root.join("collab");
    let init = std::process::Command::new("python3")
        .arg(scripts.join("init_collaboration.py"))
        .args([
            "--folder",
            folder.to_str().unwrap(),
            "--participant",
            "server",
        ])
        .args(["--participant", "reader", "--objective", "Design the cache"])
        .args([
            "--completion",
            "Gate A",
            "--primary-deliverable-type",
            "design-spec",
        ])
        .env_remove("ACP_COLLAB_SCRIPTS")
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", stderr(&init));
    let init = stdout(&init);
    let first = |who: &str| {
        init.lines()
            .find(|l| l.starts_with(&format!("{who} ")))
            .and_then(|l| l.split_once("runs: "))
            .map_or_else(
                || panic!("no first command for {who}: {init}"),
                |(_, command)| command.to_owned(),
            )
    };
    let mut agents: Vec<Agent> = ["server", "reader"]
        .into_iter()
        .map(|who| Agent {
            who,
            folder: &folder,
            home: first(who),
            transcript: Vec::new(),
        })
        .collect();
    // Two agents at once, as in real use: each waits for its own turn.
    std::thread::scope(|s| {
        for agent in &mut agents {
            s.spawn(move || agent.play());
        }
    });
    let log = std::fs::read_to_string(folder.join("events.jsonl")).unwrap();
    assert!(
        log.lines()
            .last()
            .unwrap()
            .contains("\"event\":\"completed\""),
        "{log}"
    );
}

#[test]
fn the_freeze_command_comes_only_once_the_deliverable_is_final_so_its_hash_is_valid() {
    let fx = Fx::new(&["server", "reader"]);
    fx.to_readiness_check();
    fx.tick_all();
    // Not final yet: the edit first, then `next` again; no hash that the edit would stale.
    let extra = after_next_action(&report(&fx, "server"));
    assert!(
        extra.iter().all(|l| !l.contains("deliverable_frozen")),
        "{extra:?}"
    );
    assert!(
        extra[1].starts_with(&format!(
            "write first: `{REF}`: fill every section and set `Status: Frozen` (now: "
        )),
        "{extra:?}"
    );
    assert!(
        extra.last().unwrap().starts_with("run: acp-collab next "),
        "{extra:?}"
    );
    fx.finish_deliverable();
    let extra = after_next_action(&report(&fx, "server"));
    let freeze = extra
        .iter()
        .find_map(|l| l.strip_prefix("run: "))
        .filter(|l| l.contains("--event deliverable_frozen"))
        .unwrap_or_else(|| panic!("{extra:?}"));
    assert!(
        freeze.contains(&format!("--sha256 {} ", fx.deliverable_sha())),
        "{freeze}"
    );
    let command = freeze.replace("acp-collab", crate::COLLAB);
    let out = std::process::Command::new("sh")
        .args(["-c", &command])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn every_report_ends_with_a_command_even_for_a_participant_nobody_waits_on() {
    let fx = Fx::new(&["server", "reader", "third"]);
    let folder = fx.folder_str();
    let wait = |who: &str| {
        format!(
            "run: acp-collab wait --folder {folder} --participant {who}  # returns when it is \
             your turn, then prints what to do"
        )
    };
    // Drafting waits only for the owner; in the readiness check, nobody waits on a reviewer.
    assert_eq!(after_next_action(&report(&fx, "third")), [wait("third")]);
    fx.to_readiness_check();
    assert_eq!(fx.protocol()["waitingFor"], serde_json::json!(["server"]));
    assert_eq!(after_next_action(&report(&fx, "third")), [wait("third")]);
    fx.ok("third", "blocked", &[]);
    let last = report(&fx, "reader").pop().unwrap();
    assert!(
        last.starts_with(&format!(
            "run: acp-collab validate --folder {folder}  # the collaboration is blocked"
        )),
        "{last}"
    );
}

#[test]
fn init_prints_each_participants_first_command() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().canonicalize().unwrap().join("c");
    let out = bin()
        .args([
            "init",
            "--folder",
            folder.to_str().unwrap(),
            "--participant",
            "alice",
        ])
        .args([
            "--participant",
            "bob",
            "--participant",
            "carol",
            "--objective",
            "o",
        ])
        .args(["--completion", "g", "--primary-deliverable-type", "adr"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let f = folder.display();
    assert_eq!(
        stdout(&out),
        format!(
            "Initialized ACP schema v2 collaboration folder: {f}\n\
             alice (proposal owner) first runs: acp-collab next --folder {f} --participant alice\n\
             bob first runs: acp-collab wait --folder {f} --participant bob\n\
             carol first runs: acp-collab wait --folder {f} --participant carol\n"
        )
    );
}
