//! Text from a shared folder (names, summaries, event fields) reaches the terminal only
//! through the terminal escaper: a hostile folder cannot send control characters or ANSI
//! sequences to whoever runs `acp-collab`. JSON output stays serde's (control characters as
//! `\u001b`), and clean text is printed as before.

use crate::support::*;

/// An SGR colour and a terminal title change (OSC … BEL).
const HOSTILE: &str = "\u{1b}[31mred\u{1b}[0m \u{1b}]0;pwned\u{7}";

fn raw_escape_in(text: &str) -> bool {
    text.contains('\u{1b}') || text.contains('\u{7}')
}

/// Appends one raw line to `events.jsonl`, as a hostile participant could.
fn append_raw(fx: &Fx, line: &serde_json::Value) {
    let mut log = fx.read("events.jsonl");
    log.push_str(&format!("{line}\n"));
    fx.write("events.jsonl", &log);
}

fn run(fx: &Fx, args: &[&str]) -> std::process::Output {
    bin()
        .args(args)
        .args(["--folder", &fx.folder_str()])
        .output()
        .unwrap()
}

#[test]
fn log_text_escapes_a_hostile_summary_and_json_keeps_serde_escapes() {
    let fx = Fx::new(&["server", "reader"]);
    append_raw(
        &fx,
        &serde_json::json!({"seq": 2, "from": "server", "event": "blocked", "at": "2026-01-01T00:00:00Z", "summary": HOSTILE, "reply_to": 1}),
    );
    let text = stdout(&run(&fx, &["log"]));
    assert!(!raw_escape_in(&text), "{text:?}");
    assert!(
        text.contains("blocked (reply to 1): \\u{1b}[31mred\\u{1b}[0m \\u{1b}]0;pwned\\u{7}\n"),
        "{text:?}"
    );
    // The clean first line is untouched.
    assert!(text.starts_with("seq 1  "), "{text:?}");
    assert!(text.lines().next().unwrap().ends_with(
        "initialized (doc protocol.json): Initialized ACP schema v2 collaboration workspace."
    ));
    let json = stdout(&run(&fx, &["log", "--format", "json"]));
    assert!(!raw_escape_in(&json), "{json:?}");
    let last: serde_json::Value = serde_json::from_str(json.lines().last().unwrap()).unwrap();
    assert_eq!(last["summary"], HOSTILE);
}

#[test]
fn validate_report_escapes_a_hostile_seq() {
    let fx = Fx::new(&["server", "reader"]);
    append_raw(
        &fx,
        &serde_json::json!({"seq": HOSTILE, "from": "server", "event": "blocked", "at": "2026-01-01T00:00:00Z", "summary": "s", "reply_to": 1}),
    );
    let out = run(&fx, &["validate"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(!raw_escape_in(&text), "{text:?}");
    assert!(
        text.contains("ERROR: events.jsonl: expected seq 2, found \\u{1b}[31mred\\u{1b}[0m \\u{1b}]0;pwned\\u{7}\n"),
        "{text:?}"
    );
    assert!(
        text.starts_with("ACP validation failed\nERROR: "),
        "{text:?}"
    );
    let json = stdout(&run(&fx, &["validate", "--format", "json"]));
    assert!(json.contains("found \\u001b[31mred"), "{json:?}");
}

#[test]
fn next_and_wait_escape_hostile_names_on_stdout_and_stderr() {
    let fx = Fx::new(&["server", "reader"]);
    append_raw(
        &fx,
        &serde_json::json!({"seq": 2, "from": HOSTILE, "event": "blocked", "at": "2026-01-01T00:00:00Z", "summary": "s", "reply_to": 1}),
    );
    fx.edit_protocol(|p| p["waitingFor"] = serde_json::json!([HOSTILE]));
    let next = stdout(&run(&fx, &["next", "--participant", "reader"]));
    assert!(!raw_escape_in(&next), "{next:?}");
    assert!(
        next.contains("last event: seq 2 blocked from \\u{1b}[31mred"),
        "{next:?}"
    );
    let wait = run(
        &fx,
        &[
            "wait",
            "--participant",
            "reader",
            "--timeout",
            "0.2",
            "--interval",
            "0.1",
        ],
    );
    let (out, err) = (stdout(&wait), stderr(&wait));
    assert_eq!(wait.status.code(), Some(1), "{err}");
    assert!(
        !raw_escape_in(&out) && !raw_escape_in(&err),
        "{out:?} {err:?}"
    );
    assert!(
        out.starts_with("waiting: waiting for \\u{1b}[31mred"),
        "{out:?}"
    );
    assert!(
        err.starts_with("timeout: waiting for \\u{1b}[31mred"),
        "{err:?}"
    );
    let refused = run(&fx, &["next", "--participant", HOSTILE]);
    let err = stderr(&refused);
    assert!(!raw_escape_in(&err), "{err:?}");
    assert!(
        err.starts_with("error: participant '\\u{1b}[31mred"),
        "{err:?}"
    );
}
