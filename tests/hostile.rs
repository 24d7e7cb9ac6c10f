//! The hostile corpus: what a public registry and a shared collaboration folder receive, one
//! case per row with its expectation. Huge inputs (100 MB manifests, 50 MB lines) are generated
//! here rather than committed. Every binary run is bounded by a timeout and a memory limit
//! (`common::bounded`), so a parser that hangs, recurses without bound or reads everything
//! fails the case instead of the machine.
#![cfg(unix)]

#[path = "../crates/collab/tests/collab_support/mod.rs"]
mod collab_support;
mod common;

use collab_support::Fx;
use common::bounded::{run_bin, Run};

const BIN: &str = env!("CARGO_BIN_EXE_acp-registry");

const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">\
<circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"currentColor\"/></svg>\n";

fn manifest(extra: &str) -> Vec<u8> {
    common::valid_manifest("agent-x", extra).into_bytes()
}

/// Validate a one-entry registry holding `agent.json` and `icon.svg`.
fn validate(agent: &[u8], icon: &[u8]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let entry = tmp.path().join("agent-x");
    std::fs::create_dir(&entry).unwrap();
    std::fs::write(entry.join("agent.json"), agent).unwrap();
    std::fs::write(entry.join("icon.svg"), icon).unwrap();
    let root = tmp.path().to_str().unwrap();
    run_bin(
        BIN,
        &["validate", "--registry", root, "--format", "json"],
        false,
    )
}

/// `(exit code, sorted distinct codes)` of a run.
fn outcome(run: &Run) -> (Option<i32>, Vec<String>) {
    let mut codes = run.codes();
    codes.sort();
    codes.dedup();
    (run.code, codes)
}

fn assert_outcome(case: &str, run: &Run, code: i32, codes: &[&str]) {
    let want: Vec<String> = codes.iter().map(std::string::ToString::to_string).collect();
    assert_eq!(
        outcome(run),
        (Some(code), want),
        "{case}\nstdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn hostile_manifests_each_give_their_one_expected_finding() {
    let deep = |depth: usize| {
        let mut s = "[".repeat(depth);
        s.push_str(&"]".repeat(depth));
        s
    };
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(manifest(""));
    let mut latin1 = manifest(r#" "x_note": "caf"#);
    latin1.extend(b"\xE9\",");
    #[rustfmt::skip]
    let cases: Vec<(&str, Vec<u8>, i32, Vec<&str>)> = vec![
        ("100 MB manifest", manifest(&format!(r#" "x_pad": "{}","#, "a".repeat(100 << 20))), 1, vec!["file-too-large"]),
        ("30,000-deep arrays (under the size cap)", deep(30_000).into_bytes(), 1, vec!["jsonc-syntax"]),
        ("100,000-deep arrays", deep(100_000).into_bytes(), 1, vec!["file-too-large"]),
        ("invalid UTF-8", latin1, 1, vec!["not-utf8"]),
        // Tolerated and dropped, like editors that add one (`rules::decode`).
        ("byte order mark", bom, 0, vec![]),
        ("CRLF line ends", manifest("").iter().flat_map(|&b| if b == b'\n' { vec![b'\r', b'\n'] } else { vec![b] }).collect(), 0, vec![]),
        ("huge numbers", manifest(r#" "x_big": 1e999999, "x_long": 123456789012345678901234567890123456789,"#), 0, vec!["unknown-field"]),
        ("duplicate keys", manifest(r#" "name": "Other Name","#), 1, vec!["duplicate-key"]),
    ];
    for (case, agent, code, codes) in cases {
        assert_outcome(case, &validate(&agent, ICON.as_bytes()), code, &codes);
    }
}

#[test]
fn nesting_100000_deep_is_a_syntax_error_not_a_stack_overflow() {
    let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let error = acp_registry::manifest::parse(&text).expect_err("too deep");
    assert!(error.message.contains("nesting"), "{}", error.message);
    assert!(acp_registry::manifest::edit::Editor::parse(&text).is_err());
}

#[test]
fn hostile_icons_are_refused_without_expanding_or_fetching_anything() {
    let laughs = concat!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE svg [\n<!ENTITY a \"lollollollollollollollollollol\">\n",
        "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n",
        "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">\n",
        "<!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">\n<!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">\n]>\n",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><text>&g;</text></svg>\n"
    );
    let external = concat!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><text>&x;</text></svg>\n"
    );
    let doctype = concat!(
        "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"/>\n"
    );
    for (case, icon) in [
        ("entity expansion", laughs),
        ("external entity", external),
        ("DOCTYPE", doctype),
    ] {
        let run = validate(&manifest(""), icon.as_bytes());
        assert_outcome(case, &run, 1, &["icon-unsafe"]);
        assert!(
            !run.stdout.contains("root:"),
            "{case}: an entity was resolved"
        );
        assert!(
            acp_registry::site::sanitise_icon(icon.as_bytes()).is_none(),
            "{case} reaches the site"
        );
    }
}

/// A collaboration with a few events, validated by the binary as JSON.
fn collab_validate(fx: &Fx) -> (Run, serde_json::Value) {
    let run = run_bin(
        collab_support::exe().to_str().unwrap(),
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
    use acp_registry::acp::{Frame, LineBuffer};
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
