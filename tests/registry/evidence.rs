//! Evidence checked, not trusted: `matrix merge` and `build --matrix` against parts and
//! `matrix.json` files forged by hand. Honest parts come from `matrix --shard K/N` over a
//! registry nothing of which runs here (no launch); each test then edits one as a hostile
//! shard would: claiming an entry of a missing shard, a row whose details say it failed marked
//! `passed`, a row dated in the future, rows the selection does not have, malformed dates,
//! oversized documents, terminal escapes. `build --matrix` sets such rows aside with a
//! warning and never counts them `current`.
#![cfg(unix)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common;
use crate::verify::untestable_registry;
use common::verify::Run;

/// The time parts are stamped with and merges are run at.
const NOW: &str = "2026-12-01T08:00:00Z";

/// Six entries split into three honest parts, `1.json` to `3.json` in the returned folder.
struct Parts {
    _registry: acp_test_kit::wheel::Registry,
    dir: PathBuf,
}

impl Parts {
    fn new() -> Parts {
        let ids: Vec<String> = (0..6).map(|i| format!("agent-{i}")).collect();
        let registry = untestable_registry(&ids);
        let dir = registry.root.parent().unwrap().to_path_buf();
        for k in 1..=3 {
            let out = dir.join(format!("{k}.json"));
            let shard = format!("{k}/3");
            let mut command = common::verify::command(
                &registry.root,
                &["matrix", "--shard", &shard, "--out", out.to_str().unwrap()],
            );
            command.arg("--no-cache").env("ACP_REGISTRY_TEST_NOW", NOW);
            let run = common::verify::run_command(&mut command);
            assert_eq!(run.code, 0, "{}", run.all());
        }
        Parts {
            _registry: registry,
            dir,
        }
    }

