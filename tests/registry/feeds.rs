//! `update` from release feeds declared in the configuration (`feeds`), against a local feed
//! server: a JSON feed and a JSONL feed move an entry with new URLs and verified digests, a
//! digest mismatch refuses the entry while `--apply` writes the others (exit 3), the cooldown
//! holds a young release, a bad declaration is a finding at its line, and hostile feeds are
//! refused.

use crate::common;
use acp_test_kit::server as net_server;

use std::path::Path;

use common::update::{https, json_run, listener, manifest, npx, read, registry, update};
use common::{findings, sha256_hex};
use net_server::{routes, Reply, Server};
use serde_json::{json, Value};

const FEED: &str = "/feed/latest";
const FEED_ROUTE: &str = "GET /feed/latest";

/// A registry whose configuration declares `feeds` (besides the local endpoints).
fn with_feeds(base: &str, entries: &[(&str, String)], feeds: &Value) -> tempfile::TempDir {
    let root = registry(base, entries);
    let path = root.path().join("acp-registry.jsonc");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["feeds"] = feeds.clone();
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    root
}

/// A binary entry at `version` whose one target is `<base>/dl/agent-<version>-linux.tar.gz`.
fn binary_entry(base: &str, id: &str, version: &str) -> String {
    let archive = https(base, &format!("/dl/agent-{version}-linux.tar.gz"));
    let target = json!({"archive": archive, "cmd": "./agent", "sha256": "0".repeat(64)});
    manifest(id, version, &json!({"binary": {"linux-x86_64": target}}))
}

/// The OpenCode-shaped declaration: one JSON document, files by platform with a sha256.
fn json_feed(base: &str) -> Value {
    json!({
        "url": https(base, FEED), "format": "json", "version": "/version",
        "published": "/released_at",
        "assets": {"linux-x86_64": {"url": "/files/linux-x64/url",
                                    "sha256": "/files/linux-x64/sha256"}}
    })
}

fn json_release(base: &str, version: &str, sha256: &str) -> Value {
    json!({
        "version": version, "released_at": "2026-01-01T00:00:00Z",
        "files": {"linux-x64": {
            "url": https(base, &format!("/dl/agent-{}-linux.tar.gz", version.trim_start_matches('v'))),
            "sha256": sha256
        }}
    })
}

fn value(root: &Path, id: &str) -> Value {
    acp_registry::parse(&read(root, id)).unwrap().to_json()
}

fn errors(doc: &Value) -> Vec<(String, String, String)> {
    let s = |n: &Value, k: &str| n[k].as_str().unwrap_or("").to_string();
    let list = doc["errors"].as_array().unwrap();
    list.iter()
        .map(|n| (s(n, "id"), s(n, "source"), s(n, "message")))
        .collect()
}

#[test]
fn a_json_feed_moves_the_entry_to_its_release_with_the_new_url_and_the_verified_sha256() {
    let bytes = b"feed archive 1.1.0".to_vec();
    let sha = sha256_hex(&bytes);
    let (addr, base) = listener();
    let server = Server::start_with(
        addr,
        routes(vec![
            (
                FEED_ROUTE,
                vec![Reply::json(&json_release(
                    &base,
                    "v1.1.0",
                    &sha.to_uppercase(),
                ))],
            ),
            (
                "GET /dl/agent-1.1.0-linux.tar.gz",
                vec![Reply::body(200, bytes)],
            ),
        ]),
    );
    let entries = [("feed-agent", binary_entry(&base, "feed-agent", "1.0.0"))];
    let root = with_feeds(&base, &entries, &json!({"feed-agent": json_feed(&base)}));
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["updates"][0]["to"], "1.1.0");
    assert_eq!(doc["updates"][0]["published"], "2026-01-01T00:00:00Z");
    let written = value(root.path(), "feed-agent");
    let target = &written["distribution"]["binary"]["linux-x86_64"];
    assert_eq!(written["version"], "1.1.0");
    assert_eq!(
        target["archive"],
        https(&base, "/dl/agent-1.1.0-linux.tar.gz")
    );
    assert_eq!(
        target["sha256"],
        json!(sha),
        "the verified download's digest"
    );
    // The GitHub API is never asked for an entry with a feed.
    assert!(server
        .requests()
        .iter()
        .all(|r| !r.starts_with("GET /api/")));
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(root.path().join("releases.json")).unwrap())
            .unwrap();
    assert_eq!(
        recorded["agents"]["feed-agent"]["feed"],
        json!({"url": https(&base, FEED), "versions": [
            {"version": "1.1.0", "published": "2026-01-01T00:00:00Z"}
        ]})
    );
    // The history reads back: a second run is up to date and changes no byte of it.
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["up_to_date"], json!(["feed-agent"]));
    assert_eq!(doc["releases_changed"], json!(false));
}

