//! `acp-registry update` end to end: the binary against local servers answering like npm,
//! `PyPI` and the GitHub API (their real response shapes), inside the registry with
//! `--registry .`.

use crate::common;
use acp_test_kit::server as net_server;

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use common::update::{
    https, json_run, listener, manifest, npx, read, registry, update, update_env,
};
use common::{assert_usage_error, findings, sha256_hex, tree};
use net_server::{routes, Reply, Request, Server};
use serde_json::{json, Value};

const RELEASES: &str = "GET /api/repos/example/agent/releases?per_page=100&page=1";

fn asset_path(tag: &str, file: &str) -> String {
    format!("/example/agent/releases/download/{tag}/{file}")
}

fn binary(server: &str, tag: &str, file: &str, sha256: Option<&str>) -> Value {
    let mut target = json!({"archive": https(server, &asset_path(tag, file)), "cmd": "./agent"});
    if let Some(sha) = sha256 {
        target["sha256"] = json!(sha);
    }
    json!({"binary": {"linux-x86_64": target}})
}

fn npm_doc(versions: Value) -> Reply {
    let mut doc = json!({"name": "x", "dist-tags": {"latest": "0.0.0"}});
    doc["versions"] = versions;
    Reply::json(&doc)
}

fn release(server: &str, tag: &str, assets: &[(&str, Option<&str>)]) -> Value {
    let assets: Vec<Value> = assets
        .iter()
        .map(|(name, digest)| {
            json!({
                "name": name, "browser_download_url": https(server, &asset_path(tag, name)),
                "size": 4, "content_type": "application/gzip",
                "digest": digest.map(|d| format!("sha256:{d}")),
            })
        })
        .collect();
    json!({"tag_name": tag, "name": tag, "draft": false, "prerelease": false,
           "published_at": "2026-01-01T00:00:00Z", "assets": assets})
}

fn updates(doc: &Value) -> Vec<(String, String, String)> {
    doc["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            let s = |k: &str| u[k].as_str().unwrap().to_string();
            (s("id"), s("from"), s("to"))
        })
        .collect()
}

fn messages(doc: &Value, list: &str) -> Vec<String> {
    doc[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            format!(
                "{}: {}",
                n["id"].as_str().unwrap(),
                n["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn each_distribution_type_is_offered_its_newest_release_without_prereleases_deprecated_or_yanked() {
    let server = Server::start(|request: &Request, _| match request.path.as_str() {
        "/npm/npm-agent" => npm_doc(json!({
            "1.0.0": {}, "1.1.0": {}, "1.2.0-beta.1": {}, "1.3.0": {"deprecated": "broken"}
        })),
        "/pypi-api/pypi/py-agent/json" => {
            Reply::json(&json!({"info": {"version": "1.1.0"}, "releases": {
                "1.0.0": [{"yanked": false}], "1.0.5": [{"yanked": true}, {"yanked": false}],
                "1.1.0": [{"yanked": true, "yanked_reason": "bad"}], "1.2.0": []
            }}))
        }
        _ => Reply::status(404),
    });
    let root = registry(
        &server.url("").replacen("http://", "https://", 1),
        &[
            (
                "npm-agent",
                manifest("npm-agent", "1.0.0", &npx("npm-agent@1.0.0")),
            ),
            (
                "py-agent",
                manifest(
                    "py-agent",
                    "1.0.0",
                    &json!({"uvx": {"package": "py-agent[cli]==1.0.0"}}),
                ),
            ),
        ],
    );
    let before = (
        read(root.path(), "npm-agent"),
        read(root.path(), "py-agent"),
    );
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!(code, 1, "{doc}");
    assert_eq!(
        updates(&doc),
        [
            ("npm-agent".into(), "1.0.0".into(), "1.1.0".into()),
            ("py-agent".into(), "1.0.0".into(), "1.0.5".into())
        ]
    );
    assert_eq!(doc["updates"][0]["file"], "npm-agent/agent.json");
    // Without --apply nothing is written.
    assert_eq!(
        (
            read(root.path(), "npm-agent"),
            read(root.path(), "py-agent")
        ),
        before
    );
    let (code, _) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0);
    assert!(read(root.path(), "npm-agent").contains("\"npm-agent@1.1.0\""));
    assert!(read(root.path(), "py-agent").contains("\"py-agent[cli]==1.0.5\""));
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!(
        (code, doc["up_to_date"].clone()),
        (0, json!(["npm-agent", "py-agent"]))
    );
}

/// A JSONC manifest with comments and two binary targets pinned by sha256.
fn commented(server: &str, tag: &str, version: &str) -> String {
    let url = |file: &str| https(server, &asset_path(tag, &format!("agent-{version}-{file}")));
    format!(
        r#"{{
  // Kept by hand: the updater must not touch this comment.
  "id": "bin-agent",
  "name": "Example Agent",
  "version": "{version}", // the stable release
  "description": "A coding agent that reads, edits and runs code in a project.",
  "repository": "https://github.com/example/agent",
  "authors": ["Example Inc."],
  "license": "MIT",
  "license_url": "https://github.com/example/agent/blob/main/LICENSE",
  "distribution": {{
    "binary": {{
      /* Linux first */
      "linux-x86_64":   {{ "archive": "{linux}", "cmd": "./agent", "sha256": "{zero}" }},
      "darwin-aarch64": {{
        "archive": "{darwin}",
        "cmd": "./agent",
        "sha256": "{zero}",
      }},
    }},
  }},
}}
"#,
        linux = url("linux.tar.gz"),
        darwin = url("darwin.tar.gz"),
        zero = "0".repeat(64),
    )
}

#[test]
fn apply_reads_every_page_refreshes_digests_and_changes_only_the_values_that_must_change() {
    let linux_bytes = b"linux archive bytes".to_vec();
    let linux_sha = sha256_hex(&linux_bytes);
    let darwin_bytes = b"darwin archive bytes".to_vec();
    let (addr, base) = listener();
    let mut page1 = json!([
        release(&base, "v3.0.0", &[]),
        release(&base, "v2.0.0", &[]),
        release(&base, "v1.0.0", &[]),
    ]);
    page1[0]["draft"] = json!(true);
    page1[1]["prerelease"] = json!(true);
    let page2 = json!([release(
        &base,
        "v1.2",
        &[
            ("agent-1.2.0-linux.tar.gz", Some(&linux_sha)),
            ("agent-1.2.0-darwin.tar.gz", None)
        ]
    )]);
    let next =
        format!("<{base}/api/repos/example/agent/releases?per_page=100&page=2>; rel=\"next\"");
    let server = Server::start_with(
        addr,
        routes(vec![
            (RELEASES, vec![Reply::json(&page1).header("link", &next)]),
            (
                "GET /api/repos/example/agent/releases?per_page=100&page=2",
                vec![Reply::json(&page2)],
            ),
            (
                "GET /example/agent/releases/download/v1.2/agent-1.2.0-darwin.tar.gz",
                vec![Reply::body(200, darwin_bytes.clone())],
            ),
            (
                "GET /example/agent/releases/download/v1.2/agent-1.2.0-linux.tar.gz",
                vec![Reply::body(200, linux_bytes)],
            ),
        ]),
    );
    let original = commented(&base, "v1.0.0", "1.0.0");
    let root = registry(&base, &[("bin-agent", original.clone())]);
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(
        updates(&doc),
        [("bin-agent".into(), "1.0.0".into(), "1.2.0".into())]
    );
    let zero = "0".repeat(64);
    let expected = original
        .replace("\"version\": \"1.0.0\"", "\"version\": \"1.2.0\"")
        .replace("/v1.0.0/agent-1.0.0-", "/v1.2/agent-1.2.0-")
        .replacen(&zero, &linux_sha, 1)
        .replacen(&zero, &sha256_hex(&darwin_bytes), 1);
    assert_eq!(read(root.path(), "bin-agent"), expected);
    assert!(server
        .requests()
        .contains(&"GET /api/repos/example/agent/releases?per_page=100&page=2".to_string()));
}

