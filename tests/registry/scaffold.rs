//! The commands a new user meets first: `init`, `new`, `validate PATH…`, `explain` without a
//! code, `completions` and `man`; and the workflow `init` writes, against this repository's
//! own and actionlint.

use crate::common;
use acp_test_kit::server as net_server;

use std::path::Path;

use common::{acp_registry, assert_usage_error, copy_dir, findings, repo_root, tree, Run};

/// A copy of the bundled registry to add entries to.
/// The command succeeded and said `text` on stdout.
fn assert_ok_saying(run: &Run, text: &str) {
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(text), "{}", run.stdout);
}

fn bundled_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_root().join("registry"), dir.path());
    dir
}

fn codes_for(registry: &Path, entry: &str) -> Vec<(String, String)> {
    let (_, list) = findings(registry);
    list.into_iter()
        .filter(|(_, _, place)| place.starts_with(&format!("{entry}/")))
        // A uvx scaffold draws the note that Zed installs no uvx packages, not a placeholder.
        .filter(|(_, code, _)| code != "client-incompatible")
        .map(|(severity, code, _)| (severity, code))
        .collect()
}

/// The three ways `new` launches an agent, as its flags.
const KINDS: [&[&str]; 3] = [
    &["--npx", "@example/my-agent"],
    &["--uvx", "my-agent[acp]==2.1.0"],
    &["--binary"],
];

/// `new` of every kind in the registry `dir` (ids `npm-agent`, `py-agent`, `bin-agent`), each
/// exiting 0; the ids with what `new` printed.
fn new_of_every_kind(dir: &Path) -> Vec<(&'static str, String)> {
    let ids = ["npm-agent", "py-agent", "bin-agent"];
    KINDS
        .iter()
        .zip(ids)
        .map(|(kind, id)| {
            let run = acp_registry(
                &[&["new", id][..], kind, &["--registry", "."]].concat(),
                dir,
            );
            assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
            (id, run.stdout)
        })
        .collect()
}

#[test]
fn new_entries_report_only_their_placeholders_and_new_still_exits_0() {
    let dir = bundled_copy();
    for (id, stdout) in new_of_every_kind(dir.path()) {
        assert!(stdout.contains("error[placeholder]"), "{stdout}");
        let codes = codes_for(dir.path(), id);
        let placeholders = codes
            .iter()
            .filter(|c| *c == &("error".into(), "placeholder".into()));
        // your-org twice, the author, the description, two README paragraphs, the icon; and
        // for binaries your-org in each of the five archive URLs, which lack their sha256.
        let (expected, missing_sha) = if id == "bin-agent" { (12, 5) } else { (7, 0) };
        assert_eq!(placeholders.count(), expected, "{id}: {codes:?}");
        let rest: Vec<_> = codes.iter().filter(|(_, c)| c != "placeholder").collect();
        assert_eq!(rest.len(), missing_sha, "{id}: {rest:?}");
        assert!(rest
            .iter()
            .all(|(s, c)| s == "warning" && c == "sha256-missing"));
    }
}

#[test]
fn new_writes_what_fmt_writes_for_every_kind() {
    let dir = bundled_copy();
    for (id, _) in new_of_every_kind(dir.path()) {
        let check = acp_registry(&["fmt", "--check", id], dir.path());
        assert_eq!(check.code, 0, "{id}: {}{}", check.stdout, check.stderr);
    }
}

#[test]
fn new_prints_the_next_command_with_the_entry_path_as_the_user_named_it() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(acp_registry(&["init"], dir.path()).code, 0);
    let run = acp_registry(&["new", "my-agent", "--npx", "my-agent"], dir.path());
    assert_ok_saying(&run, "created registry/my-agent/agent.json\n");
    let next = run.stdout.lines().last().unwrap().trim();
    assert_eq!(next, "acp-registry validate registry/my-agent");
    // The command printed is one that runs: it reports the placeholders.
    let words: Vec<&str> = next.split(' ').skip(1).collect();
    assert_eq!(acp_registry(&words, dir.path()).code, 1);
    let registry = dir.path().join("registry");
    let run = acp_registry(&["new", "other", "--binary", "--registry", "."], &registry);
    let lines: Vec<&str> = run.stdout.lines().map(str::trim).collect();
    // A binary entry's last two lines: the next command, then how to pin the digests.
    assert_eq!(
        lines[lines.len() - 3..],
        [
            "acp-registry validate --registry . other",
            "once the release is published, pin the archives' digests with",
            "acp-registry validate --fix --verify-archives --registry . other",
        ]
    );
}