/// A Junie-shaped declaration: one release a line, no digest, a preview among them.
fn jsonl_feed(base: &str) -> Value {
    json!({
        "url": https(base, FEED), "format": "jsonl", "version": "/v", "published": "/date",
        "assets": {"linux-x86_64": {"url": "/platforms/linux/x64"}}
    })
}

fn jsonl_line(base: &str, version: &str, date: &str) -> String {
    let url = https(base, &format!("/dl/agent-{version}-linux.tar.gz"));
    json!({"v": version, "date": date, "platforms": {"linux": {"x64": url}}}).to_string()
}

#[test]
fn a_jsonl_feed_moves_the_entry_to_its_highest_stable_line_hashing_the_download() {
    let bytes = b"jsonl archive 1.2.0".to_vec();
    let (addr, base) = listener();
    let lines = [
        jsonl_line(&base, "1.0.0", "2025-01-01T00:00:00Z"),
        jsonl_line(&base, "1.2.0", "2025-03-01T00:00:00Z"),
        String::new(),
        jsonl_line(&base, "1.1.0", "2025-02-01T00:00:00Z"),
        jsonl_line(&base, "1.3.0-beta.1", "2025-04-01T00:00:00Z"),
        jsonl_line(&base, "2.0.0-preview.1", "2025-05-01T00:00:00Z"),
    ];
    let _server = Server::start_with(
        addr,
        routes(vec![
            (FEED_ROUTE, vec![Reply::body(200, lines.join("\n"))]),
            (
                "GET /dl/agent-1.2.0-linux.tar.gz",
                vec![Reply::body(200, bytes.clone())],
            ),
        ]),
    );
    let entries = [("junie", binary_entry(&base, "junie", "1.0.0"))];
    let root = with_feeds(&base, &entries, &json!({"junie": jsonl_feed(&base)}));
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0, "{doc:#}");
    let written = value(root.path(), "junie");
    let target = &written["distribution"]["binary"]["linux-x86_64"];
    assert_eq!(written["version"], "1.2.0");
    assert_eq!(
        target["archive"],
        https(&base, "/dl/agent-1.2.0-linux.tar.gz")
    );
    assert_eq!(target["sha256"], json!(sha256_hex(&bytes)));
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(root.path().join("releases.json")).unwrap())
            .unwrap();
    let versions: Vec<&str> = recorded["agents"]["junie"]["feed"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["2.0.0-preview.1", "1.2.0", "1.1.0", "1.0.0"]);
}

#[test]
fn a_digest_mismatch_refuses_its_entry_and_apply_writes_the_others_exiting_3() {
    let (addr, base) = listener();
    let wrong = sha256_hex(b"what the feed says");
    let npm = json!({"name": "npm-agent", "dist-tags": {"latest": "1.1.0"},
                     "versions": {"1.0.0": {}, "1.1.0": {}}});
    let _server = Server::start_with(
        addr,
        routes(vec![
            (
                FEED_ROUTE,
                vec![Reply::json(&json_release(&base, "1.1.0", &wrong))],
            ),
            (
                "GET /dl/agent-1.1.0-linux.tar.gz",
                vec![Reply::body(200, "other bytes")],
            ),
            ("GET /npm/npm-agent", vec![Reply::json(&npm)]),
        ]),
    );
    let original = binary_entry(&base, "feed-agent", "1.0.0");
    let entries = [
        ("feed-agent", original.clone()),
        (
            "npm-agent",
            manifest("npm-agent", "1.0.0", &npx("npm-agent@1.0.0")),
        ),
    ];
    let root = with_feeds(&base, &entries, &json!({"feed-agent": json_feed(&base)}));
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(
        code, 3,
        "some entries failed, the others were applied: {doc:#}"
    );
    assert_eq!(read(root.path(), "feed-agent"), original, "untouched");
    assert!(read(root.path(), "npm-agent").contains("\"npm-agent@1.1.0\""));
    let url = https(&base, "/dl/agent-1.1.0-linux.tar.gz");
    let feed = format!("feed `{}`", https(&base, FEED));
    assert_eq!(
        errors(&doc),
        [(
            "feed-agent".to_string(),
            feed.clone(),
            format!(
                "{feed} 1.1.0 for linux-x86_64: the feed gives sha256 {wrong} for `{url}`, but \
                 the downloaded archive hashes to {}: the archive was changed after the feed was \
                 written, or something on the way alters it; nothing written",
                sha256_hex(b"other bytes")
            )
        )]
    );
    // The text report names the entry and the source, and so does the exit code's help.
    let run = update(root.path(), &["--apply"]);
    assert_eq!(run.code, 3);
    assert!(
        run.stdout.contains(&format!(
            "error: feed-agent: {feed} 1.1.0 for linux-x86_64: "
        )),
        "{}",
        run.stdout
    );
    let help = update(root.path(), &["--help"]).stdout;
    assert!(help.contains("3 with --apply"), "{help}");
    // Without --apply a failed entry is a finding, as before.
    let (code, _) = json_run(root.path(), &[]);
    assert_eq!(code, 1);
}

