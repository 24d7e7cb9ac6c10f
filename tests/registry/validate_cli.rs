//! End-to-end behaviour of `acp-registry validate` on the bundled registry, a broken entry,
//! and the public registry sample (zero-config parity with the public CI).

use crate::common;
use acp_test_kit::git::git;

use std::path::Path;

use acp_test_kit::{Finding, Findings};
use common::{acp_registry, copy_dir, findings, public_sample, repo_root};

#[test]
fn bundled_registry_validates_without_errors() {
    let run = acp_registry(&["validate"], &repo_root());
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let summary = run.stdout.lines().last().unwrap_or_default();
    assert!(summary.starts_with("0 errors, "), "{}", run.stdout);
}

#[test]
fn one_entry_broken_ten_ways_reports_every_finding_in_one_run() {
    let (code, list) = findings(&repo_root().join("tests/fixtures/broken"));
    let got: Vec<String> = list
        .iter()
        .map(|(s, c, p)| format!("{s} {c} {p}"))
        .collect();
    let expected = [
        "error version-format broken-agent/agent.json:5:14",
        "error url-format broken-agent/agent.json:7:17",
        "warning license-unknown broken-agent/agent.json:8:14",
        "warning capability-unknown broken-agent/agent.json:10:20",
        "error tags-format broken-agent/agent.json:11:12",
        "error duplicate-key broken-agent/agent.json:12:3",
        "note client-incompatible broken-agent/agent.json:13:3",
        "error archive-format broken-agent/agent.json:16:20",
        "error platform-unknown broken-agent/agent.json:20:7",
        "error cmd-path broken-agent/agent.json:22:16",
        "error env-reserved broken-agent/agent.json:29:18",
        "error icon-color broken-agent/icon.svg:2:57",
    ];
    assert_eq!(got, expected);
    assert_eq!(code, 1);
}

#[test]
fn public_sample_validates_with_zero_config_from_its_root() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&public_sample(), dir.path());
    // Laid out like the public repository: entries next to .github/ and agent.schema.json.
    std::fs::create_dir_all(dir.path().join(".github/workflows")).unwrap();
    std::fs::write(dir.path().join(".github/workflows/ci.yml"), "on: push\n").unwrap();
    std::fs::write(dir.path().join("agent.schema.json"), "{}\n").unwrap();
    let run = acp_registry(&["validate", "--registry", "."], dir.path());
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains("0 errors"), "{}", run.stdout);
    assert!(run.stdout.contains("in 19 entries"), "{}", run.stdout);
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.contains(from),
        "{} does not contain {from:?}",
        path.display()
    );
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// Breaks a copy of the public sample in one way.
type Inject = fn(&Path);

/// The public CI's rejection cases: (name, the error code expected, how to inject it).
const REJECTION_CASES: &[(&str, &str, Inject)] = &[
    ("invalid JSON", "jsonc-syntax", |r| {
        edit(&r.join("gemini/agent.json"), "\"name\":", "\"name\"");
    }),
    ("missing required field", "schema", |r| {
        edit(
            &r.join("gemini/agent.json"),
            "\"description\": \"Google's official CLI for Gemini\",",
            "",
        );
    }),
    ("id not a slug", "id-format", |r| {
        std::fs::rename(r.join("gemini"), r.join("Gemini")).unwrap();
        edit(
            &r.join("Gemini/agent.json"),
            "\"id\": \"gemini\"",
            "\"id\": \"Gemini\"",
        );
    }),
    ("id differs from folder", "id-mismatch", |r| {
        edit(
            &r.join("gemini/agent.json"),
            "\"id\": \"gemini\"",
            "\"id\": \"gemini-cli\"",
        );
    }),
    ("duplicate id", "duplicate-id", |r| {
        edit(
            &r.join("qwen-code/agent.json"),
            "\"id\": \"qwen-code\"",
            "\"id\": \"gemini\"",
        );
    }),
    ("version not X.Y.Z", "version-format", |r| {
        edit(
            &r.join("gemini/agent.json"),
            "\"version\": \"0.51.0\"",
            "\"version\": \"v0.51\"",
        );
    }),
    ("missing icon", "icon-missing", |r| {
        std::fs::remove_file(r.join("gemini/icon.svg")).unwrap();
    }),
    ("icon not 16x16", "icon-size", |r| {
        edit(
            &r.join("gemini/icon.svg"),
            "width=\"16\" height=\"16\"",
            "width=\"24\" height=\"24\"",
        );
    }),
    ("icon with a fixed colour", "icon-color", |r| {
        edit(
            &r.join("gemini/icon.svg"),
            "fill=\"currentColor\"",
            "fill=\"#4285F4\"",
        );
    }),
    ("unknown platform", "platform-unknown", |r| {
        edit(
            &r.join("goose/agent.json"),
            "\"linux-x86_64\"",
            "\"linux-x64\"",
        );
    }),
    ("archive over http", "archive-url", |r| {
        edit(
            &r.join("goose/agent.json"),
            "https://github.com/block/goose/releases/download/v1.43.0/goose-x86_64-unknown",
            "http://github.com/block/goose/releases/download/v1.43.0/goose-x86_64-unknown",
        );
    }),
    ("npx pin differs from version", "version-mismatch", |r| {
        edit(
            &r.join("gemini/agent.json"),
            "@google/gemini-cli@0.51.0",
            "@google/gemini-cli@0.50.0",
        );
    }),
    ("latest tag", "latest-tag", |r| {
        edit(
            &r.join("gemini/agent.json"),
            "@google/gemini-cli@0.51.0",
            "@google/gemini-cli@latest",
        );
    }),
    ("no distribution", "schema", |r| {
        let path = r.join("fast-agent/agent.json");
        let mut doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        doc.as_object_mut().unwrap().remove("distribution");
        std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }),
    ("unknown distribution type", "schema", |r| {
        edit(
            &r.join("gemini/agent.json"),
            "\"npx\": {",
            "\"docker\": {\"image\": \"x\"}, \"npx\": {",
        );
    }),
    ("empty name", "schema", |r| {
        edit(
            &r.join("gemini/agent.json"),
            "\"name\": \"Gemini CLI\"",
            "\"name\": \"\"",
        );
    }),
];