#[test]
fn build_refuses_an_unedited_scaffold() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(acp_registry(&["init"], dir.path()).code, 0);
    assert_eq!(
        acp_registry(&["new", "my-agent", "--npx", "my-agent"], dir.path()).code,
        0
    );
    let build = acp_registry(&["build"], dir.path());
    assert_eq!(build.code, 1, "{}{}", build.stdout, build.stderr);
    assert!(build.stderr.contains("placeholder"), "{}", build.stderr);
    assert!(!dir.path().join("dist").exists());
}

/// Edit a scaffolded entry as its author would: real URLs, authors, description, README and
/// icon.
fn write_the_real_entry(entry: &Path) {
    let manifest = entry.join("agent.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text: Vec<String> = text
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("\"description\":") {
                r#"  "description": "Plans, edits and tests code changes in a terminal.","#
                    .to_string()
            } else {
                line.replace("your-org", "example")
                    .replace("Your Name", "Example Inc.")
            }
        })
        .collect();
    std::fs::write(&manifest, text.join("\n") + "\n").unwrap();
    std::fs::write(
        entry.join("README.md"),
        "# My Agent\n\nMy Agent plans a change, edits the files and runs the tests.\n\n## Sign in\n\nRun `my-agent login` once.\n",
    )
    .unwrap();
    std::fs::write(
        entry.join("icon.svg"),
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><path d="M2 2h12v12H2z" fill="currentColor"/></svg>
"#,
    )
    .unwrap();
}

#[test]
fn init_then_new_then_edits_validate_format_check_and_build_for_every_kind() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let init = acp_registry(
            &[
                "init",
                "--base-url",
                "https://agents.example.com/registry/v1/latest",
            ],
            dir.path(),
        );
        assert_eq!(init.code, 0, "{}", init.stderr);
        let new = acp_registry(&[&["new", "my-agent"][..], kind].concat(), dir.path());
        assert_eq!(new.code, 0, "{kind:?}: {}", new.stderr);
        let (code, found) = findings(&dir.path().join("registry"));
        assert_eq!(code, 1, "{kind:?}");
        assert!(
            found
                .iter()
                .all(|(s, c, _)| (s == "error" && c == "placeholder")
                    || (s == "warning" && c == "sha256-missing")
                    // uvx: Zed installs no uvx packages.
                    || (s == "note" && c == "client-incompatible")),
            "{kind:?}: {found:?}"
        );
        write_the_real_entry(&dir.path().join("registry/my-agent"));
        for command in [&["validate"][..], &["fmt", "--check"], &["build"]] {
            let run = acp_registry(command, dir.path());
            assert_eq!(
                run.code, 0,
                "{kind:?} {command:?}: {}{}",
                run.stdout, run.stderr
            );
        }
        let (_, found) = findings(&dir.path().join("registry"));
        assert!(
            found
                .iter()
                .all(|(_, c, _)| c == "sha256-missing" || c == "client-incompatible"),
            "{found:?}"
        );
        let registry = std::fs::read_to_string(dir.path().join("dist/registry.json")).unwrap();
        assert!(registry.contains("\"id\": \"my-agent\""), "{registry}");
    }
}

#[test]
fn init_writes_a_registry_that_validates_and_builds_with_no_agents() {
    let dir = tempfile::tempdir().unwrap();
    let init = acp_registry(
        &[
            "init",
            "--base-url",
            "https://agents.example.com/registry/v1/latest",
        ],
        dir.path(),
    );
    assert_eq!(init.code, 0, "{}", init.stderr);
    let validate = acp_registry(&["validate", "--format", "json"], dir.path());
    assert_eq!(validate.code, 0, "{}{}", validate.stdout, validate.stderr);
    assert_eq!(
        validate.findings().findings,
        [],
        "no config-* finding either"
    );
    let build = acp_registry(&["build"], dir.path());
    assert_eq!(build.code, 0, "{}", build.stderr);
    let registry: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("dist/registry.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(registry["agents"], serde_json::json!([]));
    assert!(dir.path().join("dist/site/index.html").is_file());
}

#[test]
fn init_twice_refuses_lists_what_exists_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(acp_registry(&["init", "repo"], dir.path()).code, 0);
    let repo = dir.path().join("repo");
    std::fs::write(repo.join("CONTRIBUTING.md"), "ours\n").unwrap();
    let before = tree(&repo);
    let again = acp_registry(&["init", "repo"], dir.path());
    let listed = [
        "repo/.github/workflows/registry.yml",
        "repo/.pre-commit-config.yaml",
        "repo/CONTRIBUTING.md",
        "repo/registry/acp-registry.jsonc",
    ]
    .map(|path| format!("  {path}\n"));
    assert_usage_error(&again, &listed);
    assert_eq!(tree(&repo), before);
}

