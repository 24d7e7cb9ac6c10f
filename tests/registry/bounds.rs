//! Bounded documents (issue 29): a previous `registry.json` of `build --last-good` made of tiny
//! values, hard links in a `--last-good` folder and in a registry, and a configuration that
//! multiplies what `build` writes (long URLs times many outputs, large patches). Memory is the
//! peak RSS of the child, held under the bounds docs/format.md ("Reading files") states.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{build_registry, repo_root, Run};

const BASE: &str = "https://cdn.example.com/registry/v1/latest";
/// The peak RSS `build` may reach on the hostile documents below: the previous file's text
/// (up to the 64 MiB cap) once, and the process's own few tens of MiB. Before the typed
/// reader, a 60 MiB file of tiny values took about 3 GB.
const LAST_GOOD_BOUND: u64 = 128 << 20;
/// The peak RSS `build` may reach on a hostile configuration of a few hundred KiB.
const CONFIG_BOUND: u64 = 128 << 20;
/// About 60 MiB of text.
const SIXTY_MIB: usize = 60 << 20;

fn write_entry(root: &Path, id: &str, version: &str) {
    let dir = root.join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!(
        r#"{{"id": "{id}", "name": "{id}", "version": "{version}", "description": "d",
            "license": "MIT", "license_url": "https://example.com/LICENSE",
            "distribution": {{"npx": {{"package": "{id}@{version}"}}}}}}"#
    );
    std::fs::write(dir.join("agent.json"), manifest).unwrap();
    std::fs::copy(
        repo_root().join("registry/gemini/icon.svg"),
        dir.join("icon.svg"),
    )
    .unwrap();
}

/// A registry of `agent-01`, `agent-02` published at 1.0.0 into `published/`, then updated
/// to 1.1.0 with `agent-02` broken; returns (work dir, registry, previous output).
fn published_then_broken() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let reg = work.path().join("registry");
    let previous = work.path().join("published");
    for id in ["agent-01", "agent-02"] {
        write_entry(&reg, id, "1.0.0");
    }
    let run = build(&reg, &previous, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    write_entry(&reg, "agent-01", "1.1.0");
    write_entry(&reg, "agent-02", "1.1");
    (work, reg, previous)
}

fn build(registry: &Path, out: &Path, extra: &[&str]) -> Run {
    let args = [&["--base-url", BASE, "--no-site"], extra].concat();
    build_registry(registry, out, &args, &[])
}

/// `build` as a child whose peak RSS is measured.
fn build_measured(registry: &Path, out: &Path, extra: &[&str]) -> (Run, u64) {
    let mut command = Command::new(crate::REGISTRY);
    command
        .args(["build", "--registry"])
        .arg(registry)
        .arg("--out")
        .arg(out)
        .args(["--base-url", BASE, "--no-site"])
        .args(extra)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY");
    let (output, peak) = acp_test_kit::rss::run_measured(&mut command);
    (output.into(), peak)
}

/// `[0,0,…,0]` of about `bytes` bytes.
fn tiny_values(bytes: usize) -> String {
    let mut list = String::with_capacity(bytes + 2);
    list.push('[');
    list.push_str(&"0,".repeat(bytes / 2));
    list.push_str("0]");
    list
}