/// The public CI's rejection cases, each injected alone into a copy of the sample.
#[test]
fn public_ci_rejection_cases_are_rejected() {
    let mut failures = Vec::new();
    for &(name, code, inject) in REJECTION_CASES {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&public_sample(), dir.path());
        inject(dir.path());
        let (exit, list) = findings(dir.path());
        let hit = list.iter().any(|(s, c, _)| s == "error" && c == code);
        if exit != 1 || !hit {
            failures.push(format!(
                "{name}: exit {exit}, expected an error `{code}`, got {list:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn deny_warnings_turns_warnings_into_a_failing_exit() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&public_sample(), dir.path());
    let plain = acp_registry(&["validate", "--registry", "."], dir.path());
    assert_eq!(plain.code, 0);
    let strict = acp_registry(
        &["validate", "--registry", ".", "--deny-warnings"],
        dir.path(),
    );
    assert_eq!(strict.code, 1, "{}", strict.stdout);
}

#[test]
fn missing_registry_is_a_usage_failure_naming_the_folder() {
    let run = acp_registry(&["validate", "--registry", "no-such-dir"], &repo_root());
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no-such-dir"), "{}", run.stderr);
    assert!(run.stderr.contains("--registry"), "{}", run.stderr);
}

#[test]
fn config_overrides_severity_and_exempts_ids() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&public_sample(), dir.path());
    // The public registry's current policy: license_url required, grandfathered ids exempt.
    std::fs::write(
        dir.path().join("acp-registry.jsonc"),
        r#"{
  // license_url became required in September 2026
  "severity": {"license-url-missing": "error", "sha256-missing": "off"},
  "exemptions": {"gemini": ["license-url-missing"]},
}"#,
    )
    .unwrap();
    let (code, list) = findings(dir.path());
    assert_eq!(code, 1);
    let license: Vec<_> = list
        .iter()
        .filter(|(_, c, _)| c == "license-url-missing")
        .collect();
    assert_eq!(license.len(), 18, "{license:?}");
    assert!(license.iter().all(|(s, _, _)| s == "error"));
    assert!(!license.iter().any(|(_, _, p)| p.starts_with("gemini/")));
    assert!(!list.iter().any(|(_, c, _)| c == "sha256-missing"));
}

