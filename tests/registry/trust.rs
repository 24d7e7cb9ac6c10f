//! Issue 29's trust classes end to end: `GITHUB_TOKEN` goes only to an API origin named by the
//! command line, the environment or the default, never to one the registry's configuration
//! (which a pull request can change) names; every `sha256` pin is the hash of bytes the run
//! downloaded, and a published digest that differs is refused with nothing written; and the
//! commands that write into a user's project never write through a link.

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::common;
use acp_test_kit::server::{Reply, Request, Server};
use common::update::{https, listener, manifest, read, registry, update_env};
use common::{sha256_hex, Run};
use serde_json::{json, Value};

const TOKEN: &str = "s3cret";
const ASSET: &str = "agent-linux.tar.gz";

fn download_path(tag: &str) -> String {
    format!("/example/agent/releases/download/{tag}/{ASSET}")
}

/// A release `v1.1.0` whose asset is served by `asset_base`, with `digest` published for it.
fn releases(asset_base: &str, digest: Option<&str>) -> Value {
    json!([{"tag_name": "v1.1.0", "name": "v1.1.0", "draft": false, "prerelease": false,
            "published_at": "2026-01-01T00:00:00Z",
            "assets": [{"name": ASSET, "browser_download_url": https(asset_base, &download_path("v1.1.0")),
                        "digest": digest.map(|d| format!("sha256:{d}"))}]}])
}

/// A binary entry at 1.0.0 whose archive is on `base`.
fn binary_entry(base: &str, sha256: Option<&str>) -> String {
    let mut target = json!({"archive": https(base, &download_path("v1.0.0")), "cmd": "./agent"});
    if let Some(sha) = sha256 {
        target["sha256"] = json!(sha);
    }
    manifest(
        "bin-agent",
        "1.0.0",
        &json!({"binary": {"linux-x86_64": target}}),
    )
}

type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A server answering like the GitHub API (`/api/…`) and its asset host, recording every
/// request's path and `Authorization` header.
fn github(listener: std::net::TcpListener, answer: Value, bytes: &'static [u8]) -> (Server, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let server = Server::start_with(listener, move |request: &Request, _| {
        let auth = request.header("authorization").map(str::to_string);
        log.lock().unwrap().push((request.path.clone(), auth));
        if request.path.starts_with("/api/") {
            Reply::json(&answer)
        } else {
            Reply::body(200, bytes)
        }
    });
    (server, seen)
}

fn api_auth(seen: &Seen) -> Vec<Option<String>> {
    let seen = seen.lock().unwrap();
    seen.iter()
        .filter(|(path, _)| path.starts_with("/api/"))
        .map(|(_, auth)| auth.clone())
        .collect()
}

fn any_auth(seen: &Seen) -> bool {
    seen.lock().unwrap().iter().any(|(_, auth)| auth.is_some())
}