#[test]
fn the_cooldown_holds_a_young_feed_release_and_counts_from_first_seen_without_times() {
    let (addr, base) = listener();
    let lines = [
        jsonl_line(&base, "1.1.0", "2026-02-01T00:00:00Z"),
        jsonl_line(&base, "1.2.0", "2026-02-27T00:00:00Z"),
    ];
    let _server = Server::start_with(
        addr,
        routes(vec![
            (FEED_ROUTE, vec![Reply::body(200, lines.join("\n"))]),
            (
                "GET /dl/agent-1.1.0-linux.tar.gz",
                vec![Reply::body(200, "a")],
            ),
            (
                "GET /dl/agent-1.2.0-linux.tar.gz",
                vec![Reply::body(200, "b")],
            ),
        ]),
    );
    let entries = [("junie", binary_entry(&base, "junie", "1.0.0"))];
    let root = with_feeds(&base, &entries, &json!({"junie": jsonl_feed(&base)}));
    let as_of = ["--min-age", "7", "--as-of", "2026-03-01"];
    let (code, doc) = json_run(root.path(), &[&as_of[..], &["--apply"]].concat());
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["updates"][0]["to"], "1.1.0");
    assert_eq!(doc["held"][0]["version"], "1.2.0");
    assert_eq!(doc["held"][0]["eligible_at"], "2026-03-06T00:00:00Z");
    assert_eq!(value(root.path(), "junie")["version"], "1.1.0");

    // Without `published` a release's age counts from the run that first saw it, recorded in
    // releases.json: held for the whole cooldown from then, then applied.
    let mut untimed = jsonl_feed(&base);
    untimed.as_object_mut().unwrap().remove("published");
    let entries = [("junie", binary_entry(&base, "junie", "1.0.0"))];
    let root = with_feeds(&base, &entries, &json!({"junie": untimed}));
    let (code, doc) = json_run(root.path(), &[&as_of[..], &["--apply"]].concat());
    assert_eq!((code, doc["updates"].clone()), (0, json!([])), "{doc:#}");
    assert_eq!(doc["held"][0]["version"], "1.2.0", "{doc:#}");
    assert_eq!(doc["held"][0]["eligible_at"], "2026-03-08T00:00:00Z");
    let recorded = std::fs::read_to_string(root.path().join("releases.json")).unwrap();
    assert!(
        recorded.contains("\"published\": \"2026-03-01T00:00:00Z\""),
        "{recorded}"
    );
    let early = ["--min-age", "7", "--as-of", "2026-03-07", "--apply"];
    let (code, doc) = json_run(root.path(), &early);
    assert_eq!((code, doc["updates"].clone()), (0, json!([])), "{doc:#}");
    let later = ["--min-age", "7", "--as-of", "2026-03-09", "--apply"];
    let (code, doc) = json_run(root.path(), &later);
    assert_eq!((code, doc["updates"][0]["to"].clone()), (0, json!("1.2.0")));
}

