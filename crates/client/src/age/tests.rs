//! Publish times from fake npm and `PyPI` servers on 127.0.0.1, and their cache.

use std::sync::{Arc, Mutex};

use acp_test_kit::server::{Reply, Request, Server};

use super::*;
use crate::document::Document;
use crate::net::NetConfig;
use crate::resolve::{resolve, ResolveOptions};

fn client() -> net::Client {
    net::Client::new(NetConfig::for_local_tests()).unwrap()
}

/// The resolution of an agent distributed as `kind` (`npx` or `uvx`) with `spec`.
fn resolution(kind: &str, spec: &str) -> Resolution {
    let doc = serde_json::json!({"agents": [{"id": "a", "version": "1.0.0",
        "distribution": {kind: {"package": spec}}}]});
    let document = Document::parse(&serde_json::to_vec(&doc).unwrap(), "test").unwrap();
    let options = ResolveOptions {
        platform: Some("linux-x86_64".into()),
        ..ResolveOptions::default()
    };
    resolve(&document, "a", &options).unwrap()
}

/// A fake npm and `PyPI` in one server; every request's path and `Accept` are recorded.
/// Each request's path and `Accept` header.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

fn server(seen: Seen) -> Server {
    Server::start(move |request: &Request, _| {
        let accept = request.header("accept").map(str::to_string);
        seen.lock().unwrap().push((request.path.clone(), accept));
        match request.path.as_str() {
            "/@scope%2fagent" => Reply::json(&serde_json::json!({
                "name": "@scope/agent",
                "versions": {"1.2.3": {}, "1.3.0": {}},
                "time": {"created": "2025-01-01T00:00:00Z",
                         "1.2.3": "2026-01-02T03:04:05.678Z", "1.3.0": "not a time"}
            })),
            "/pypi/agent/1.0.0/json" => Reply::json(&serde_json::json!({
                "info": {"version": "1.0.0"},
                "urls": [{"upload_time_iso_8601": "2026-02-01T00:00:00.000001Z"},
                         {"upload_time_iso_8601": "2026-01-15T12:00:00Z"},
                         {"yanked": false}, "not a file"]
            })),
            path if path.starts_with("/broken/") => Reply::status(500),
            _ => Reply::status(404),
        }
    })
}

fn sources(server: &Server) -> AgeSources {
    AgeSources {
        npm: server.url(""),
        pypi: server.url("/"),
    }
}

fn ask(root: &Path, server: &Server, resolution: &Resolution) -> Result<Option<i64>, AgeError> {
    // A new client each time: its memo must not hide whether the disk cache answered.
    let client = client();
    let sources = sources(server);
    let future = publish_time_from(&client, root, resolution, &sources);
    net::runtime().unwrap().block_on(future)
}

fn at(text: &str) -> Option<i64> {
    acp_registry_core::time::parse_iso_utc_seconds(text)
}

#[test]
fn an_npm_pin_is_as_old_as_its_time_entry_and_asked_once() {
    let root = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = server(seen.clone());
    let pinned = resolution("npx", "@scope/agent@1.2.3");
    let time = ask(root.path(), &server, &pinned).unwrap();
    assert_eq!(time, at("2026-01-02T03:04:05Z"));
    assert_eq!(
        *seen.lock().unwrap(),
        [(
            "/@scope%2fagent".to_string(),
            Some("application/json".to_string())
        )],
        "the full document: the abbreviated one has no `time`"
    );
    assert_eq!(ask(root.path(), &server, &pinned).unwrap(), time);
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "the second answer came from the cache"
    );
    assert!(root.path().join("registry/publish-times.json").is_file());
}

#[test]
fn a_pypi_pin_is_as_old_as_its_earliest_file_and_asked_once() {
    let root = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = server(seen.clone());
    for spec in ["agent==1.0.0", "agent@1.0.0", "agent[extra]==1.0.0"] {
        let time = ask(root.path(), &server, &resolution("uvx", spec)).unwrap();
        assert_eq!(time, at("2026-01-15T12:00:00Z"), "{spec}");
    }
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
}

#[test]
fn unpinned_specs_ranges_and_binaries_have_no_publish_time_and_ask_nothing() {
    let root = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = server(seen.clone());
    for (kind, spec) in [
        ("npx", "agent"),
        ("npx", "@scope/agent"),
        ("npx", "agent@latest"),
        ("npx", "agent@^1.2.3"),
        ("npx", "agent@1.x"),
        ("npx", "agent@1.2"),
        ("npx", "agent@>=1.2.3"),
        ("uvx", "agent"),
        ("uvx", "agent>=1.0"),
        ("uvx", "agent==1.*"),
        ("uvx", "agent===1.0"),
        ("uvx", "agent @ https://example.com/agent.whl"),
    ] {
        let time = ask(root.path(), &server, &resolution(kind, spec)).unwrap();
        assert_eq!(time, None, "{kind} {spec}");
    }
    let doc = serde_json::json!({"agents": [{"id": "a", "version": "1.0.0", "distribution":
        {"binary": {"linux-x86_64": {"archive": "https://example.com/a.tar.gz", "cmd": "./a"}}}}]});
    let document = Document::parse(&serde_json::to_vec(&doc).unwrap(), "test").unwrap();
    let options = ResolveOptions {
        platform: Some("linux-x86_64".into()),
        ..ResolveOptions::default()
    };
    let binary = resolve(&document, "a", &options).unwrap();
    assert_eq!(ask(root.path(), &server, &binary).unwrap(), None);
    let asked = seen.lock().unwrap().clone();
    assert!(asked.is_empty(), "{asked:?}");
}

#[test]
fn a_version_without_a_readable_time_is_unknown_and_not_cached() {
    let root = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = server(seen.clone());
    for spec in ["@scope/agent@1.3.0", "@scope/agent@9.9.9", "missing@1.0.0"] {
        assert_eq!(
            ask(root.path(), &server, &resolution("npx", spec)).unwrap(),
            None,
            "{spec}"
        );
    }
    assert!(!root.path().join("registry/publish-times.json").exists());
}

#[test]
fn an_index_answering_an_error_is_an_error_naming_the_url() {
    let root = tempfile::tempdir().unwrap();
    let server = server(Arc::default());
    let sources = AgeSources {
        npm: server.url("/broken"),
        pypi: server.url(""),
    };
    let client = client();
    let pinned = resolution("npx", "agent@1.0.0");
    let future = publish_time_from(&client, root.path(), &pinned, &sources);
    let error = net::runtime()
        .unwrap()
        .block_on(future)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("/broken/agent") && error.contains("agent@1.0.0"),
        "{error}"
    );
}