#[test]
fn init_writes_nothing_when_a_single_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CONTRIBUTING.md"), "ours\n").unwrap();
    let run = acp_registry(&["init"], dir.path());
    assert_usage_error(&run, &["init wrote nothing", "  CONTRIBUTING.md\n"]);
    assert!(!run.stderr.contains("registry.yml"), "{}", run.stderr);
    assert_eq!(tree(dir.path()).len(), 1, "only the file that was there");
}

#[test]
fn init_with_registry_dot_puts_entries_at_the_repository_root() {
    let dir = tempfile::tempdir().unwrap();
    let init = acp_registry(&["init", "--registry", "."], dir.path());
    assert_ok_saying(&init, "acp-registry new <id> --npx PKG --registry .");
    assert!(dir.path().join("acp-registry.jsonc").is_file());
    let workflow =
        std::fs::read_to_string(dir.path().join(".github/workflows/registry.yml")).unwrap();
    assert!(workflow.contains("  REGISTRY_DIR: .\n"), "{workflow}");
    let hooks = std::fs::read_to_string(dir.path().join(".pre-commit-config.yaml")).unwrap();
    assert!(hooks.contains("args: [--registry, .]"), "{hooks}");
    let new = acp_registry(
        &["new", "my-agent", "--npx", "my-agent", "--registry", "."],
        dir.path(),
    );
    assert_eq!(new.code, 0, "{}", new.stderr);
    write_the_real_entry(&dir.path().join("my-agent"));
    // The repository's own files (.github, CONTRIBUTING.md) are not entries.
    for command in [
        &["validate", "--registry", "."][..],
        &["build", "--registry", "."],
    ] {
        let run = acp_registry(command, dir.path());
        assert_eq!(run.code, 0, "{command:?}: {}{}", run.stdout, run.stderr);
    }
}

