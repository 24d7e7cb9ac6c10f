//! `acp-registry build`: outputs, variants, preview resolution, determinism, `--check`,
//! refusal to overwrite foreign folders, and crash safety under SIGKILL.

use crate::common;

use std::path::{Path, PathBuf};

use common::{
    acp_registry, agent, build_registry, copy_dir, ids, json, repo_root, sha256_hex, tree, Run,
};
use serde_json::Value;

const BASE: &str = "https://cdn.example.com/registry/v1/latest";

fn build(registry: &Path, out: &Path, extra: &[&str]) -> Run {
    build_with_env(registry, out, extra, &[])
}

/// `build` with extra environment variables (locale, time zone, `SOURCE_DATE_EPOCH`).
fn build_with_env(registry: &Path, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let args = [&["--base-url", BASE], extra].concat();
    build_registry(registry, out, &args, env)
}

/// The build failed with code 1, saying every one of `said`, and wrote nothing at `out`.
fn assert_stopped(run: &Run, out: &Path, said: &[&str]) {
    assert_eq!(run.code, 1, "{}", run.stderr);
    for text in said {
        assert!(run.stderr.contains(text), "{text}: {}", run.stderr);
    }
    assert!(!out.exists());
}

fn bundled_dist() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dist");
    let run = build(&repo_root().join("registry"), &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    (dir, out)
}

#[test]
fn bundled_registry_builds_the_three_public_files_with_the_public_policy() {
    let (_dir, out) = bundled_dist();
    let all: Vec<String> = std::fs::read_dir(repo_root().join("registry"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("agent.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let without = |skip: &str| {
        let mut v: Vec<String> = all.iter().filter(|i| *i != skip).cloned().collect();
        v.sort();
        v
    };
    let main = json(&out.join("registry.json"));
    assert_eq!(ids(&main), without("github-copilot"));
    assert_eq!(main["version"], "1.0.0");
    assert_eq!(main["extensions"], serde_json::json!([]));
    let jetbrains = json(&out.join("registry-for-jetbrains.json"));
    assert_eq!(ids(&jetbrains), without("github-copilot-cli"));
    assert!(
        jetbrains.get("extensions").is_none(),
        "the JetBrains files carry no extensions list"
    );
    let claude = agent(&jetbrains, "claude-acp");
    assert_eq!(claude["bundled"], true);
    let args = claude["distribution"]["npx"]["args"].as_array().unwrap();
    assert_eq!(args.last().unwrap(), "--hide-claude-auth");
    assert!(
        agent(&main, "claude-acp").get("bundled").is_none(),
        "patches stay in their output"
    );
    let preview = json(&out.join("registry-for-jetbrains-preview.json"));
    assert_eq!(ids(&preview), ids(&jetbrains));
    assert!(preview.get("extensions").is_none());
    // No bundled entry has a preview newer than its stable release, so both channels serve
    // the pinned version (preview resolution: `preview_outputs_serve_the_preview_only_…`).
    let pinned = json(&repo_root().join("registry/gemini/agent.json"))["version"].clone();
    assert_eq!(agent(&preview, "gemini")["version"], pinned);
    assert_eq!(agent(&jetbrains, "gemini")["version"], pinned);
    assert_eq!(agent(&preview, "claude-acp")["bundled"], true);
    for doc in [&main, &jetbrains, &preview] {
        let errors: Vec<String> = acp_registry::registry_validator()
            .iter_errors(doc)
            .map(|e| format!("{e} at {}", e.instance_path().as_str()))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        for a in doc["agents"].as_array().unwrap() {
            assert!(a.get("preview").is_none() && a.get("$schema").is_none());
            assert_eq!(
                a["icon"],
                format!("{BASE}/{}.svg", a["id"].as_str().unwrap())
            );
        }
    }
    let opencode = agent(&main, "opencode");
    assert_eq!(
        opencode["icons"]["light"],
        format!("{BASE}/opencode-light.svg")
    );
    for file in [
        "gemini.svg",
        "opencode-light.svg",
        "opencode-dark.svg",
        "agent.schema.json",
        "registry.schema.json",
    ] {
        assert!(out.join(file).is_file(), "{file}");
    }
}

#[test]
fn registry_json_is_canonical_two_space_json_with_a_trailing_newline() {
    let (_dir, out) = bundled_dist();
    let text = std::fs::read_to_string(out.join("registry.json")).unwrap();
    assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
    assert!(
        text.starts_with("{\n  \"version\": \"1.0.0\",\n  \"agents\": [\n    {\n      \"id\": ")
    );
    assert!(!text.contains("Stable channel;"), "comments stripped");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let gemini = agent(&doc, "gemini");
    let keys: Vec<&str> = gemini
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "name",
            "version",
            "description",
            "repository",
            "website",
            "authors",
            "license",
            "license_url",
            "icon",
            "capabilities",
            "auth",
            "tags",
            "protocol_version",
            "distribution"
        ]
    );
    let sorted = ids(&doc);
    let mut expected = sorted.clone();
    expected.sort();
    assert_eq!(sorted, expected);
}

const OWNERSHIP: &str = ".acp-registry-output.json";

#[test]
fn sha256sums_lists_every_published_file_and_the_ownership_manifest_every_file() {
    let (_dir, out) = bundled_dist();
    let files = tree(&out);
    let sums = String::from_utf8(files["SHA256SUMS"].clone()).unwrap();
    let listed: Vec<&str> = sums.lines().map(|l| &l[66..]).collect();
    let expected: Vec<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|p| *p != "SHA256SUMS" && !p.ends_with(OWNERSHIP))
        .collect();
    assert_eq!(listed, expected);
    for line in sums.lines() {
        let (hex, path) = line.split_once("  ").unwrap();
        assert_eq!(hex, sha256_hex(&files[path]), "{path}");
    }
    // The manifest lists every other path, SHA256SUMS and site/'s own manifest included.
    let manifest: Value = serde_json::from_slice(&files[OWNERSHIP]).unwrap();
    let owned = manifest["files"].as_object().unwrap();
    let expected: Vec<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|p| *p != OWNERSHIP)
        .collect();
    assert_eq!(
        owned.keys().map(String::as_str).collect::<Vec<_>>(),
        expected
    );
    assert!(owned.contains_key("site/.acp-registry-output.json"));
    for (path, digest) in owned {
        assert_eq!(digest.as_str().unwrap(), sha256_hex(&files[path]), "{path}");
    }
}

/// Rewrite a JSONC manifest as plain JSON with keys in reverse order and other whitespace.
fn scramble(path: &Path) {
    fn reverse(value: Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .rev()
                    .map(|(k, v)| (k, reverse(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.into_iter().map(reverse).collect()),
            other => other,
        }
    }
    let text = std::fs::read_to_string(path).unwrap();
    let stripped: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let value: Value = serde_json::from_str(&stripped).unwrap();
    let mut text = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"\t");
    let mut serializer = serde_json::Serializer::with_formatter(&mut text, formatter);
    serde::Serialize::serialize(&reverse(value), &mut serializer).unwrap();
    let text = String::from_utf8(text).unwrap();
    std::fs::write(path, format!("/* scrambled */\n{text}\n// end\n")).unwrap();
}

/// Copy the registry creating entry folders in reverse order (file systems list in creation
/// order often enough for this to change readdir order).
fn copy_reversed(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let mut items: Vec<_> = std::fs::read_dir(from).unwrap().flatten().collect();
    items.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
    for item in items {
        let target = to.join(item.file_name());
        if item.file_type().unwrap().is_dir() {
            copy_dir(&item.path(), &target);
        } else {
            std::fs::copy(item.path(), target).unwrap();
        }
    }
}

