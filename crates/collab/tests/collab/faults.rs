//! SIGKILL at random points of `acp-collab append`: nothing acknowledged is lost, no event line
//! is ever torn, and the next append repairs whatever a kill left.
//!
//! `ACP_REGISTRY_LONG_TESTS=1` (set by `.ci/run`) runs many more kills.
#![cfg(unix)]

use std::process::{Command, Stdio};
use std::time::Duration;

use acp_test_kit::{long_tests, xorshift, Append};

use crate::support::Fx;
use crate::COLLAB;

fn append(fx: &Fx, summary: &str) -> Command {
    let mut command = Append::new(COLLAB, &fx.folder)
        .participant("alice")
        .kind("blocked")
        .reply_to("1")
        .summary(summary)
        .command();
    command.stdout(Stdio::null()).stderr(Stdio::null());
    command
}

fn seqs(fx: &Fx) -> Vec<i64> {
    fx.read("events.jsonl")
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("no torn line")["seq"]
                .as_i64()
                .unwrap()
        })
        .collect()
}

#[test]
fn sigkill_at_random_points_of_append_loses_nothing_and_the_next_append_repairs_the_folder() {
    let fx = Fx::new(&["alice", "bob"]);
    let kills = if long_tests() { 300 } else { 40 };
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let mut acknowledged = Vec::new();
    for i in 0..kills {
        let summary = format!("kill {i}");
        let mut child = append(&fx, &summary).spawn().unwrap();
        // 0 to 30 ms: before the lock, between the event line and the protocol.json rename,
        // and after the process finished on its own.
        std::thread::sleep(Duration::from_micros(xorshift(&mut rng) % 30_000));
        let _ = child.kill();
        if child.wait().unwrap().success() {
            acknowledged.push(summary);
        }
        let got = seqs(&fx);
        assert_eq!(
            got,
            (1..=got.len() as i64).collect::<Vec<_>>(),
            "seqs after kill {i}"
        );
    }
    // The next append, not killed, leaves a folder that validates without errors.
    assert!(append(&fx, "after").status().unwrap().success());
    let report = acp_collab::validate(&fx.folder_str()).unwrap();
    assert!(
        report.errors.is_empty() && report.warnings.is_empty(),
        "{report:?}"
    );
    let log = fx.read("events.jsonl");
    for summary in &acknowledged {
        assert!(
            log.contains(&format!("\"{summary}\"")),
            "acknowledged {summary} was lost"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(&fx.folder)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