/// An entry launched with npx and a GitHub binary, both at `version`, the binary pinned by
/// `sha256` when given.
fn mixed(base: &str, version: &str, sha256: Option<&str>) -> String {
    let mut dist = binary(base, &format!("v{version}"), "agent-linux.tar.gz", sha256);
    dist["npx"] = json!({"package": format!("mixed@{version}")});
    manifest("mixed", version, &dist)
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn sources_that_disagree_give_their_common_highest_and_a_finding_naming_each() {
    let (addr, base) = listener();
    let digest = sha256_hex(b"linux bytes");
    let releases = json!([
        release(&base, "v1.1.0", &[("agent-linux.tar.gz", Some(&digest))]),
        release(&base, "v1.0.0", &[("agent-linux.tar.gz", None)]),
    ]);
    let server = Server::start_with(
        addr,
        routes(vec![
            (
                "GET /npm/mixed",
                vec![npm_doc(json!({"1.0.0": {}, "1.1.0": {}, "1.2.0": {}}))],
            ),
            (RELEASES, vec![Reply::json(&releases)]),
            (
                "GET /example/agent/releases/download/v1.1.0/agent-linux.tar.gz",
                vec![Reply::body(200, "linux bytes")],
            ),
        ]),
    );
    let root = registry(&base, &[("mixed", mixed(&base, "1.0.0", None))]);
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(
        updates(&doc),
        [("mixed".into(), "1.0.0".into(), "1.1.0".into())]
    );
    assert_eq!(
        messages(&doc, "warnings"),
        ["mixed: the sources' highest versions differ: npm `mixed` 1.2.0, GitHub releases of example/agent 1.1.0"]
    );
    // The target had no `sha256`; the update writes the published digest, which the
    // downloaded bytes have.
    assert_eq!(
        parsed(&read(root.path(), "mixed")),
        parsed(&mixed(&base, "1.1.0", Some(&digest)))
    );
    drop(server);
}

#[test]
fn a_lower_candidate_is_reported_and_never_applied() {
    let server = Server::start(routes(vec![(
        "GET /npm/npm-agent",
        vec![npm_doc(
            json!({"0.9.0": {}, "1.0.0": {"deprecated": "gone"}}),
        )],
    )]));
    let base = server.url("").replacen("http://", "https://", 1);
    let original = manifest("npm-agent", "1.0.0", &npx("npm-agent@1.0.0"));
    let root = registry(&base, &[("npm-agent", original.clone())]);
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!((code, updates(&doc)), (0, vec![]));
    assert_eq!(
        messages(&doc, "warnings"),
        ["npm-agent: the newest version every source offers, 0.9.0, is lower than 1.0.0; not applied"]
    );
    assert_eq!(read(root.path(), "npm-agent"), original);
}

#[test]
fn the_preview_channel_takes_the_highest_preview_counter_and_edits_only_the_preview_block() {
    let server = Server::start(routes(vec![(
        "GET /npm/npm-agent",
        vec![npm_doc(json!({
            "1.0.0": {}, "1.1.0-preview.2": {}, "1.1.0-preview.10": {}, "1.1.0-preview.9": {},
            "1.1.0-beta.20": {}, "1.1.0-preview.11": {"deprecated": "broken"}
        }))],
    )]));
    let base = server.url("").replacen("http://", "https://", 1);
    let with_preview = |preview: &str| {
        let mut value: Value =
            serde_json::from_str(&manifest("npm-agent", "1.0.0", &npx("npm-agent@1.0.0"))).unwrap();
        value["preview"] =
            json!({"version": preview, "distribution": npx(&format!("npm-agent@{preview}"))});
        serde_json::to_string_pretty(&value).unwrap() + "\n"
    };
    let root = registry(&base, &[("npm-agent", with_preview("1.1.0-preview.2"))]);
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!((code, doc["up_to_date"].clone()), (0, json!(["npm-agent"])));
    let (code, doc) = json_run(root.path(), &["--channel", "preview", "--apply"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(
        updates(&doc),
        [(
            "npm-agent".into(),
            "1.1.0-preview.2".into(),
            "1.1.0-preview.10".into()
        )]
    );
    assert_eq!(
        read(root.path(), "npm-agent"),
        with_preview("1.1.0-preview.10")
    );
}

/// An entry `id` of the repository `example/<repo>` with one Linux target at `tag`, pinned
/// by sha256.
fn repo_entry(base: &str, id: &str, repo: &str, tag: &str) -> String {
    let archive = https(
        base,
        &format!("/example/{repo}/releases/download/{tag}/agent-linux.tar.gz"),
    );
    let target = json!({"archive": archive, "cmd": "./agent", "sha256": "0".repeat(64)});
    let dist = json!({"binary": {"linux-x86_64": target}});
    manifest(id, "1.0.0", &dist).replace(
        "github.com/example/agent",
        &format!("github.com/example/{repo}"),
    )
}

/// The releases route of `example/<repo>`.
fn releases_route(repo: &str) -> String {
    format!("GET /api/repos/example/{repo}/releases?per_page=100&page=1")
}

/// What the asset of [`release_at`] serves.
const RELEASE_AT_BYTES: &[u8] = b"agent archive";

/// A release v1.1.0 with the asset `agent-linux.tar.gz` at `url` and a published digest
/// (of [`RELEASE_AT_BYTES`]).
fn release_at(url: &str) -> Value {
    json!([{"tag_name": "v1.1.0", "name": "v1.1.0", "draft": false, "prerelease": false,
            "assets": [{"name": "agent-linux.tar.gz", "browser_download_url": url,
                        "digest": format!("sha256:{}", sha256_hex(RELEASE_AT_BYTES))}]}])
}

#[test]
fn a_failed_revalidation_restores_the_file_byte_for_byte() {
    let (addr, base) = listener();
    // The repository's own name carries a version: the edited URL still names 1.0.0 there,
    // so the entry fails `version-mismatch` at 1.1.0.
    let repo = "agent-1.0.0";
    let asset = https(
        &base,
        &format!("/example/{repo}/releases/download/v1.1.0/agent-linux.tar.gz"),
    );
    let route = releases_route(repo);
    let download = format!("GET /example/{repo}/releases/download/v1.1.0/agent-linux.tar.gz");
    let server = Server::start_with(
        addr,
        routes(vec![
            (&route, vec![Reply::json(&release_at(&asset))]),
            (&download, vec![Reply::body(200, RELEASE_AT_BYTES)]),
        ]),
    );
    let original = repo_entry(&base, "bin-agent", repo, "v1.0.0");
    let root = registry(&base, &[("bin-agent", original.clone())]);
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 3, "{doc}");
    let errors = messages(&doc, "errors");
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("bin-agent: the entry does not validate at 1.1.0 (version-mismatch:")
            && errors[0].ends_with("the file is restored"),
        "{errors:?}"
    );
    assert_eq!(read(root.path(), "bin-agent"), original);
    let leftovers: Vec<_> = std::fs::read_dir(root.path().join("bin-agent"))
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 2, "only agent.json and icon.svg remain");
    drop(server);
}

