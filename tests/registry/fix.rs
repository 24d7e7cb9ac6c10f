//! `validate --fix`: each certain fix, applied through the comment-keeping editor, changes
//! exactly its value; what cannot be fixed is said and left for a person.

use crate::common;
use acp_test_kit::server as net_server;

use std::path::Path;

use common::{acp_registry, copy_dir, repo_root, Run};
use net_server::{routes, Reply, Server};

/// A registry holding the bundled `goose` entry, its manifest changed by `edit`.
fn registry(edit: impl FnOnce(String) -> String) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &repo_root().join("registry/goose"),
        &dir.path().join("goose"),
    );
    let path = dir.path().join("goose/agent.json");
    let clean = std::fs::read_to_string(&path).unwrap();
    let broken = edit(clean.clone());
    assert_ne!(broken, clean, "the edit changed nothing");
    std::fs::write(&path, &broken).unwrap();
    (dir, clean, broken)
}

fn manifest(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("goose/agent.json")).unwrap()
}

fn fix(dir: &Path) -> Run {
    acp_registry(&["validate", "--fix", "--registry", "."], dir)
}

/// `registry(edit)`, then `validate --fix` in it.
fn fixed(edit: impl FnOnce(String) -> String) -> (tempfile::TempDir, String, String, Run) {
    let (dir, clean, broken) = registry(edit);
    let run = fix(dir.path());
    (dir, clean, broken, run)
}

/// The fix exited with `code` and left the manifest as `expected`.
fn assert_manifest(run: &Run, dir: &Path, code: i32, expected: &str) {
    assert_eq!(run.code, code, "{}{}", run.stdout, run.stderr);
    assert_eq!(manifest(dir), expected);
}

