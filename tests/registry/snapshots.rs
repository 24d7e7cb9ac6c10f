//! Snapshots of every renderer on the same broken fixture and of every `--help` text
//! (`cargo insta review` after an intended change).

use crate::common;

use acp_registry::check_registry;
use acp_registry::{render, ReportFormat};
use common::{acp_registry, build_registry, repo_root, Run};

fn broken_report() -> acp_registry::Report {
    check_registry(&repo_root().join("tests/fixtures/broken"), None)
        .unwrap()
        .report
}

#[test]
fn human_renderer() {
    insta::assert_snapshot!(render(&broken_report(), ReportFormat::Human, false));
}

#[test]
fn human_renderer_with_color() {
    insta::assert_snapshot!(render(&broken_report(), ReportFormat::Human, true));
}

#[test]
fn json_renderer() {
    insta::assert_snapshot!(render(&broken_report(), ReportFormat::Json, false));
}

#[test]
fn github_renderer() {
    insta::assert_snapshot!(render(&broken_report(), ReportFormat::Github, false));
}

#[test]
fn github_step_summary() {
    insta::assert_snapshot!(acp_registry::render_github_summary(&broken_report()).unwrap());
}

#[test]
fn sarif_renderer() {
    insta::assert_snapshot!(render(&broken_report(), ReportFormat::Sarif, false));
}

#[test]
fn help_texts() {
    for args in [
        &["--help"][..],
        &["validate", "--help"],
        &["build", "--help"],
        &["site", "--help"],
        &["explain", "--help"],
        &["fmt", "--help"],
        &["init", "--help"],
        &["new", "--help"],
        &["update", "--help"],
        &["completions", "--help"],
        &["man", "--help"],
        &["verify", "--help"],
        &["matrix", "--help"],
        &["pack", "--help"],
        &["install", "--help"],
        &["run", "--help"],
        &["list", "--help"],
        &["which", "--help"],
        &["uninstall", "--help"],
        &["cache", "gc", "--help"],
        &["skill", "check", "--help"],
        &["skill", "install", "--help"],
    ] {
        let run = acp_registry(args, &repo_root());
        assert_eq!(run.code, 0);
        let name = match args {
            [_] => "help".to_string(),
            ["skill", sub, ..] => format!("help-skill-{sub}"),
            [command, ..] => format!("help-{command}"),
            [] => unreachable!(),
        };
        insta::assert_snapshot!(name, run.stdout);
    }
}

#[test]
fn acp_collab_help_texts() {
    for args in [
        &["--help"][..],
        &["init", "--help"],
        &["append", "--help"],
        &["next", "--help"],
        &["wait", "--help"],
        &["validate", "--help"],
        &["status", "--help"],
        &["log", "--help"],
        &["skill", "install", "--help"],
        &["completions", "--help"],
        &["man", "--help"],
    ] {
        let output = std::process::Command::new(crate::collab())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        let name = match args {
            [_] => "collab-help".to_string(),
            [command, ..] => format!("collab-help-{command}"),
            [] => unreachable!(),
        };
        insta::assert_snapshot!(name, String::from_utf8(output.stdout).unwrap());
    }
}

// --- completions and manual pages, for both binaries ---------------------------------------

/// The two binaries, by name.
fn binaries() -> [(&'static str, &'static str); 2] {
    [
        ("acp-registry", crate::REGISTRY),
        ("acp-collab", crate::collab()),
    ]
}

fn stdout_of(exe: &str, args: &[&str]) -> String {
    let output = std::process::Command::new(exe).args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{args:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The subcommand paths `--help` lists (the `help` command aside), nested ones included.
fn subcommand_paths(exe: &str, prefix: &[String]) -> Vec<Vec<String>> {
    let mut args: Vec<&str> = prefix.iter().map(String::as_str).collect();
    args.push("--help");
    let help = stdout_of(exe, &args);
    let Some(listed) = help.split("\nCommands:\n").nth(1) else {
        return vec![prefix.to_vec()];
    };
    let mut paths = Vec::new();
    for line in listed.lines().take_while(|l| !l.trim().is_empty()) {
        // A wrapped description continues on a line indented further.
        let Some(name) = line.strip_prefix("  ").filter(|l| !l.starts_with(' ')) else {
            continue;
        };
        let name = name.split_whitespace().next().unwrap_or_default();
        if name == "help" {
            continue;
        }
        let mut path = prefix.to_vec();
        path.push(name.to_string());
        paths.extend(subcommand_paths(exe, &path));
    }
    paths
}

/// Every long option a `--help` text shows, with the values it lists for it, if any.
fn options_in_help(help: &str) -> Vec<(String, Vec<String>)> {
    let start = regex::Regex::new(r"^ {2,6}(?:-[A-Za-z0-9], )?(--[a-z0-9-]+)").unwrap();
    let mut options: Vec<(String, String)> = Vec::new();
    for line in help.lines() {
        match start.captures(line) {
            Some(found) => options.push((found[1].to_string(), line.to_string())),
            None if !line.starts_with(|c: char| c.is_whitespace()) => {
                options.push((String::new(), String::new()));
            }
            None => {
                if let Some((_, block)) = options.last_mut() {
                    block.push('\n');
                    block.push_str(line);
                }
            }
        }
    }
    let listed = regex::Regex::new(r"\[possible values: ([^\]]*)\]").unwrap();
    let item = regex::Regex::new(r"(?m)^\s+- ([a-z0-9_-]+):").unwrap();
    options
        .into_iter()
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, block)| {
            let flat = block.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut values: Vec<String> = match listed.captures(&flat) {
                Some(list) => list[1].split(", ").map(str::to_string).collect(),
                None => item
                    .captures_iter(&block)
                    .map(|c| c[1].to_string())
                    .collect(),
            };
            values.sort();
            (name, values)
        })
        .collect()
}