#[test]
fn changed_since_checks_only_changed_entries_but_sees_all_ids() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(&public_sample(), root);
    // An old problem in an untouched entry must not be reported.
    edit(
        &root.join("goose/agent.json"),
        "\"linux-x86_64\"",
        "\"linux-x64\"",
    );
    acp_test_kit::git::init_base(root).unwrap();
    // The pull request: one edited entry and one new entry reusing an existing id.
    edit(
        &root.join("cline/agent.json"),
        "\"version\": ",
        "\"version\": \"x\", \"v\": ",
    );
    copy_dir(&root.join("gemini"), &root.join("gemini-fork"));
    let (code, list) = findings(root);
    assert_eq!(code, 1);
    assert!(
        list.iter().any(|(_, c, _)| c == "platform-unknown"),
        "full run sees goose"
    );
    let run = acp_registry(
        &[
            "validate",
            "--registry",
            ".",
            "--changed-since",
            "HEAD",
            "--format",
            "json",
        ],
        root,
    );
    let doc = run.findings();
    let files: Vec<String> = doc
        .findings
        .iter()
        .filter(|f| f.severity == "error")
        .map(acp_test_kit::Finding::code_and_file)
        .collect();
    assert!(
        files.contains(&"duplicate-id gemini-fork/agent.json".to_string()),
        "{files:?}"
    );
    assert!(
        files.iter().any(|f| f.starts_with("version-format cline/")),
        "{files:?}"
    );
    assert!(!files.iter().any(|f| f.contains("goose/")), "{files:?}");
    assert_eq!(doc.summary.entries, 2);
    assert_eq!(run.code, 1);
    let bad = acp_registry(
        &[
            "validate",
            "--registry",
            ".",
            "--changed-since",
            "no-such-rev",
        ],
        root,
    );
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("no-such-rev"), "{}", bad.stderr);
}

#[test]
fn github_format_writes_the_full_table_to_the_step_summary() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let output = std::process::Command::new(crate::REGISTRY)
        .args([
            "validate",
            "--registry",
            "tests/fixtures/broken",
            "--format",
            "github",
        ])
        .current_dir(repo_root())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("::error ")).count(),
        9
    );
    let table = std::fs::read_to_string(summary).unwrap();
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| error ")).count(),
        9
    );
    assert!(
        table.contains("`tests/fixtures/broken/broken-agent/agent.json:5:14`"),
        "{table}"
    );
}

#[test]
fn sarif_output_parses_as_sarif_2_1_0() {
    let run = acp_registry(
        &[
            "validate",
            "--registry",
            "tests/fixtures/broken",
            "--format",
            "sarif",
        ],
        &repo_root(),
    );
    let sarif: serde_sarif::sarif::Sarif = serde_json::from_str(&run.stdout).expect("typed SARIF");
    assert_eq!(serde_json::to_value(&sarif.version).unwrap(), "2.1.0");
    let run0 = &sarif.runs[0];
    let rules = run0.tool.driver.rules.as_ref().unwrap();
    let results = run0.results.as_ref().unwrap();
    assert_eq!(results.len(), 12);
    for result in results {
        let index = result.rule_index.unwrap() as usize;
        assert_eq!(rules[index].id, result.rule_id.clone().unwrap());
        let region = result.locations.as_ref().unwrap()[0]
            .physical_location
            .as_ref()
            .unwrap()
            .region
            .as_ref()
            .unwrap();
        assert!(region.start_line.unwrap() >= 1 && region.start_column.unwrap() >= 1);
    }
}

#[test]
fn human_output_has_color_only_when_asked() {
    // Tests run without a terminal: no ANSI escapes even without NO_COLOR.
    let output = std::process::Command::new(crate::REGISTRY)
        .args(["validate", "--registry", "tests/fixtures/broken"])
        .current_dir(repo_root())
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&output.stdout).contains('\u{1b}'));
}

/// What [`hidden_chars`] finds in clean output (typed: a bare `[]` is ambiguous here).
const NO_CHARS: [char; 0] = [];

/// Characters that would move the cursor, recolour or reorder text: control characters
/// other than newline and tab, and bidi embeddings, overrides and isolates.
fn hidden_chars(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .collect()
}

/// Lines GitHub Actions would run as workflow commands: `::` after leading whitespace, or
/// the legacy `##[` anywhere.
fn command_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.trim_start().starts_with("::") || l.contains("##["))
        .collect()
}

/// `text` neither hides characters nor holds a workflow command line.
fn assert_inert(text: &str) {
    assert_eq!(hidden_chars(text), NO_CHARS, "{text}");
    assert_eq!(command_lines(text), Vec::<&str>::new(), "{text}");
}