#[test]
fn an_asset_url_elsewhere_is_refused_naming_the_asset_and_nothing_is_written_or_fetched() {
    let (addr, base) = listener();
    let port = addr.local_addr().unwrap().port();
    let file = "agent-linux.tar.gz";
    let at = |path: &str| https(&base, path);
    let cases: Vec<(&str, String)> = vec![
        (
            "other-host",
            format!("https://downloads.example.net/example/other-host/releases/download/v1.1.0/{file}"),
        ),
        (
            "other-port",
            format!(
                "https://127.0.0.1:{}/example/other-port/releases/download/v1.1.0/{file}",
                port.wrapping_add(1)
            ),
        ),
        (
            "plain-http",
            at(&format!("/example/plain-http/releases/download/v1.1.0/{file}"))
                .replacen("https://", "http://", 1),
        ),
        ("other-repo", at(&format!("/someone/else/releases/download/v1.1.0/{file}"))),
        ("other-tag", at(&format!("/example/other-tag/releases/download/v1.0.0/{file}"))),
        (
            "climbs",
            at(&format!(
                "/example/climbs/releases/download/v1.1.0/../../../../someone/else/releases/download/v1.1.0/{file}"
            )),
        ),
        (
            "encoded",
            at(&format!(
                "/example/encoded/releases/download/v1.1.0/%2e%2e/%2E%2e/.%2e/%2e./someone/else/releases/download/v1.1.0/{file}"
            )),
        ),
    ];
    let routes_text: Vec<String> = cases.iter().map(|(id, _)| releases_route(id)).collect();
    let table = cases
        .iter()
        .zip(&routes_text)
        .map(|((_, url), route)| (route.as_str(), vec![Reply::json(&release_at(url))]))
        .collect();
    let server = Server::start_with(addr, routes(table));
    let entries: Vec<(&str, String)> = cases
        .iter()
        .map(|(id, _)| (*id, repo_entry(&base, id, id, "v1.0.0")))
        .collect();
    let root = registry(&base, &entries);
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 3, "{doc:#}");
    let errors = messages(&doc, "errors");
    for (id, url) in &cases {
        let expected = format!("{id}: release `v1.1.0` asset `{file}`: ");
        assert!(
            errors.iter().any(|e| e.starts_with(&expected)
                && e.contains(url.as_str())
                && e.ends_with("nothing written")),
            "{id}: {errors:#?}"
        );
    }
    for (id, text) in &entries {
        assert_eq!(&read(root.path(), id), text, "{id} was written");
    }
    assert!(
        server.requests().iter().all(|r| r.starts_with("GET /api/")),
        "an asset was fetched: {:?}",
        server.requests()
    );
}

/// A listener for the API on a four-digit port `P` and one for a lookalike on a five-digit
/// port starting with `P`'s digits, so `https://127.0.0.1:<lookalike>` starts with the API's
/// text `https://127.0.0.1:P`.
fn prefix_ports() -> (std::net::TcpListener, std::net::TcpListener) {
    for _ in 0..200 {
        let api = 1024 + fastrand_port() % (6553 - 1024);
        let Ok(api_listener) = std::net::TcpListener::bind(("127.0.0.1", api)) else {
            continue;
        };
        for digit in 0..10 {
            if let Ok(lookalike) = std::net::TcpListener::bind(("127.0.0.1", api * 10 + digit)) {
                return (api_listener, lookalike);
            }
        }
    }
    panic!("no free pair of prefix ports");
}

/// A pseudo-random number from the clock (no dependency for one test).
fn fastrand_port() -> u16 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    (nanos / 1000 % 60_000) as u16
}

/// What a server saw: each request's path and `authorization` header.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, Option<String>)>>>;

fn record(seen: &Seen, request: &Request) {
    let auth = request.header("authorization").map(str::to_string);
    seen.lock().unwrap().push((request.path.clone(), auth));
}

/// The v1.1.0 release of `example/<repo>` with its asset on `base`.
fn release_of(base: &str, repo: &str) -> Value {
    release_at(&https(
        base,
        &format!("/example/{repo}/releases/download/v1.1.0/agent-linux.tar.gz"),
    ))
}

#[test]
fn the_token_goes_only_to_the_api_origin_and_a_lookalike_next_page_is_refused() {
    let (api_listener, lookalike_listener) = prefix_ports();
    let base = format!("https://{}", api_listener.local_addr().unwrap());
    let elsewhere = format!("https://{}", lookalike_listener.local_addr().unwrap());
    assert!(elsewhere.starts_with(&base));
    let (api_seen, elsewhere_seen): (Seen, Seen) = Default::default();
    let (log, page) = (elsewhere_seen.clone(), release_of(&base, "redirected"));
    let _elsewhere = Server::start_with(lookalike_listener, move |request: &Request, _| {
        record(&log, request);
        Reply::json(&page)
    });
    let page2 = "/repos/example/x/releases?per_page=100&page=2";
    let lookalikes = [
        (
            "userinfo",
            format!("{base}@{}{page2}", &elsewhere["https://".len()..]),
        ),
        ("port-prefix", format!("{elsewhere}{page2}")),
    ];
    let (log, page, pages) = (api_seen.clone(), release_of(&base, "x"), lookalikes.clone());
    let redirect = format!("{elsewhere}/repos/example/redirected/releases?per_page=100&page=1");
    let api = Server::start_with(api_listener, move |request: &Request, _| {
        record(&log, request);
        let repo = request.path.split('/').nth(3).unwrap_or_default();
        match pages.iter().find(|(id, _)| *id == repo) {
            Some((_, next)) => {
                Reply::json(&page).header("link", &format!("<{next}>; rel=\"next\""))
            }
            None => Reply::redirect(302, &redirect),
        }
    });
    let entries: Vec<(&str, String)> = ["userinfo", "port-prefix", "redirected"]
        .iter()
        .map(|id| (*id, repo_entry(&base, id, id, "v1.0.0")))
        .collect();
    let root = registry(&base, &entries);
    // The API at the origin's root, as api.github.com is: a lookalike then passes the old
    // check that the next link starts with the API's text.
    let args = ["--format", "json", "--github-api", &base];
    let run = update_env(root.path(), &args, &[("GITHUB_TOKEN", "s3cret")]);
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
    assert_eq!(run.code, 1, "{doc:#}");
    let errors = messages(&doc, "errors");
    for (id, url) in &lookalikes {
        let expected = format!("{id}: GitHub releases of example/{id}: the next page `{url}` is not on the API's origin `{base}`");
        assert!(
            errors.iter().any(|e| e.starts_with(&expected)),
            "{id}: {errors:#?}"
        );
    }
    // The redirect is followed, without the token: its page offers the update.
    assert_eq!(
        updates(&doc),
        [("redirected".into(), "1.0.0".into(), "1.1.0".into())]
    );
    let redirected = "/repos/example/redirected/releases?per_page=100&page=1".to_string();
    assert_eq!(
        *elsewhere_seen.lock().unwrap(),
        [(redirected, None)],
        "only the redirect reached the other origin, and without the token"
    );
    let api_seen = api_seen.lock().unwrap();
    assert_eq!(api_seen.len(), 3, "{api_seen:?}");
    let authorised =
        |(_, auth): &(String, Option<String>)| auth.as_deref() == Some("Bearer s3cret");
    assert!(api_seen.iter().all(authorised), "{api_seen:?}");
    drop(api);
}