/// What bash completion offers after `words` (the last one is being completed), with the
/// script that `completions bash` printed sourced as a user's shell would.
fn bash_offers(script: &std::path::Path, bin: &str, words: &[&str]) -> Vec<String> {
    let driver = r#"script=$1; bin=$2; shift 2
source "$script"
fn=$(complete -p "$bin" | sed -E 's/.* -F ([^ ]+) .*/\1/')
COMP_WORDS=("$bin" "$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
"$fn" "$bin" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}""#;
    let empty = tempfile::tempdir().unwrap();
    let run = Run::of(
        std::process::Command::new("bash")
            .current_dir(empty.path())
            .args(["--norc", "--noprofile", "-c", driver, "bash"])
            .arg(script)
            .arg(bin)
            .args(words),
    );
    run.assert_ok();
    let mut offers: Vec<String> = run
        .stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    offers.sort();
    offers
}

fn bash_script(bin: &str, exe: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join(format!("{bin}.bash"));
    std::fs::write(&path, stdout_of(exe, &["completions", "bash"])).unwrap();
    path
}

#[test]
fn bash_completion_offers_validate_formats() {
    let dir = tempfile::tempdir().unwrap();
    let script = bash_script("acp-registry", crate::REGISTRY, dir.path());
    let offers = bash_offers(&script, "acp-registry", &["validate", "--format", ""]);
    assert_eq!(offers, ["github", "human", "json", "sarif"]);
    let offers = bash_offers(&script, "acp-registry", &["validate", "--for"]);
    assert_eq!(offers, ["--format"]);
}

#[test]
fn bash_completion_offers_every_option_and_value_of_every_subcommand_of_both_binaries() {
    let dir = tempfile::tempdir().unwrap();
    for (bin, exe) in binaries() {
        let script = bash_script(bin, exe, dir.path());
        for path in subcommand_paths(exe, &[]) {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push("--help");
            let options = options_in_help(&stdout_of(exe, &args));
            args.pop();
            let mut expected: Vec<String> = options.iter().map(|(name, _)| name.clone()).collect();
            expected.sort();
            let offered = bash_offers(&script, bin, &[&args[..], &["--"]].concat());
            assert_eq!(offered, expected, "{bin} {} --<TAB>", path.join(" "));
            for (option, values) in options.iter().filter(|(_, v)| !v.is_empty()) {
                let offered =
                    bash_offers(&script, bin, &[&args[..], &[option.as_str(), ""]].concat());
                assert_eq!(&offered, values, "{bin} {} {option} <TAB>", path.join(" "));
            }
        }
    }
}

/// groff, warnings on, reads `page` without a complaint (where groff is installed).
fn assert_renders_cleanly(bin: &str, page: &str) {
    use std::io::Write as _;
    if !std::path::Path::new("/usr/bin/groff").exists() {
        return;
    }
    let mut groff = std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    groff
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let output = groff.wait_with_output().unwrap();
    let complaints = String::from_utf8_lossy(&output.stderr);
    assert!(complaints.is_empty(), "{bin}(1): {complaints}");
}