/// `root/registry/evil/`: a manifest whose comment holds raw ESC, CR, C1 and bidi
/// characters on the line of a `version-format` finding, and whose tag (echoed by
/// `tags-format`) holds an ESC sequence, a newline starting a workflow command, HTML, a
/// table cell break, a percent escape, a link, a SARIF placeholder, a legacy command and a
/// backtick that ends the message's code span early.
fn hostile_registry(root: &Path) -> std::path::PathBuf {
    let entry = root.join("registry/evil");
    std::fs::create_dir_all(&entry).unwrap();
    let manifest = concat!(
        "{\n",
        "  \"id\": \"evil\",\n",
        "  \"name\": \"Evil\",\n",
        "  /* \u{1b}[2J\u{1b}]0;owned\u{7}\r\u{9b}31m\u{202e} */ \"version\": \"1.2\",\n",
        "  \"description\": \"Hostile text.\",\n",
        "  \"repository\": \"https://github.com/example/evil\",\n",
        "  \"license\": \"MIT\",\n",
        "  \"license_url\": \"https://github.com/example/evil/blob/main/LICENSE\",\n",
        "  \"tags\": [\"\\u001b[31mred\\n::error file=x::pwned <script>alert(1)</script> | %0A ",
        "[x](https://evil.example) {0} ##[group]g \\u202e\\u009b ` <img src=x onerror=alert(1)> ",
        "[y](https://evil.example/2)\"],\n",
        "  \"distribution\": {\"npx\": {\"package\": \"evil@1.2.0\"}}\n",
        "}\n",
    );
    std::fs::write(entry.join("agent.json"), manifest).unwrap();
    std::fs::write(
        entry.join("icon.svg"),
        concat!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\">\n",
            "  <circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"none\" stroke=\"currentColor\"/>\n",
            "</svg>\n",
        ),
    )
    .unwrap();
    root.join("registry")
}