#[test]
fn amplified_answers_are_read_in_bounded_memory() {
    // Twice in each answer: 28 MiB, under the 32 MiB document cap.
    let amplified = common::update::zeros(14 << 20);
    let (addr, base) = listener();
    let asset = https(
        &base,
        "/example/agent/releases/download/v1.1.0/agent-linux.tar.gz",
    );
    let npm = format!(
        r#"{{"name":"x","dist-tags":{{"latest":"1.1.0"}},"versions":{{"1.0.0":{{}},"1.1.0":{{"x":{amplified}}}}},"time":{{"x":{amplified}}}}}"#
    );
    let pypi = format!(
        r#"{{"info":{{"version":"1.1.0","description":{amplified}}},"releases":{{"1.0.0":[{{}}],"1.1.0":[{{"yanked":false,"x":{amplified}}}]}}}}"#
    );
    let github = format!(
        r#"[{{"tag_name":"v1.1.0","draft":false,"prerelease":false,"body":{amplified},"assets":[{{"name":"agent-linux.tar.gz","browser_download_url":"{asset}","digest":"sha256:{}","uploader":{amplified}}}]}}]"#,
        "cd".repeat(32)
    );
    // Millions of distinct versions, each tiny: refused at the version cap.
    let keys: Vec<String> = (0..1_500_000).map(|i| format!("\"0.{i}.0\":0")).collect();
    let many = format!("{{\"versions\":{{{}}}}}", keys.join(","));
    for answer in [&npm, &pypi, &github, &many] {
        assert!(answer.len() < 32 << 20, "{} bytes", answer.len());
    }
    let server = Server::start_with(
        addr,
        routes(vec![
            ("GET /npm/npm-agent", vec![Reply::body(200, npm)]),
            ("GET /npm/many-agent", vec![Reply::body(200, many)]),
            (
                "GET /pypi-api/pypi/py-agent/json",
                vec![Reply::body(200, pypi)],
            ),
            (RELEASES, vec![Reply::body(200, github)]),
        ]),
    );
    let binary = binary(&base, "v1.0.0", "agent-linux.tar.gz", Some(&"0".repeat(64)));
    let uvx = json!({"uvx": {"package": "py-agent==1.0.0"}});
    let cases = [
        (
            "npm-agent",
            manifest("npm-agent", "1.0.0", &npx("npm-agent@1.0.0")),
        ),
        ("py-agent", manifest("py-agent", "1.0.0", &uvx)),
        ("bin-agent", manifest("bin-agent", "1.0.0", &binary)),
        (
            "many-agent",
            manifest("many-agent", "1.0.0", &npx("many-agent@1.0.0")),
        ),
    ];
    let root = registry(&base, &cases);
    for (id, _) in &cases {
        let args = ["--format", "json", "--agent", id];
        let (run, peak) = common::update::update_measured(root.path(), &args);
        assert_eq!(run.code, 1, "{id}: {}{}", run.stdout, run.stderr);
        let doc: Value = serde_json::from_str(&run.stdout).unwrap();
        if *id == "many-agent" {
            assert!(
                messages(&doc, "errors")[0]
                    .contains("the answer is not what was expected: more than 50000 versions"),
                "{doc:#}"
            );
        } else {
            assert_eq!(
                updates(&doc),
                [(id.to_string(), "1.0.0".into(), "1.1.0".into())]
            );
        }
        assert!(
            peak < common::update::AMPLIFIED_BOUND,
            "{id}: update peaked at {} MB, over the {} MB bound",
            peak >> 20,
            common::update::AMPLIFIED_BOUND >> 20
        );
    }
    drop(server);
}

fn epoch() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn rate_limited(reset: u64) -> Reply {
    Reply::body(403, "{\"message\": \"API rate limit exceeded\"}")
        .header("x-ratelimit-remaining", "0")
        .header("x-ratelimit-reset", &reset.to_string())
}

