//! Issue 33's everyday flags: value completion asked of the binary as a shell asks it
//! (`COMPLETE=bash`), `build --format json` listing what it wrote, `--quiet`, `fmt --diff`
//! and `scripts/package.sh --help`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use super::REGISTRY;
use acp_registry::Code;

const SAMPLE: &str = "tests/fixtures/public-registry-sample";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The candidates bash's completion function gets for the last of `words` (the command line
/// as the shell splits it, the binary's name first), one per line.
fn complete(words: &[&str]) -> Vec<String> {
    let output = Command::new(REGISTRY)
        .current_dir(repo())
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", (words.len() - 1).to_string())
        .env("_CLAP_IFS", "\n")
        .arg("--")
        .args(words)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    text.lines()
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect()
}

fn sorted(list: &[String]) -> bool {
    list.windows(2).all(|pair| pair[0] < pair[1])
}

#[test]
fn completion_offers_rule_codes_after_explain() {
    let got = complete(&["acp-registry", "explain", "agent-"]);
    let mut want: Vec<String> = Code::ALL
        .iter()
        .map(|code| code.as_str().to_string())
        .filter(|code| code.starts_with("agent-"))
        .collect();
    want.sort();
    assert!(want.len() > 2, "{want:?}");
    assert_eq!(got, want);
    // An empty word is offered the flags too (`--list`, …), then every code.
    let all: Vec<String> = complete(&["acp-registry", "explain", ""])
        .into_iter()
        .filter(|word| !word.starts_with('-'))
        .collect();
    assert_eq!(all.len(), Code::ALL.len());
    assert!(sorted(&all), "{all:?}");
}

#[test]
fn completion_offers_the_entry_ids_of_the_registry_named_on_the_line() {
    let mut want: Vec<String> = std::fs::read_dir(repo().join(SAMPLE))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.join("agent.json").is_file())
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|id| id.starts_with('c'))
        .collect();
    want.sort();
    assert!(want.len() > 2, "{want:?}");
    let line = [
        "acp-registry",
        "update",
        "--registry",
        SAMPLE,
        "--agent",
        "c",
    ];
    assert_eq!(complete(&line), want);
    let line = [
        "acp-registry",
        "verify",
        "--registry",
        SAMPLE,
        "--agent",
        "amp-acp,c",
    ];
    let joined: Vec<String> = want.iter().map(|id| format!("amp-acp,{id}")).collect();
    assert_eq!(complete(&line), joined);
    // Without --registry: `registry` in the current folder (the bundled one).
    let bundled = complete(&["acp-registry", "verify", "--agent", ""]);
    assert!(bundled.contains(&"claude-acp".to_string()), "{bundled:?}");
    assert!(!bundled.iter().any(|id| id == "skills"), "{bundled:?}");
    assert!(sorted(&bundled), "{bundled:?}");
}

#[test]
fn completion_offers_the_clients_skill_install_knows() {
    let got = complete(&["acp-registry", "skill", "install", "--agent", ""]);
    let mut want: Vec<String> = acp_registry_core::skill_install::AGENTS
        .iter()
        .map(|agent| agent.name.to_string())
        .collect();
    want.sort();
    assert_eq!(got, want);
    assert!(got.contains(&"claude-code".to_string()));
}

/// Every file under `dir`, by `/`-separated relative path.
fn files_under(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    acp_test_kit::files::tree(dir)
}