#[test]
fn human_output_shows_hostile_characters_as_escapes_and_starts_no_workflow_command() {
    let dir = tempfile::tempdir().unwrap();
    hostile_registry(dir.path());
    let run = acp_registry(&["validate", "--registry", "registry"], dir.path());
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_inert(&run.stdout);
    // The comment on the finding's line is shown, its controls visible.
    assert!(
        run.stdout
            .contains("\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\u{d}\\u{9b}31m\\u{202e}"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("tag `\\u{1b}[31mred"), "{}", run.stdout);
    // The caret still sits under `"1.2"`, after the escaped comment.
    let lines: Vec<&str> = run.stdout.lines().collect();
    let source = lines
        .iter()
        .position(|l| l.contains("\"version\""))
        .unwrap();
    let caret = lines[source + 1].find('^').unwrap();
    assert_eq!(
        &lines[source][caret..caret + 5],
        "\"1.2\"",
        "{}",
        run.stdout
    );
}

#[test]
fn github_annotations_keep_hostile_text_inside_one_command() {
    let dir = tempfile::tempdir().unwrap();
    hostile_registry(dir.path());
    let run = acp_registry(
        &["validate", "--registry", "registry", "--format", "github"],
        dir.path(),
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(hidden_chars(&run.stdout), NO_CHARS, "{}", run.stdout);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let (summary, commands) = lines.split_last().unwrap();
    assert!(summary.starts_with("2 errors"), "{}", run.stdout);
    assert_eq!(commands.len(), 2, "{}", run.stdout);
    for line in commands {
        assert!(
            line.starts_with("::error file=registry/evil/agent.json,"),
            "{line}"
        );
    }
    let tag = commands.iter().find(|l| l.contains("tags-format")).unwrap();
    // The newline is data, the literal `%0A` stays literal.
    assert!(tag.contains("red%0A::error file=x::pwned"), "{tag}");
    assert!(tag.contains("| %250A ["), "{tag}");
}

#[test]
fn step_summary_escapes_html_links_and_cell_breaks() {
    let dir = tempfile::tempdir().unwrap();
    hostile_registry(dir.path());
    let summary = dir.path().join("summary.md");
    let output = std::process::Command::new(crate::REGISTRY)
        .args(["validate", "--registry", "registry", "--format", "github"])
        .current_dir(dir.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let table = std::fs::read_to_string(summary).unwrap();
    assert_eq!(hidden_chars(&table), NO_CHARS, "{table}");
    assert!(table.contains("`registry/evil/agent.json:9:12`"), "{table}");
    // Rendered as GitHub does (GFM tables): no element from the registry, no extra cell.
    let mut html = String::new();
    let parser = pulldown_cmark::Parser::new_ext(&table, pulldown_cmark::Options::ENABLE_TABLES);
    pulldown_cmark::html::push_html(&mut html, parser);
    for element in ["<script", "<img", "<a "] {
        assert!(!html.contains(element), "{element} in\n{html}");
    }
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
    assert!(html.contains("&lt;script&gt;"), "{html}");
    for row in html.split("<tr>").filter(|r| r.contains("<td>")) {
        assert_eq!(row.matches("<td>").count(), 4, "{row}");
    }
}

#[test]
fn sarif_messages_carry_no_links_placeholders_html_or_controls() {
    let dir = tempfile::tempdir().unwrap();
    hostile_registry(dir.path());
    let run = acp_registry(
        &["validate", "--registry", "registry", "--format", "sarif"],
        dir.path(),
    );
    let sarif: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let texts: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["message"]["text"].as_str().unwrap())
        .collect();
    let tag = texts.iter().find(|t| t.contains("pwned")).unwrap();
    assert_eq!(hidden_chars(tag), NO_CHARS, "{tag}");
    assert!(tag.contains("\\[x\\](https://evil.example) {{0}}"), "{tag}");
    assert!(tag.contains("\\[y\\](https://evil.example/2)"), "{tag}");
    assert!(tag.contains("\\<script\\>"), "{tag}");
}

#[test]
fn build_prints_findings_escaped_with_paths_as_named() {
    let dir = tempfile::tempdir().unwrap();
    hostile_registry(dir.path());
    let run = acp_registry(
        &["build", "--registry", "registry", "--out", "dist"],
        dir.path(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_inert(&run.stderr);
    assert!(
        run.stderr.contains(" --> registry/evil/agent.json:4:"),
        "{}",
        run.stderr
    );
}

/// `(github file= values, SARIF (uri, uriBaseId) pairs)` of one registry.
fn annotation_paths(cwd: &Path, registry: &str) -> (Vec<String>, Vec<(String, String)>) {
    let github = acp_registry(
        &["validate", "--registry", registry, "--format", "github"],
        cwd,
    );
    let files = github
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("::"))
        .map(|l| {
            let file = l.split_once("file=").unwrap().1;
            file.split([',', ':']).next().unwrap().to_string()
        })
        .collect();
    let sarif = acp_registry(
        &["validate", "--registry", registry, "--format", "sarif"],
        cwd,
    );
    let doc: serde_json::Value = serde_json::from_str(&sarif.stdout).unwrap();
    let uris = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let location = &r["locations"][0]["physicalLocation"]["artifactLocation"];
            (
                location["uri"].as_str().unwrap().to_string(),
                location["uriBaseId"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    (files, uris)
}

fn sorted_unique<T: Ord + Clone>(items: &[T]) -> Vec<T> {
    let mut items = items.to_vec();
    items.sort();
    items.dedup();
    items
}

#[test]
fn annotation_and_sarif_paths_with_entries_at_the_repository_root() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_root().join("tests/fixtures/broken"), dir.path());
    git(dir.path(), &["init", "-q"]);
    let (files, uris) = annotation_paths(dir.path(), ".");
    let expected = ["broken-agent/agent.json", "broken-agent/icon.svg"];
    assert_eq!(sorted_unique(&files), expected);
    let uris = sorted_unique(&uris);
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|f| (f.to_string(), "SRCROOT".to_string()))
        .collect();
    assert_eq!(uris, expected);
}

#[test]
fn annotation_and_sarif_paths_with_the_registry_in_a_sub_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(
        &repo_root().join("tests/fixtures/broken"),
        &root.join("registry"),
    );
    git(root, &["init", "-q"]);
    let sub = [
        "registry/broken-agent/agent.json",
        "registry/broken-agent/icon.svg",
    ];
    let in_srcroot: Vec<(String, String)> = sub
        .iter()
        .map(|f| (f.to_string(), "SRCROOT".to_string()))
        .collect();
    let absolute = root.join("registry");
    for named in ["registry", "./registry/", absolute.to_str().unwrap()] {
        let (files, uris) = annotation_paths(root, named);
        assert_eq!(sorted_unique(&files), sub, "--registry {named}");
        assert_eq!(sorted_unique(&uris), in_srcroot, "--registry {named}");
    }
    // From inside the registry, annotations follow the working directory; SARIF stays at
    // the repository root.
    let (files, uris) = annotation_paths(&root.join("registry"), ".");
    assert_eq!(
        sorted_unique(&files),
        ["broken-agent/agent.json", "broken-agent/icon.svg"]
    );
    assert_eq!(sorted_unique(&uris), in_srcroot);
    let human = acp_registry(&["validate", "--registry", "registry"], root);
    assert!(
        human
            .stdout
            .contains(" --> registry/broken-agent/agent.json:5:14"),
        "{}",
        human.stdout
    );
}

#[test]
fn sarif_paths_outside_git_are_relative_to_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(
        &repo_root().join("tests/fixtures/broken"),
        &root.join("reg"),
    );
    let output = std::process::Command::new(crate::REGISTRY)
        .args(["validate", "--registry", "reg", "--format", "sarif"])
        .current_dir(root)
        // Whatever holds the temp folder, git must not find a repository above it.
        .env("GIT_CEILING_DIRECTORIES", root)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let location = &doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(
        location["artifactLocation"]["uri"],
        "reg/broken-agent/agent.json"
    );
}