#[test]
fn the_token_never_goes_to_an_api_the_registry_configuration_names() {
    let (config_listener, config_base) = listener();
    let (server, seen) = github(config_listener, releases(&config_base, None), b"archive");
    let root = registry(
        &config_base,
        &[("bin-agent", binary_entry(&config_base, None))],
    );
    let run = update_env(root.path(), &["--apply"], &[("GITHUB_TOKEN", TOKEN)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(!api_auth(&seen).is_empty(), "the configured API was asked");
    assert!(
        !any_auth(&seen),
        "no Authorization header: {:?}",
        seen.lock().unwrap()
    );
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("GITHUB_TOKEN is not sent"))
        .collect();
    assert_eq!(warnings.len(), 1, "told once: {}", run.stderr);
    assert!(
        warnings[0].starts_with("warning: ")
            && warnings[0].contains("online.github_api")
            && warnings[0].contains(&format!("--github-api {config_base}/api")),
        "{}",
        warnings[0]
    );
    drop(server);
}

#[test]
fn the_token_goes_to_the_api_named_on_the_command_line_or_in_the_environment() {
    // The configuration names one server; the command line names another.
    let (config_listener, config_base) = listener();
    let (trusted_listener, trusted_base) = listener();
    let (config_server, config_seen) =
        github(config_listener, releases(&config_base, None), b"archive");
    let (trusted_server, trusted_seen) =
        github(trusted_listener, releases(&config_base, None), b"archive");
    let root = registry(
        &config_base,
        &[("bin-agent", binary_entry(&config_base, None))],
    );
    let flag = https(&trusted_base, "/api");
    let run = update_env(
        root.path(),
        &["--github-api", &flag],
        &[("GITHUB_TOKEN", TOKEN)],
    );
    assert_eq!(
        run.code, 1,
        "an update is available: {}{}",
        run.stdout, run.stderr
    );
    let bearer = Some(format!("Bearer {TOKEN}"));
    let asked = api_auth(&trusted_seen);
    assert!(
        !asked.is_empty() && asked.iter().all(|a| *a == bearer),
        "{asked:?}"
    );
    assert!(!any_auth(&config_seen), "{:?}", config_seen.lock().unwrap());
    assert!(!run.stderr.contains("GITHUB_TOKEN"), "{}", run.stderr);
    // The Actions runner's GITHUB_API_URL trusts the configured API as well.
    let env_api = https(&config_base, "/api");
    let run = update_env(
        root.path(),
        &[],
        &[("GITHUB_TOKEN", TOKEN), ("GITHUB_API_URL", &env_api)],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let asked = api_auth(&config_seen);
    assert!(
        !asked.is_empty() && asked.iter().all(|a| *a == bearer),
        "{asked:?}"
    );
    drop((config_server, trusted_server));
}

#[test]
fn new_binary_never_sends_the_token_to_the_configured_api() {
    let (config_listener, config_base) = listener();
    let by_tag = json!({"tag_name": "v1.0.0", "assets": [{"name": ASSET, "digest": null}]});
    let (server, seen) = github(config_listener, by_tag, b"archive");
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"online": {"github_api": https(&config_base, "/api")}});
    std::fs::write(dir.path().join("acp-registry.jsonc"), config.to_string()).unwrap();
    let archive = format!(
        "linux-x86_64={}",
        https(&config_base, &download_path("v1.0.0"))
    );
    let run = common::acp_registry_with_env(
        &[
            "new",
            "my-agent",
            "--binary",
            "--archive",
            &archive,
            "--registry",
            ".",
        ],
        dir.path(),
        &[
            ("GITHUB_TOKEN", TOKEN),
            ("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1"),
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(!api_auth(&seen).is_empty(), "the configured API was asked");
    assert!(!any_auth(&seen), "{:?}", seen.lock().unwrap());
    assert!(
        run.stderr.contains("GITHUB_TOKEN is not sent"),
        "{}",
        run.stderr
    );
    drop(server);
}

#[test]
fn update_refuses_a_published_digest_the_downloaded_bytes_do_not_have() {
    let published = sha256_hex(b"what was published");
    let served = sha256_hex(b"what is served");
    let (addr, base) = listener();
    let (server, _) = github(addr, releases(&base, Some(&published)), b"what is served");
    for pinned in [None, Some("0".repeat(64))] {
        let original = binary_entry(&base, pinned.as_deref());
        let root = registry(&base, &[("bin-agent", original.clone())]);
        let run = update_env(root.path(), &["--apply", "--format", "json"], &[]);
        let doc: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(run.code, 3, "an entry failed under --apply: {doc:#}");
        let error = doc["errors"][0]["message"].as_str().unwrap();
        assert!(
            error.contains(&format!("`{ASSET}`"))
                && error.contains(&published)
                && error.contains(&served)
                && error.ends_with("nothing written"),
            "{error}"
        );
        assert_eq!(read(root.path(), "bin-agent"), original, "byte-identical");
    }
    drop(server);
}

#[test]
fn update_pins_a_published_digest_only_once_the_download_matches_it() {
    let bytes: &'static [u8] = b"the release archive";
    let (addr, base) = listener();
    let (server, seen) = github(addr, releases(&base, Some(&sha256_hex(bytes))), bytes);
    let root = registry(&base, &[("bin-agent", binary_entry(&base, None))]);
    let run = update_env(root.path(), &["--apply"], &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(read(root.path(), "bin-agent").contains(&sha256_hex(bytes)));
    let downloaded = seen
        .lock()
        .unwrap()
        .iter()
        .any(|(path, _)| *path == download_path("v1.1.0"));
    assert!(downloaded, "the asset was hashed");
    drop(server);
}

#[test]
fn new_binary_and_validate_fix_refuse_a_published_digest_the_bytes_do_not_have() {
    let published = sha256_hex(b"published");
    let by_tag = json!({"tag_name": "v1.0.0", "assets": [{"name": ASSET, "digest": format!("sha256:{published}")}]});
    let (addr, base) = listener();
    let (server, _) = github(addr, by_tag, b"served");
    let api = https(&base, "/api");
    let url = https(&base, &download_path("v1.0.0"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("acp-registry.jsonc"), "{}").unwrap();
    let env = [("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")];
    let archive = format!("linux-x86_64={url}");
    let args = [
        "new",
        "my-agent",
        "--binary",
        "--archive",
        &archive,
        "--registry",
        ".",
        "--github-api",
        &api,
    ];
    let run = common::acp_registry_with_env(&args, dir.path(), &env);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&published) && run.stderr.contains(&sha256_hex(b"served")),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("my-agent").exists(), "nothing created");
    // `validate --fix --verify-archives` on an unpinned entry: a finding, no fix written.
    let entry = binary_entry(&base, None).replace("bin-agent", "my-agent");
    std::fs::create_dir(dir.path().join("my-agent")).unwrap();
    std::fs::write(dir.path().join("my-agent/agent.json"), &entry).unwrap();
    std::fs::write(dir.path().join("my-agent/icon.svg"), common::update::ICON).unwrap();
    let args = [
        "validate",
        "--fix",
        "--verify-archives",
        "--no-cache",
        "--registry",
        ".",
        "--github-api",
        &api,
    ];
    let run: Run = common::acp_registry_with_env(&args, dir.path(), &env);
    assert_ne!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("sha256-mismatch") && run.stdout.contains(&published),
        "{}",
        run.stdout
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("my-agent/agent.json")).unwrap(),
        entry
    );
    drop(server);
}

