//! Fault injection beyond `tests/build.rs` (which kills `build` 64 times by staged-file count,
//! and fills and freezes its output folder): SIGKILL at random points of `acp-collab append`,
//! `pack` and `update --apply`. Nothing acknowledged is lost, no file is ever torn (each is
//! the old or the new complete version), and the next run repairs or completes whatever a
//! kill left.
//!
//! `ACP_REGISTRY_LONG_TESTS=1` (set by `.ci/run`) runs many more kills.
#![cfg(unix)]

#[path = "../crates/collab/tests/collab_support/mod.rs"]
mod collab_support;
mod common;
mod net_server;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use collab_support::Fx;
use common::pack::{PackFx, ID, LINUX};
use common::sha256_hex;
use net_server::{Reply, Server};
use serde_json::json;

fn long() -> bool {
    std::env::var_os("ACP_REGISTRY_LONG_TESTS").is_some_and(|v| v == "1")
}

/// A small deterministic generator: the kill points differ per iteration and per run of the
/// suite are the same, so a failure can be replayed.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn append(fx: &Fx, summary: &str) -> Command {
    let mut command = Command::new(collab_support::exe());
    command
        .args([
            "append",
            "--folder",
            &fx.folder_str(),
            "--participant",
            "alice",
        ])
        .args([
            "--event",
            "blocked",
            "--reply-to",
            "1",
            "--summary",
            summary,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
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
    let kills = if long() { 300 } else { 40 };
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let mut acknowledged = Vec::new();
    for i in 0..kills {
        let summary = format!("kill {i}");
        let mut child = append(&fx, &summary).spawn().unwrap();
        // 0 to 30 ms: before the lock, between the event line and the protocol.json rename,
        // and after the process finished on its own.
        std::thread::sleep(Duration::from_micros(next(&mut rng) % 30_000));
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

/// Run `command` until `kill_now(elapsed)` says so, then SIGKILL it: `None` when the kill
/// landed, else whether the run succeeded on its own.
fn run_then_kill(command: &mut Command, kill_now: impl Fn(Duration) -> bool) -> Option<bool> {
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status.success());
        }
        if kill_now(started.elapsed()) {
            let _ = child.kill();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// How long `command` takes when nothing kills it (it must succeed).
fn timed(command: &mut Command) -> Duration {
    let started = Instant::now();
    let status = command.stdout(Stdio::null()).status().unwrap();
    assert!(status.success(), "the unkilled reference run failed");
    started.elapsed()
}

/// A delay from 0 to 1.3 times `full`, so kills land in every phase and after the end.
fn delay(rng: &mut u64, full: Duration) -> Duration {
    let span = (full.as_micros() as u64 * 13 / 10).max(1);
    Duration::from_micros(next(rng) % span)
}

/// File names in `dir`, sorted (leftover temporary files show up here).
fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// What `pack` owns: the archive (by sha256), its `.sha256` line and the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Packed {
    archive: Option<String>,
    sidecar: Option<String>,
    manifest: String,
}

fn packed(fx: &PackFx) -> Packed {
    let archive = fx.archive(LINUX);
    let sidecar = archive.with_file_name(format!(
        "{}.sha256",
        archive.file_name().unwrap().to_string_lossy()
    ));
    Packed {
        archive: std::fs::read(&archive).ok().map(|b| sha256_hex(&b)),
        sidecar: std::fs::read_to_string(sidecar).ok(),
        manifest: fx.manifest(),
    }
}

/// A stand-in binary of 2 MiB (so writing the archive takes a while), one of two versions.
fn stand_in(version: u64) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1d ^ version;
    (0..2 << 20).map(|_| next(&mut state) as u8).collect()
}

fn pack_command(fx: &PackFx) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_acp-registry"));
    command.args(fx.args(LINUX, &[])).current_dir(&fx.root);
    command
}

/// The complete result of packing `binary` from scratch, and how long it took.
fn pack_reference(binary: &[u8]) -> (Packed, Duration) {
    let fx = PackFx::new();
    std::fs::write(fx.root.join("_bin/acp-collab"), binary).unwrap();
    let took = timed(&mut pack_command(&fx));
    (packed(&fx), took)
}

#[test]
fn sigkill_at_random_points_of_pack_leaves_the_old_or_the_new_package_and_the_next_pack_completes()
{
    let binaries = [stand_in(1), stand_in(2)];
    let (ref_a, took) = pack_reference(&binaries[0]);
    let (ref_b, _) = pack_reference(&binaries[1]);
    let fx = PackFx::new();
    let (original, entry_files) = (fx.manifest(), names(&fx.root.join(ID)));
    let kills = if long() { 64 } else { 8 };
    let mut rng = 0x51_7cc1_b727_220a_u64;
    for i in 0..kills {
        if i % 2 == 0 {
            // From nothing: the first archive of a version is created, not replaced.
            let _ = std::fs::remove_dir_all(fx.root.join("dist"));
            std::fs::write(fx.root.join(ID).join("agent.json"), &original).unwrap();
        }
        let (binary, next) = if i % 2 == 0 {
            (&binaries[1], &ref_b)
        } else {
            (&binaries[0], &ref_a)
        };
        std::fs::write(fx.root.join("_bin/acp-collab"), binary).unwrap();
        let before = packed(&fx);
        let folder = fx.archive(LINUX).parent().unwrap().to_path_buf();
        let files = names(&folder);
        // Half the kills by progress (the moment a file appears beside the archive, a
        // temporary one or the archive itself), half at a random time.
        let at = delay(&mut rng, took);
        let by_progress = i % 4 < 2;
        let kill_now = |t: Duration| {
            if by_progress {
                names(&folder) != files
            } else {
                t >= at
            }
        };
        let outcome = run_then_kill(&mut pack_command(&fx), kill_now);
        let now = packed(&fx);
        assert_ne!(outcome, Some(false), "kill {i}: pack failed on its own");
        let torn = [
            now.archive != before.archive && now.archive != next.archive,
            now.sidecar != before.sidecar && now.sidecar != next.sidecar,
            now.manifest != before.manifest && now.manifest != next.manifest,
        ];
        assert_eq!(
            torn, [false; 3],
            "kill {i} ({outcome:?}) left a torn package: {now:?}"
        );
        assert_the_next_pack_completes(&fx, next, &entry_files, i);
    }
}