#[test]
fn last_good_reads_sixty_mib_of_tiny_values_in_bounded_memory_and_refuses_them_where_used() {
    let (work, reg, previous) = published_then_broken();
    let text = std::fs::read_to_string(previous.join("registry.json")).unwrap();
    let hostile = work.path().join("hostile");
    std::fs::create_dir_all(&hostile).unwrap();
    let out = work.path().join("dist");

    // In a member nobody reads: skipped without building anything, and the build goes on.
    let unused = hostile.join("unused.json");
    let with_tail = format!(
        "{}, \"padding\": {}}}",
        text.trim_end().strip_suffix('}').unwrap(),
        tiny_values(SIXTY_MIB)
    );
    std::fs::write(&unused, with_tail).unwrap();
    let (run, peak) = build_measured(&reg, &out, &["--last-good", unused.to_str().unwrap()]);
    assert_eq!(run.code, 3, "agent-02 held back\n{}", run.stderr);
    assert!(run.stderr.contains("(version 1.0.0)"), "{}", run.stderr);
    assert!(
        peak < LAST_GOOD_BOUND,
        "build --last-good peaked at {} MiB, over the {} MiB bound",
        peak >> 20,
        LAST_GOOD_BOUND >> 20
    );
    std::fs::remove_dir_all(&out).unwrap();

    // Inside the object that would be served again: over the value bound, refused naming the
    // file, nothing written.
    let used = hostile.join("used.json");
    let object = format!(
        r#"{{"agents": [{{"id": "agent-02", "version": "1.0.0", "args": {}}}]}}"#,
        tiny_values(SIXTY_MIB)
    );
    std::fs::write(&used, object).unwrap();
    let (run, peak) = build_measured(&reg, &out, &["--last-good", used.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("used.json` is not a registry file: its agents' objects hold more than 2000000 JSON values"),
        "{}",
        run.stderr
    );
    assert!(!out.exists(), "nothing written");
    assert!(
        peak < LAST_GOOD_BOUND,
        "build --last-good peaked at {} MiB, over the {} MiB bound",
        peak >> 20,
        LAST_GOOD_BOUND >> 20
    );

    // Tiny agents, each its own object: the list itself is bounded.
    let many = hostile.join("many.json");
    let agents: Vec<String> = (0..=100_000)
        .map(|i| format!("{{\"id\":\"a{i}\"}}"))
        .collect();
    std::fs::write(&many, format!("{{\"agents\":[{}]}}", agents.join(","))).unwrap();
    let run = build(&reg, &out, &["--last-good", many.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`agents` lists more than 100000 agents"),
        "{}",
        run.stderr
    );
    // Deeper than serde_json's 128 levels inside an agent's object (skipped members elsewhere
    // are passed over without recursing or allocating).
    let deep = hostile.join("deep.json");
    let nested = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let agent = format!("{{\"id\": \"agent-02\", \"x\": {nested}}}");
    std::fs::write(&deep, format!("{{\"agents\": [{agent}]}}")).unwrap();
    let run = build(&reg, &out, &["--last-good", deep.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("recursion limit exceeded"),
        "{}",
        run.stderr
    );
}

#[test]
fn last_good_serves_an_object_with_a_repeated_key_nowhere() {
    let (work, reg, previous) = published_then_broken();
    let text = std::fs::read_to_string(previous.join("registry.json")).unwrap();
    let at = text.find("\"id\": \"agent-02\"").unwrap();
    let repeated = format!(
        "{}{}",
        &text[..at],
        text[at..].replacen(
            "\"version\": \"1.0.0\"",
            "\"version\": \"1.0.0\", \"version\": \"9.9.9\"",
            1
        )
    );
    assert_ne!(repeated, text);
    let named = work.path().join("repeated.json");
    std::fs::write(&named, repeated).unwrap();
    let out = work.path().join("dist");
    let run = build(&reg, &out, &["--last-good", named.to_str().unwrap()]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("has no usable previous form in --last-good"),
        "{}",
        run.stderr
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("registry.json")).unwrap()).unwrap();
    assert_eq!(doc["agents"].as_array().unwrap().len(), 1);
}

#[test]
fn hard_links_in_a_last_good_folder_are_refused_as_the_registry_reader_refuses_them() {
    let (work, reg, previous) = published_then_broken();
    // A file outside the folder, readable by the runner, hard-linked in as the icon: a valid
    // SVG, so only the link itself can stop it.
    let secret = work.path().join("secret.svg");
    std::fs::write(
        &secret,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><!-- token: hunter2 --><path d=\"M0 0h16v16H0z\"/></svg>",
    )
    .unwrap();
    let icon = previous.join("agent-02.svg");
    std::fs::remove_file(&icon).unwrap();
    std::fs::hard_link(&secret, &icon).unwrap();
    let out = work.path().join("dist");
    let run = build(&reg, &out, &["--last-good", previous.to_str().unwrap()]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "previous icons not published: `agent-02.svg` (cannot be read: it is a hard link (the file has 2 names))"
        ),
        "{}",
        run.stderr
    );
    assert!(
        !out.join("agent-02.svg").exists(),
        "the linked icon is not published"
    );
    for (file, bytes) in acp_test_kit::tree(&out) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains("hunter2"),
            "{file} carries the linked file"
        );
    }
    std::fs::remove_dir_all(&out).unwrap();

    // The previous registry file itself, hard-linked: refused naming it.
    let elsewhere = work.path().join("elsewhere.json");
    std::fs::hard_link(previous.join("registry.json"), &elsewhere).unwrap();
    let run = build(&reg, &out, &["--last-good", previous.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("registry.json` cannot be read: it is a hard link (the file has 2 names)"),
        "{}",
        run.stderr
    );
    assert!(!out.exists());

    // The registry reader: the same refusal, as `file-link`.
    std::fs::remove_file(&elsewhere).unwrap();
    let linked = reg.join("agent-01/icon.svg");
    std::fs::remove_file(&linked).unwrap();
    std::fs::remove_file(&icon).unwrap();
    std::fs::hard_link(&secret, &linked).unwrap();
    let run = crate::common::acp_registry(
        &["validate", "--registry", reg.to_str().unwrap()],
        work.path(),
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let shown = format!("{}{}", run.stdout, run.stderr);
    assert!(
        shown.contains(
            "error[file-link]: agent-01/icon.svg is a hard link (the file has 2 names); links are never followed in a registry"
        ),
        "{shown}"
    );
}

/// A registry of one agent with `config` as its `acp-registry.jsonc`.
fn configured(config: &str) -> (tempfile::TempDir, PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let reg = work.path().join("registry");
    write_entry(&reg, "agent-01", "1.0.0");
    std::fs::write(reg.join("acp-registry.jsonc"), config).unwrap();
    (work, reg)
}

/// `build` of `reg` with its own `base_url` (no `--base-url`), measured.
fn build_configured(reg: &Path, out: &Path) -> (Run, u64) {
    let mut command = Command::new(crate::REGISTRY);
    command
        .args(["build", "--no-site", "--format", "json", "--registry"])
        .arg(reg)
        .arg("--out")
        .arg(out)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY");
    let (output, peak) = acp_test_kit::rss::run_measured(&mut command);
    (output.into(), peak)
}

/// The `config-invalid` findings of `run` as (line, message).
fn config_invalid(run: &Run) -> Vec<(Option<usize>, String)> {
    run.findings()
        .findings
        .into_iter()
        .filter(|f| f.code == "config-invalid")
        .map(|f| (f.line, f.message))
        .collect()
}

#[test]
fn a_config_of_long_urls_times_many_outputs_is_refused_as_config_invalid_in_bounded_memory() {
    // 100 KiB of base_url, 12,000 outputs: about 360 KiB that would write 12,000 copies of
    // each agent with three 100 KiB icon URLs in each.
    let long_url = format!("https://cdn.example.com/{}", "a".repeat(100 * 1024));
    let outputs: Vec<String> = (0..12_000)
        .map(|i| format!("{{\"file\": \"r{i}.json\"}}"))
        .collect();
    let config = format!(
        "{{\n\"base_url\": \"{long_url}\",\n\"online\": {{\"npm_registry\": \"https://npm.example.com/{}\"}},\n\"outputs\": [{}]\n}}\n",
        "n".repeat(4096),
        outputs.join(",")
    );
    assert!(config.len() > 300 * 1024 && config.len() < 1024 * 1024);
    let (work, reg) = configured(&config);
    let out = work.path().join("dist");
    let (run, peak) = build_configured(&reg, &out);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!out.exists(), "nothing written");
    let found = config_invalid(&run);
    let messages: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!(found[0].0, Some(2));
    assert!(
        messages[0].starts_with("base_url is a URL of 102424 bytes, over the 2048-byte limit"),
        "{messages:#?}"
    );
    assert!(
        messages[1]
            .starts_with("`/online/npm_registry` is a URL of 4120 bytes, over the 2048-byte limit"),
        "{messages:#?}"
    );
    assert_eq!(
        messages[2],
        "outputs lists 12000 outputs, over the limit of 16"
    );
    assert!(
        peak < CONFIG_BOUND,
        "build peaked at {} MiB, over the {} MiB bound",
        peak >> 20,
        CONFIG_BOUND >> 20
    );
}