#[test]
fn a_bad_feed_declaration_is_a_finding_at_its_line_and_column() {
    let (_, base) = listener();
    let entries = [("feed-agent", binary_entry(&base, "feed-agent", "1.0.0"))];
    let root = registry(&base, &entries);
    let config = r#"{
  "severity": {"platform-coverage": "off"},
  "feeds": {
    "feed-agnet": {"url": "https://example.com/f.json", "format": "json", "version": "/version"},
    "feed-agent": {
      "url": "http://example.com/f.json",
      "format": "json",
      "version": "version",
      "assets": {"linux-x64": {"url": "/u"}}
    }
  },
  "base_url": "https://cdn.example.com/registry"
}
"#;
    std::fs::write(root.path().join("acp-registry.jsonc"), config).unwrap();
    let (code, found) = findings(root.path());
    assert_eq!(code, 1);
    let config: Vec<(String, String)> = found
        .into_iter()
        .filter(|(_, _, place)| place.starts_with("acp-registry.jsonc"))
        .map(|(_, code, place)| (code, place))
        .collect();
    let expected = [
        ("config-unknown-id", "acp-registry.jsonc:4:5"),
        ("config-invalid", "acp-registry.jsonc:6:14"),
        ("config-invalid", "acp-registry.jsonc:8:18"),
        ("config-invalid", "acp-registry.jsonc:9:18"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(c, p)| (c.to_string(), p.to_string()))
        .collect();
    let mut config = config;
    config.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(config, expected);
}

/// The hostile feeds' ids.
const HOSTILE: [&str; 3] = ["long-line", "foreign-host", "plain-http"];

/// A server of three hostile feeds (a JSONL line over the limit, an asset on a foreign host,
/// an asset over plain http) and a registry with an entry on each.
fn hostile_registry() -> (Server, tempfile::TempDir, String) {
    let (addr, base) = listener();
    let long = format!("{{\"v\": \"1.1.0\", \"pad\": \"{}\"}}", "x".repeat(70_000));
    let first = jsonl_line(&base, "1.0.0", "2025-01-01T00:00:00Z");
    let foreign = json_release(&base, "1.1.0", &"0".repeat(64));
    let mut foreign_host = foreign.clone();
    foreign_host["files"]["linux-x64"]["url"] = json!("https://evil.example/agent.tar.gz");
    let mut plain_http = foreign;
    plain_http["files"]["linux-x64"]["url"] =
        json!(https(&base, "/dl/agent-1.1.0-linux.tar.gz").replacen("https:", "http:", 1));
    let server = Server::start_with(
        addr,
        routes(vec![
            (
                "GET /long",
                vec![Reply::body(200, format!("{first}\n{long}\n"))],
            ),
            ("GET /foreign", vec![Reply::json(&foreign_host)]),
            ("GET /http", vec![Reply::json(&plain_http)]),
        ]),
    );
    let entries: Vec<(&str, String)> = HOSTILE
        .iter()
        .map(|id| (*id, binary_entry(&base, id, "1.0.0")))
        .collect();
    let feed = |path: &str, template: Value| {
        let mut feed = template;
        feed["url"] = json!(https(&base, path));
        feed
    };
    let feeds = json!({
        "long-line": feed("/long", jsonl_feed(&base)),
        "foreign-host": feed("/foreign", json_feed(&base)),
        "plain-http": feed("/http", json_feed(&base)),
    });
    let root = with_feeds(&base, &entries, &feeds);
    (server, root, base)
}

#[test]
fn hostile_feeds_are_refused_and_nothing_is_written_or_downloaded() {
    let (server, root, base) = hostile_registry();
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 3, "{doc:#}");
    let messages: Vec<String> = errors(&doc)
        .into_iter()
        .map(|(id, _, m)| format!("{id}: {m}"))
        .collect();
    let head = |id: &str, path: &str| format!("{id}: feed `{}`", https(&base, path));
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert!(
        messages[0].starts_with(&head("foreign-host", "/foreign"))
            && messages[0].contains(
                "`https://evil.example/agent.tar.gz` is on `evil.example`, not on a host the \
                 feed may name"
            ),
        "{}",
        messages[0]
    );
    let long_line = head("long-line", "/long");
    assert_eq!(
        messages[1],
        format!("{long_line}: line 2 is longer than 65536 bytes")
    );
    assert!(
        messages[2].starts_with(&head("plain-http", "/http"))
            && messages[2].contains("is not an https URL; nothing written"),
        "{}",
        messages[2]
    );
    for id in HOSTILE {
        let original = binary_entry(&base, id, "1.0.0");
        assert_eq!(read(root.path(), id), original, "{id}");
    }
    let mut asked = server.requests();
    asked.sort();
    let feeds_only = ["GET /foreign", "GET /http", "GET /long"];
    assert_eq!(asked, feeds_only, "no archive is downloaded");
}
