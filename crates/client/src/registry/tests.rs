//! The loading rules against a real server on 127.0.0.1 that counts requests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_test_kit::server::{routes, Reply, Request, Server};

use super::*;
use crate::net::NetConfig;

fn client() -> net::Client {
    net::Client::new(NetConfig::for_local_tests()).unwrap()
}

fn load(options: &RegistryOptions) -> Result<Registry, RegistryError> {
    let client = client();
    crate::net::runtime()
        .unwrap()
        .block_on(Registry::load(&client, options))
}

/// A registry document whose one agent has this version.
fn doc(version: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "version": "1.0.0",
        "agents": [{"id": "a", "name": "A", "version": version, "description": "",
                    "distribution": {"npx": {"package": format!("a@{version}")}}}]
    }))
    .unwrap()
}

fn version(registry: &Registry) -> &str {
    &registry.document.agents[0].version
}

fn options(root: &Path, server: &Server) -> RegistryOptions {
    RegistryOptions::new(
        Source::Url(server.url("/registry.json")),
        root.to_path_buf(),
    )
}

/// Replies to `GET /registry.json` in turn (the last repeats).
fn serve(replies: Vec<Reply>) -> Server {
    Server::start(routes(vec![("GET /registry.json", replies)]))
}

fn first(body: &[u8]) -> Reply {
    Reply::body(200, body.to_vec()).header("etag", "\"v1\"")
}

/// Sets the cached copy's fetch time (the digest in source.json still matches).
fn fetched_at(options: &RegistryOptions, at: &str) {
    let Source::Url(url) = &options.source else {
        panic!("a URL source");
    };
    let meta = Cache::new(&options.cache_root, url)
        .dir()
        .join("source.json");
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&meta).unwrap()).unwrap();
    value["fetched_at"] = at.into();
    std::fs::write(&meta, serde_json::to_vec(&value).unwrap()).unwrap();
}

fn days_ago(days: i64) -> String {
    let now = acp_registry_core::time::utc_now();
    let now = acp_registry_core::time::parse_iso_utc_seconds(&now).unwrap();
    acp_registry_core::time::format_utc(now - days * 86_400)
}

#[test]
fn a_fresh_cached_copy_is_used_without_a_request() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(vec![first(&doc("1.0.0"))]);
    let options = options(root.path(), &server);
    let loaded = load(&options).unwrap();
    assert_eq!(
        (loaded.origin, loaded.age),
        (Origin::Network, Some(Duration::ZERO))
    );
    let again = load(&options).unwrap();
    assert_eq!(again.origin, Origin::FreshCache);
    assert_eq!(version(&again), "1.0.0");
    assert!(again.age.unwrap() < DEFAULT_MAX_AGE);
    assert_eq!(server.requests().len(), 1, "{:?}", server.requests());
    let dir = Cache::new(root.path(), &server.url("/registry.json")).dir();
    assert!(dir.ends_with(format!(
        "registry/{}",
        &acp_registry_core::fs::digest::sha256_hex(server.url("/registry.json").as_bytes())[..16]
    )));
    assert_eq!(
        std::fs::read(dir.join("registry.json")).unwrap(),
        doc("1.0.0")
    );
}