#[test]
fn a_short_rate_limit_is_waited_for_and_a_long_one_is_reported() {
    let (addr, base) = listener();
    let releases = json!([release(&base, "v1.1.0", &[("agent-linux.tar.gz", None)])]);
    let server = Server::start_with(
        addr,
        routes(vec![(
            RELEASES,
            vec![rate_limited(epoch()), Reply::json(&releases)],
        )]),
    );
    let entry = manifest(
        "bin-agent",
        "1.0.0",
        &binary(&base, "v1.0.0", "agent-linux.tar.gz", None),
    );
    let root = registry(&base, &[("bin-agent", entry)]);
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!(code, 1, "{doc}");
    assert_eq!(
        updates(&doc),
        [("bin-agent".into(), "1.0.0".into(), "1.1.0".into())]
    );
    assert_eq!(server.requests().len(), 2, "{:?}", server.requests());

    let (addr, base) = listener();
    let server = Server::start_with(
        addr,
        routes(vec![(RELEASES, vec![rate_limited(epoch() + 3600)])]),
    );
    let entry = manifest(
        "bin-agent",
        "1.0.0",
        &binary(&base, "v1.0.0", "agent-linux.tar.gz", None),
    );
    let root = registry(&base, &[("bin-agent", entry)]);
    let run = update(root.path(), &["--rate-limit-wait", "5"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("error: bin-agent: GitHub releases of example/agent: GitHub API rate limit reached, it resets in 3601 s")
            || run.stdout.contains("it resets in 3600 s"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("set GITHUB_TOKEN"), "{}", run.stdout);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    drop(server);

    // A secondary limit (429 with retry-after) is judged at once, not retried blindly.
    let (addr, base) = listener();
    let limited = Reply::status(429).header("retry-after", "3600");
    let server = Server::start_with(addr, routes(vec![(RELEASES, vec![limited])]));
    let entry = manifest(
        "bin-agent",
        "1.0.0",
        &binary(&base, "v1.0.0", "agent-linux.tar.gz", None),
    );
    let root = registry(&base, &[("bin-agent", entry)]);
    let started = std::time::Instant::now();
    let run = update(root.path(), &["--rate-limit-wait", "5"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("it resets in 3600 s"), "{}", run.stdout);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn github_token_authorises_api_requests_only() {
    let (addr, base) = listener();
    let releases = json!([release(&base, "v1.1.0", &[("agent-linux.tar.gz", None)])]);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let server = Server::start_with(addr, move |request: &Request, _| {
        log.lock().unwrap().push((
            request.path.clone(),
            request.header("authorization").map(str::to_string),
        ));
        match (request.path.as_str(), request.header("authorization")) {
            (p, Some("Bearer s3cret")) if p.starts_with("/api/") => Reply::json(&releases),
            (p, _) if p.starts_with("/api/") => Reply::status(401),
            _ => Reply::body(200, "archive"),
        }
    });
    let entry = manifest(
        "bin-agent",
        "1.0.0",
        &binary(&base, "v1.0.0", "agent-linux.tar.gz", Some(&"0".repeat(64))),
    );
    let root = registry(&base, &[("bin-agent", entry)]);
    // The API named on the command line (not only by the registry's configuration, which a
    // pull request can change) is trusted with the token.
    let api = https(&base, "/api");
    let run = update_env(
        root.path(),
        &["--apply", "--github-api", &api],
        &[("GITHUB_TOKEN", "s3cret")],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(read(root.path(), "bin-agent").contains(&sha256_hex(b"archive")));
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter()
            .all(|(path, auth)| path.starts_with("/api/") == auth.is_some()),
        "{seen:?}"
    );
    drop(server);
}

#[test]
fn quarantined_entries_are_skipped_and_binaries_elsewhere_have_no_update_source() {
    let server = Server::start(routes(vec![(
        "GET /npm/npm-agent",
        vec![npm_doc(json!({"2.0.0": {}}))],
    )]));
    let base = server.url("").replacen("http://", "https://", 1);
    let elsewhere = json!({"binary": {"linux-x86_64": {
        "archive": "https://downloads.example.com/agent/v1.0.0/agent.tar.gz", "cmd": "./agent"}}});
    let root = registry(
        &base,
        &[
            (
                "npm-agent",
                manifest("npm-agent", "1.0.0", &npx("npm-agent@1.0.0")),
            ),
            ("elsewhere", manifest("elsewhere", "1.0.0", &elsewhere)),
        ],
    );
    std::fs::write(
        root.path().join("quarantine.json"),
        "{\"npm-agent\": \"broken upstream\"}",
    )
    .unwrap();
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!((code, updates(&doc)), (0, vec![]));
    assert_eq!(
        messages(&doc, "skipped"),
        [
            "elsewhere: no update source: the binaries are not releases of `repository` on GitHub, \
             and the configuration declares no feed for the entry (`feeds`)",
            "npm-agent: quarantined: broken upstream"
        ]
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn runs_over_the_bundled_registry_are_deterministic() {
    // Every package and repository answers with a newer stable and preview version; GitHub
    // releases carry no assets, so binary entries fail the same way each time.
    let server = Server::start(|request: &Request, _| {
        let path = request.path.as_str();
        if path.starts_with("/npm/") {
            npm_doc(json!({"0.1.0": {}, "999.1.0-preview.1": {}, "999.1.0": {}}))
        } else if path.starts_with("/pypi-api/pypi/") {
            Reply::json(&json!({"info": {}, "releases": {"999.1.0": [{"yanked": false}]}}))
        } else if path.starts_with("/api/repos/") {
            Reply::json(
                &json!([{"tag_name": "v999.1.0", "draft": false, "prerelease": false, "assets": []}]),
            )
        } else {
            Reply::status(404)
        }
    });
    let base = server.url("").replacen("http://", "https://", 1);
    let flags = |apply: bool| {
        let mut args = vec![
            "--npm-registry".to_string(),
            format!("{base}/npm"),
            "--pypi-url".into(),
            format!("{base}/pypi-api"),
            "--github-api".into(),
            format!("{base}/api"),
            // The fake sources give no publish times; the bundled cooldown would hold them all.
            "--min-age".into(),
            "0".into(),
        ];
        if apply {
            args.push("--apply".into());
        }
        args
    };
    let copies: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    for copy in &copies {
        common::copy_dir(&common::repo_root().join("registry"), copy.path());
    }
    let original = tree(copies[0].path());
    let run = |dir: &Path, apply: bool| {
        let args = flags(apply);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        update(dir, &args)
    };
    let (first, second) = (run(copies[0].path(), false), run(copies[0].path(), false));
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(
        tree(copies[0].path()),
        original,
        "without --apply nothing changes"
    );
    assert!(
        first
            .stdout
            .contains("update available: cline 3.0.65 -> 999.1.0"),
        "{}",
        first.stdout
    );
    let (b, c) = (run(copies[1].path(), true), run(copies[2].path(), true));
    assert_eq!((b.code, &b.stdout), (c.code, &c.stdout));
    assert!(
        b.stdout.contains("updated: cline 3.0.65 -> 999.1.0"),
        "{}",
        b.stdout
    );
    assert_eq!(tree(copies[1].path()), tree(copies[2].path()));
    assert_ne!(tree(copies[1].path()), original);
}

#[test]
fn agent_selects_entries_and_an_unknown_id_is_an_error() {
    let server = Server::start(routes(vec![
        ("GET /npm/one", vec![npm_doc(json!({"1.1.0": {}}))]),
        ("GET /npm/two", vec![npm_doc(json!({"1.1.0": {}}))]),
    ]));
    let base = server.url("").replacen("http://", "https://", 1);
    let root = registry(
        &base,
        &[
            ("one", manifest("one", "1.0.0", &npx("one@1.0.0"))),
            ("two", manifest("two", "1.0.0", &npx("two@1.0.0"))),
        ],
    );
    let (code, doc) = json_run(root.path(), &["--agent", "two"]);
    assert_eq!(
        (code, updates(&doc)),
        (1, vec![("two".into(), "1.0.0".into(), "1.1.0".into())])
    );
    assert_eq!(server.requests(), ["GET /npm/two"]);
    // A usage error, as for `verify`: nothing is asked, exit 2 naming the id.
    let run = update(root.path(), &["--agent", "two,three"]);
    assert_usage_error(&run, &["--agent three: no entry of . has this id"]);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_missing_registry_is_a_failure_of_the_run_exit_2() {
    let work = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(crate::REGISTRY)
        .current_dir(work.path())
        .args(["update", "--registry", "nope"])
        .output()
        .unwrap();
    let run = common::Run::from(output);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        "error: registry folder `nope` does not exist; pass the registry root with --registry DIR"
    );
}

/// The time the cooldown tests measure release ages at (`--as-of`), and publish times
/// around it: `OLD` four weeks before, `FRESH` a day and a half before (under a 7-day
/// cooldown eligible at 2026-03-06T12:00:00Z).
const AS_OF: &str = "2026-03-01";
const OLD: &str = "2026-02-01T00:00:00.000Z";
const FRESH: &str = "2026-02-27T12:00:00Z";

/// [`release`] published at `published`.
fn timed_release(
    server: &str,
    tag: &str,
    published: &str,
    assets: &[(&str, Option<&str>)],
) -> Value {
    let mut release = release(server, tag, assets);
    release["published_at"] = json!(published);
    release
}

/// An npm document of `(version, publish time)` pairs (`None`: absent from `time`).
fn timed_npm(versions: &[(&str, Option<&str>)]) -> Reply {
    let mut doc = json!({"name": "x", "dist-tags": {"latest": "0.0.0"}, "versions": {},
                         "time": {"created": "2025-01-01T00:00:00Z", "modified": FRESH}});
    for (version, time) in versions {
        doc["versions"][version] = json!({});
        if let Some(time) = time {
            doc["time"][version] = json!(time);
        }
    }
    Reply::json(&doc)
}

/// A `PyPI` file uploaded at `time`.
fn upload(time: &str) -> Value {
    json!({"filename": "f", "yanked": false, "upload_time": &time[..19], "upload_time_iso_8601": time})
}

/// Three entries, one per source kind, at 1.0.0, whose sources publish newer releases both
/// old enough and too fresh for a 7-day cooldown on [`AS_OF`].
fn cooldown_registry() -> (Server, tempfile::TempDir, String) {
    let (addr, base) = listener();
    let asset = |v: &str| format!("agent-{v}-linux.tar.gz");
    let (fresh_digest, old_digest) = (sha256_hex(b"fresh"), sha256_hex(b"old"));
    let old_download = format!("GET {}", asset_path("v1.1.0", &asset("1.1.0")));
    let fresh_download = format!("GET {}", asset_path("v1.2.0", &asset("1.2.0")));
    let releases = json!([
        timed_release(
            &base,
            "v1.2.0",
            FRESH,
            &[(&asset("1.2.0"), Some(&fresh_digest))]
        ),
        timed_release(
            &base,
            "v1.1.0",
            OLD,
            &[(&asset("1.1.0"), Some(&old_digest))]
        ),
        timed_release(&base, "v1.0.0", OLD, &[(&asset("1.0.0"), None)]),
    ]);
    let npm = timed_npm(&[
        ("1.0.0", Some(OLD)),
        ("1.1.0", Some(OLD)),
        ("1.2.0", Some(FRESH)),
    ]);
    // 1.1.0's wheel was added after its sdist, five days ago: the release is as young as
    // its newest file.
    let pypi = json!({"info": {"version": "1.1.0"}, "releases": {
        "1.0.0": [upload(OLD)], "1.0.5": [upload("2026-02-10T00:00:00.123456Z")],
        "1.1.0": [upload(OLD), upload("2026-02-24T00:00:00.000001Z")]
    }});
    let server = Server::start_with(
        addr,
        routes(vec![
            ("GET /npm/npm-agent", vec![npm]),
            ("GET /pypi-api/pypi/py-agent/json", vec![Reply::json(&pypi)]),
            (RELEASES, vec![Reply::json(&releases)]),
            (&old_download, vec![Reply::body(200, "old")]),
            (&fresh_download, vec![Reply::body(200, "fresh")]),
        ]),
    );
    let bin = binary(&base, "v1.0.0", &asset("1.0.0"), Some(&"0".repeat(64)));
    let uvx = json!({"uvx": {"package": "py-agent==1.0.0"}});
    let root = registry(
        &base,
        &[
            ("bin-agent", manifest("bin-agent", "1.0.0", &bin)),
            (
                "npm-agent",
                manifest("npm-agent", "1.0.0", &npx("npm-agent@1.0.0")),
            ),
            ("py-agent", manifest("py-agent", "1.0.0", &uvx)),
        ],
    );
    (server, root, old_digest)
}

/// `--min-age 7 --as-of` [`AS_OF`].
const COOLDOWN: [&str; 4] = ["--min-age", "7", "--as-of", AS_OF];

#[test]
fn a_cooldown_takes_the_newest_release_old_enough_and_reports_the_newer_one_with_its_dates() {
    let (server, root, _) = cooldown_registry();
    let cooldown = COOLDOWN;
    let (code, doc) = json_run(root.path(), &cooldown);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(
        (doc["min_age_days"].clone(), doc["as_of"].clone()),
        (json!(7), json!("2026-03-01T00:00:00Z"))
    );
    let moved: Vec<(String, String, String)> = doc["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["id"].to_string(),
                u["to"].to_string(),
                u["published"].to_string(),
            )
        })
        .collect();
    let q = |s: &str| format!("\"{s}\"");
    assert_eq!(
        moved,
        [
            (q("bin-agent"), q("1.1.0"), q("2026-02-01T00:00:00Z")),
            (q("npm-agent"), q("1.1.0"), q("2026-02-01T00:00:00Z")),
            (q("py-agent"), q("1.0.5"), q("2026-02-10T00:00:00Z")),
        ]
    );
    let held = |id: &str, version: &str, published: &str, eligible: &str, instead: &str| {
        json!({"id": id, "version": version, "published": published, "eligible_at": eligible,
               "message": format!("{version} published {published}, inside the 7-day cooldown until {eligible}; moving to {instead} instead")})
    };
    assert_eq!(
        doc["held"],
        json!([
            held(
                "bin-agent",
                "1.2.0",
                "2026-02-27T12:00:00Z",
                "2026-03-06T12:00:00Z",
                "1.1.0"
            ),
            held(
                "npm-agent",
                "1.2.0",
                "2026-02-27T12:00:00Z",
                "2026-03-06T12:00:00Z",
                "1.1.0"
            ),
            held(
                "py-agent",
                "1.1.0",
                "2026-02-24T00:00:00Z",
                "2026-03-03T00:00:00Z",
                "1.0.5"
            ),
        ])
    );
    drop(server);
}

#[test]
fn a_cooldown_says_what_it_held_until_when_the_same_each_run_and_lets_it_through_after() {
    let (server, root, old_digest) = cooldown_registry();
    let cooldown = COOLDOWN;
    let (first, second) = (
        update(root.path(), &cooldown),
        update(root.path(), &cooldown),
    );
    assert_eq!(first.stdout, second.stdout);
    assert!(
        first.stdout.contains(
            "held: npm-agent: 1.2.0 published 2026-02-27T12:00:00Z, inside the 7-day cooldown \
             until 2026-03-06T12:00:00Z; moving to 1.1.0 instead\n"
        ) && first.stdout.ends_with(
            "3 update(s), 0 applied, 3 not applied, 0 error(s), 0 up to date, 0 skipped, 3 held \
             by the 7-day cooldown (as of 2026-03-01T00:00:00Z)\n"
        ),
        "{}",
        first.stdout
    );
    let applied = [&cooldown[..], &["--apply"]].concat();
    let (code, doc) = json_run(root.path(), &applied);
    assert_eq!(code, 0, "{doc:#}");
    let bin = read(root.path(), "bin-agent");
    assert!(
        bin.contains("/v1.1.0/agent-1.1.0-linux.tar.gz") && bin.contains(&old_digest),
        "{bin}"
    );
    assert!(read(root.path(), "npm-agent").contains("\"npm-agent@1.1.0\""));
    assert!(read(root.path(), "py-agent").contains("\"py-agent==1.0.5\""));
    // Once the cooldown has passed, the held releases are the updates.
    let (code, doc) = json_run(
        root.path(),
        &["--min-age", "7", "--as-of", "2026-03-06T12:00:00Z"],
    );
    assert_eq!((code, doc["held"].clone()), (1, json!([])), "{doc:#}");
    assert_eq!(
        updates(&doc),
        [
            ("bin-agent".into(), "1.1.0".into(), "1.2.0".into()),
            ("npm-agent".into(), "1.1.0".into(), "1.2.0".into()),
            ("py-agent".into(), "1.0.5".into(), "1.1.0".into()),
        ]
    );
    drop(server);
}

#[test]
fn a_cooldown_never_downgrades_and_never_applies_a_release_of_unknown_age() {
    let server = Server::start(routes(vec![
        (
            "GET /npm/pinned-fresh",
            vec![timed_npm(&[
                ("1.0.0", Some(OLD)),
                ("1.1.0", Some(OLD)),
                ("1.2.0", Some(FRESH)),
                ("1.3.0", Some(FRESH)),
            ])],
        ),
        (
            "GET /npm/untimed",
            vec![timed_npm(&[("1.0.0", Some(OLD)), ("1.1.0", None)])],
        ),
    ]));
    let base = server.url("").replacen("http://", "https://", 1);
    let entries = [
        (
            "pinned-fresh",
            manifest("pinned-fresh", "1.2.0", &npx("pinned-fresh@1.2.0")),
        ),
        (
            "untimed",
            manifest("untimed", "1.0.0", &npx("untimed@1.0.0")),
        ),
    ];
    let root = registry(&base, &entries);
    // The cooldown from the configuration.
    let config_path = root.path().join("acp-registry.jsonc");
    let mut config = parsed(&std::fs::read_to_string(&config_path).unwrap());
    config["update"] = json!({"min_age_days": 7});
    std::fs::write(&config_path, config.to_string()).unwrap();
    let (code, doc) = json_run(root.path(), &["--apply", "--as-of", AS_OF]);
    assert_eq!((code, updates(&doc)), (0, vec![]), "{doc:#}");
    assert_eq!(
        doc["held"],
        json!([
            {"id": "pinned-fresh", "version": "1.3.0", "published": "2026-02-27T12:00:00Z",
             "eligible_at": "2026-03-06T12:00:00Z",
             "message": "1.3.0 published 2026-02-27T12:00:00Z, inside the 7-day cooldown until 2026-03-06T12:00:00Z; staying at 1.2.0"},
            {"id": "untimed", "version": "1.1.0", "published": null, "eligible_at": null,
             "message": "1.1.0 has no publish time at npm `untimed`; a release of unknown age is never applied under the 7-day cooldown; staying at 1.0.0"},
        ])
    );
    for (id, text) in &entries {
        assert_eq!(&read(root.path(), id), text, "{id} was written");
    }
    // The flag wins over the configuration.
    let (code, doc) = json_run(root.path(), &["--min-age", "0", "--as-of", AS_OF]);
    assert_eq!(
        (code, doc["held"].clone(), doc["as_of"].clone()),
        (1, json!([]), json!(null))
    );
    assert_eq!(
        updates(&doc),
        [
            ("pinned-fresh".into(), "1.2.0".into(), "1.3.0".into()),
            ("untimed".into(), "1.0.0".into(), "1.1.0".into()),
        ]
    );
    assert_eq!(doc["updates"][1]["published"], json!(null));
    drop(server);
}

#[test]
fn apply_writes_every_targets_digest_from_the_published_one_or_the_downloaded_bytes() {
    let darwin_bytes = b"darwin archive bytes".to_vec();
    let linux_digest = sha256_hex(b"linux archive bytes");
    let (addr, base) = listener();
    let assets = [
        ("agent-1.1.0-linux.tar.gz", Some(linux_digest.as_str())),
        ("agent-1.1.0-darwin.tar.gz", None),
    ];
    let releases = json!([release(&base, "v1.1.0", &assets)]);
    let darwin = "GET /example/agent/releases/download/v1.1.0/agent-1.1.0-darwin.tar.gz";
    let linux = "GET /example/agent/releases/download/v1.1.0/agent-1.1.0-linux.tar.gz";
    let server = Server::start_with(
        addr,
        routes(vec![
            (RELEASES, vec![Reply::json(&releases)]),
            (darwin, vec![Reply::body(200, darwin_bytes.clone())]),
            (linux, vec![Reply::body(200, "linux archive bytes")]),
        ]),
    );
    // Neither target pins a digest yet.
    let unpinned = commented(&base, "v1.0.0", "1.0.0")
        .replace(&format!(", \"sha256\": \"{}\"", "0".repeat(64)), "")
        .replace(
            &format!("\n        \"sha256\": \"{}\",", "0".repeat(64)),
            "",
        );
    assert!(!unpinned.contains("sha256"), "{unpinned}");
    let root = registry(&base, &[("bin-agent", unpinned)]);
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0, "{doc:#}");
    let written = read(root.path(), "bin-agent");
    assert!(
        written.contains("// Kept by hand"),
        "comments kept: {written}"
    );
    let value = acp_registry::parse(&written).unwrap().to_json();
    let targets = &value["distribution"]["binary"];
    assert_eq!(targets["linux-x86_64"]["sha256"], json!(linux_digest));
    assert_eq!(
        targets["darwin-aarch64"]["sha256"],
        json!(sha256_hex(&darwin_bytes))
    );
    let mut fetched: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| !r.starts_with("GET /api/"))
        .collect();
    fetched.sort();
    assert_eq!(
        fetched,
        [darwin.to_string(), linux.to_string()],
        "every asset is downloaded and hashed, the published digest checked against it"
    );
}

#[test]
fn a_digest_that_cannot_be_downloaded_is_an_error_for_the_entry_and_nothing_is_written() {
    let (addr, base) = listener();
    let releases = json!([release(&base, "v1.1.0", &[("agent-linux.tar.gz", None)])]);
    // The asset answers 404.
    let server = Server::start_with(addr, routes(vec![(RELEASES, vec![Reply::json(&releases)])]));
    let original = manifest(
        "bin-agent",
        "1.0.0",
        &binary(&base, "v1.0.0", "agent-linux.tar.gz", None),
    );
    let root = registry(&base, &[("bin-agent", original.clone())]);
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 3, "{doc:#}");
    let url = https(&base, &asset_path("v1.1.0", "agent-linux.tar.gz"));
    assert_eq!(
        messages(&doc, "errors"),
        [format!(
            "bin-agent: release `v1.1.0` asset `agent-linux.tar.gz` for linux-x86_64: downloading \
             `{url}` to hash it failed: HTTP status 404; nothing written"
        )]
    );
    assert_eq!(doc["updates"][0]["applied"], json!(false));
    assert_eq!(read(root.path(), "bin-agent"), original);
    let files: Vec<_> = std::fs::read_dir(root.path().join("bin-agent"))
        .unwrap()
        .collect();
    assert_eq!(files.len(), 2, "only agent.json and icon.svg remain");
    drop(server);
}

/// `releases.json` of a registry, parsed.
fn recorded(root: &Path) -> Value {
    parsed(&std::fs::read_to_string(root.join("releases.json")).unwrap())
}

/// A `PyPI` file uploaded at `time`, yanked or not, with its sha256.
fn pypi_file(time: &str, yanked: bool, sha256: &str) -> Value {
    let mut file = upload(time);
    file["yanked"] = json!(yanked);
    file["digests"] = json!({"md5": "0".repeat(32), "sha256": sha256});
    file
}

/// One entry per source kind at 1.0.0 whose sources answer with every history fact:
/// npm integrity, deprecation and times; `PyPI` files (one or two, yanked or not) with
/// digests and upload times; GitHub `published_at`.
fn history_registry() -> (Server, tempfile::TempDir) {
    let (addr, base) = listener();
    let asset = "agent-linux.tar.gz";
    let releases = json!([
        timed_release(
            &base,
            "v1.1.0",
            FRESH,
            &[(asset, Some(&sha256_hex(b"new")))]
        ),
        timed_release(&base, "v1.0.0", OLD, &[(asset, None)]),
    ]);
    let npm = json!({"name": "npm-agent", "dist-tags": {"latest": "1.1.0"},
        "versions": {
            "1.0.0": {"dist": {"integrity": "sha512-one", "shasum": "1"}},
            "1.1.0": {"dist": {"integrity": "sha512-two", "shasum": "2"}},
            "1.2.0": {"deprecated": "broken build", "dist": {"integrity": "sha512-three"}}},
        "time": {"created": OLD, "modified": FRESH, "1.0.0": OLD, "1.1.0": FRESH,
                 "1.2.0": "2026-02-28T08:00:00.000Z"}});
    let (a, b, c) = ("a".repeat(64), "b".repeat(64), "c".repeat(64));
    let pypi = json!({"info": {"version": "1.1.0"}, "releases": {
        "1.0.0": [pypi_file(OLD, false, &a)],
        "1.1.0": [pypi_file(FRESH, false, &b), pypi_file("2026-02-24T00:00:00.000001Z", false, &c)],
        "1.2.0rc1": [pypi_file(FRESH, true, &c)],
        "1.3.0": []
    }});
    let download = format!("GET {}", asset_path("v1.1.0", asset));
    let server = Server::start_with(
        addr,
        routes(vec![
            ("GET /npm/npm-agent", vec![Reply::json(&npm)]),
            ("GET /pypi-api/pypi/py-agent/json", vec![Reply::json(&pypi)]),
            (RELEASES, vec![Reply::json(&releases)]),
            (&download, vec![Reply::body(200, "new")]),
        ]),
    );
    let bin = binary(&base, "v1.0.0", asset, Some(&"0".repeat(64)));
    let uvx = json!({"uvx": {"package": "py-agent==1.0.0"}});
    let root = registry(
        &base,
        &[
            ("bin-agent", manifest("bin-agent", "1.0.0", &bin)),
            (
                "npm-agent",
                manifest("npm-agent", "1.0.0", &npx("npm-agent@1.0.0")),
            ),
            ("py-agent", manifest("py-agent", "1.0.0", &uvx)),
        ],
    );
    (server, root)
}

#[test]
fn apply_records_each_sources_publish_times_flags_and_digests_and_a_second_run_changes_no_byte() {
    let (server, root) = history_registry();
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!(
        (code, &doc["releases_changed"]),
        (1, &json!(false)),
        "{doc}"
    );
    assert!(
        !root.path().join("releases.json").exists(),
        "written without --apply"
    );
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["releases_changed"], true);
    let old = "2026-02-01T00:00:00Z";
    let expected = json!({"version": 1, "agents": {
        "bin-agent": {"github": {"repository": "example/agent", "versions": [
            {"version": "1.1.0", "published": FRESH},
            {"version": "1.0.0", "published": old}]}},
        "npm-agent": {"npm": {"package": "npm-agent", "versions": [
            {"version": "1.2.0", "published": "2026-02-28T08:00:00Z", "digest": "sha512-three",
             "deprecated": "broken build"},
            {"version": "1.1.0", "published": FRESH, "digest": "sha512-two"},
            {"version": "1.0.0", "published": old, "digest": "sha512-one"}]}},
        "py-agent": {"pypi": {"package": "py-agent", "versions": [
            {"version": "1.2.0-preview.1", "published": FRESH,
             "digest": format!("sha256:{}", "c".repeat(64)), "yanked": true, "preview": true},
            {"version": "1.1.0", "published": "2026-02-24T00:00:00Z"},
            {"version": "1.0.0", "published": old,
             "digest": format!("sha256:{}", "a".repeat(64))}]}}
    }});
    assert_eq!(recorded(root.path()), expected);
    let bytes = std::fs::read(root.path().join("releases.json")).unwrap();
    let (_, found) = findings(root.path());
    assert!(
        !found.iter().any(|(_, code, _)| code == "releases-format"),
        "what update writes validates: {found:?}"
    );
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(
        (code, &doc["releases_changed"]),
        (0, &json!(false)),
        "{doc}"
    );
    assert_eq!(
        std::fs::read(root.path().join("releases.json")).unwrap(),
        bytes
    );
    drop(server);
}