/// An unkilled pack after kill `i` exits 0, leaves the `next` package and no other file.
fn assert_the_next_pack_completes(
    fx: &PackFx,
    next: &Packed,
    entry_files: &BTreeSet<String>,
    i: u32,
) {
    let run = fx.pack(LINUX, &[]);
    assert_eq!(
        run.code, 0,
        "pack after kill {i}: {}{}",
        run.stdout, run.stderr
    );
    assert_eq!(packed(fx), *next, "pack after kill {i}");
    let archive = fx.archive(LINUX);
    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    let expected = BTreeSet::from([name.clone(), format!("{name}.sha256")]);
    assert_eq!(
        names(archive.parent().unwrap()),
        expected,
        "leftovers after kill {i}"
    );
    assert_eq!(
        &names(&fx.root.join(ID)),
        entry_files,
        "leftovers after kill {i}"
    );
}

const AGENTS: usize = 12;

fn npm_agent(i: usize) -> String {
    format!("agent-{i:02}")
}

/// An npm server offering 1.1.0 of every agent, and a registry of them all at 1.0.0.
fn update_fixture() -> (Server, tempfile::TempDir) {
    let server = Server::start(|request, _| {
        let known = (0..AGENTS).any(|i| request.path == format!("/npm/{}", npm_agent(i)));
        if !known {
            return Reply::status(404);
        }
        Reply::json(&json!({"name": "x", "dist-tags": {"latest": "1.1.0"},
                            "versions": {"1.0.0": {}, "1.1.0": {}}}))
    });
    let base = server.url("").replacen("http://", "https://", 1);
    let entries: Vec<(String, String)> = (0..AGENTS)
        .map(|i| {
            let id = npm_agent(i);
            let text = common::update::manifest(
                &id,
                "1.0.0",
                &common::update::npx(&format!("{id}@1.0.0")),
            );
            (id, text)
        })
        .collect();
    let entries: Vec<(&str, String)> = entries
        .iter()
        .map(|(id, t)| (id.as_str(), t.clone()))
        .collect();
    (server, common::update::registry(&base, &entries))
}

/// Files beside the manifests other than `agent.json` and `icon.svg`.
fn temporary_files(root: &Path) -> usize {
    (0..AGENTS)
        .map(|i| names(&root.join(npm_agent(i))).len() - 2)
        .sum()
}

fn manifests(root: &Path) -> Vec<String> {
    (0..AGENTS)
        .map(|i| common::update::read(root, &npm_agent(i)))
        .collect()
}

#[test]
fn sigkill_at_random_points_of_update_apply_leaves_each_manifest_old_or_new_and_the_next_run_completes(
) {
    let (_server, reference) = update_fixture();
    let old = manifests(reference.path());
    let took = timed(&mut common::update::command(reference.path(), &["--apply"]));
    let new = manifests(reference.path());
    assert!(
        old.iter().zip(&new).all(|(o, n)| o != n),
        "the reference run updated nothing"
    );
    let (_server, root) = update_fixture();
    let kills = if long() { 64 } else { 8 };
    let mut rng = 0x2f8b_3c1d_9e4a_6b57_u64;
    let mut partial = 0;
    for i in 0..kills {
        if manifests(root.path()) == new {
            for (k, text) in old.iter().enumerate() {
                std::fs::write(root.path().join(npm_agent(k)).join("agent.json"), text).unwrap();
            }
        }
        let mut command = common::update::command(root.path(), &["--apply"]);
        // Half the kills the moment a temporary manifest exists, half at a random time.
        let at = delay(&mut rng, took);
        let by_progress = i % 2 == 0;
        let kill_now = |t: Duration| {
            if by_progress {
                temporary_files(root.path()) > 0
            } else {
                t >= at
            }
        };
        let outcome = run_then_kill(&mut command, kill_now);
        assert_ne!(outcome, Some(false), "kill {i}: update failed on its own");
        let now = manifests(root.path());
        for (k, text) in now.iter().enumerate() {
            assert!(
                text == &old[k] || text == &new[k],
                "kill {i} tore {}: {text}",
                npm_agent(k)
            );
        }
        if now != old && now != new {
            partial += 1;
        }
        if outcome == Some(true) {
            assert_eq!(now, new, "a finished run applied everything");
        }
    }
    // The next run, not killed, completes the update and leaves no temporary file.
    let run = common::update::update(root.path(), &["--apply"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(manifests(root.path()), new);
    assert_eq!(temporary_files(root.path()), 0, "leftovers");
    eprintln!("{partial} of {kills} kills left some manifests updated and others not");
}