/// Every file below `dir` (links as `<link>`), sorted.
#[cfg(unix)]
fn listing(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir, dir);
    out.sort();
    out
}

#[cfg(unix)]
fn walk(root: &Path, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        if meta.is_dir() {
            out.extend(walk(root, &path));
        } else if meta.is_file() {
            out.push(format!(
                "{rel}={}",
                std::fs::read_to_string(&path).unwrap_or_default()
            ));
        } else {
            out.push(format!("{rel}=<link>"));
        }
    }
    out
}

#[cfg(unix)]
#[test]
fn init_refuses_a_linked_folder_a_linked_file_and_a_dangling_link() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("CONTRIBUTING.md"), "keep").unwrap();
    let cases = [
        (".github", outside.path().to_path_buf()),
        ("CONTRIBUTING.md", outside.path().join("CONTRIBUTING.md")),
        ("registry", outside.path().join("nothing-here")),
    ];
    for (rel, target) in cases {
        let repo = tempfile::tempdir().unwrap();
        symlink(&target, repo.path().join(rel)).unwrap();
        let run = common::acp_registry(&["init"], repo.path());
        assert_eq!(run.code, 2, "{rel}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(&format!("`{rel}` is a symbolic link"))
                && run.stderr.contains("never writes through a link"),
            "{rel}: {}",
            run.stderr
        );
        assert_eq!(listing(outside.path()), ["CONTRIBUTING.md=keep"], "{rel}");
        assert_eq!(
            listing(repo.path()),
            [format!("{rel}=<link>")],
            "{rel}: nothing written"
        );
    }
}

#[cfg(unix)]
#[test]
fn fmt_and_new_never_write_through_a_link_in_the_registry() {
    use std::os::unix::fs::symlink;
    let (outside, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Not canonical: `fmt` would rewrite it if it followed the link.
    let text = "{\"id\":\"linked\"}\n";
    std::fs::write(outside.path().join("agent.json"), text).unwrap();
    std::fs::write(root.path().join("acp-registry.jsonc"), "{}").unwrap();
    std::fs::create_dir(root.path().join("file-link")).unwrap();
    symlink(
        outside.path().join("agent.json"),
        root.path().join("file-link/agent.json"),
    )
    .unwrap();
    symlink(outside.path(), root.path().join("dir-link")).unwrap();
    symlink(outside.path().join("gone"), root.path().join("dangling")).unwrap();
    for path in [
        "file-link",
        "dir-link",
        "file-link/agent.json",
        "dir-link/agent.json",
    ] {
        let run = common::acp_registry(&["fmt", "--registry", ".", path], root.path());
        assert_eq!(run.code, 2, "{path}: {}{}", run.stdout, run.stderr);
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("agent.json")).unwrap(),
        text
    );
    for id in ["dir-link", "dangling"] {
        let run = common::acp_registry(&["new", id, "--npx", "x", "--registry", "."], root.path());
        assert_eq!(run.code, 2, "{id}: {}{}", run.stdout, run.stderr);
        // The refusal names the link, not "already exists".
        assert!(
            run.stderr.contains(&format!("{id}` is a symbolic link")),
            "{id}: {}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("already exists"),
            "{id}: {}",
            run.stderr
        );
    }
    assert_eq!(listing(outside.path()), [format!("agent.json={text}")]);
}

