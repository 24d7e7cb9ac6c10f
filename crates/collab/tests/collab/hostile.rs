//! The hostile corpus of a shared collaboration folder: torn, garbage and huge event lines,
//! leftovers of killed writers, over-long ACP lines. Every binary run is bounded by a timeout
//! and a memory limit (`acp_test_kit::bounded`).
#![cfg(unix)]

use acp_test_kit::bounded::run_bin;
use acp_test_kit::Run;

use crate::support::Fx;
use crate::COLLAB;

/// A collaboration with a few events, validated by the binary as JSON.
fn collab_validate(fx: &Fx) -> (Run, serde_json::Value) {
    let run = run_bin(
        COLLAB,
        &["validate", "--folder", &fx.folder_str(), "--format", "json"],
        false,
    );
    let json = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
    (run, json)
}

fn events_fixture() -> Fx {
    let fx = Fx::new(&["alice", "bob"]);
    fx.ok("alice", "blocked", &[]);
    fx.ok("bob", "blocked", &[]);
    fx
}

fn messages(json: &serde_json::Value, key: &str) -> Vec<String> {
    json[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_torn_last_event_line_is_one_warning_and_the_next_append_writes_nothing_onto_it() {
    let fx = events_fixture();
    let clean = messages(&collab_validate(&fx).1, "warnings");
    let torn = fx.read("events.jsonl") + "{\"seq\": 3, \"event\": \"bloc";
    fx.write("events.jsonl", &torn);
    let (_, json) = collab_validate(&fx);
    let added: Vec<String> = messages(&json, "warnings")
        .into_iter()
        .filter(|w| !clean.contains(w))
        .collect();
    assert_eq!(added.len(), 1, "{json}");
    assert!(added[0].contains("incomplete last line"), "{added:?}");
    // docs/collab-protocol.md#partial-last-line: nothing is glued onto it or deleted.
    assert!(fx
        .refused("alice", "blocked", &[])
        .contains("remove it or restore"));
    assert_eq!(fx.read("events.jsonl"), torn);
}

#[test]
fn a_garbage_line_in_the_middle_is_one_error_not_a_cascade() {
    let fx = events_fixture();
    let before = messages(&collab_validate(&fx).1, "errors");
    fx.edit("events.jsonl", |t| {
        let mut lines: Vec<&str> = t.lines().collect();
        lines.insert(lines.len() / 2, "\u{1b}[31mnot json at all\u{0}");
        lines.join("\n") + "\n"
    });
    let (_, json) = collab_validate(&fx);
    let added: Vec<String> = messages(&json, "errors")
        .into_iter()
        .filter(|e| !before.contains(e))
        .collect();
    assert_eq!(added.len(), 1, "{json}");
    assert!(added[0].contains("invalid JSON"), "{added:?}");
}

#[test]
fn a_50_mb_event_line_is_one_error_within_the_limits() {
    let fx = events_fixture();
    let before = messages(&collab_validate(&fx).1, "errors");
    let huge = format!(
        "{{\"seq\": 3, \"event\": \"blocked\", \"summary\": \"{}\"\n",
        "x".repeat(50 << 20)
    );
    fx.edit("events.jsonl", |t| t + &huge);
    let (run, json) = collab_validate(&fx);
    let added: Vec<String> = messages(&json, "errors")
        .into_iter()
        .filter(|e| !before.contains(e))
        .collect();
    assert_eq!(added.len(), 1, "{json}");
    assert!(
        run.stdout.len() < 64 << 10,
        "the line is quoted whole: {} bytes",
        run.stdout.len()
    );
}

#[test]
fn leftover_temporary_files_of_a_killed_writer_are_reported_then_cleaned_by_the_next_append() {
    let fx = events_fixture();
    let leftover = fx.path(".protocol.json.1f2e3d.tmp");
    std::fs::write(&leftover, "{\"half\": ").unwrap();
    let (_, json) = collab_validate(&fx);
    assert!(
        messages(&json, "warnings")
            .iter()
            .any(|w| w.contains(".protocol.json.1f2e3d.tmp")),
        "{json}"
    );
    fx.ok("bob", "blocked", &[]);
    assert!(
        !leftover.exists(),
        "the next writer removes what a killed writer left"
    );
}

/// From the `acp_lines` fuzz target (fuzz/corpus/acp_lines/regression-toolong-seen): an
/// over-long line is dropped once, however the stream is cut, and the lines after it are kept.
#[test]
fn an_over_long_acp_line_is_dropped_once_whatever_the_chunking() {
    use acp_registry_core::acp::{Frame, LineBuffer};
    let stream = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}\r\n",
    )
    .as_bytes();
    for step in 1..=stream.len() {
        let mut buffer = LineBuffer::new(64);
        let frames: Vec<Frame> = stream.chunks(step).flat_map(|c| buffer.push(c)).collect();
        assert!(
            matches!(frames[0], Frame::TooLong { seen } if seen > 64),
            "{step}: {frames:?}"
        );
        assert_eq!(
            frames[1..],
            [Frame::Line(
                b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}".to_vec()
            )],
            "{step}"
        );
    }
}
