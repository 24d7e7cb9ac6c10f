//! Fuzz the collaboration validator: arbitrary folder contents must never
//! panic it. Run with `cargo fuzz run collab_validate` from `fuzz/`.
//!
//! The input is split on NUL bytes into the contents of the files the
//! validator reads; a missing chunk means a missing file.
#![no_main]

use libfuzzer_sys::fuzz_target;

const FILES: [&str; 8] = [
    "protocol.json",
    "events.jsonl",
    "review.md",
    "decisions.md",
    "readiness.md",
    "conclusion.md",
    "deliverables/design-spec.md",
    "proposal.md",
];

fuzz_target!(|data: &[u8]| {
    let tmp = tempfile::tempdir().expect("tempdir");
    let folder = tmp.path();
    std::fs::create_dir_all(folder.join("deliverables")).expect("mkdir");
    for (name, chunk) in FILES.iter().zip(data.split(|b| *b == 0)) {
        std::fs::write(folder.join(name), chunk).expect("write");
    }
    if let Some(folder) = folder.to_str() {
        // Errors are fine; only a panic is a finding.
        if let Ok(report) = acp_collab::validate(folder) {
            let _ = report.render_text();
            let _ = report.render_json();
        }
    }
});