#[test]
fn a_stale_copy_is_asked_for_with_its_etag_and_a_304_keeps_it() {
    let root = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let server = Server::start(move |request: &Request, _| {
        let etag = request.header("if-none-match").map(str::to_string);
        log.lock().unwrap().push(etag.clone());
        match etag.as_deref() {
            Some("\"v1\"") => Reply::status(304),
            _ => first(&doc("1.0.0")),
        }
    });
    let options = options(root.path(), &server);
    load(&options).unwrap();
    fetched_at(&options, &days_ago(2));
    let again = load(&options).unwrap();
    assert_eq!(again.origin, Origin::NotModified);
    assert_eq!(version(&again), "1.0.0");
    assert_eq!(again.age, Some(Duration::ZERO));
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(
        *seen.lock().unwrap(),
        [None, Some("\"v1\"".to_string())],
        "one conditional request"
    );
    let third = load(&options).unwrap();
    assert_eq!(third.origin, Origin::FreshCache, "the 304 renewed the copy");
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[test]
fn a_new_document_replaces_the_copy_and_refresh_always_asks() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(vec![
        first(&doc("1.0.0")),
        Reply::body(200, doc("2.0.0")).header("etag", "\"v2\""),
    ]);
    let mut options = options(root.path(), &server);
    load(&options).unwrap();
    options.freshness = Freshness::Refresh;
    let refreshed = load(&options).unwrap();
    assert_eq!(
        (refreshed.origin, version(&refreshed)),
        (Origin::Network, "2.0.0")
    );
    options.freshness = Freshness::Offline;
    let offline = load(&options).unwrap();
    assert_eq!(
        (offline.origin, version(&offline)),
        (Origin::FreshCache, "2.0.0")
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_answer_that_is_not_a_document_keeps_the_old_copy() {
    let root = tempfile::tempdir().unwrap();
    let mut truncated = doc("2.0.0");
    truncated.truncate(truncated.len() / 2);
    let server = serve(vec![
        first(&doc("1.0.0")),
        Reply::body(200, "<html><body>502 Bad Gateway</body></html>"),
        Reply::body(200, truncated),
    ]);
    let mut options = options(root.path(), &server);
    options.max_age = Duration::ZERO;
    load(&options).unwrap();
    for answer in ["an HTML page", "a truncated document"] {
        let loaded = load(&options).unwrap();
        assert_eq!(loaded.origin, Origin::StaleCache, "{answer}");
        assert_eq!(version(&loaded), "1.0.0", "{answer}");
        let warning = loaded.warnings.join("\n");
        assert!(
            warning.contains("could not refresh") && warning.contains("not a registry document"),
            "{answer}: {warning}"
        );
    }
    options.freshness = Freshness::Offline;
    assert_eq!(
        version(&load(&options).unwrap()),
        "1.0.0",
        "the copy was kept"
    );
}

#[test]
fn a_server_that_is_down_falls_back_to_the_copy_with_its_age() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(vec![first(&doc("1.0.0"))]);
    let options = options(root.path(), &server);
    load(&options).unwrap();
    fetched_at(&options, &days_ago(3));
    drop(server);
    let loaded = load(&options).unwrap();
    assert_eq!(loaded.origin, Origin::StaleCache);
    let age = loaded.age.unwrap().as_secs();
    assert!((3 * 86_400..4 * 86_400).contains(&age), "{age}");
    let warning = loaded.warnings.join("\n");
    assert!(
        warning.contains("3 days ago") && warning.contains("could not refresh"),
        "{warning}"
    );
}

#[test]
fn offline_uses_a_stale_copy_with_its_age_and_asks_nothing() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(vec![first(&doc("1.0.0"))]);
    let mut options = options(root.path(), &server);
    load(&options).unwrap();
    fetched_at(&options, &days_ago(5));
    options.freshness = Freshness::Offline;
    let loaded = load(&options).unwrap();
    assert_eq!(loaded.origin, Origin::StaleCache);
    assert!(loaded.age.unwrap() >= Duration::from_secs(5 * 86_400));
    assert!(
        loaded.warnings.join("\n").contains("5 days ago"),
        "{:?}",
        loaded.warnings
    );
    assert_eq!(
        server.requests().len(),
        1,
        "only the first, online load asked"
    );
}

#[test]
fn offline_without_a_copy_uses_the_snapshot_or_says_what_to_do() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(vec![first(&doc("1.0.0"))]);
    let mut options = options(root.path(), &server);
    options.freshness = Freshness::Offline;
    let error = load(&options).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "no cached copy of {}; run once without --offline, or pass --snapshot FILE",
            server.url("/registry.json")
        )
    );
    let snapshot = root.path().join("snapshot.json");
    std::fs::write(&snapshot, doc("0.9.0")).unwrap();
    options.snapshot = Some(snapshot.clone());
    let loaded = load(&options).unwrap();
    assert_eq!(
        (loaded.origin, version(&loaded)),
        (Origin::Snapshot, "0.9.0")
    );
    assert!(loaded.warnings[0].contains(&snapshot.display().to_string()));
    assert!(server.requests().is_empty());
}