#[test]
fn builds_are_byte_identical_whatever_the_source_order_formatting_locale_or_time_zone() {
    let (_dir, reference) = bundled_dist();
    let expected = tree(&reference);
    let work = tempfile::tempdir().unwrap();

    let again = work.path().join("again");
    assert_eq!(build(&repo_root().join("registry"), &again, &[]).code, 0);
    assert!(tree(&again) == expected, "second build differs");

    let reordered = work.path().join("reordered-registry");
    copy_reversed(&repo_root().join("registry"), &reordered);
    for entry in std::fs::read_dir(&reordered).unwrap().flatten() {
        let manifest = entry.path().join("agent.json");
        if manifest.is_file() {
            scramble(&manifest);
        }
    }
    let out = work.path().join("scrambled");
    let run = build(&reordered, &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got = tree(&out);
    let differing: Vec<&String> = expected
        .keys()
        .filter(|k| got.get(*k) != expected.get(*k))
        .collect();
    assert!(
        differing.is_empty() && got.len() == expected.len(),
        "differs: {differing:?}"
    );

    let out = work.path().join("locale");
    let run = build_with_env(
        Path::new("registry"),
        &out,
        &[],
        &[
            ("LC_ALL", "tr_TR.UTF-8"),
            ("LANG", "de_DE.UTF-8"),
            ("TZ", "Pacific/Kiritimati"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        tree(&out) == expected,
        "locale/time zone changed the output"
    );
}

/// An entry folder: `manifest` as its agent.json and the repository file `icon` as its icon.
fn write_agent(dir: &Path, manifest: &str, icon: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("agent.json"), manifest).unwrap();
    std::fs::copy(repo_root().join(icon), dir.join("icon.svg")).unwrap();
}

fn write_entry(root: &Path, id: &str, version: &str, preview: Option<&str>) {
    let preview = preview
        .map(|p| format!(r#", "preview": {{"version": "{p}", "distribution": {{"npx": {{"package": "{id}@{p}"}}}}}}"#))
        .unwrap_or_default();
    let manifest = format!(
        r#"{{"id": "{id}", "name": "{id}", "version": "{version}", "description": "d",
                "license": "MIT", "license_url": "https://example.com/LICENSE",
                "distribution": {{"npx": {{"package": "{id}@{version}"}}}}{preview}}}"#
    );
    write_agent(&root.join(id), &manifest, "registry/gemini/icon.svg");
}

#[test]
fn preview_outputs_serve_the_preview_only_when_strictly_newer() {
    let work = tempfile::tempdir().unwrap();
    let reg = work.path().join("reg");
    // (id, stable, preview, version served by the preview output)
    let cases = [
        ("no-preview", "1.0.0", None, "1.0.0"),
        ("older-minor", "1.2.0", Some("1.1.9"), "1.2.0"),
        ("same-release", "1.2.3", Some("1.2.3"), "1.2.3"),
        ("pre-of-current", "1.2.3", Some("1.2.3-preview.4"), "1.2.3"),
        (
            "pre-of-next",
            "1.2.3",
            Some("1.2.4-preview.1"),
            "1.2.4-preview.1",
        ),
        ("next-release", "1.2.3", Some("1.3.0"), "1.3.0"),
        (
            "numeric-minor",
            "1.9.0",
            Some("1.10.0-preview.1"),
            "1.10.0-preview.1",
        ),
        (
            "numeric-counter",
            "2.0.0",
            Some("2.0.1-preview.10"),
            "2.0.1-preview.10",
        ),
        (
            "leading-zeros",
            "2026.07.20",
            Some("2026.7.21-preview.1"),
            "2026.7.21-preview.1",
        ),
    ];
    for (id, stable, preview, _) in cases {
        write_entry(&reg, id, stable, preview);
    }
    std::fs::write(
        reg.join("acp-registry.jsonc"),
        r#"{"outputs": [{"file": "registry.json"}, {"file": "preview.json", "channel": "preview"}]}"#,
    )
    .unwrap();
    let out = work.path().join("dist");
    let run = build(&reg, &out, &["--no-site"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stable = json(&out.join("registry.json"));
    let preview = json(&out.join("preview.json"));
    for (id, version, _, served) in cases {
        assert_eq!(agent(&stable, id)["version"], version, "{id} stable");
        assert_eq!(agent(&preview, id)["version"], served, "{id} preview");
        let package = agent(&preview, id)["distribution"]["npx"]["package"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            package,
            format!("{id}@{served}"),
            "{id} distribution follows the served version"
        );
    }
    assert!(!out.join("site").exists(), "--no-site");
}

#[test]
fn include_exclude_and_quarantine_decide_membership() {
    let work = tempfile::tempdir().unwrap();
    let reg = work.path().join("reg");
    for id in ["alpha", "beta", "gamma"] {
        write_entry(&reg, id, "1.0.0", None);
    }
    std::fs::write(
        reg.join("quarantine.json"),
        r#"{"gamma": "crashes on start"}"#,
    )
    .unwrap();
    std::fs::write(
        reg.join("acp-registry.jsonc"),
        r#"{"publish_quarantined": false, "outputs": [
            {"file": "registry.json"},
            {"file": "only-beta.json", "include": ["beta"]},
            {"file": "no-alpha.json", "exclude": ["alpha"],
             "patches": [{"id": "beta", "set": {"bundled": true}, "append_args": {"npx": ["--x", "--y"]}}]}
        ]}"#,
    )
    .unwrap();
    let out = work.path().join("dist");
    let run = build(&reg, &out, &["--no-site"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(ids(&json(&out.join("registry.json"))), ["alpha", "beta"]);
    assert_eq!(ids(&json(&out.join("only-beta.json"))), ["beta"]);
    let no_alpha = json(&out.join("no-alpha.json"));
    assert_eq!(ids(&no_alpha), ["beta"]);
    assert_eq!(
        agent(&no_alpha, "beta")["distribution"]["npx"]["args"],
        serde_json::json!(["--x", "--y"])
    );
    assert!(
        run.stderr
            .contains("quarantined: gamma (not published): crashes on start"),
        "{}",
        run.stderr
    );
    // Each output says why it leaves an entry out: its settings, or the quarantine.
    for line in [
        "  registry.json: 2 agents (quarantined: gamma)\n",
        "  only-beta.json: 1 agents (excluded by its settings: alpha)\n",
        "  no-alpha.json: 1 agents (excluded by its settings: alpha; quarantined: gamma)\n",
    ] {
        assert!(run.stderr.contains(line), "{line}{}", run.stderr);
    }
    assert!(!out.join("gamma.svg").exists());
}

#[test]
fn errors_stop_the_build_before_anything_is_written() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("dist");
    let run = build(&repo_root().join("tests/fixtures/broken"), &out, &[]);
    assert_stopped(&run, &out, &["error[version-format]", "nothing written"]);
}

#[test]
fn check_passes_on_an_untouched_tree_and_fails_on_one_changed_byte() {
    let (_dir, out) = bundled_dist();
    let registry = repo_root().join("registry");
    assert_eq!(build(&registry, &out, &["--check"]).code, 0);
    let target = out.join("registry.json");
    let mut bytes = std::fs::read(&target).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x01;
    std::fs::write(&target, &bytes).unwrap();
    let run = build(&registry, &out, &["--check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("changed  registry.json"),
        "{}",
        run.stderr
    );
    // --check never writes.
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
    std::fs::write(&target, {
        bytes[at] ^= 0x01;
        &bytes
    })
    .unwrap();
    std::fs::write(out.join("stray.txt"), "x").unwrap();
    let run = build(&registry, &out, &["--check"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("extra    stray.txt"), "{}", run.stderr);
}

#[test]
fn build_refuses_to_replace_the_registry_or_a_foreign_folder() {
    let work = tempfile::tempdir().unwrap();
    let reg = work.path().join("reg");
    write_entry(&reg, "alpha", "1.0.0", None);
    let run = build(&reg, &reg, &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("overlaps the registry"),
        "{}",
        run.stderr
    );
    assert!(reg.join("alpha/agent.json").is_file());
    let foreign = work.path().join("docs");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.md"), "mine").unwrap();
    let run = build(&reg, &foreign, &[]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("did not write"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.md")).unwrap(),
        "mine"
    );
    // <registry>/dist is fine: it is never an entry.
    assert_eq!(build(&reg, &reg.join("dist"), &["--no-site"]).code, 0);
}

/// A registry large enough that writing takes a while, in two versions (A and B).
fn big_registry(root: &Path, entries: usize, description: &str) {
    for i in 0..entries {
        let id = format!("agent-{i:04}");
        let dir = root.join(&id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("agent.json"),
            format!(
                r#"{{"id": "{id}", "name": "Agent {i}", "version": "1.0.{i}", "description": "{description} {i}",
                    "license": "MIT", "license_url": "https://example.com/LICENSE",
                    "distribution": {{"npx": {{"package": "{id}@1.0.{i}"}}}}}}"#
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("icon.svg"),
            format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\"><circle cx=\"8\" cy=\"8\" r=\"{}\" fill=\"currentColor\"/></svg>\n", 1 + i % 7),
        )
        .unwrap();
    }
}

#[test]
fn sigkill_at_any_moment_leaves_the_old_or_the_new_complete_tree() {
    use std::time::{Duration, Instant};
    let work = tempfile::tempdir().unwrap();
    let (reg_a, reg_b) = (work.path().join("a"), work.path().join("b"));
    big_registry(&reg_a, 400, "first");
    big_registry(&reg_b, 400, "second");
    // The two complete trees a kill may leave.
    let (ref_a, ref_b) = (work.path().join("ref-a"), work.path().join("ref-b"));
    assert_eq!(build(&reg_a, &ref_a, &["--no-site"]).code, 0);
    assert_eq!(build(&reg_b, &ref_b, &["--no-site"]).code, 0);
    let (tree_a, tree_b) = (tree(&ref_a), tree(&ref_b));
    let total = tree_b.len();
    let out = work.path().join("dist");
    copy_dir(&ref_a, &out);
    // Kill points follow the build's progress, not the clock, so every phase is hit on any
    // machine: before writing starts (0), after k of `total` files are staged, and after the
    // process finished on its own (k > total).
    let kills = 64;
    let mut seen = (0, 0);
    let mut previous = tree_a.clone();
    for i in 0..kills {
        let (registry, next) = if i % 2 == 0 {
            (&reg_b, &tree_b)
        } else {
            (&reg_a, &tree_a)
        };
        let threshold = i * (total + 40) / kills;
        let mut child = std::process::Command::new(crate::REGISTRY)
            .args(["build", "--no-site", "--base-url", BASE, "--registry"])
            .arg(registry)
            .arg("--out")
            .arg(&out)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let staging = work.path().join(format!(".dist.tmp-{}", child.id()));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if threshold == 0 || child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                break;
            }
            let staged = std::fs::read_dir(&staging).map_or(0, std::iter::Iterator::count);
            if staged >= threshold {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let now = tree(&out);
        if now == previous {
            seen.0 += 1;
        } else if now == *next {
            seen.1 += 1;
            previous = now;
        } else {
            let odd: Vec<_> = now
                .keys()
                .filter(|k| now.get(*k) != tree_a.get(*k) && now.get(*k) != tree_b.get(*k))
                .take(5)
                .collect();
            panic!(
                "kill {i} at {threshold} staged files left a mixed or partial tree: {odd:?} ({} files)",
                now.len()
            );
        }
    }
    // Both outcomes happened, so kills landed before and after the swap.
    assert!(seen.0 > 0 && seen.1 > 0, "{seen:?}");
    // Leftover staging folders are cleaned by the next build.
    assert_eq!(build(&reg_a, &out, &["--no-site"]).code, 0);
    let leftovers: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".dist."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// The staged files and folders are made durable by one `syncfs` of the staging folder's file
/// system, before the swap, not by one fsync each (only the listing and the parent, before
/// and after the swap, are fsynced), however many folders the site has.
/// Seen through strace; skipped where it is missing or may not trace.
#[cfg(target_os = "linux")]
#[test]
fn staged_files_and_folders_are_flushed_by_one_syncfs_before_the_swap_not_one_fsync_each() {
    let work = tempfile::tempdir().unwrap();
    let reg = work.path().join("reg");
    big_registry(&reg, 200, "synced");
    let out = work.path().join("dist");
    assert_eq!(build(&reg, &out, &[]).code, 0, "an old output to swap");
    let log = work.path().join("strace.log");
    let traced = std::process::Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=fsync,fdatasync,syncfs,sync,renameat2,rename",
        ])
        .arg("-o")
        .arg(&log)
        .arg(crate::REGISTRY)
        .args(["build", "--base-url", BASE, "--registry"])
        .arg(&reg)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    let calls: Vec<String> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| Some(line.split_once(' ')?.1.trim_start().to_string()))
        .collect();
    match traced {
        Ok(status) if status.success() && !calls.is_empty() => {}
        Ok(status) if calls.is_empty() => {
            println!("skipped: strace cannot trace here ({status})");
            return;
        }
        Ok(status) => panic!("the traced build failed: {status}"),
        Err(e) => {
            println!("skipped: no strace ({e})");
            return;
        }
    }
    let position = |name: &str| calls.iter().position(|c| c.starts_with(name));
    let syncs = calls.iter().filter(|c| c.starts_with("syncfs(")).count();
    let fsyncs = calls.iter().filter(|c| c.starts_with("fsync(")).count();
    assert_eq!(syncs, 1, "{calls:#?}");
    // The listing, and the parent folder before and after the swap: none of the hundreds of
    // folders below (the site's pages).
    assert!(out.join("site/agents/agent-0199").is_dir());
    assert_eq!(fsyncs, 3, "{calls:#?}");
    let swap = calls
        .iter()
        .position(|c| c.starts_with("renameat2(") && c.contains("RENAME_EXCHANGE"))
        .expect("the old output is swapped");
    assert!(position("syncfs(") < Some(swap), "{calls:#?}");
}

#[test]
fn site_command_replaces_the_site_that_build_wrote() {
    let (_dir, out) = bundled_dist();
    let site = out.join("site");
    let site_run = |extra: &[&str]| {
        let args = [
            &[
                "site",
                "--registry",
                "registry",
                "--base-url",
                BASE,
                "--out",
                site.to_str().unwrap(),
            ],
            extra,
        ]
        .concat();
        acp_registry(&args, &repo_root())
    };
    let run = site_run(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(site.join("index.html").is_file());
    let sums = std::fs::read_to_string(site.join("SHA256SUMS")).unwrap();
    assert!(sums.contains("  index.html\n"), "{sums}");
    let check = site_run(&["--check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    // The site carries its own manifest, so the next build may replace `dist/` around it.
    assert!(site.join(".acp-registry-output.json").is_file());
    let run = build(&repo_root().join("registry"), &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn the_rfd_early_distribution_form_is_published_under_binary() {
    let work = tempfile::tempdir().unwrap();
    let reg = work.path().join("reg");
    write_agent(
        &reg.join("early"),
        r#"{"id": "early", "name": "Early", "version": "1.0.0", "description": "d",
            "license": "MIT", "license_url": "https://example.com/LICENSE",
            "distribution": {
              "linux-x86_64": {"cmd": "./early", "archive": "https://example.com/download/v1.0.0/early-linux.tar.gz",
                               "sha256": "5d2e93b7c740409ce09782d98b70db87eac2e1fcff527bdbaf44a98da8b3b597"},
              "darwin-aarch64": {"archive": "https://example.com/download/v1.0.0/early-mac.tar.gz", "cmd": "./early",
                                 "sha256": "5d2e93b7c740409ce09782d98b70db87eac2e1fcff527bdbaf44a98da8b3b597"},
              "windows-x86_64": {"archive": "https://example.com/download/v1.0.0/early-win.zip", "cmd": "early.exe",
                                 "sha256": "5d2e93b7c740409ce09782d98b70db87eac2e1fcff527bdbaf44a98da8b3b597"}
            }}"#,
        "registry/gemini/icon.svg",
    );
    let out = work.path().join("dist");
    let run = build(&reg, &out, &["--no-site"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("3 warnings"),
        "distribution-legacy warns: {}",
        run.stderr
    );
    let doc = json(&out.join("registry.json"));
    let distribution = &agent(&doc, "early")["distribution"];
    let kinds: Vec<&String> = distribution.as_object().unwrap().keys().collect();
    assert_eq!(kinds, ["binary"]);
    let platforms: Vec<&String> = distribution["binary"].as_object().unwrap().keys().collect();
    assert_eq!(
        platforms,
        ["darwin-aarch64", "linux-x86_64", "windows-x86_64"]
    );
    let target: Vec<&String> = distribution["binary"]["linux-x86_64"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(target, ["archive", "cmd", "sha256"]);
}

/// The bundled registry plus `rich-icon/`, an entry whose icon uses every allowed construct
/// (tests/fixtures/rich-icon/icon.svg).
fn registry_with_rich_icon(root: &Path) {
    copy_dir(&repo_root().join("registry"), root);
    let entry = root.join("rich-icon");
    copy_dir(&root.join("gemini"), &entry);
    let manifest = std::fs::read_to_string(entry.join("agent.json")).unwrap();
    write_agent(
        &entry,
        &manifest.replace("\"id\": \"gemini\"", "\"id\": \"rich-icon\""),
        "tests/fixtures/rich-icon/icon.svg",
    );
}

#[test]
fn every_published_icon_passes_the_icon_rules() {
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("registry");
    registry_with_rich_icon(&registry);
    let out = dir.path().join("dist");
    let run = build(&registry, &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let files = tree(&out);
    let mut icons: Vec<(String, String)> = files
        .iter()
        .filter(|(path, _)| path.ends_with(".svg") && !path.starts_with("site/assets/"))
        .map(|(path, bytes)| (path.clone(), String::from_utf8(bytes.clone()).unwrap()))
        .collect();
    assert!(
        icons.iter().any(|(p, _)| *p == "rich-icon.svg"),
        "{:?}",
        files.keys()
    );
    // The site's copy is the mask of its icon stylesheet, a base64 data: URI.
    let css = String::from_utf8(files["site/assets/icons/1.css"].clone()).unwrap();
    let data = regex::Regex::new(
        r#"\.i-rich-icon\{--icon:url\("data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"\)\}"#,
    )
    .unwrap()
    .captures(&css)
    .unwrap_or_else(|| panic!("no rich-icon mask in {css}"))[1]
        .to_string();
    let site = {
        use base64::Engine;
        let svg = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        String::from_utf8(svg).unwrap()
    };
    icons.push((
        "site/assets/icons/1.css: rich-icon".to_string(),
        site.clone(),
    ));
    for (path, svg) in &icons {
        let findings = acp_registry::check_icon(path, svg);
        assert!(findings.is_empty(), "{path}: {findings:?}\n{svg}");
    }
    // The site keeps what draws (gradients, clip paths, masks, symbols, text) and drops the rest.
    for kept in [
        "<linearGradient id=\"fade\"",
        "<stop ",
        "<clipPath",
        "<mask",
        "<symbol",
        "href=\"#fade\"",
        ">ab</text>",
    ] {
        assert!(site.contains(kept), "{kept} missing from {site}");
    }
    for dropped in ["<title", "<desc", "<style", "aria-label", "class="] {
        assert!(!site.contains(dropped), "{dropped} kept in {site}");
    }
}

#[test]
fn an_unsafe_icon_is_not_published_when_the_config_tries_to_silence_icon_unsafe() {
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("registry");
    copy_dir(&repo_root().join("tests/rules/icon-unsafe/fail"), &registry);
    std::fs::remove_file(registry.join("expected.txt")).unwrap();
    std::fs::write(
        registry.join("acp-registry.jsonc"),
        r#"{"severity": {"icon-unsafe": "off"}}"#,
    )
    .unwrap();
    let out = dir.path().join("dist");
    let run = build(&registry, &out, &[]);
    // The configuration cannot silence it: the setting is itself an error, and the icon's
    // finding stays.
    assert_stopped(
        &run,
        &out,
        &[
            "`icon-unsafe` cannot be lowered",
            "example-agent/icon.svg:5:14",
            "points outside the icon",
        ],
    );
}

/// A one-entry registry (`alpha`, written by `write_entry`) in `work/<name>`.
fn small_registry(work: &Path, name: &str, version: &str) -> PathBuf {
    let reg = work.join(name);
    write_entry(&reg, "alpha", version, None);
    reg
}

/// A fresh work folder holding `small_registry` 1.0.0 in `work/<name>`.
fn small_work(name: &str) -> (tempfile::TempDir, PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let reg = small_registry(work.path(), name, "1.0.0");
    (work, reg)
}

/// The build failed (exit 2) with one error saying every one of `said`, and left `out` as
/// `before` with no staging folder beside it.
#[cfg(target_os = "linux")]
fn assert_old_output_kept(
    run: &Run,
    out: &Path,
    before: &std::collections::BTreeMap<String, Vec<u8>>,
    said: &[&str],
) {
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.matches("error:").count(), 1, "{}", run.stderr);
    for text in said {
        assert!(run.stderr.contains(text), "{text}: {}", run.stderr);
    }
    assert!(tree(out) == *before, "the old output was changed");
    assert!(
        staging_folders(out).is_empty(),
        "{:?}",
        staging_folders(out)
    );
}

/// Hidden siblings of `out` named like staging or old trees (`.dist.tmp-*`, `.dist.old-*`).
fn staging_folders(out: &Path) -> Vec<String> {
    let name = out.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!(".{name}.")))
        .collect()
}

#[test]
fn a_folder_with_foreign_files_is_refused_even_with_a_sha256sums_and_the_paths_are_listed() {
    let (work, reg) = small_work("reg");
    let out = work.path().join("docs");
    std::fs::create_dir_all(out.join("notes")).unwrap();
    std::fs::write(out.join("notes/todo.md"), "mine").unwrap();
    // A SHA256SUMS proves nothing: anyone can write one; nor does a manifest not ours.
    std::fs::write(out.join("SHA256SUMS"), "").unwrap();
    std::fs::write(out.join(".acp-registry-output.json"), "{}").unwrap();
    let before = tree(&out);
    let run = build(&reg, &out, &["--no-site"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("did not write"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("  .acp-registry-output.json (not a manifest acp-registry wrote)\n")
            && run
                .stderr
                .contains("  SHA256SUMS (not written by acp-registry)\n")
            && run
                .stderr
                .contains("  notes/todo.md (not written by acp-registry)\n"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("an earlier acp-registry must be deleted by hand"),
        "{}",
        run.stderr
    );
    assert!(tree(&out) == before, "the foreign folder was changed");
    assert!(staging_folders(&out).is_empty());
}

#[test]
fn a_file_added_or_changed_by_hand_in_dist_stops_the_next_build_and_is_listed() {
    let (_dir, out) = bundled_dist();
    let registry = repo_root().join("registry");
    std::fs::write(out.join("notes.md"), "release notes").unwrap();
    std::fs::write(out.join("site/extra.html"), "<p>mine</p>").unwrap();
    let mut bytes = std::fs::read(out.join("registry.json")).unwrap();
    bytes.extend_from_slice(b" ");
    std::fs::write(out.join("registry.json"), &bytes).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/hostname", out.join("zz-link.svg")).unwrap();
    let before = tree(&out);
    let run = build(&registry, &out, &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let listed: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains(" ("))
        .collect();
    let mut expected = vec![
        "  notes.md (not written by acp-registry)",
        "  registry.json (changed since acp-registry wrote it)",
        "  site/extra.html (not written by acp-registry)",
    ];
    if cfg!(unix) {
        expected.push("  zz-link.svg (a symbolic link)");
    }
    assert_eq!(listed, expected, "{}", run.stderr);
    assert_eq!(run.stderr.matches("error:").count(), 1, "{}", run.stderr);
    assert!(tree(&out) == before, "dist was changed");
    assert!(staging_folders(&out).is_empty());
    // Once the hand-made changes are gone, the folder is ours again.
    for file in ["notes.md", "site/extra.html", "zz-link.svg"] {
        let _ = std::fs::remove_file(out.join(file));
    }
    bytes.pop();
    std::fs::write(out.join("registry.json"), &bytes).unwrap();
    let run = build(&registry, &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[cfg(unix)]
#[test]
fn overlap_with_the_registry_is_found_through_symbolic_links() {
    use std::os::unix::fs::symlink;
    let (work, reg) = small_work("reg");
    symlink(&reg, work.path().join("reg-link")).unwrap();
    symlink(work.path(), work.path().join("work-link")).unwrap();
    let before = tree(&reg);
    let cases = [
        // --out is the registry, through a link.
        (reg.clone(), work.path().join("reg-link")),
        // --out would be created inside an entry, through a link.
        (reg.clone(), work.path().join("reg-link/alpha/out")),
        // The registry, named through a link, is inside --out.
        (work.path().join("work-link/reg"), work.path().to_path_buf()),
    ];
    for (registry, out) in &cases {
        let run = build(registry, out, &["--no-site"]);
        assert_eq!(run.code, 2, "{}: {}", out.display(), run.stderr);
        assert!(
            run.stderr.contains("overlaps the registry"),
            "{}: {}",
            out.display(),
            run.stderr
        );
    }
    assert!(tree(&reg) == before, "the registry was changed");
    // `<registry>/dist` is never an entry, whichever way it is named.
    let run = build(&reg, &work.path().join("reg-link/dist"), &["--no-site"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(reg.join("dist/registry.json").is_file());
}

/// Makes a path unwritable for this process, and undoes it on drop: the immutable attribute
/// when running as root (root ignores modes), mode 0555/0444 otherwise.
#[cfg(target_os = "linux")]
struct ReadOnly(PathBuf);

#[cfg(target_os = "linux")]
impl ReadOnly {
    const IMMUTABLE: libc::c_long = 0x10; // FS_IMMUTABLE_FL

    fn set_flags(path: &Path, on: bool) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let file = std::fs::File::open(path)?;
        let mut flags: libc::c_long = 0;
        // SAFETY: FS_IOC_{GET,SET}FLAGS read or write one long through a valid pointer.
        unsafe {
            if libc::ioctl(file.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            flags = if on {
                flags | Self::IMMUTABLE
            } else {
                flags & !Self::IMMUTABLE
            };
            if libc::ioctl(file.as_raw_fd(), libc::FS_IOC_SETFLAGS, &flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    fn new(path: &Path) -> std::io::Result<Self> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            Self::set_flags(path, true)?;
        } else {
            use std::os::unix::fs::PermissionsExt;
            let mode = if path.is_dir() { 0o555 } else { 0o444 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        }
        Ok(ReadOnly(path.to_path_buf()))
    }
}

#[cfg(target_os = "linux")]
impl Drop for ReadOnly {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = Self::set_flags(&self.0, false);
        let mode = if self.0.is_dir() { 0o755 } else { 0o644 };
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(mode));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_read_only_old_output_is_left_intact_with_one_message_and_no_staging_folder() {
    let work = tempfile::tempdir().unwrap();
    let (reg_a, reg_b) = (
        small_registry(work.path(), "a", "1.0.0"),
        small_registry(work.path(), "b", "2.0.0"),
    );
    let out = work.path().join("dist");
    assert_eq!(build(&reg_a, &out, &["--no-site"]).code, 0);
    let before = tree(&out);
    // As root a read-only mode stops nothing, so the file is made immutable: the folder
    // could be swapped, but the old tree could then not be removed.
    let run = {
        let _guard =
            ReadOnly::new(&out.join("registry.json")).expect("make registry.json read-only");
        build(&reg_b, &out, &["--no-site"])
    };
    assert_old_output_kept(
        &run,
        &out,
        &before,
        &[
            "cannot be removed",
            "  registry.json (",
            "nothing was changed",
        ],
    );
}

/// A small tmpfs for the test's lifetime (root only), unmounted on drop.
#[cfg(target_os = "linux")]
struct SmallDisk(PathBuf);

#[cfg(target_os = "linux")]
impl SmallDisk {
    fn mount(path: &Path, size: &str) -> Result<Self, String> {
        use std::ffi::CString;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not running as root".into());
        }
        std::fs::create_dir_all(path).unwrap();
        let target = CString::new(path.to_str().unwrap()).unwrap();
        let (fs, data) = (c"tmpfs", CString::new(format!("size={size}")).unwrap());
        // SAFETY: valid NUL-terminated strings for the duration of the call.
        let result = unsafe {
            libc::mount(
                fs.as_ptr(),
                target.as_ptr(),
                fs.as_ptr(),
                0,
                data.as_ptr().cast(),
            )
        };
        if result != 0 {
            return Err(format!("mount tmpfs: {}", std::io::Error::last_os_error()));
        }
        Ok(SmallDisk(path.to_path_buf()))
    }
}

#[cfg(target_os = "linux")]
impl Drop for SmallDisk {
    fn drop(&mut self) {
        let target = std::ffi::CString::new(self.0.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_leaves_the_old_output_with_one_message_and_no_staging_folder() {
    let work = tempfile::tempdir().unwrap();
    let disk = match SmallDisk::mount(&work.path().join("disk"), "160k") {
        Ok(disk) => disk,
        Err(reason) => {
            println!("skipped: cannot mount a small file system ({reason})");
            return;
        }
    };
    let reg = small_registry(work.path(), "small", "1.0.0");
    let out = disk.0.join("dist");
    let run = build(&reg, &out, &["--no-site"]);
    assert_eq!(run.code, 0, "the small output fits: {}", run.stderr);
    let before = tree(&out);
    // The bundled registry with its site needs about 470 KB.
    let run = build(&repo_root().join("registry"), &out, &[]);
    assert_old_output_kept(
        &run,
        &out,
        &before,
        &["No space left on device", "is left as it was"],
    );
}

/// A built `dist/` (without the site) in a temporary folder, its ownership manifest, and the
/// pid of a process that has exited: what the leftover tests plant beside the output.
#[cfg(unix)]
fn built_output_and_a_dead_pid() -> (tempfile::TempDir, PathBuf, PathBuf, Vec<u8>, u32) {
    let (work, reg) = small_work("reg");
    let out = work.path().join("dist");
    assert_eq!(build(&reg, &out, &["--no-site"]).code, 0);
    let manifest = std::fs::read(out.join(".acp-registry-output.json")).unwrap();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    child.wait().unwrap();
    let dead = child.id();
    (work, reg, out, manifest, dead)
}

/// A folder `work/<name>` holding a copy of the ownership `manifest`, as a run leaves it.
#[cfg(unix)]
fn plant_leftover(work: &Path, name: String, manifest: &[u8]) -> PathBuf {
    let folder = work.join(name);
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join(".acp-registry-output.json"), manifest).unwrap();
    folder
}

#[cfg(unix)]
#[test]
fn only_leftovers_of_dead_runs_holding_nothing_but_our_files_are_removed() {
    let (work, reg, out, manifest, dead) = built_output_and_a_dead_pid();
    // What a killed run leaves: our manifest and some of the files it lists.
    let ours = plant_leftover(work.path(), format!(".dist.tmp-{dead}"), &manifest);
    std::fs::write(ours.join("registry.json"), "{\"vers").unwrap();
    // Named like a leftover, but holding a file we never write.
    let theirs = plant_leftover(work.path(), format!(".dist.old-{dead}"), &manifest);
    std::fs::write(theirs.join("thesis.tex"), "mine").unwrap();
    // Ours by content, but the process that owns it is alive (this test).
    let live = plant_leftover(
        work.path(),
        format!(".dist.tmp-{}", std::process::id()),
        &manifest,
    );
    let run = build(&reg, &out, &["--no-site"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!ours.exists(), "a dead run's staging folder is removed");
    assert_eq!(
        std::fs::read_to_string(theirs.join("thesis.tex")).unwrap(),
        "mine"
    );
    assert!(live.join(".acp-registry-output.json").is_file());
}

/// A run killed while it renamed its real ownership manifest over the listing leaves the
/// manifest's temporary file beside the listing: still ours, so the next build removes it.
#[cfg(unix)]
#[test]
fn a_leftover_killed_while_writing_its_final_manifest_is_removed() {
    let (work, reg, out, manifest, dead) = built_output_and_a_dead_pid();
    let leftover = plant_leftover(work.path(), format!(".dist.tmp-{dead}"), &manifest);
    let temporary = format!("..acp-registry-output.json.{dead}.0badf00d.tmp");
    std::fs::write(leftover.join(temporary), "{\"acp-registry-out").unwrap();
    let run = build(&reg, &out, &["--no-site"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !leftover.exists(),
        "the killed run's staging folder is removed"
    );
}

#[test]
fn a_base_url_override_that_is_not_https_stops_the_build() {
    let (work, reg) = small_work("reg");
    let out = work.path().join("dist");
    for url in [
        "http://cdn.example.com/r",
        "https://cdn.example.com/r?v=1",
        "/r",
    ] {
        let run = build_registry(&reg, &out, &["--base-url", url], &[]);
        assert_eq!(run.code, 2, "{url}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("--base-url `{url}`")),
            "{}",
            run.stderr
        );
        assert!(!out.exists());
    }
}

/// Twelve entries `agent-01` … `agent-12` at `version`.
fn twelve_entries(root: &Path, version: &str) {
    for i in 1..=12 {
        write_entry(root, &format!("agent-{i:02}"), version, None);
    }
}

/// The bytes of `id`'s object in a registry file this tool wrote (agents at 4 spaces).
fn object_bytes<'t>(text: &'t str, id: &str) -> &'t str {
    let start = text
        .find(&format!("    {{\n      \"id\": \"{id}\""))
        .unwrap_or_else(|| panic!("no `{id}` in\n{text}"))
        + 4;
    let end = start + text[start..].find("\n    }").unwrap() + "\n    }".len();
    &text[start..end]
}

/// A registry published at 1.0.0, then updated to 1.1.0 with `agent-12` broken by the update;
/// returns (work dir, registry, previous dist).
fn published_then_broken() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let reg = work.path().join("registry");
    let previous = work.path().join("published");
    twelve_entries(&reg, "1.0.0");
    let run = build(&reg, &previous, &["--no-site"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The published object of agent-12 as another writer may have escaped it: the bytes must
    // come back as they were, not re-serialised (which would print `é`).
    let registry_json = previous.join("registry.json");
    let text = std::fs::read_to_string(&registry_json).unwrap();
    let object = object_bytes(&text, "agent-12");
    let edited = object.replace("\"description\": \"d\"", "\"description\": \"caf\\u00e9\"");
    assert_ne!(object, edited);
    std::fs::write(&registry_json, text.replace(object, &edited)).unwrap();
    twelve_entries(&reg, "1.1.0");
    // The update broke the twelfth: a version that is not X.Y.Z.
    let manifest = reg.join("agent-12/agent.json");
    let broken = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("\"version\": \"1.1.0\"", "\"version\": \"1.1\"");
    std::fs::write(&manifest, broken).unwrap();
    (work, reg, previous)
}

#[test]
fn last_good_publishes_eleven_current_entries_and_the_previous_bytes_of_the_broken_twelfth() {
    let (work, reg, previous) = published_then_broken();
    let previous_text = std::fs::read_to_string(previous.join("registry.json")).unwrap();
    for named in [previous.clone(), previous.join("registry.json")] {
        let out = work.path().join("dist");
        let run = build(
            &reg,
            &out,
            &["--no-site", "--last-good", named.to_str().unwrap()],
        );
        assert_eq!(
            run.code, 3,
            "published with a held-back entry\n{}",
            run.stderr
        );
        let text = std::fs::read_to_string(out.join("registry.json")).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let expected: Vec<String> = (1..=12).map(|i| format!("agent-{i:02}")).collect();
        assert_eq!(ids(&doc), expected);
        for id in &expected[..11] {
            assert_eq!(agent(&doc, id)["version"], "1.1.0", "{id}");
        }
        assert_eq!(agent(&doc, "agent-12")["version"], "1.0.0");
        assert_eq!(
            object_bytes(&text, "agent-12"),
            object_bytes(&previous_text, "agent-12"),
            "the previous object, byte for byte"
        );
        assert!(text.contains("caf\\u00e9"), "{text}");
        let errors: Vec<String> = acp_registry::registry_validator()
            .iter_errors(&doc)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        // Reported: which entry, why, what is served.
        assert!(
            run.stderr.contains("warning[entry-held-back]"),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains("`agent-12` fails validation (version-format)"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("(version 1.0.0)"), "{}", run.stderr);
        assert!(
            run.stderr.contains("error[version-format]"),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.contains(
                "held back: 1 failing entry, 1 served in their previous form, 0 left out"
            ),
            "{}",
            run.stderr
        );
        // The icon its object names is published: from the folder, or (a file named) the
        // finding says it is not.
        let icon = out.join("agent-12.svg");
        if named.is_dir() {
            assert_eq!(
                std::fs::read(&icon).unwrap(),
                std::fs::read(previous.join("agent-12.svg")).unwrap()
            );
        } else {
            assert!(!icon.exists());
            assert!(
                run.stderr
                    .contains("previous icons not published: `agent-12.svg`"),
                "{}",
                run.stderr
            );
        }
        let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
        assert!(sums.contains(&format!("{}  registry.json", sha256_hex(text.as_bytes()))));
    }
}

#[test]
fn last_good_leaves_out_a_broken_entry_that_was_never_published() {
    let (work, reg, previous) = published_then_broken();
    write_entry(&reg, "agent-13", "2", None);
    let out = work.path().join("dist");
    let run = build(
        &reg,
        &out,
        &[
            "--last-good",
            previous.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    // The site shows the held-back entry as it is served, and not the one left out.
    let page = std::fs::read_to_string(out.join("site/agents/agent-12/index.html")).unwrap();
    assert!(page.contains("1.0.0") && !page.contains("1.1"), "{page}");
    assert!(!out.join("site/agents/agent-13").exists());
    let doc = json(&out.join("registry.json"));
    assert_eq!(ids(&doc).len(), 12);
    assert!(!ids(&doc).contains(&"agent-13".to_string()));
    assert!(!out.join("agent-13.svg").exists());
    let codes: Vec<(String, String)> = run
        .findings()
        .findings
        .into_iter()
        .filter(|f| f.code.starts_with("entry-"))
        .map(|f| (f.code, f.file))
        .collect();
    let reg_shown = reg.to_str().unwrap();
    assert_eq!(
        codes,
        [
            (
                "entry-held-back".to_string(),
                format!("{reg_shown}/agent-12/agent.json")
            ),
            (
                "entry-left-out".to_string(),
                format!("{reg_shown}/agent-13/agent.json")
            ),
        ]
    );
    assert!(
        run.stderr
            .contains("held back: agent-13 (left out; failing: package-spec, version-format)"),
        "{}",
        run.stderr
    );
    // Without the flag nothing changed: the build refuses and writes nothing.
    let untouched = work.path().join("untouched");
    let run = build(&reg, &untouched, &["--no-site"]);
    assert_eq!(run.code, 1);
    assert!(!untouched.exists());
}

#[test]
fn last_good_refuses_a_hostile_previous_registry_json_naming_the_file() {
    let (work, reg, previous) = published_then_broken();
    let out = work.path().join("dist");
    let hostile = work.path().join("hostile");
    std::fs::create_dir_all(&hostile).unwrap();
    let refused = |named: &Path, wanted: &str| {
        let run = build(
            &reg,
            &out,
            &["--no-site", "--last-good", named.to_str().unwrap()],
        );
        assert_eq!(run.code, 2, "{named:?}: {}", run.stderr);
        assert!(run.stderr.contains(wanted), "{named:?}: {}", run.stderr);
        assert!(run.stderr.contains("--last-good"), "{}", run.stderr);
        assert!(!out.exists(), "nothing written");
    };
    // Too big: a sparse file over the 64 MiB cap (nothing that size is read).
    let big = hostile.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(64 * 1024 * 1024 + 1)
        .unwrap();
    refused(&big, "big.json` is over the 67108864-byte limit");
    // A link, named or inside the folder.
    let link = hostile.join("link.json");
    std::os::unix::fs::symlink(previous.join("registry.json"), &link).unwrap();
    refused(&link, "link.json` is a symbolic link");
    let folder = hostile.join("dist");
    std::fs::create_dir_all(&folder).unwrap();
    std::os::unix::fs::symlink(previous.join("registry.json"), folder.join("registry.json"))
        .unwrap();
    refused(
        &folder,
        "registry.json` cannot be read: `registry.json` is a symbolic link",
    );
    // A FIFO is never opened for reading in a way that blocks.
    let fifo = hostile.join("fifo.json");
    acp_test_kit::fifo(&fifo).unwrap();
    refused(&fifo, "not a regular file");
    // Malformed: not JSON, JSONC comments, no agents, an id twice, a repeated key.
    for (name, text, wanted) in [
        (
            "garbage.json",
            "{\"agents\": [",
            "is not a registry file: it is not JSON",
        ),
        (
            "comments.json",
            "{\"agents\": [] // no\n}",
            "it is not JSON",
        ),
        (
            "no-agents.json",
            "{\"version\": \"1.0.0\"}",
            "it has no `agents` array",
        ),
        (
            "twice.json",
            "{\"agents\": [{\"id\": \"a\"}, {\"id\": \"a\"}]}",
            "the id `a` is listed twice",
        ),
        (
            "repeated.json",
            "{\"agents\": [{\"id\": \"a\", \"id\": \"b\"}]}",
            "/agents/0: duplicate field `id`",
        ),
        (
            "no-id.json",
            "{\"agents\": [7]}",
            "/agents/0 is not an object with an `id`",
        ),
    ] {
        let path = hostile.join(name);
        std::fs::write(&path, text).unwrap();
        refused(&path, &format!("{name}` is not a registry file"));
        refused(&path, wanted);
    }
    refused(
        &hostile.join("missing.json"),
        "missing.json` cannot be read",
    );
    // A folder without the first output's file.
    refused(&hostile, "hostile/registry.json` does not exist");
}

#[test]
fn last_good_does_not_hold_back_errors_outside_the_entries() {
    let (work, reg, previous) = published_then_broken();
    std::fs::write(reg.join("quarantine.json"), "[]").unwrap();
    let out = work.path().join("dist");
    let run = build(
        &reg,
        &out,
        &["--no-site", "--last-good", previous.to_str().unwrap()],
    );
    assert_stopped(
        &run,
        &out,
        &["error[quarantine-format]", "cannot be held back"],
    );
}

/// A `matrix.json` row of `matrix` (format 1) for `id`'s npx distribution.
fn matrix_row(id: &str, version: &str, fingerprint: &str, verified: &str) -> Value {
    serde_json::json!({
        "id": id, "version": version, "distribution": "npx", "fingerprint": fingerprint,
        "verified": verified, "status": "passed", "protocol_version": 1,
        "agent_info": {"name": id, "version": version},
        "auth_methods": [{"id": "login", "name": "Log in", "type": "agent", "meta_kinds": []}],
        "methods": {"session/new": "success", "session/list": "success", "session/load": "method-not-found"},
        "unstable_methods": ["session/fork"]
    })
}

fn write_matrix(path: &Path, rows: &[Value]) {
    let doc = serde_json::json!({"version": 1, "agents": rows});
    std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
}

/// The rows of a `verification.json` by id.
fn verification_rows(out: &Path) -> std::collections::BTreeMap<String, Value> {
    let doc = json(&out.join("verification.json"));
    let schema = json(&repo_root().join("schemas/verification.schema.json"));
    let validator = jsonschema::draft7::new(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}\n{doc:#}");
    doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["id"].as_str().unwrap().to_string(), row.clone()))
        .collect()
}

/// Five entries and a `matrix.json` for them (`current`; `moved`: another distribution;
/// `new-version`: 0.9.0 launched; `old-run`: launched 40 days before 2026-03-01; `never`: no
/// row; and a row of an agent no longer in the registry): the registry, the output folder and
/// the matrix path. The fingerprints come from a first build, whose stale row for `current`
/// (a fingerprint of another distribution) is checked on the way.
fn evidence_registry(work: &Path) -> (PathBuf, PathBuf, String) {
    let reg = work.join("registry");
    for id in ["current", "new-version", "old-run", "moved", "never"] {
        write_entry(&reg, id, "1.0.0", None);
    }
    let matrix = work.join("matrix.json");
    let arg = matrix.to_str().unwrap().to_string();
    let unknown = "0000000000000000";
    write_matrix(
        &matrix,
        &[matrix_row(
            "current",
            "1.0.0",
            unknown,
            "2026-02-28T12:00:00Z",
        )],
    );
    let out = work.join("dist");
    let first = build(&reg, &out, &["--matrix", &arg, "--as-of", "2026-03-01"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let rows = verification_rows(&out);
    assert_eq!(
        rows["current"]["state"], "stale",
        "a changed distribution is stale"
    );
    assert_eq!(
        rows["current"]["changed"],
        serde_json::json!(["distribution"])
    );
    let fp = |id: &str| rows[id]["fingerprint"].as_str().unwrap().to_string();
    write_matrix(
        &matrix,
        &[
            matrix_row("current", "1.0.0", &fp("current"), "2026-02-28T12:00:00Z"),
            matrix_row("moved", "1.0.0", "0123456789abcdef", "2026-02-28T12:00:00Z"),
            matrix_row(
                "new-version",
                "0.9.0",
                &fp("new-version"),
                "2026-02-28T12:00:00Z",
            ),
            // 40 days before 2026-03-01: past the default 30.
            matrix_row("old-run", "1.0.0", &fp("old-run"), "2026-01-20T00:00:00Z"),
            matrix_row(
                "removed-agent",
                "1.0.0",
                "0123456789abcdef",
                "2026-02-28T12:00:00Z",
            ),
        ],
    );
    (reg, out, arg)
}

#[test]
fn build_matrix_writes_verification_json_with_current_stale_expired_and_unverified_rows() {
    let work = tempfile::tempdir().unwrap();
    let (reg, out, arg) = evidence_registry(work.path());
    let run = build(&reg, &out, &["--matrix", &arg, "--as-of", "2026-03-01"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows = verification_rows(&out);
    let doc = json(&out.join("verification.json"));
    assert_eq!(
        (doc["version"].clone(), doc["max_age_days"].clone()),
        (1.into(), 30.into())
    );
    let states: Vec<(&str, &str)> = rows
        .iter()
        .map(|(id, row)| (id.as_str(), row["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("current", "current"),
            ("moved", "stale"),
            ("never", "unverified"),
            ("new-version", "stale"),
            ("old-run", "expired"),
        ],
        "only published agents, each judged"
    );
    assert_eq!(
        rows["new-version"]["changed"],
        serde_json::json!(["version"])
    );
    assert_eq!(rows["new-version"]["evidence"]["version"], "0.9.0");
    assert_eq!(rows["old-run"]["changed"], serde_json::json!([]));
    assert_eq!(
        rows["old-run"]["evidence"]["expires"],
        "2026-02-19T00:00:00Z"
    );
    assert_eq!(rows["never"]["evidence"], Value::Null);
    let current = &rows["current"]["evidence"];
    assert_eq!(current["verified"], "2026-02-28T12:00:00Z");
    assert_eq!(current["status"], "passed");
    assert_eq!(
        current["session_methods"],
        serde_json::json!(["session/list"])
    );
    assert_eq!(
        current["unstable_methods"],
        serde_json::json!(["session/fork"])
    );
    assert_eq!(current["auth_methods"][0]["id"], "login");
    // Listed like every output; registry.json keeps the public format.
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    let bytes = std::fs::read(out.join("verification.json")).unwrap();
    assert!(
        sums.contains(&format!("{}  verification.json\n", sha256_hex(&bytes))),
        "{sums}"
    );
    assert!(sums.contains("  verification.schema.json\n"), "{sums}");
    let manifest = std::fs::read_to_string(out.join(".acp-registry-output.json")).unwrap();
    assert!(manifest.contains("\"verification.json\""), "{manifest}");
    let registry = std::fs::read_to_string(out.join("registry.json")).unwrap();
    assert!(!registry.contains("verif"), "{registry}");
}

#[test]
fn the_evidence_age_limit_comes_from_the_configuration_and_the_flag_over_it() {
    let work = tempfile::tempdir().unwrap();
    let (reg, out, arg) = evidence_registry(work.path());
    std::fs::write(
        reg.join("acp-registry.jsonc"),
        r#"{"verify": {"max_age_days": 45}}"#,
    )
    .unwrap();
    build(&reg, &out, &["--matrix", &arg, "--as-of", "2026-03-01"]);
    assert_eq!(verification_rows(&out)["old-run"]["state"], "current");
    assert_eq!(json(&out.join("verification.json"))["max_age_days"], 45);
    build(
        &reg,
        &out,
        &["--matrix", &arg, "--as-of", "2026-03-01", "--max-age", "7"],
    );
    let rows = verification_rows(&out);
    let states = (
        rows["old-run"]["state"].clone(),
        rows["current"]["state"].clone(),
    );
    assert_eq!(states, ("expired".into(), "current".into()));
    assert_eq!(
        rows["old-run"]["evidence"]["expires"],
        "2026-01-27T00:00:00Z"
    );
}

#[test]
fn verification_json_ages_are_measured_at_as_of_else_source_date_epoch_and_only_with_matrix() {
    let (work, reg) = small_work("registry");
    let matrix = work.path().join("matrix.json");
    let arg = matrix.to_str().unwrap().to_string();
    write_matrix(
        &matrix,
        &[matrix_row(
            "alpha",
            "1.0.0",
            "0000000000000000",
            "2026-02-28T00:00:00Z",
        )],
    );
    let plain = work.path().join("plain");
    assert_eq!(build(&reg, &plain, &[]).code, 0);
    assert!(!plain.join("verification.json").exists());
    assert!(!plain.join("verification.schema.json").exists());
    // 2026-03-01T00:00:00Z, as the reproducible-builds variable and as the flag.
    let with_env = |out: &Path, epoch: &str| {
        build_with_env(
            &reg,
            out,
            &["--matrix", &arg],
            &[("SOURCE_DATE_EPOCH", epoch)],
        )
    };
    let by_env = work.path().join("by-env");
    let run = with_env(&by_env, "1772323200");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let by_flag = work.path().join("by-flag");
    assert_eq!(
        build(&reg, &by_flag, &["--matrix", &arg, "--as-of", "2026-03-01"]).code,
        0
    );
    assert_eq!(
        tree(&by_env),
        tree(&by_flag),
        "the same time gives the same bytes"
    );
    // The flag wins over the variable; a malformed variable is a usage error.
    let later = work.path().join("later");
    let run = build_with_env(
        &reg,
        &later,
        &["--matrix", &arg, "--as-of", "2026-03-01"],
        &[("SOURCE_DATE_EPOCH", "1900000000")],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(tree(&later), tree(&by_flag));
    let bad = with_env(&work.path().join("bad"), "yesterday");
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr
            .contains("SOURCE_DATE_EPOCH `yesterday` is not a number"),
        "{}",
        bad.stderr
    );
    // --max-age and --as-of mean nothing without --matrix.
    let usage = build(&reg, &work.path().join("x"), &["--max-age", "3"]);
    assert_eq!(usage.code, 2, "{}", usage.stderr);
}