fn run(args: &[&str]) -> Output {
    Command::new(REGISTRY)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn build_format_json_lists_every_file_written_with_its_size_and_digest() {
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let dist_arg = dist.to_str().unwrap();
    let built = run(&[
        "build",
        "--registry",
        "registry",
        "--out",
        dist_arg,
        "--format",
        "json",
    ]);
    assert!(built.status.success(), "{built:?}");
    let doc: serde_json::Value = serde_json::from_slice(&built.stdout).unwrap();
    assert!(doc["findings"].is_array(), "the findings document stays");
    let build = &doc["build"];
    assert_eq!(build["written"], true);
    let on_disk = files_under(&dist);
    let listed: Vec<(String, u64, String)> = build["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap().to_string();
            (
                path,
                f["size"].as_u64().unwrap(),
                f["sha256"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let paths: Vec<&String> = listed.iter().map(|(path, _, _)| path).collect();
    assert_eq!(
        paths,
        on_disk.keys().collect::<Vec<_>>(),
        "every file, sorted"
    );
    for (path, size, sha256) in &listed {
        let bytes = &on_disk[path];
        assert_eq!(*size, bytes.len() as u64, "{path}");
        assert_eq!(*sha256, acp_test_kit::files::sha256_hex(bytes), "{path}");
    }
    assert_eq!(build["file_count"], on_disk.len());
    let outputs = build["outputs"].as_array().unwrap();
    assert_eq!(outputs[0]["file"], "registry.json");
    assert!(outputs[0]["agents"].as_u64().unwrap() > 0);
    // With --check nothing is written; the files are those of a fresh build.
    let checked = run(&["build", "--out", dist_arg, "--format", "json", "--check"]);
    assert!(checked.status.success(), "{checked:?}");
    let doc: serde_json::Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(doc["build"]["written"], false);
    assert_eq!(doc["build"]["up_to_date"], true);
    assert_eq!(doc["build"]["files"], build["files"]);
}

#[test]
fn color_always_colours_a_pipe_and_never_wins_over_clicolor_force() {
    let args = ["validate", "--registry", "tests/fixtures/broken"];
    let always = run(&[&["--color", "always"][..], &args[..]].concat());
    assert!(
        always.stdout.windows(2).any(|w| w == b"\x1b["),
        "{always:?}"
    );
    let never = Command::new(REGISTRY)
        .current_dir(repo())
        .env("CLICOLOR_FORCE", "1")
        .args([&args[..], &["--color", "never"][..]].concat())
        .output()
        .unwrap();
    assert!(!never.stdout.contains(&0x1b), "{never:?}");
    let forced = Command::new(REGISTRY)
        .current_dir(repo())
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .args(args)
        .output()
        .unwrap();
    assert!(
        forced.stdout.contains(&0x1b),
        "auto honours CLICOLOR_FORCE: {forced:?}"
    );
}

#[test]
fn quiet_drops_the_summary_and_keeps_the_exit_code() {
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let dist_arg = dist.to_str().unwrap();
    let loud = run(&["build", "--out", dist_arg]);
    let loud_err = String::from_utf8(loud.stderr).unwrap();
    assert!(loud_err.contains("built "), "{loud_err}");
    let quiet = run(&["--quiet", "build", "--out", dist_arg, "--check"]);
    let quiet_err = String::from_utf8(quiet.stderr).unwrap();
    assert!(quiet.status.success(), "{quiet_err}");
    assert!(!quiet_err.contains("checked "), "{quiet_err}");
    assert!(!quiet_err.contains("up to date"), "{quiet_err}");
    // A finding is still printed, and the exit code still says so.
    std::fs::write(dist.join("registry.json"), "{}").unwrap();
    let differs = run(&["build", "--out", dist_arg, "--check", "-q"]);
    let differs_err = String::from_utf8(differs.stderr).unwrap();
    assert_eq!(differs.status.code(), Some(1), "{differs_err}");
    assert!(
        differs_err.contains("changed  registry.json"),
        "{differs_err}"
    );
}

#[test]
fn fmt_diff_prints_a_patch_writes_nothing_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    acp_test_kit::files::copy_dir(&repo().join(SAMPLE), &dir.path().join("registry"));
    let before = files_under(dir.path());
    let fmt = |args: &[&str]| {
        Command::new(REGISTRY)
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    let diff = fmt(&["fmt", "--diff"]);
    assert_eq!(diff.status.code(), Some(1), "{diff:?}");
    assert_eq!(files_under(dir.path()), before, "--diff writes nothing");
    let text = String::from_utf8(diff.stdout).unwrap();
    assert!(
        text.starts_with(
            "--- a/registry/cursor/agent.json\n+++ b/registry/cursor/agent.json\n@@ -"
        ),
        "{text}"
    );
    assert!(
        !text.contains("would reformat"),
        "stdout is only the patch: {text}"
    );
    let count = String::from_utf8(diff.stderr).unwrap();
    assert_eq!(count, "4 of 19 manifests would be reformatted\n");
    // After `fmt` there is nothing left to show.
    assert!(fmt(&["fmt"]).status.success());
    let clean = fmt(&["fmt", "--diff", "-q"]);
    assert_eq!(clean.status.code(), Some(0), "{clean:?}");
    assert!(
        clean.stdout.is_empty() && clean.stderr.is_empty(),
        "{clean:?}"
    );
}

#[test]
fn package_script_prints_its_usage_and_refuses_unknown_options() {
    let script = repo().join("scripts/package.sh");
    for flag in ["--help", "-h"] {
        let output = Command::new("bash")
            .arg(&script)
            .arg(flag)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        for word in [
            "usage: scripts/package.sh",
            "--target",
            "SOURCE_DATE_EPOCH",
            "SHA256SUMS",
        ] {
            assert!(text.contains(word), "{word}: {text}");
        }
    }
    let output = Command::new("bash")
        .arg(&script)
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let text = String::from_utf8(output.stderr).unwrap();
    assert!(text.contains("unknown option --bogus"), "{text}");
}
