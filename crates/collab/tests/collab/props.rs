//! Property tests: arbitrary folder contents never panic the validator (or
//! next/append), and replaying a valid log is deterministic.

use std::collections::BTreeMap;

use acp_collab::{self as collab, replay, spec::EVENTS, AppendOptions, Event, Readiness};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Keys the protocol actually reads, so generated objects hit real code paths.
const KEYS: &[&str] = &[
    "protocol",
    "schemaVersion",
    "currentPhase",
    "objective",
    "participants",
    "completionGates",
    "waitingFor",
    "proposalOwner",
    "deliverables",
    "repoRoot",
    "mode",
    "dir",
    "primary",
    "supporting",
    "attachments",
    "type",
    "file",
    "checklist",
    "frozen",
    "id",
    "source",
    "text",
    "seq",
    "from",
    "event",
    "at",
    "summary",
    "doc",
    "reply_to",
    "role",
    "sha256",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..20).prop_map(|n| json!(n)),
        Just(json!(2.0)),
        prop::sample::select(vec![
            "acp",
            "a",
            "b",
            "",
            " ",
            "drafting",
            "external",
            "internal",
            "custom",
            "adr",
            "x.md",
            "../x.md",
            "/abs",
            "deliverables",
            "primary",
            "supporting",
            "2026-11-30T00:00:00Z",
            "conclusion.md",
            "deliverables/design-spec.md",
            "blocked",
            "initialized",
        ])
        .prop_map(|s| json!(s)),
        "[a-z_.:/ -]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(KEYS.to_vec()), inner, 0..8).prop_map(
                |m| { Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()) }
            ),
        ]
    })
}

fn event_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,30}",
        (
            0i64..8,
            prop::sample::select(vec!["a", "b", "ghost"]),
            prop::sample::select(EVENTS.to_vec()),
            prop::option::of(json_value()),
            prop::option::of(0i64..8),
            prop::option::of(prop::sample::select(vec!["primary", "supporting", "x"])),
        )
            .prop_map(|(seq, from, event, doc, reply_to, role)| {
                let mut m = serde_json::Map::new();
                m.insert("seq".into(), json!(seq));
                m.insert("from".into(), json!(from));
                m.insert("event".into(), json!(event));
                m.insert("at".into(), json!("2026-11-30T00:00:00Z"));
                m.insert("summary".into(), json!(""));
                if let Some(d) = doc {
                    m.insert("doc".into(), d);
                }
                if let Some(r) = reply_to {
                    m.insert("reply_to".into(), json!(r));
                }
                if let Some(r) = role {
                    m.insert("role".into(), json!(r));
                }
                Value::Object(m).to_string()
            }),
        json_value().prop_map(|v| v.to_string()),
    ]
}

fn markdown() -> impl Strategy<Value = Option<String>> {
    let line = prop_oneof![
        "[ -~]{0,20}",
        prop::sample::select(vec![
            "## Problem",
            "### D1. x",
            "### D2.",
            "- Decision: a",
            "- Reflected in: x.md",
            "Status: Frozen",
            "- [unresolved]",
            "- [blocking] TBD",
            "- [deferred_nonblocking]",
            "- [x] Ready to implement",
            "## t - a - seq 2",
            "## t - b - seq 99999999999999999999",
            "- [proceed] go",
            "- [blocked]",
            "## Decision Outcome",
            "TODO",
            "待定",
            "Reviewed primary deliverable:",
            "",
        ])
        .prop_map(str::to_owned),
    ];
    prop::option::of(prop::collection::vec(line, 0..12).prop_map(|l| l.join("\n")))
}

#[derive(Debug, Clone)]
struct FolderContents {
    protocol: Option<String>,
    events: Option<String>,
    files: BTreeMap<&'static str, Option<String>>,
}

fn folder_contents() -> impl Strategy<Value = FolderContents> {
    let protocol = prop_oneof![
        Just(None),
        "[ -~]{0,40}".prop_map(Some),
        json_value().prop_map(|v| Some(v.to_string())),
    ];
    let events = prop::option::of(
        (prop::collection::vec(event_line(), 0..10), any::<bool>())
            .prop_map(|(lines, newline)| lines.join("\n") + if newline { "\n" } else { "" }),
    );
    (protocol, events, prop::collection::vec(markdown(), 6)).prop_map(|(protocol, events, md)| {
        let names = [
            "review.md",
            "decisions.md",
            "readiness.md",
            "conclusion.md",
            "proposal.md",
            "deliverables/x.md",
        ];
        FolderContents {
            protocol,
            events,
            files: names.into_iter().zip(md).collect(),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn arbitrary_folder_contents_never_panic_the_commands(contents in folder_contents()) {
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path();
        let write = |name: &str, text: &Option<String>| {
            if let Some(t) = text {
                let p = folder.join(name);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, t).unwrap();
            }
        };
        write("protocol.json", &contents.protocol);
        write("events.jsonl", &contents.events);
        for (name, text) in &contents.files {
            write(name, text);
        }
        let f = folder.display().to_string();
        // Results may be errors; only a panic fails the property.
        if let Ok(report) = collab::validate(&f) {
            let _ = report.render_text();
            let _ = report.render_json();
        }
        let _ = collab::next_action(&f, "a");
        let _ = collab::append(&AppendOptions {
            folder: f,
            participant: "a".into(),
            event: "decision_accepted".into(),
            reply_to: Some(1),
            ..AppendOptions::default()
        });
    }

    #[test]
    fn replaying_a_valid_log_twice_gives_the_same_state(choices in prop::collection::vec((0usize..13, 0usize..3, any::<bool>()), 0..60)) {
        let participants = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let ready = Readiness::default();
        let mut log: Vec<Event> = vec![json!({"seq": 1, "from": "a", "event": "initialized"})
            .as_object()
            .unwrap()
            .clone()
            .into()];
        // A random walk that keeps only events the state machine accepts.
        for (event, sender, primary) in choices {
            let seq = log.len() as i64 + 1;
            let mut e = serde_json::Map::new();
            e.insert("seq".into(), json!(seq));
            e.insert("from".into(), json!(participants[sender]));
            e.insert("event".into(), json!(EVENTS[event]));
            if primary {
                e.insert("role".into(), json!("primary"));
            }
            if EVENTS[event] == "completed" {
                e.insert("doc".into(), json!("conclusion.md"));
            }
            let mut candidate = log.clone();
            candidate.push(e.into());
            if replay(&participants, &candidate, Some(&ready)).1.is_empty() {
                log = candidate;
            }
        }
        let (first, errors_first) = replay(&participants, &log, None);
        let (second, errors_second) = replay(&participants, &log, None);
        prop_assert!(errors_first.is_empty());
        prop_assert_eq!(&first, &second);
        prop_assert_eq!(errors_first, errors_second);
        prop_assert!(first.phase.is_some());
    }
}
