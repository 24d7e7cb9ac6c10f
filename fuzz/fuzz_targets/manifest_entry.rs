//! Arbitrary bytes as `agent.json` and `icon.svg` (split at the first NUL) never panic any rule
//! or renderer. `cargo fuzz run manifest_entry`
#![no_main]

use acp_registry::{render, ReportFormat};
use acp_registry::Report;
use acp_registry::{check_entry, EntryDir, Policy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (manifest, icon) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let dir = tempfile::tempdir().unwrap();
    let entry = dir.path().join("agent-x");
    std::fs::create_dir(&entry).unwrap();
    std::fs::write(entry.join("agent.json"), manifest).unwrap();
    std::fs::write(entry.join("icon.svg"), icon).unwrap();
    let checked = check_entry(
        &EntryDir {
            name: "agent-x".into(),
            path: entry,
            display: "agent-x".into(),
        },
        &Policy::default(),
    );
    let mut report = Report {
        diagnostics: checked.diagnostics,
        entries: 1,
        ..Default::default()
    };
    for source in checked.sources {
        report.sources.insert(source.path.clone(), source);
    }
    report.finish();
    for format in [
        ReportFormat::Human,
        ReportFormat::Json,
        ReportFormat::Github,
        ReportFormat::Sarif,
    ] {
        render(&report, format, true);
    }
});
