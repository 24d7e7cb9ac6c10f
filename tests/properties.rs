//! Property tests: arbitrary input never panics the validator, and spans stay in bounds.

use acp_registry::commands::validate::{render, Format};
use acp_registry::rules::{check_entry, EntryDir, Policy};
use proptest::prelude::*;

fn check_bytes(manifest: &[u8], icon: &[u8]) -> acp_registry::rules::EntryReport {
    let dir = tempfile::tempdir().unwrap();
    let entry = dir.path().join("agent-x");
    std::fs::create_dir(&entry).unwrap();
    std::fs::write(entry.join("agent.json"), manifest).unwrap();
    std::fs::write(entry.join("icon.svg"), icon).unwrap();
    check_entry(
        &EntryDir {
            name: "agent-x".into(),
            path: entry,
            display: "agent-x".into(),
        },
        &Policy::default(),
    )
}

/// JSON-ish text: mostly valid structure with hostile strings, so parsing gets past syntax.
fn jsonish() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("null".to_string()),
        Just("true".to_string()),
        "[a-z/:.@0-9-]{0,20}".prop_map(|s| format!("\"{s}\"")),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("id".to_string()),
                        Just("version".to_string()),
                        Just("distribution".to_string()),
                        Just("binary".to_string()),
                        Just("npx".to_string()),
                        Just("preview".to_string()),
                        Just("linux-x86_64".to_string()),
                        Just("archive".to_string()),
                        Just("package".to_string()),
                        Just("env".to_string()),
                        Just("auth".to_string()),
                        Just("tags".to_string()),
                        "[a-z_]{1,8}",
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|v| format!(
                "{{{}}}",
                v.iter()
                    .map(|(k, v)| format!("\"{k}\": {v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_bytes_never_panic(manifest in prop::collection::vec(any::<u8>(), 0..512),
                                   icon in prop::collection::vec(any::<u8>(), 0..512)) {
        check_bytes(&manifest, &icon);
    }

    #[test]
    fn arbitrary_json_manifests_never_panic_and_spans_stay_in_bounds(manifest in jsonish(),
                                                                      icon in "<svg[ -~]{0,200}") {
        let report = check_bytes(manifest.as_bytes(), icon.as_bytes());
        for d in &report.diagnostics {
            if let Some(location) = &d.location {
                let len = if d.file.ends_with("agent.json") { manifest.len() } else { icon.len() };
                prop_assert!(location.span.start <= location.span.end && location.span.end <= len,
                    "{d:?}");
                prop_assert!(location.start.line >= 1 && location.start.column >= 1);
            }
        }
        // Every renderer copes with whatever the rules produced.
        let mut rendered = acp_registry::diagnostics::Report {
            diagnostics: report.diagnostics.clone(),
            entries: 1,
            ..Default::default()
        };
        for source in &report.sources {
            rendered.sources.insert(source.path.clone(), source.clone());
        }
        rendered.finish();
        for format in [Format::Human, Format::Json, Format::Github, Format::Sarif] {
            render(&rendered, format, true);
        }
    }
}