/// `build`'s `lifecycle.json` of `root`, parsed: the agent `id`'s distribution `kind`.
fn lifecycle_dist(root: &Path, extra: &[&str], id: &str, kind: &str) -> Value {
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let args = [&["--no-site"], extra].concat();
    let run = common::build_registry(root, &dist, &args, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = parsed(&std::fs::read_to_string(dist.join("lifecycle.json")).unwrap());
    let agent = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id);
    agent.unwrap()["distributions"][kind].clone()
}

#[test]
fn lifecycle_json_gives_each_pin_the_publish_time_its_source_answered() {
    let (server, root) = history_registry();
    let (code, doc) = json_run(root.path(), &["--apply"]);
    assert_eq!(code, 0, "{doc}");
    let history = recorded(root.path());
    let old = "2026-02-01T00:00:00Z";
    // Every entry moved to 1.1.0; its time is what npm's `time`, PyPI's earliest upload and
    // GitHub's `published_at` said of 1.1.0, and the history is what update recorded.
    for (id, kind, source, time) in [
        ("npm-agent", "npx", "npm", FRESH),
        ("py-agent", "uvx", "pypi", "2026-02-24T00:00:00Z"),
        ("bin-agent", "binary", "github", FRESH),
    ] {
        let dist = lifecycle_dist(root.path(), &[], id, kind);
        assert_eq!(
            (&dist["source"], &dist["version"], &dist["published"]),
            (&json!(source), &json!("1.1.0"), &json!(time)),
            "{id}: {dist}"
        );
        assert_eq!(
            dist["history"], history["agents"][id][source]["versions"],
            "{id}"
        );
    }
    // As of a day before 1.1.0 was published anywhere, only 1.0.0 is listed, and the pin's time
    // is unknown then.
    let dist = lifecycle_dist(root.path(), &["--as-of", "2026-02-02"], "npm-agent", "npx");
    assert_eq!(
        dist["history"],
        json!([{"version": "1.0.0", "published": old, "digest": "sha512-one"}])
    );
    assert!(dist.get("published").is_none(), "{dist}");
    drop(server);
}