#[test]
fn init_refuses_a_registry_outside_dir_and_a_branch_it_cannot_write_safely() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["init", "--registry", "../elsewhere"][..],
        &["init", "--default-branch", "main ${{ x }}"],
    ] {
        let run = acp_registry(args, dir.path());
        assert_eq!(run.code, 2, "{args:?}");
        assert!(
            run.stderr.contains("must be") || run.stderr.contains("is not"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(tree(dir.path()).len(), 0);
    std::fs::write(dir.path().join("file"), "").unwrap();
    let run = acp_registry(&["init", "file"], dir.path());
    assert_usage_error(&run, &["`file` is not a folder"]);
}

#[test]
fn init_publishes_the_branch_git_head_names_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/trunk\n").unwrap();
    let run = acp_registry(&["init"], dir.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let workflow =
        std::fs::read_to_string(dir.path().join(".github/workflows/registry.yml")).unwrap();
    assert!(workflow.contains("    branches: [trunk]\n"), "{workflow}");
    let other = tempfile::tempdir().unwrap();
    let run = acp_registry(&["init", "--default-branch", "release/v1"], other.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let workflow =
        std::fs::read_to_string(other.path().join(".github/workflows/registry.yml")).unwrap();
    assert!(
        workflow.contains("    branches: [release/v1]\n"),
        "{workflow}"
    );
}

/// Set to rewrite `.github/workflows/registry.yml` from `templates/init/registry.yml`.
const REGENERATE: &str = "ACP_REGISTRY_REGENERATE";

#[test]
fn own_registry_workflow_is_the_init_template_rendered_for_this_repository() {
    use acp_registry::commands::init::{workflow, Install, Workflow};
    let rendered = workflow(&Workflow {
        registry_dir: "registry",
        default_branch: "main",
        install: Install::Checkout,
    })
    .unwrap();
    let path = repo_root().join(".github/workflows/registry.yml");
    if std::env::var_os(REGENERATE).is_some() {
        std::fs::write(&path, &rendered).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == rendered,
        ".github/workflows/registry.yml is not templates/init/registry.yml rendered for this \
         repository; edit the template, then regenerate it with \
         `{REGENERATE}=1 cargo test --test registry own_registry_workflow`"
    );
}

/// actionlint as `.ci/actionlint.sh` installs it (CI runs that script before the tests).
fn actionlint() -> Option<std::path::PathBuf> {
    let path = repo_root().join("target/ci-tools/actionlint/bin/actionlint");
    path.is_file().then_some(path)
}

#[test]
fn the_workflow_init_writes_passes_actionlint() {
    let Some(actionlint) = actionlint() else {
        eprintln!(
            "skipping: no actionlint in target/ci-tools (run .ci/actionlint.sh to install it)"
        );
        return;
    };
    for registry in ["registry", "."] {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            acp_registry(&["init", "--registry", registry], dir.path()).code,
            0
        );
        let run = std::process::Command::new(&actionlint)
            .arg(".github/workflows/registry.yml")
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "actionlint ({registry}): {}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
    }
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
    assert_usage_error(&run, &["already exists"]);
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
    assert_usage_error(&run, &["moving@1.2.3"]);
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
    run.findings()
        .findings
        .iter()
        .map(acp_test_kit::Finding::code_and_file)
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
    assert!(found.iter().all(|c| c.contains(" first/")), "{found:?}");
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
    assert_usage_error(
        &run,
        &["is not inside the registry", file.to_str().unwrap()],
    );
}

#[test]
fn explain_without_a_code_points_to_the_list() {
    let run = acp_registry(&["explain"], &repo_root());
    assert_usage_error(&run, &["explain --list"]);
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

/// `new --binary --archive …` against a local server answering like GitHub: the API's release
/// by tag, then the archives.
fn new_with_archives(dir: &Path, server: &net_server::Server, archives: &[&str]) -> common::Run {
    let https = |path: &str| server.url(path).replacen("http://", "https://", 1);
    let mut args = vec!["new".to_string(), "my-agent".into(), "--binary".into()];
    for archive in archives {
        let (platform, path) = archive.split_once('=').unwrap();
        args.extend(["--archive".into(), format!("{platform}={}", https(path))]);
    }
    args.extend([
        "--registry".into(),
        ".".into(),
        "--github-api".into(),
        https("/api"),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    std::process::Command::new(crate::REGISTRY)
        .args(&args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap()
        .into()
}

const LINUX: &str = "/example/my-agent/releases/download/v1.2.0/my-agent-linux-x86_64.tar.gz";
const WINDOWS: &str = "/example/my-agent/releases/download/v1.2.0/my-agent-windows-x86_64.zip";

#[test]
fn new_binary_with_archives_pins_the_published_digest_else_the_downloaded_one() {
    use net_server::{routes, Reply, Server};
    let published = common::sha256_hex(b"tar bytes\n");
    let release = serde_json::json!({"tag_name": "v1.2.0", "assets": [
        {"name": "my-agent-linux-x86_64.tar.gz", "digest": format!("sha256:{published}")},
        {"name": "my-agent-windows-x86_64.zip"},
    ]});
    let server = Server::start(routes(vec![
        (
            "GET /api/repos/example/my-agent/releases/tags/v1.2.0",
            vec![Reply::json(&release)],
        ),
        (
            &format!("GET {WINDOWS}"),
            vec![Reply::body(200, "zip bytes\n")],
        ),
        (
            &format!("GET {LINUX}"),
            vec![Reply::body(200, "tar bytes\n")],
        ),
    ]));
    let dir = bundled_copy();
    let run = new_with_archives(
        dir.path(),
        &server,
        &[
            &format!("linux-x86_64={LINUX}"),
            &format!("windows-x86_64={WINDOWS}"),
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let text = std::fs::read_to_string(dir.path().join("my-agent/agent.json")).unwrap();
    let manifest = acp_registry::parse(&text).unwrap().to_json();
    let binary = &manifest["distribution"]["binary"];
    assert_eq!(binary["linux-x86_64"]["sha256"], published.as_str());
    // sha256 of `zip bytes\n`: the API lists the asset without a digest.
    assert_eq!(
        binary["windows-x86_64"]["sha256"],
        "f2e5c95c99644ed7053beecd3b987d590db91837e23e4ebefe4102dba547a2c8"
    );
    assert_eq!(binary["windows-x86_64"]["cmd"], "my-agent.exe");
    assert_eq!(manifest["version"], "1.2.0");
    // The archive GitHub published a digest for is downloaded and hashed all the same: a pin
    // is never written unhashed (issue 29).
    assert!(
        server.requests().contains(&format!("GET {LINUX}")),
        "{:?}",
        server.requests()
    );
    // No digest is left to do, the scaffold is canonical, and the version matches the URLs.
    let codes = codes_for(dir.path(), "my-agent");
    assert!(
        codes
            .iter()
            .all(|(_, c)| c == "placeholder" || c == "platform-coverage"),
        "{codes:?}"
    );
    assert_eq!(
        acp_registry(&["fmt", "--check", "my-agent"], dir.path()).code,
        0
    );
}

#[test]
fn new_binary_creates_nothing_when_a_digest_cannot_be_found() {
    let server = net_server::Server::start(net_server::routes(vec![]));
    let dir = bundled_copy();
    let run = new_with_archives(dir.path(), &server, &[&format!("linux-x86_64={LINUX}")]);
    assert_usage_error(&run, &["cannot find the sha256 of", "nothing was created"]);
    assert!(!dir.path().join("my-agent").exists());
    let run = acp_registry(
        &[
            "new",
            "my-agent",
            "--binary",
            "--archive",
            "linux-x64=https://example.com/a.zip",
        ],
        dir.path(),
    );
    assert_usage_error(&run, &["unknown platform `linux-x64`"]);
}