#[test]
fn a_misspelt_platform_key_is_renamed_and_its_comments_stay() {
    let (dir, clean, _, run) = fixed(|text| {
        text.replace(
            "      \"linux-x86_64\": {",
            "      // musl build\n      \"linux-x64\": /* renamed upstream */ {",
        )
    });
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains(
        "fixed goose/agent.json: renamed `/distribution/binary/linux-x64` to `linux-x86_64` (platform-unknown)\n"
    ), "{}", run.stderr);
    assert_eq!(
        manifest(dir.path()),
        clean.replace(
            "      \"linux-x86_64\": {",
            "      // musl build\n      \"linux-x86_64\": /* renamed upstream */ {"
        )
    );
    assert!(
        // The note: acpr cannot unpack goose's .tar.bz2 archives.
        run.stdout
            .ends_with("0 errors, 0 warnings, 1 note in 1 entry\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn an_http_url_becomes_the_same_https_url_but_one_with_credentials_is_left_to_a_person() {
    let (dir, clean, _, run) = fixed(|text| {
        text.replace("\"repository\": \"https://", "\"repository\": \"http://")
            .replace("\"website\": \"https://", "\"website\": \"http://me:pw@")
    });
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let after = manifest(dir.path());
    assert_eq!(
        after,
        clean.replace("\"website\": \"https://", "\"website\": \"http://me:pw@")
    );
    assert!(
        run.stderr
            .contains("1 of 1 fixes applied; 2 findings left for a person"), // and goose's acpr note
        "{}",
        run.stderr
    );
    assert!(
        run.stdout
            .contains("error[url-format]: `http://me:pw@block.github.io/goose/`"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_old_api_key_auth_type_becomes_env_var() {
    let auth = "  \"auth\": [\n    {\"type\": \"api_key\", \"vars\": [\"GOOSE_KEY\"]} // old RFD name\n  ],\n  \"license\":";
    let (dir, _, broken, run) = fixed(|text| text.replacen("  \"license\":", auth, 1));
    assert_manifest(
        &run,
        dir.path(),
        0,
        &broken.replace("\"api_key\"", "\"env_var\""),
    );
    assert!(
        run.stderr
            .contains("set `/auth/0/type` to `env_var` (auth-type)"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_ignored_icon_field_is_removed_and_the_comments_around_it_stay() {
    let (dir, clean, _, run) = fixed(|text| {
        text.replacen(
            "  \"name\": \"goose\",\n",
            "  \"name\": \"goose\",\n  // old logo\n  \"icon\": \"https://example.com/goose.svg\", // unused\n",
            1,
        )
    });
    assert_manifest(
        &run,
        dir.path(),
        0,
        &clean.replacen(
            "  \"name\": \"goose\",\n",
            "  \"name\": \"goose\",\n  // old logo\n  // unused\n",
            1,
        ),
    );
}

#[test]
fn a_rename_onto_an_existing_platform_is_reported_and_the_file_left_as_it_was() {
    let (dir, _, broken, run) = fixed(|text| {
        let target = "      \"linux-x64\": {\"archive\": \"https://example.com/v1.43.0/goose.tar.gz\", \"cmd\": \"./goose\", \"sha256\": \"00\"},\n";
        text.replacen(
            "      \"linux-x86_64\": {",
            &format!("{target}      \"linux-x86_64\": {{"),
            1,
        )
    });
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains(
        "not fixed goose/agent.json: renamed `/distribution/binary/linux-x64` to `linux-x86_64` (platform-unknown): `/distribution/binary` already has a member `linux-x86_64`"
    ), "{}", run.stderr);
    assert_eq!(manifest(dir.path()), broken);
    assert!(
        run.stdout.contains("error[platform-unknown]"),
        "{}",
        run.stdout
    );
}

#[test]
fn without_fix_validate_writes_nothing() {
    let (dir, _, broken) =
        registry(|text| text.replace("\"repository\": \"https://", "\"repository\": \"http://"));
    let run = acp_registry(&["validate", "--registry", "."], dir.path());
    assert_eq!(run.code, 1);
    assert_eq!(manifest(dir.path()), broken);
    assert!(!run.stderr.contains("fixes applied"), "{}", run.stderr);
}

const ARCHIVE: &str = "/releases/download/v1.0.0/agent-linux-x86_64.tar.gz";

#[test]
fn verify_archives_pins_the_digest_it_found_after_cmd() {
    let server = Server::start(routes(vec![
        (&format!("HEAD {ARCHIVE}"), vec![Reply::status(200)]),
        (
            &format!("GET {ARCHIVE}"),
            vec![Reply::body(200, "archive bytes\n")],
        ),
    ]));
    let (dir, text) = unpinned_entry(&server.url(ARCHIVE));
    let output = std::process::Command::new(crate::REGISTRY)
        .args([
            "validate",
            "--fix",
            "--verify-archives",
            "--no-cache",
            "--registry",
            ".",
        ])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .output()
        .unwrap();
    let run = Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    let digest = "4284d5e21e6a78d72014002b7b3273b8fb3bbe3b6920e7776261bc6ee2f7c754";
    assert!(run.stderr.contains(&format!(
        "fixed example-agent/agent.json: set `/distribution/binary/linux-x86_64/sha256` to `{digest}` (archive-digest)"
    )), "{}{}", run.stdout, run.stderr);
    let after = std::fs::read_to_string(dir.path().join("example-agent/agent.json")).unwrap();
    assert_eq!(
        after,
        text.replace(
            "\"cmd\": \"./agent\" // in the archive's root\n",
            &format!("\"cmd\": \"./agent\", // in the archive's root\n        \"sha256\": \"{digest}\"\n")
        )
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

/// A registry of one entry whose `linux-x86_64` archive is `url` (made https) with no pin,
/// its `cmd` line carrying a comment.
fn unpinned_entry(url: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let config = r#"{"severity": {"platform-coverage": "off"}}"#;
    std::fs::write(dir.path().join("acp-registry.jsonc"), config).unwrap();
    copy_dir(
        &repo_root().join("registry/goose"),
        &dir.path().join("example-agent"),
    );
    let text = format!(
        r#"{{
  "id": "example-agent",
  "name": "Example Agent",
  "version": "1.0.0",
  "description": "A coding agent that reads, edits and runs code in a project.",
  "authors": ["Example Inc."],
  "license": "MIT",
  "license_url": "https://github.com/example/example-agent/blob/main/LICENSE",
  "distribution": {{
    "binary": {{
      "linux-x86_64": {{
        "archive": "{}",
        "cmd": "./agent" // in the archive's root
      }}
    }}
  }}
}}
"#,
        url.replacen("http://", "https://", 1)
    );
    std::fs::write(dir.path().join("example-agent/agent.json"), &text).unwrap();
    (dir, text)
}

/// A server for the release asset and the GitHub API's answer `release` for its tag.
fn release_server(release: &serde_json::Value) -> Server {
    Server::start(routes(vec![
        (&format!("HEAD {RELEASE_ASSET}"), vec![Reply::status(200)]),
        (
            &format!("GET {RELEASE_ASSET}"),
            vec![Reply::body(200, "archive bytes\n")],
        ),
        (&format!("GET {RELEASE_BY_TAG}"), vec![Reply::json(release)]),
    ]))
}

fn fix_verify_archives(dir: &Path, server: &Server) -> Run {
    let api = server.url("/api").replacen("http://", "https://", 1);
    let output = std::process::Command::new(crate::REGISTRY)
        .args(["validate", "--fix", "--verify-archives", "--no-cache"])
        .args(["--registry", ".", "--github-api", &api])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A GitHub release download path, as the API's host serves it (GitHub Enterprise, tests).
const RELEASE_ASSET: &str = "/example/agent/releases/download/v1.0.0/agent-linux-x86_64.tar.gz";
const RELEASE_BY_TAG: &str = "/api/repos/example/agent/releases/tags/v1.0.0";
/// sha256 of `archive bytes\n`.
const BYTES_DIGEST: &str = "4284d5e21e6a78d72014002b7b3273b8fb3bbe3b6920e7776261bc6ee2f7c754";

#[test]
fn verify_archives_pins_the_digest_github_publishes_once_the_download_matches_it() {
    let release = serde_json::json!({
        "tag_name": "v1.0.0",
        "assets": [
            {"name": "agent-darwin-aarch64.tar.gz", "digest": format!("sha256:{}", "0".repeat(64))},
            {"name": "agent-linux-x86_64.tar.gz", "digest": format!("sha256:{}", BYTES_DIGEST.to_uppercase())},
        ]
    });
    let server = release_server(&release);
    let (dir, text) = unpinned_entry(&server.url(RELEASE_ASSET));
    let run = fix_verify_archives(dir.path(), &server);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let after = std::fs::read_to_string(dir.path().join("example-agent/agent.json")).unwrap();
    assert_eq!(
        after,
        text.replace(
            "\"cmd\": \"./agent\" // in the archive's root\n",
            &format!("\"cmd\": \"./agent\", // in the archive's root\n        \"sha256\": \"{BYTES_DIGEST}\"\n")
        )
    );
    // The published digest is pinned only after the downloaded bytes were hashed to it
    // (issue 29: a pin is never written unhashed).
    let requests = server.requests();
    assert_eq!(
        requests[..3],
        [
            format!("HEAD {RELEASE_ASSET}"),
            format!("GET {RELEASE_BY_TAG}"),
            format!("GET {RELEASE_ASSET}")
        ],
        "{requests:?}"
    );
}

#[test]
fn without_a_published_digest_the_downloaded_bytes_are_pinned() {
    // The release lists the asset without a digest (older uploads), so the archive is hashed.
    let release = serde_json::json!({
        "tag_name": "v1.0.0",
        "assets": [{"name": "agent-linux-x86_64.tar.gz", "digest": null}]
    });
    let server = release_server(&release);
    let (dir, _) = unpinned_entry(&server.url(RELEASE_ASSET));
    let run = fix_verify_archives(dir.path(), &server);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "set `/distribution/binary/linux-x86_64/sha256` to `{BYTES_DIGEST}` (archive-digest)"
        )),
        "{}",
        run.stderr
    );
    let requests = server.requests();
    assert_eq!(
        requests[..3],
        [
            format!("HEAD {RELEASE_ASSET}"),
            format!("GET {RELEASE_BY_TAG}"),
            format!("GET {RELEASE_ASSET}")
        ],
        "{requests:?}"
    );
}

#[test]
fn a_spelling_of_proprietary_becomes_proprietary_and_its_comment_stays() {
    let (dir, clean, _, run) = fixed(|text| {
        text.replace(
            "\"license\": \"Apache-2.0\",",
            "\"license\": \"Proprietary License\", // closed source",
        )
    });
    assert!(
        run.stderr.contains(
            "fixed goose/agent.json: set `/license` to `proprietary` (license-unknown)\n"
        ),
        "{}",
        run.stderr
    );
    assert_manifest(
        &run,
        dir.path(),
        0,
        &clean.replace(
            "\"license\": \"Apache-2.0\",",
            "\"license\": \"proprietary\", // closed source",
        ),
    );
    assert!(!run.stdout.contains("license-unknown"), "{}", run.stdout);
}

#[test]
fn a_plus_gnu_id_becomes_its_or_later_form() {
    let (dir, clean, _, run) = fixed(|text| {
        text.replace(
            "\"license\": \"Apache-2.0\",",
            "\"license\": \"MIT OR GPL-2.0+\",",
        )
    });
    assert!(
        run.stderr
            .contains("set `/license` to `MIT OR GPL-2.0-or-later` (license-unknown)"),
        "{}",
        run.stderr
    );
    assert_manifest(
        &run,
        dir.path(),
        0,
        &clean.replace(
            "\"license\": \"Apache-2.0\",",
            "\"license\": \"MIT OR GPL-2.0-or-later\",",
        ),
    );
}

#[test]
fn a_bare_deprecated_gnu_id_is_left_for_a_person_with_both_replacements() {
    let (dir, _, broken, run) =
        fixed(|text| text.replace("\"license\": \"Apache-2.0\",", "\"license\": \"AGPL-3.0\","));
    // goose's acpr note and this warning: exit 0, the file as it was.
    assert_manifest(&run, dir.path(), 0, &broken);
    assert!(!run.stderr.contains("/license"), "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "warning[license-unknown]: `AGPL-3.0` is a deprecated SPDX license identifier"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "help: write `AGPL-3.0-only` or `AGPL-3.0-or-later`: the project's license says whether later versions of the GNU license apply (`--fix` leaves this choice to you)"
        ),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("did you mean"), "{}", run.stdout);
}

#[test]
fn the_pin_command_with_an_entry_folder_downloads_and_pins_only_that_entry() {
    let release = serde_json::json!({
        "tag_name": "v1.0.0",
        "assets": [{"name": "agent-linux-x86_64.tar.gz", "digest": null}]
    });
    let server = release_server(&release);
    let (dir, text) = unpinned_entry(&server.url(RELEASE_ASSET));
    // A second unpinned entry, not named: its archive is never asked for.
    let other = text
        .replace("\"example-agent\"", "\"other-agent\"")
        .replace("agent-linux-x86_64", "other-linux-x86_64");
    copy_dir(
        &dir.path().join("example-agent"),
        &dir.path().join("other-agent"),
    );
    std::fs::write(dir.path().join("other-agent/agent.json"), &other).unwrap();
    let api = server.url("/api").replacen("http://", "https://", 1);
    // The command the `sha256-missing` help and `new`'s binary scaffold name.
    let mut args: Vec<&str> = "validate --fix --verify-archives".split(' ').collect();
    args.extend([
        "--no-cache",
        "--github-api",
        &api,
        "--registry",
        ".",
        "example-agent",
    ]);
    let output = std::process::Command::new(crate::REGISTRY)
        .args(&args)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "fixed example-agent/agent.json: set `/distribution/binary/linux-x86_64/sha256` to `{BYTES_DIGEST}` (archive-digest)"
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("other-agent/agent.json")).unwrap(),
        other
    );
    let requests = server.requests();
    assert!(
        requests.iter().all(|r| !r.contains("other-linux")),
        "{requests:?}"
    );
}