#[test]
fn record_refreshes_the_history_and_edits_no_manifest() {
    let (server, root) = history_registry();
    let before = tree(root.path());
    let (code, doc) = json_run(root.path(), &["--record"]);
    // The updates are reported, not applied (exit 1), and only releases.json is new.
    assert_eq!((code, &doc["releases_changed"]), (1, &json!(true)), "{doc}");
    let mut after = tree(root.path());
    let recorded_bytes = after
        .remove("releases.json")
        .expect("releases.json written");
    assert_eq!(after, before, "a manifest changed");
    let versions = &recorded(root.path())["agents"]["npm-agent"]["npm"]["versions"];
    assert_eq!(versions.as_array().unwrap().len(), 3, "{versions}");
    // The pin stays 1.0.0, and lifecycle.json gives it the time npm answered.
    let dist = lifecycle_dist(root.path(), &[], "npm-agent", "npx");
    assert_eq!(
        (&dist["version"], &dist["published"]),
        (&json!("1.0.0"), &json!("2026-02-01T00:00:00Z"))
    );
    let (code, _) = json_run(root.path(), &["--record"]);
    assert_eq!(code, 1);
    assert_eq!(
        std::fs::read(root.path().join("releases.json")).unwrap(),
        recorded_bytes
    );
    drop(server);
}

