//! Serialised appends (`docs/collab-protocol.md#concurrency`): eight processes append 200 events each as
//! fast as they can; the log ends with exactly 1,600 new contiguous events,
//! `protocol.json` parses for a concurrent reader throughout, and the folder
//! validates.
//!
//! The worker processes are this test binary re-run with an environment
//! variable naming the folder, so each worker is a real separate process
//! taking the advisory lock.

use std::process::{Command, Stdio};

use crate::support::Fx;
use acp_collab::{self as collab, read_events, AppendOptions};

const WORKERS: usize = 8;
const PER_WORKER: usize = 200;
const FOLDER_VAR: &str = "ACP_COLLAB_CONCURRENCY_FOLDER";
const WORKER_VAR: &str = "ACP_COLLAB_CONCURRENCY_WORKER";

/// The worker body; a no-op unless started by the test below.
#[test]
fn concurrency_worker() {
    let (Ok(folder), Ok(worker)) = (std::env::var(FOLDER_VAR), std::env::var(WORKER_VAR)) else {
        return;
    };
    let sender = if worker.parse::<usize>().unwrap().is_multiple_of(2) {
        "server"
    } else {
        "reader"
    };
    for i in 0..PER_WORKER {
        collab::append(&AppendOptions {
            folder: folder.clone(),
            participant: sender.into(),
            event: "deliverable_drafted".into(),
            summary: format!("worker {worker} draft {i}"),
            doc: Some("deliverables/notes.md".into()),
            reply_to: Some(1),
            role: Some("supporting".into()),
            sha256: None,
        })
        .unwrap_or_else(|e| panic!("worker {worker} append {i}: {e}"));
    }
}

#[test]
fn eight_processes_appending_200_events_each_keep_the_log_contiguous() {
    let fx = Fx::in_memory(&["server", "reader"]);
    fx.edit_protocol(|p| {
        p["deliverables"]["supporting"] =
            serde_json::json!([{"type": "custom", "file": "notes.md"}]);
    });
    fx.write("deliverables/notes.md", "# Notes\nStatus: Draft\n");

    let exe = std::env::current_exe().unwrap();
    // The harness names a test by its module path below the crate root.
    let (_, module) = module_path!().split_once("::").unwrap();
    let worker_test = format!("{module}::concurrency_worker");
    let mut children: Vec<_> = (0..WORKERS)
        .map(|i| {
            Command::new(&exe)
                .args(["--exact", &worker_test, "--test-threads=1", "--quiet"])
                .env(FOLDER_VAR, &fx.folder)
                .env(WORKER_VAR, i.to_string())
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();

    // Read concurrently until every worker is done.
    let mut reads: u64 = 0;
    loop {
        let text = std::fs::read_to_string(fx.path("protocol.json")).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("torn protocol.json during appends: {e}\n{text}"));
        assert_eq!(parsed["currentPhase"], "drafting");
        reads += 1;
        // Now and then a full log read, which must never fail mid-append.
        if reads.is_multiple_of(50) {
            let log = read_events(&fx.folder).unwrap();
            assert!(log.errors.is_empty(), "{:?}", log.errors);
        }
        // Leave the CPU to the writers between reads.
        std::thread::sleep(std::time::Duration::from_millis(1));
        if children.iter_mut().all(|c| c.try_wait().unwrap().is_some()) {
            break;
        }
    }
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a worker failed");
    }
    assert!(reads > 0);

    let log = read_events(&fx.folder).unwrap();
    assert!(log.errors.is_empty() && log.warnings.is_empty());
    assert_eq!(log.events.len(), 1 + WORKERS * PER_WORKER);
    for (i, event) in log.events.iter().enumerate() {
        assert_eq!(
            event["seq"],
            serde_json::json!(i + 1),
            "seq must be contiguous"
        );
    }
    fx.assert_valid();
}