#[test]
fn outputs_that_add_more_than_64_kib_to_one_agent_are_refused_naming_outputs() {
    // Sixteen outputs (the most allowed), each patching the one agent with 5 KiB: 80 KiB of
    // the configuration in every copy of the agent, over the 64 KiB per agent.
    let value = "v".repeat(5 * 1024);
    let outputs: Vec<String> = (0..16)
        .map(|i| {
            format!(
                "{{\"file\": \"r{i}.json\", \"patches\": [{{\"id\": \"agent-01\", \"set\": {{\"note\": \"{value}\"}}}}]}}"
            )
        })
        .collect();
    let config = format!("{{\n\"outputs\": [{}]\n}}\n", outputs.join(","));
    let (work, reg) = configured(&config);
    let out = work.path().join("dist");
    let (run, _) = build_configured(&reg, &out);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!out.exists());
    let found = config_invalid(&run);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Some(2));
    assert!(
        found[0].1.starts_with("outputs add up to ")
            && found[0].1.contains("bytes to one agent")
            && found[0].1.ends_with("over the 65536-byte limit"),
        "{found:#?}"
    );
    // Eleven of them fit (about 5.3 KiB each), and build.
    let fits = format!("{{\n\"outputs\": [{}]\n}}\n", outputs[..11].join(","));
    std::fs::write(reg.join("acp-registry.jsonc"), fits).unwrap();
    let (run, _) = build_configured(&reg, &out);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(out.join("r10.json").exists());
}