#[test]
fn without_a_copy_a_failed_request_falls_back_to_the_snapshot_else_fails() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(vec![Reply::status(404)]);
    let mut options = options(root.path(), &server);
    let error = load(&options).unwrap_err().to_string();
    assert!(
        error.contains(&server.url("/registry.json")) && error.contains("not found"),
        "{error}"
    );
    let snapshot = root.path().join("snapshot.json");
    std::fs::write(&snapshot, doc("0.9.0")).unwrap();
    options.snapshot = Some(snapshot);
    let loaded = load(&options).unwrap();
    assert_eq!(loaded.origin, Origin::Snapshot);
    assert!(
        loaded.warnings[0].contains("not found"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_tampered_cached_copy_is_ignored_with_a_warning() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(vec![first(&doc("1.0.0")), first(&doc("1.0.1"))]);
    let options = options(root.path(), &server);
    load(&options).unwrap();
    let dir = Cache::new(root.path(), &server.url("/registry.json")).dir();
    std::fs::write(dir.join("registry.json"), doc("6.6.6")).unwrap();
    let loaded = load(&options).unwrap();
    assert_eq!(
        (loaded.origin, version(&loaded)),
        (Origin::Network, "1.0.1")
    );
    assert!(
        loaded.warnings[0].contains("does not match"),
        "{:?}",
        loaded.warnings
    );
    assert_eq!(
        server.requests().len(),
        2,
        "a fresh-looking tampered copy is not used"
    );
}

#[cfg(unix)]
#[test]
fn a_link_in_the_cache_is_neither_read_nor_written_through() {
    let root = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let server = serve(vec![first(&doc("1.0.0"))]);
    let options = options(root.path(), &server);
    let dir = Cache::new(root.path(), &server.url("/registry.json")).dir();
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), &dir).unwrap();
    let loaded = load(&options).unwrap();
    assert_eq!(loaded.origin, Origin::Network);
    assert!(
        loaded.warnings.join("\n").contains("symbolic link"),
        "{:?}",
        loaded.warnings
    );
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn a_file_source_is_read_under_the_cap_without_a_cache() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("registry.json");
    std::fs::write(&file, doc("1.0.0")).unwrap();
    let mut options = RegistryOptions::new(
        Source::parse(file.to_str().unwrap()),
        root.path().join("cache"),
    );
    let loaded = load(&options).unwrap();
    assert_eq!((loaded.origin, loaded.age), (Origin::File, None));
    assert!(!root.path().join("cache").exists());
    let big = root.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(MAX_DOCUMENT_BYTES + 1)
        .unwrap();
    options.source = Source::File(big.clone());
    let error = load(&options).unwrap_err().to_string();
    assert!(
        error.contains(&big.display().to_string()) && error.contains("limit"),
        "{error}"
    );
    options.source = Source::File(root.path().join("missing.json"));
    let error = load(&options).unwrap_err().to_string();
    assert!(error.contains("missing.json"), "{error}");
}

#[test]
fn sources_starting_with_a_web_scheme_are_urls() {
    assert_eq!(
        Source::parse("HTTPS://example.com/r.json"),
        Source::Url("HTTPS://example.com/r.json".into())
    );
    assert_eq!(
        Source::parse("http://127.0.0.1/r"),
        Source::Url("http://127.0.0.1/r".into())
    );
    assert_eq!(
        Source::parse("registry.json"),
        Source::File("registry.json".into())
    );
    assert_eq!(Source::parse("https:/x"), Source::File("https:/x".into()));
    assert_eq!(Source::default(), Source::Url(DEFAULT_REGISTRY_URL.into()));
    assert_eq!(Origin::StaleCache.to_string(), "stale-cache");
}
