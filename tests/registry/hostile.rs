//! The hostile corpus: what a public registry receives (a shared collaboration folder's is
//! the collab group's `hostile.rs`), one case per row with its expectation. Huge inputs (100 MB manifests, 50 MB lines) are generated
//! here rather than committed. Every binary run is bounded by a timeout and a memory limit
//! (`acp_test_kit::bounded`), so a parser that hangs, recurses without bound or reads everything
//! fails the case instead of the machine.
#![cfg(unix)]

use crate::common;

use acp_test_kit::bounded::run_bin;
use acp_test_kit::Run;

const BIN: &str = crate::REGISTRY;

const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">\
<circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"currentColor\"/></svg>\n";

fn manifest(extra: &str) -> Vec<u8> {
    common::valid_manifest("agent-x", extra).into_bytes()
}

/// Validate a one-entry registry holding `agent.json` and `icon.svg`.
fn validate(agent: &[u8], icon: &[u8]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    acp_test_kit::write_tree(
        tmp.path(),
        &[("agent-x/agent.json", agent), ("agent-x/icon.svg", icon)],
    );
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
    (run.exited(), codes)
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
    let error = acp_registry::parse(&text).expect_err("too deep");
    assert!(error.message.contains("nesting"), "{}", error.message);
    assert!(acp_registry::Editor::parse(&text).is_err());
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