#[cfg(unix)]
#[test]
fn pack_never_writes_through_a_link_below_its_output_folder() {
    use common::pack::{PackFx, LINUX};
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep"), "keep").unwrap();
    let archive = format!("acp-collab-{LINUX}.tar.gz");
    let cases = [
        ("v0.1.0", outside.path().to_path_buf()),
        ("v0.1.0", outside.path().join("nothing-here")),
        (archive.as_str(), outside.path().join("keep")),
    ];
    for (rel, target) in cases {
        let fx = PackFx::new();
        let before = fx.manifest();
        let version = fx.root.join("dist/packages/v0.1.0");
        let link = if rel == "v0.1.0" {
            std::fs::create_dir_all(version.parent().unwrap()).unwrap();
            version
        } else {
            std::fs::create_dir_all(&version).unwrap();
            version.join(rel)
        };
        symlink(&target, &link).unwrap();
        let run = fx.pack(LINUX, &[]);
        assert_eq!(run.code, 2, "{rel}: {}{}", run.stdout, run.stderr);
        assert_eq!(
            listing(outside.path()),
            ["keep=keep"],
            "{rel}: nothing written outside"
        );
        assert_eq!(fx.manifest(), before, "{rel}: the manifest is unchanged");
    }
}

#[cfg(unix)]
#[test]
fn update_apply_and_validate_fix_never_write_through_a_linked_entry_or_manifest() {
    use acp_test_kit::server::routes;
    use std::os::unix::fs::symlink;
    let npm = json!({"name": "x", "dist-tags": {"latest": "2.0.0"},
                     "versions": {"1.0.0": {}, "2.0.0": {}}});
    let server = Server::start(routes(vec![("GET /npm/linked", vec![Reply::json(&npm)])]));
    let base = server.url("").replacen("http://", "https://", 1);
    let text = manifest("linked", "1.0.0", &common::update::npx("linked@1.0.0"));
    // The entry folder, then only its manifest, then a dangling manifest, are links.
    for case in ["folder", "manifest", "dangling"] {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("agent.json"), &text).unwrap();
        std::fs::write(outside.path().join("icon.svg"), common::update::ICON).unwrap();
        let root = registry(&base, &[]);
        let entry = root.path().join("linked");
        match case {
            "folder" => symlink(outside.path(), &entry).unwrap(),
            "manifest" => {
                std::fs::create_dir(&entry).unwrap();
                symlink(outside.path().join("agent.json"), entry.join("agent.json")).unwrap();
            }
            _ => {
                std::fs::create_dir(&entry).unwrap();
                symlink(outside.path().join("gone.json"), entry.join("agent.json")).unwrap();
            }
        }
        let before = listing(outside.path());
        // Skipped or refused, whichever: never written through.
        let run = update_env(root.path(), &["--apply"], &[]);
        assert!(!run.stdout.contains("updated:"), "{case}: {}", run.stdout);
        let run = common::acp_registry(&["validate", "--fix", "--registry", "."], root.path());
        assert_ne!(run.code, 0, "{case}: {}{}", run.stdout, run.stderr);
        assert_eq!(
            listing(outside.path()),
            before,
            "{case}: nothing written outside"
        );
    }
    drop(server);
}

#[cfg(unix)]
#[test]
fn matrix_never_creates_its_out_folder_through_a_link_below_the_current_folder() {
    use std::os::unix::fs::symlink;
    let registry = crate::verify::untestable_registry(&["agent-a".to_string()]);
    let (work, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let root = work.path();
    // Run in `work` (a checkout of its own), the registry elsewhere.
    let matrix = |out: &str| {
        let mut command = std::process::Command::new(crate::REGISTRY);
        command
            .args(["matrix", "--no-cache", "--out", out, "--registry"])
            .arg(&registry.root)
            .current_dir(root);
        common::verify::run_command(&mut command)
    };
    std::fs::write(outside.path().join("keep"), "keep").unwrap();
    symlink(outside.path(), root.join("results")).unwrap();
    symlink(outside.path().join("gone"), root.join("dangling")).unwrap();
    for out in [
        "results/sub/matrix.json",
        "results/matrix.json",
        "dangling/sub/matrix.json",
    ] {
        let run = matrix(out);
        assert_eq!(run.code, 2, "{out}: {}", run.all());
        assert!(
            run.all().contains("is a symbolic link")
                && run.all().contains("never writes through a link"),
            "{out}: {}",
            run.all()
        );
        assert_eq!(
            listing(outside.path()),
            ["keep=keep"],
            "{out}: nothing written outside"
        );
    }
    // Missing folders below the current one are created (no link on the way).
    let run = matrix("fresh/sub/matrix.json");
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(root.join("fresh/sub/matrix.json").is_file());
    assert!(root.join("fresh/sub/matrix.md").is_file());
    // An absolute --out is followed through a link the user named; missing parts are made
    // below where it points.
    let named = root.join("results").join("made/matrix.json");
    let run = matrix(named.to_str().unwrap());
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(outside.path().join("made/matrix.json").is_file());
}