/// A collaboration folder `acp-collab init` made for `server` and `reader`.
fn collab_folder() -> (tempfile::TempDir, PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("collab");
    let output = Command::new(crate::collab())
        .args(["init", "--folder"])
        .arg(&folder)
        .args([
            "--participant",
            "server",
            "--participant",
            "reader",
            "--objective",
            "o",
            "--completion",
            "c",
            "--primary-deliverable-type",
            "adr",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    (work, folder)
}

/// Each `acp-collab <command> --folder <folder>` exits 2 saying `expected`, its peak memory
/// under the bound.
fn assert_collab_refuses(commands: &[&str], folder: &Path, expected: &str) {
    for command in commands {
        let mut run = Command::new(crate::collab());
        run.args([command, "--folder"]).arg(folder);
        let (output, peak) = acp_test_kit::rss::run_measured(&mut run);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let shown: String = text.chars().take(2000).collect();
        assert_eq!(output.status.code(), Some(2), "{command}: {shown}");
        assert!(text.contains(expected), "{command}: {shown}");
        assert!(
            peak < LAST_GOOD_BOUND,
            "{command} peaked at {} MiB, over the {} MiB bound",
            peak >> 20,
            LAST_GOOD_BOUND >> 20
        );
    }
}

#[test]
fn collab_protocol_json_of_tiny_values_is_refused_before_it_is_built_in_bounded_memory() {
    let (_work, folder) = collab_folder();
    let path = folder.join("protocol.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let padded = format!(
        "{}, \"x\": {}}}",
        text.trim_end().strip_suffix('}').unwrap(),
        tiny_values(SIXTY_MIB)
    );
    std::fs::write(&path, padded).unwrap();
    assert_collab_refuses(
        &["validate", "status"],
        &folder,
        "invalid protocol.json: more than 100000 JSON values",
    );
}

#[test]
fn collab_events_of_tiny_values_under_the_line_cap_are_bounded_over_the_whole_log() {
    // Seven lines just under the 8 MiB line cap, each about four million values in a field
    // nobody knows: about 3.5 GB for `status` before the log had a value bound.
    let (_work, folder) = collab_folder();
    let values = tiny_values((8 << 20) - 200);
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(folder.join("events.jsonl"))
        .unwrap();
    for seq in 2..9 {
        let line = format!(
            "{{\"seq\":{seq},\"from\":\"server\",\"event\":\"blocked\",\"at\":\"2026-01-01T00:00:00Z\",\"summary\":\"s\",\"reply_to\":1,\"x\":{values}}}\n"
        );
        std::io::Write::write_all(&mut log, line.as_bytes()).unwrap();
    }
    assert_collab_refuses(
        &["validate", "status", "log"],
        &folder,
        "events.jsonl line 2 and the lines after it were not read: the log holds more than 1000000 JSON values in all",
    );
}

#[test]
fn an_ownership_manifest_of_tiny_values_in_the_output_is_not_ours_and_is_read_in_bounded_memory() {
    // An output folder restored from elsewhere (a cache, an artifact) is not trusted either:
    // its ownership manifest of 60 MiB of tiny values in `files` is not one we wrote.
    let (work, reg, previous) = published_then_broken();
    write_entry(&reg, "agent-02", "1.1.0");
    let manifest = previous.join(".acp-registry-output.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let files: Vec<String> = (0..(SIXTY_MIB / 12))
        .map(|i| format!("\"{i:x}\":0"))
        .collect();
    assert!(text.contains("\"acp-registry-output\": 1"), "{text}");
    std::fs::write(
        &manifest,
        format!(
            "{{\"acp-registry-output\": 1, \"files\": {{{}}}}}",
            files.join(",")
        ),
    )
    .unwrap();
    drop(files);
    let (run, peak) = build_measured(&reg, &previous, &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("  .acp-registry-output.json (not a manifest acp-registry wrote)\n"),
        "{}",
        run.stderr
    );
    assert!(
        peak < LAST_GOOD_BOUND,
        "build peaked at {} MiB, over the {} MiB bound",
        peak >> 20,
        LAST_GOOD_BOUND >> 20
    );
    drop(work);
}