const CHANGE_CODES: [&str; 4] = [
    "version-decreased",
    "version-unchanged",
    "id-renamed",
    "entry-removed",
];

/// `validate --changed-since REV --format json` in `root`: the exit code, `severity code file`
/// of every change-rule finding (sorted), and the document.
fn change_findings(root: &Path, rev: &str) -> (i32, Vec<String>, Findings) {
    let run = acp_registry(
        &[
            "validate",
            "--registry",
            ".",
            "--changed-since",
            rev,
            "--format",
            "json",
        ],
        root,
    );
    let doc = run.findings();
    let mut list: Vec<String> = doc
        .findings
        .iter()
        .filter(|f| CHANGE_CODES.contains(&f.code.as_str()))
        .map(|f| format!("{} {}", f.severity, f.code_and_file()))
        .collect();
    list.sort();
    (run.code, list, doc)
}

/// The first finding of `code` in a JSON document.
fn first<'d>(doc: &'d Findings, code: &'d str) -> &'d Finding {
    doc.with_code(code).next().unwrap()
}

#[test]
fn changed_since_reports_versions_going_back_renamed_ids_and_removed_entries_from_git() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(&public_sample(), root);
    acp_test_kit::git::init_base(root).unwrap();
    let (code, list, _) = change_findings(root, "HEAD");
    assert_eq!((code, list.len()), (0, 0), "{list:?}");
    // The change: cline goes back a version (its pin too), gemini's package changes under the
    // same version, goose is renamed by moving its folder (committed), auggie is removed (staged).
    let cline = std::fs::read_to_string(root.join("cline/agent.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&cline).unwrap();
    let version = manifest["version"].as_str().unwrap().to_string();
    std::fs::write(
        root.join("cline/agent.json"),
        cline.replace(&version, "0.0.1"),
    )
    .unwrap();
    let gemini = root.join("gemini/agent.json");
    edit(
        &gemini,
        "\"@google/gemini-cli@",
        "\"@google/gemini-cli-fork@",
    );
    git(root, &["mv", "goose", "goose-agent"]);
    let goose = root.join("goose-agent/agent.json");
    edit(&goose, "\"id\": \"goose\"", "\"id\": \"goose-agent\"");
    git(root, &["commit", "-qam", "change"]);
    git(root, &["rm", "-rq", "auggie"]);
    let (code, found, doc) = change_findings(root, "HEAD~1");
    assert_eq!(
        found,
        [
            "error version-decreased cline/agent.json",
            "note entry-removed auggie/agent.json",
            "note entry-removed goose/agent.json",
            "warning id-renamed goose-agent/agent.json",
            "warning version-unchanged gemini/agent.json",
        ],
        "{doc:#?}"
    );
    assert_eq!(code, 1);
    let text = |code: &str| {
        let f = first(&doc, code);
        format!("{} {}", f.message, f.help.as_deref().unwrap_or_default())
    };
    let decreased = format!("`0.0.1` is lower than `{version}` at `HEAD~1`");
    assert!(text("version-decreased").contains(&decreased));
    assert!(text("id-renamed").contains("`goose-agent` looks like a rename of `goose`"));
    assert!(text("id-renamed").contains("change `name`"));
    assert!(text("entry-removed").contains("entry `auggie`"));
    // At the version value and at the new id.
    assert_eq!(
        first(&doc, "version-decreased").pointer.as_deref(),
        Some("/version")
    );
    assert_eq!(first(&doc, "id-renamed").pointer.as_deref(), Some("/id"));
    // Without --changed-since nothing is compared.
    let (_, list) = findings(root);
    assert!(!list
        .iter()
        .any(|(_, c, _)| CHANGE_CODES.contains(&c.as_str())));
}