    fn doc(&self, k: usize) -> Value {
        let text = std::fs::read_to_string(self.dir.join(format!("{k}.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Part `k` as `edit` leaves it, written as `name`.
    fn forge(&self, k: usize, name: &str, edit: impl FnOnce(&mut Value)) -> String {
        let mut doc = self.doc(k);
        edit(&mut doc);
        std::fs::write(
            self.dir.join(name),
            serde_json::to_string_pretty(&doc).unwrap(),
        )
        .unwrap();
        name.to_string()
    }

    /// `matrix merge PARTS --out merged.json` at [`NOW`]; `merged.json` removed first.
    fn merge(&self, parts: &[&str]) -> Run {
        let _ = std::fs::remove_file(self.dir.join("merged.json"));
        common::verify::run_command(
            std::process::Command::new(crate::REGISTRY)
                .args(["matrix", "merge"])
                .args(parts)
                .args(["--out", "merged.json"])
                .env("ACP_REGISTRY_TEST_NOW", NOW)
                .current_dir(&self.dir),
        )
    }

    /// The merge was refused (exit 2, nothing written), saying each of `said`.
    fn assert_refused(&self, parts: &[&str], said: &[&str]) {
        let run = self.merge(parts);
        assert_eq!(run.code, 2, "{parts:?}: {}", run.all());
        for text in said {
            assert!(run.all().contains(text), "{parts:?}, {text}: {}", run.all());
        }
        assert!(
            !self.dir.join("merged.json").exists(),
            "{parts:?}: nothing written"
        );
        assert!(!run.all().contains('\u{1b}'), "escaped: {:?}", run.all());
    }
}

/// The entries of part `doc`.
fn entries(doc: &Value) -> Vec<String> {
    doc["part"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// A row as `matrix` writes one for `id`, whose version and fingerprint the part's `jobs`
/// give: passed, protocol version 1, `session/new` answered.
fn row(doc: &Value, id: &str) -> Value {
    let job = doc["part"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {doc:#}"));
    json!({
        "id": id, "version": job["version"], "distribution": job["distribution"],
        "fingerprint": job["fingerprint"], "verified": NOW, "status": "passed",
        "protocol_version": 1, "agent_info": {"name": id},
        "auth_methods": [{"id": "login", "name": "Log in", "type": "agent", "meta_kinds": []}],
        "methods": {"session/new": "success", "session/list": "success"},
        "unstable_methods": []
    })
}

/// Part 1 with one row for its first entry, changed by `edit`.
fn with_row(parts: &Parts, name: &str, edit: impl FnOnce(&mut Value)) -> String {
    parts.forge(1, name, |doc| {
        let id = entries(doc)[0].clone();
        let mut row = row(doc, &id);
        edit(&mut row);
        doc["agents"] = json!([row]);
    })
}

#[test]
fn merge_refuses_a_part_claiming_an_entry_of_a_missing_shard() {
    let parts = Parts::new();
    let theirs = entries(&parts.doc(2))[0].clone();
    let their_row = row(&parts.doc(2), &theirs);
    // The row alone, and the row with the entry added to the part's own.
    let row_only = parts.forge(1, "row-only.json", |doc| {
        doc["agents"] = json!([their_row.clone()]);
    });
    let claimed = parts.forge(1, "claimed.json", |doc| {
        doc["part"]["entries"]
            .as_array_mut()
            .unwrap()
            .push(json!(theirs));
        doc["agents"] = json!([their_row.clone()]);
    });
    for forged in [&row_only, &claimed] {
        // Shard 2/3 is missing: its entries are known from the selection all the same.
        parts.assert_refused(
            &[forged, "3.json"],
            &[forged, &format!("`{theirs}`"), "is an entry of shard 2/3"],
        );
        parts.assert_refused(&[forged], &[forged, "is an entry of shard 2/3"]);
    }
    // Rewriting the selection the part lists breaks its digest, or its agreement with the others.
    let moved = parts.forge(1, "moved.json", |doc| {
        doc["part"]["jobs"]
            .as_array_mut()
            .unwrap()
            .retain(|j| j["id"] != theirs.as_str());
        doc["part"]["selected"] = json!(5);
    });
    parts.assert_refused(&[&moved, "3.json"], &[&moved, "`part.selection`"]);
    // An entry of the part left out is refused too.
    let dropped = parts.forge(1, "dropped.json", |doc| {
        doc["part"]["entries"].as_array_mut().unwrap().pop();
    });
    parts.assert_refused(&[&dropped, "3.json"], &[&dropped, "`part.entries` lists 1"]);
    // The honest parts still merge, naming the missing shard.
    let run = parts.merge(&["1.json", "3.json"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.all().contains("shard 2/3 is missing"), "{}", run.all());
}

#[test]
fn merge_refuses_a_row_marked_passed_whose_details_say_it_failed() {
    let parts = Parts::new();
    let honest = with_row(&parts, "honest.json", |_| {});
    assert_eq!(parts.merge(&[&honest, "2.json", "3.json"]).code, 0);
    for (name, edit, said) in [
        (
            "no-answer.json",
            json!({"protocol_version": null, "methods": {}}),
            "never answered `initialize`",
        ),
        (
            "version-2.json",
            json!({"protocol_version": 2}),
            "answered protocol version 2, not 1",
        ),
        (
            "unprobed.json",
            json!({"methods": {}}),
            "`methods` has no `session/new`",
        ),
        (
            "verdict.json",
            json!({"status": "verified"}),
            "not `passed` or `failed`",
        ),
    ] {
        let forged = with_row(&parts, name, |row| {
            for (key, value) in edit.as_object().unwrap() {
                row[key] = value.clone();
            }
        });
        parts.assert_refused(
            &[&forged, "2.json", "3.json"],
            &[name, "the row of `agent-", said],
        );
    }
    // The same details under `failed` are what a failed launch records.
    let failed = with_row(&parts, "failed.json", |row| {
        row["status"] = json!("failed");
        row["protocol_version"] = json!(null);
        row["methods"] = json!({});
    });
    let run = parts.merge(&[&failed, "2.json", "3.json"]);
    assert_eq!(run.code, 0, "{}", run.all());
}

#[test]
fn merge_refuses_a_row_dated_after_now_beyond_the_clock_skew_and_malformed_dates() {
    let parts = Parts::new();
    let within = with_row(&parts, "within.json", |row| {
        row["verified"] = json!("2026-12-01T08:05:00Z");
    });
    assert_eq!(parts.merge(&[&within, "2.json", "3.json"]).code, 0);
    let future = with_row(&parts, "future.json", |row| {
        row["verified"] = json!("2026-12-01T08:05:01Z");
    });
    parts.assert_refused(
        &[&future, "2.json", "3.json"],
        &[
            "future.json",
            "after the time it is read at (2026-12-01T08:00:00Z)",
        ],
    );
    for (k, date) in [
        "2026-12-01T09:00:00+01:00",
        "2026-12-01 08:00:00Z",
        "2026-12-01T08:00:00.5Z",
        "2026-02-30T08:00:00Z",
        "2026-12-01",
        "yesterday",
    ]
    .iter()
    .enumerate()
    {
        let forged = with_row(&parts, &format!("date-{k}.json"), |row| {
            row["verified"] = json!(date);
        });
        parts.assert_refused(
            &[&forged, "2.json", "3.json"],
            &["not a UTC time written as 2026-03-01T12:00:00Z"],
        );
    }
}

#[test]
fn merge_refuses_rows_the_selection_does_not_have() {
    let parts = Parts::new();
    for (name, edit, said) in [
        (
            "npx.json",
            json!({"distribution": "npx"}),
            "a distribution the selection does not have",
        ),
        (
            "version.json",
            json!({"version": "9.9.9"}),
            "has version `9.9.9`",
        ),
        (
            "fingerprint.json",
            json!({"fingerprint": "0123456789abcdef"}),
            "fingerprint `0123456789abcdef`",
        ),
        (
            "stranger.json",
            json!({"id": "stranger"}),
            "the row of `stranger` (binary) is not one of the part's entries: it is not in the selection",
        ),
        (
            "method.json",
            json!({"methods": {"session/new": "success", "session/evil": "success"}}),
            "`session/evil`, which matrix does not probe",
        ),
        (
            "unstable.json",
            json!({"unstable_methods": ["session/list"]}),
            "not an unstable method",
        ),
        (
            "meta.json",
            json!({"auth_methods": [{"id": "a", "name": "b", "type": "agent", "meta_kinds": ["root"]}]}),
            "not what matrix keeps",
        ),
    ] {
        let forged = with_row(&parts, name, |row| {
            for (key, value) in edit.as_object().unwrap() {
                row[key] = value.clone();
            }
        });
        parts.assert_refused(&[&forged, "2.json", "3.json"], &[name, said]);
    }
    let twice = parts.forge(1, "twice.json", |doc| {
        let id = entries(doc)[0].clone();
        doc["agents"] = json!([row(doc, &id), row(doc, &id)]);
    });
    parts.assert_refused(
        &[&twice, "2.json", "3.json"],
        &["a second row for the same agent"],
    );
}

#[test]
fn merge_refuses_oversized_parts_before_parsing_them_and_escapes_what_they_carry() {
    let parts = Parts::new();
    // A million tiny values in a few megabytes: counted, never parsed into a tree.
    let tiny = parts.forge(1, "tiny.json", |doc| {
        doc["padding"] = json!(vec![0; 250_001]);
    });
    parts.assert_refused(
        &[&tiny, "2.json", "3.json"],
        &["more than 250000 JSON values"],
    );
    let huge = parts.dir.join("huge.json");
    std::fs::write(&huge, vec![b' '; 33 * 1024 * 1024]).unwrap();
    parts.assert_refused(
        &["huge.json", "2.json", "3.json"],
        &["huge.json", "over the 33554432-byte limit"],
    );
    for (name, edit) in [
        (
            "info.json",
            json!({"agent_info": {"name": "x".repeat(20_000)}}),
        ),
        (
            "info-values.json",
            json!({"agent_info": {"list": vec![0; 64]}}),
        ),
        ("commands.json", json!({"commands": vec!["c"; 65]})),
        ("command.json", json!({"commands": ["c".repeat(1025)]})),
        (
            "auth.json",
            json!({"auth_methods": vec![json!({"id": "a", "name": "b", "type": "agent", "meta_kinds": []}); 65]}),
        ),
    ] {
        let forged = with_row(&parts, name, |row| {
            for (key, value) in edit.as_object().unwrap() {
                row[key] = value.clone();
            }
        });
        parts.assert_refused(&[&forged, "2.json", "3.json"], &[name, "matrix keeps"]);
    }
    // Terminal escapes in every string that reaches the message are shown, never sent.
    for (name, edit) in [
        ("id.json", json!({"id": "\u{1b}]0;pwned\u{7}x"})),
        ("status.json", json!({"status": "\u{1b}[2J"})),
        ("date.json", json!({"verified": "\u{1b}[31m"})),
        (
            "method-esc.json",
            json!({"methods": {"\u{1b}[31m": "success"}}),
        ),
    ] {
        let forged = with_row(&parts, name, |row| {
            for (key, value) in edit.as_object().unwrap() {
                row[key] = value.clone();
            }
        });
        parts.assert_refused(&[&forged, "2.json", "3.json"], &[name]);
    }
}

/// A registry of npx entries `ids` that `build` publishes, in `work/registry`.
fn buildable(work: &Path, ids: &[&str]) -> PathBuf {
    let reg = work.join("registry");
    for id in ids {
        let dir = reg.join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("agent.json"),
            json!({
                "id": id, "name": id, "version": "1.0.0", "description": "d",
                "license": "MIT", "license_url": "https://example.com/LICENSE",
                "distribution": {"npx": {"package": format!("{id}@1.0.0")}}
            })
            .to_string(),
        )
        .unwrap();
        std::fs::copy(
            acp_test_kit::repo_root().join("registry/gemini/icon.svg"),
            dir.join("icon.svg"),
        )
        .unwrap();
    }
    reg
}

/// `build --matrix MATRIX --as-of 2026-03-01` of `reg` into `out`: the run and each
/// published agent's state.
fn build(
    reg: &Path,
    out: &Path,
    matrix: &Path,
) -> (Run, std::collections::BTreeMap<String, String>) {
    let run = common::build_registry(
        reg,
        out,
        &[
            "--no-site",
            "--matrix",
            matrix.to_str().unwrap(),
            "--as-of",
            "2026-03-01T00:00:00Z",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out.join("verification.json")).unwrap()).unwrap();
    let states = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (run, states)
}

/// The fingerprint of each agent `reg` publishes, from a build with an empty `matrix`.
fn published_fingerprints(reg: &Path, matrix: &Path) -> std::collections::BTreeMap<String, Value> {
    std::fs::write(matrix, json!({"version": 1, "agents": []}).to_string()).unwrap();
    let first = reg.parent().unwrap().join("first");
    let (_, states) = build(reg, &first, matrix);
    assert!(states.values().all(|s| s == "unverified"), "{states:?}");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(first.join("verification.json")).unwrap()).unwrap();
    doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["fingerprint"].clone(),
            )
        })
        .collect()
}

#[test]
fn build_sets_forged_rows_aside_saying_why_and_never_counts_them_current() {
    let work = tempfile::tempdir().unwrap();
    let ids = [
        "honest", "skewed", "edited", "future", "ancient", "twice", "zoned", "escaped",
    ];
    let reg = buildable(work.path(), &ids);
    let matrix = work.path().join("matrix.json");
    let fingerprints = published_fingerprints(&reg, &matrix);
    let row = |id: &str, verified: &str, edit: Value| {
        let mut row = json!({
            "id": id, "version": "1.0.0", "distribution": "npx", "fingerprint": fingerprints[id],
            "verified": verified, "status": "passed", "protocol_version": 1, "agent_info": null,
            "auth_methods": [], "methods": {"session/new": "success"}, "unstable_methods": []
        });
        for (key, value) in edit.as_object().unwrap() {
            row[key] = value.clone();
        }
        row
    };
    let day = "2026-02-28T00:00:00Z";
    let rows = [
        row("honest", day, json!({})),
        // Within the five minutes allowed for clock skew.
        row("skewed", "2026-03-01T00:05:00Z", json!({})),
        row(
            "edited",
            day,
            json!({"protocol_version": null, "methods": {}}),
        ),
        row("future", "2026-03-01T00:05:01Z", json!({})),
        row("ancient", "0001-01-01T00:00:00Z", json!({})),
        row("twice", day, json!({})),
        row("twice", day, json!({"status": "failed"})),
        row("zoned", "2026-02-28T01:00:00+01:00", json!({})),
        row("escaped", day, json!({"id": "escaped\u{1b}[2J"})),
    ];
    std::fs::write(&matrix, json!({"version": 1, "agents": rows}).to_string()).unwrap();
    let (run, states) = build(&reg, &work.path().join("dist"), &matrix);
    let want = [
        ("ancient", "expired"),
        ("edited", "unverified"),
        ("escaped", "unverified"),
        ("future", "unverified"),
        ("honest", "current"),
        ("skewed", "current"),
        ("twice", "unverified"),
        ("zoned", "unverified"),
    ];
    let got: Vec<(&str, &str)> = states
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(got, want, "{}", run.stderr);
    for said in [
        "the row of `edited` (npx): `status` is `passed`, but its details say the launch failed",
        "the row of `future` (npx): `verified` is 2026-03-01T00:05:01Z, after the time it is read at (2026-03-01T00:00:00Z)",
        "the row of `twice` (npx): another row is for the same agent and distribution",
        "the row of `zoned` (npx): `verified` is `2026-02-28T01:00:00+01:00`, not a UTC time",
        "`id` is not a registry id",
        "not used as evidence",
    ] {
        assert!(run.stderr.contains(said), "{said}: {}", run.stderr);
    }
    assert!(
        run.stderr.contains(matrix.to_str().unwrap()),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
    assert_eq!(
        run.stderr.matches("not used as evidence").count(),
        6,
        "{}",
        run.stderr
    );
}

#[test]
fn verify_fails_a_launch_its_protocol_version_decides_whatever_severity_the_policy_gives() {
    use acp_test_kit::server::{Reply, Server};
    use acp_test_kit::wheel::{agent_script, binary_everywhere, registry};
    let script = agent_script();
    let server = Server::start(move |request, _| match request.path.as_str() {
        "/agent" => Reply::body(200, script.clone()),
        _ => Reply::status(404),
    });
    let target = json!({"archive": server.url("/agent"), "cmd": "agent", "args": ["--mode", "v2"]});
    let reg = registry(&[json!({
        "id": "future", "name": "future", "version": "1.0.0", "description": "A test agent.",
        "distribution": binary_everywhere(&target),
    })]);
    // The policy may make the finding a warning (the exit code follows it), never the launch
    // a pass: a row saying so would be refused when read back.
    std::fs::write(
        reg.root.join("acp-registry.jsonc"),
        json!({"severity": {"agent-protocol-version": "warning"}}).to_string(),
    )
    .unwrap();
    let run = common::verify::run(
        &reg.root,
        &["verify", "--format", "json", "--timeout", "30"],
    );
    assert_eq!(run.code, 0, "{}", run.all());
    let doc: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let agent = &doc["agents"][0];
    assert_eq!(agent["status"], "failed", "{doc:#}");
    assert_eq!(
        agent["reason"], "the agent answered protocol version 2, not 1",
        "{doc:#}"
    );
}

/// `matrix merge PART --out merged.json` in `dir`: its exit code and peak RSS in KiB (the
/// child's own high-water mark: `wait4` would count the test process's memory shared between
/// fork and exec).
#[cfg(target_os = "linux")]
fn merge_measured(dir: &Path, part: &str) -> (i32, i64) {
    let mut command = std::process::Command::new(crate::REGISTRY);
    command
        .args(["matrix", "merge", part, "--out", "merged.json"])
        .env("ACP_REGISTRY_TEST_NOW", NOW)
        .current_dir(dir);
    let (output, peak) = acp_test_kit::rss::run_measured(&mut command);
    let kib = i64::try_from(peak / 1024).unwrap_or(i64::MAX);
    (output.status.code().unwrap_or(-1), kib)
}

/// The peak RSS `matrix merge` stays under on any part: 32 MiB of file, 250,000 JSON values
/// (docs/format.md#verification-evidence).
#[cfg(target_os = "linux")]
const MERGE_PEAK_RSS_KIB: i64 = 160 * 1024;

#[cfg(target_os = "linux")]
#[test]
fn merge_memory_stays_bounded_on_parts_of_tiny_values_and_of_one_long_string() {
    let parts = Parts::new();
    // The costliest shape per value, nested one-element arrays in `agent_info`: at the cap
    // (parsed, then refused), and far past it (refused before parsing: a tree of
    // gigabytes otherwise).
    let nested = |values: usize| format!("[{}[[0]]]", "[[0]],".repeat(values / 3 - 1));
    for (name, info) in [
        ("at-cap.json", nested(249_000)),
        ("past-cap.json", nested(3_000_000)),
        (
            "string.json",
            format!("\"{}\"", "x".repeat(31 * 1024 * 1024)),
        ),
    ] {
        let forged = with_row(&parts, name, |row| row["agent_info"] = json!("INFO"));
        let path = parts.dir.join(&forged);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"INFO\"", &info)).unwrap();
        let (code, peak) = merge_measured(&parts.dir, &forged);
        eprintln!("{name}: exit {code}, peak RSS {peak} KiB");
        assert_eq!(code, 2, "{name}: refused");
        assert!(
            peak < MERGE_PEAK_RSS_KIB,
            "{name}: peak RSS {peak} KiB over {MERGE_PEAK_RSS_KIB}"
        );
    }
}