#[test]
fn an_agent_filter_keeps_other_members_and_ids_no_entry_declares_are_dropped() {
    // `two` stays at 1.0.0 (every newer release is deprecated): its pin is older than the
    // ten highest and is recorded after them.
    let mut two = json!({});
    for minor in 0..=11 {
        two[format!("1.{minor}.0")] = match minor {
            0 => json!({}),
            _ => json!({"deprecated": "no"}),
        };
    }
    let server = Server::start(routes(vec![
        ("GET /npm/one", vec![npm_doc(json!({"1.1.0": {}}))]),
        ("GET /npm/two", vec![npm_doc(two)]),
    ]));
    let base = server.url("").replacen("http://", "https://", 1);
    let root = registry(
        &base,
        &[
            ("one", manifest("one", "1.0.0", &npx("one@1.0.0"))),
            ("two", manifest("two", "1.0.0", &npx("two@1.0.0"))),
        ],
    );
    let one = json!({"npm": {"package": "one", "versions": [{"version": "0.9.0"}]}});
    let before = json!({"version": 1, "agents": {
        "gone": {"github": {"repository": "o/r", "versions": []}}, "one": one}});
    std::fs::write(root.path().join("releases.json"), before.to_string()).unwrap();
    let (code, doc) = json_run(root.path(), &["--apply", "--agent", "two"]);
    assert_eq!((code, &doc["releases_changed"]), (0, &json!(true)), "{doc}");
    assert_eq!(server.requests(), ["GET /npm/two"]);
    let history = recorded(root.path());
    assert_eq!(history["agents"]["one"], one, "not asked: kept as it was");
    assert!(history["agents"].get("gone").is_none(), "{history}");
    let versions: Vec<&str> = history["agents"]["two"]["npm"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["version"].as_str().unwrap())
        .collect();
    let mut expected: Vec<String> = (2..=11).rev().map(|m| format!("1.{m}.0")).collect();
    expected.push("1.0.0".into());
    assert_eq!(versions, expected);
}

#[test]
fn a_malformed_history_is_a_finding_and_update_never_overwrites_it() {
    let (server, root) = history_registry();
    let text = "{\"version\": 1, \"agents\": []}\n";
    std::fs::write(root.path().join("releases.json"), text).unwrap();
    let (code, found) = findings(root.path());
    assert_eq!(code, 1);
    assert!(
        found.contains(&(
            "error".into(),
            "releases-format".into(),
            "releases.json:1:26".into()
        )),
        "{found:?}"
    );
    let manifest_before = read(root.path(), "npm-agent");
    let run = update(root.path(), &["--apply"]);
    assert_usage_error(
        &run,
        &["releases.json is malformed, and update never overwrites a file it cannot read"],
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    assert_eq!(read(root.path(), "npm-agent"), manifest_before);
    assert_eq!(
        std::fs::read_to_string(root.path().join("releases.json")).unwrap(),
        text
    );
}
