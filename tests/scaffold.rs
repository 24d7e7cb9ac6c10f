//! The commands a new user meets first: `new`, `validate PATH…`, `explain` without a code,
//! `completions` and `man`.

mod common;

use std::path::Path;

use common::{acp_registry, copy_dir, findings, repo_root};

/// A copy of the bundled registry to add entries to.
fn bundled_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_root().join("registry"), dir.path());
    dir
}

fn codes_for(registry: &Path, entry: &str) -> Vec<(String, String)> {
    let (_, list) = findings(registry);
    list.into_iter()
        .filter(|(_, _, place)| place.starts_with(&format!("{entry}/")))
        .map(|(severity, code, _)| (severity, code))
        .collect()
}

#[test]
fn new_package_entries_validate_and_build_without_a_single_finding() {
    let dir = bundled_copy();
    for args in [
        &["new", "npm-agent", "--npx", "@example/npm-agent"][..],
        &["new", "py-agent", "--uvx", "py-agent[acp]==2.1.0"],
    ] {
        let run = acp_registry(&[args, &["--registry", "."]].concat(), dir.path());
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains("0 errors, 0 warnings in 1 entry"),
            "{}",
            run.stdout
        );
    }
    assert_eq!(codes_for(dir.path(), "npm-agent"), []);
    assert_eq!(codes_for(dir.path(), "py-agent"), []);
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let build = acp_registry(
        &["build", "--registry", ".", "--out", dist.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(build.code, 0, "{}", build.stderr);
    let registry = std::fs::read_to_string(dist.join("registry.json")).unwrap();
    assert!(registry.contains(r#""package": "py-agent[acp]==2.1.0""#));
    assert!(registry.contains(r#""version": "0.1.0""#));
}

#[test]
fn new_binary_entry_has_no_error_and_only_asks_for_checksums() {
    let dir = bundled_copy();
    let run = acp_registry(
        &["new", "bin-agent", "--binary", "--registry", "."],
        dir.path(),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let codes = codes_for(dir.path(), "bin-agent");
    assert_eq!(codes.len(), 5, "{codes:?}");
    assert!(codes
        .iter()
        .all(|(severity, code)| severity == "warning" && code == "sha256-missing"));
}

#[test]
fn new_manifest_is_commented_jsonc_pointing_at_the_published_schema() {
    let dir = bundled_copy();
    let run = acp_registry(
        &["new", "my-agent", "--npx", "my-agent", "--registry", "."],
        dir.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(dir.path().join("my-agent/agent.json")).unwrap();
    assert!(text.lines().any(|l| l.trim_start().starts_with("//")));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schemas/agent.schema.json")).unwrap(),
    )
    .unwrap();
    let id = schema["$id"].as_str().unwrap();
    assert!(text.contains(&format!(r#""$schema": "{id}""#)), "{text}");
    for file in ["icon.svg", "README.md"] {
        assert!(dir.path().join("my-agent").join(file).is_file(), "{file}");
    }
}

#[test]
fn new_never_overwrites_an_entry_a_file_or_a_link() {
    let dir = bundled_copy();
    let gemini = std::fs::read(dir.path().join("gemini/agent.json")).unwrap();
    let run = acp_registry(
        &["new", "gemini", "--binary", "--registry", "."],
        dir.path(),
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("already exists"), "{}", run.stderr);
    assert_eq!(
        std::fs::read(dir.path().join("gemini/agent.json")).unwrap(),
        gemini
    );
    let target = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(target.path(), dir.path().join("linked")).unwrap();
    let run = acp_registry(
        &["new", "linked", "--binary", "--registry", "."],
        dir.path(),
    );
    assert_eq!(run.code, 2);
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

#[test]
fn new_refuses_ids_the_registry_would_refuse() {
    let dir = bundled_copy();
    for id in ["My-Agent", "con", "9lives", &"a".repeat(65)] {
        let run = acp_registry(&["new", id, "--binary", "--registry", "."], dir.path());
        assert_eq!(run.code, 2, "{id}");
        assert!(run.stderr.contains("is not a valid id"), "{}", run.stderr);
        assert!(!dir.path().join(id).exists(), "{id}");
    }
}

#[test]
fn new_refuses_a_package_pinned_to_a_moving_tag() {
    let dir = bundled_copy();
    let run = acp_registry(
        &["new", "moving", "--npx", "moving@latest", "--registry", "."],
        dir.path(),
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("moving@1.2.3"), "{}", run.stderr);
    assert!(!dir.path().join("moving").exists());
}

/// An entry broken in a way only it shows, and one whose id duplicates `gemini`.
fn registry_with_two_broken_entries() -> tempfile::TempDir {
    let dir = bundled_copy();
    for id in ["first", "second"] {
        assert_eq!(
            acp_registry(&["new", id, "--npx", id, "--registry", "."], dir.path()).code,
            0
        );
    }
    let manifest = dir.path().join("first/agent.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(r#""version": "0.1.0""#, r#""version": "1.2""#),
    )
    .unwrap();
    let manifest = dir.path().join("second/agent.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(r#""id": "second""#, r#""id": "gemini""#),
    )
    .unwrap();
    dir
}

fn codes(run: &common::Run) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["code"].as_str().unwrap(),
                f["file"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn validate_paths_report_only_the_entries_they_are_in() {
    let dir = registry_with_two_broken_entries();
    let run = acp_registry(
        &[
            "validate",
            "--registry",
            ".",
            "--format",
            "json",
            "first/icon.svg",
        ],
        dir.path(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let found = codes(&run);
    assert!(
        found.iter().all(|c| c.ends_with(" first/agent.json")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|c| c.starts_with("version-format ")),
        "{found:?}"
    );
    // Named the way pre-commit names them from the repository root.
    let parent = dir.path().parent().unwrap();
    let name = dir.path().file_name().unwrap().to_str().unwrap();
    let run = acp_registry(
        &[
            "validate",
            "--registry",
            name,
            "--format",
            "json",
            &format!("{name}/second/agent.json"),
        ],
        parent,
    );
    let found = codes(&run);
    assert!(
        found.contains(&format!("duplicate-id {name}/second/agent.json")),
        "duplicate ids are still judged against every entry: {found:?}"
    );
    assert!(found.iter().all(|c| !c.contains("/first/")), "{found:?}");
}

#[test]
fn validate_paths_at_the_root_or_outside_entries_select_no_entry() {
    let dir = registry_with_two_broken_entries();
    std::fs::create_dir_all(dir.path().join(".github")).unwrap();
    std::fs::write(dir.path().join(".github/x.yml"), "on: push\n").unwrap();
    let run = acp_registry(
        &[
            "validate",
            "--registry",
            ".",
            "acp-registry.jsonc",
            ".github/x.yml",
        ],
        dir.path(),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("in 0 entries"), "{}", run.stdout);
    let run = acp_registry(&["validate", "--registry", ".", "."], dir.path());
    assert_eq!(run.code, 1, "the root itself selects every entry");
}

#[test]
fn validate_path_outside_the_registry_is_a_usage_error_naming_it() {
    let dir = bundled_copy();
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("agent.json");
    std::fs::write(&file, "{}").unwrap();
    let run = acp_registry(
        &["validate", "--registry", ".", file.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("is not inside the registry"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(file.to_str().unwrap()),
        "{}",
        run.stderr
    );
}

#[test]
fn explain_without_a_code_points_to_the_list() {
    let run = acp_registry(&["explain"], &repo_root());
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("explain --list"), "{}", run.stderr);
}

/// Where the columns after the first start: after a run of at least two spaces.
fn column_starts(line: &str) -> Vec<usize> {
    let bytes = line.as_bytes();
    (2..bytes.len())
        .filter(|&i| bytes[i] != b' ' && bytes[i - 1] == b' ' && bytes[i - 2] == b' ')
        .take(2)
        .collect()
}

#[test]
fn explain_list_columns_start_at_the_same_place_on_every_line() {
    let run = acp_registry(&["explain", "--list"], &repo_root());
    assert_eq!(run.code, 0);
    let starts: std::collections::BTreeSet<Vec<usize>> =
        run.stdout.lines().map(column_starts).collect();
    assert_eq!(starts.len(), 1, "{starts:?}\n{}", run.stdout);
    assert_eq!(starts.first().unwrap().len(), 2, "{}", run.stdout);
}

#[test]
fn completions_are_generated_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let run = acp_registry(&["completions", shell], &repo_root());
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        for word in [
            "validate",
            "build",
            "explain",
            "new",
            "changed-since",
            "npx",
        ] {
            assert!(run.stdout.contains(word), "{shell} lacks {word}");
        }
    }
}

#[test]
fn man_page_is_roff_listing_every_command() {
    let run = acp_registry(&["man"], &repo_root());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with(".ie") || run.stdout.contains(".TH acp-registry"));
    for command in ["validate", "build", "site", "explain", "new", "completions"] {
        assert!(run.stdout.contains(command), "{command}");
    }
}