#[test]
fn the_manual_page_of_each_binary_documents_every_command_and_option_and_renders_cleanly() {
    let referenced = regex::Regex::new(r"([a-z-]+)\((\d)\)").unwrap();
    for (bin, exe) in binaries() {
        let page = stdout_of(exe, &["man"]);
        for path in subcommand_paths(exe, &[]) {
            let heading = format!(".SS \"{bin} {}\"", path.join(" "));
            let section = page
                .split(&heading)
                .nth(1)
                .unwrap_or_else(|| panic!("{heading} missing from {bin}(1)"));
            let section = section.split("\n.SS ").next().unwrap();
            let section = section.split("\n.SH ").next().unwrap();
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push("--help");
            for (option, _) in options_in_help(&stdout_of(exe, &args)) {
                let roff = option.replace('-', "\\-");
                assert!(
                    section.contains(&roff),
                    "{bin}(1) {heading}: {option} missing"
                );
            }
        }
        for part in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH EXAMPLES"] {
            assert!(page.contains(part), "{bin}(1): {part} missing");
        }
        // Only pages that exist: no `acp-registry-validate(1)` that nothing generates.
        for found in referenced.captures_iter(&page.replace("\\-", "-")) {
            assert!(
                ["acp-registry", "acp-collab"].contains(&&found[1]),
                "{bin}(1) names {} which is not generated",
                &found[0]
            );
        }
        assert_renders_cleanly(bin, &page);
    }
}

/// A registry of one agent per verification state (`current` with two distributions).
fn evidence_registry(reg: &std::path::Path) {
    for (id, dist) in [
        (
            "current",
            r#"{"npx": {"package": "current@1.0.0"}, "uvx": {"package": "current==1.0.0"}}"#,
        ),
        ("expired", r#"{"npx": {"package": "expired@1.0.0"}}"#),
        ("stale", r#"{"npx": {"package": "stale@1.0.0"}}"#),
        ("unverified", r#"{"npx": {"package": "unverified@1.0.0"}}"#),
    ] {
        let dir = reg.join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("agent.json"),
            format!(
                r#"{{"id": "{id}", "name": "{id}", "version": "1.0.0", "description": "d",
                    "license": "MIT", "license_url": "https://example.com/LICENSE",
                    "distribution": {dist}}}"#
            ),
        )
        .unwrap();
        std::fs::copy(
            repo_root().join("registry/gemini/icon.svg"),
            dir.join("icon.svg"),
        )
        .unwrap();
    }
}

/// A `matrix.json` row: (id, distribution, version, fingerprint, verified, status).
fn evidence_row(fields: [&str; 6]) -> serde_json::Value {
    let [id, distribution, version, fingerprint, verified, status] = fields;
    serde_json::json!({
        "id": id, "version": version, "distribution": distribution,
        "fingerprint": fingerprint, "verified": verified, "status": status,
        "protocol_version": 1, "agent_info": null,
        "auth_methods": [{"id": "login", "name": "Log in", "type": "terminal", "meta_kinds": ["terminal"]}],
        "methods": {"session/new": "success", "session/list": "success", "session/close": "success", "session/resume": "method-not-found"},
        "unstable_methods": ["session/fork", "session/set_title"]
    })
}

/// `build --matrix` of `rows` at 2026-03-01: the text of `verification.json`.
fn verification_of(reg: &std::path::Path, rows: &[serde_json::Value]) -> String {
    let work = reg.parent().unwrap();
    let matrix = work.join("matrix.json");
    let out = work.join("dist");
    let doc = serde_json::json!({"version": 1, "agents": rows});
    std::fs::write(&matrix, doc.to_string()).unwrap();
    let run = build_registry(
        reg,
        &out,
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
    std::fs::read_to_string(out.join("verification.json")).unwrap()
}

/// `verification.json` of a registry with one agent in each state, judged at a fixed time.
#[test]
fn verification_json() {
    let work = tempfile::tempdir().unwrap();
    let reg = work.path().join("registry");
    evidence_registry(&reg);
    // The fingerprints of the published distributions, from a first build.
    let first: serde_json::Value = serde_json::from_str(&verification_of(&reg, &[])).unwrap();
    let fingerprint = |id: &str, distribution: &str| {
        let rows = first["agents"].as_array().unwrap();
        let row = rows
            .iter()
            .find(|r| r["id"] == id && r["distribution"] == distribution);
        row.unwrap()["fingerprint"].as_str().unwrap().to_string()
    };
    let (current, current_uvx) = (fingerprint("current", "npx"), fingerprint("current", "uvx"));
    let (expired, stale) = (fingerprint("expired", "npx"), fingerprint("stale", "npx"));
    let text = verification_of(
        &reg,
        &[
            evidence_row([
                "current",
                "npx",
                "1.0.0",
                &current,
                "2026-02-27T03:04:05Z",
                "passed",
            ]),
            evidence_row([
                "current",
                "uvx",
                "1.0.0",
                &current_uvx,
                "2026-02-27T03:04:05Z",
                "failed",
            ]),
            evidence_row([
                "expired",
                "npx",
                "1.0.0",
                &expired,
                "2025-12-01T00:00:00Z",
                "passed",
            ]),
            evidence_row([
                "stale",
                "npx",
                "0.9.0",
                &stale,
                "2026-02-27T03:04:05Z",
                "passed",
            ]),
        ],
    );
    insta::assert_snapshot!(text);
}
