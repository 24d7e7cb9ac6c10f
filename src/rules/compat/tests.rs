//! One test per reason, on made-up clients, plus the committed data file's own checks.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::*;

/// A client named `name` whose facts are all `true` except `overrides`.
fn client(name: &str, overrides: &[(&str, Value)]) -> Client {
    let mut facts = serde_json::Map::new();
    for key in FACT_KEYS {
        let value = match key {
            "reads" => json!(["registry.json"]),
            "platforms" | "order" => json!("unknown"),
            _ => json!(true),
        };
        facts.insert(
            key.into(),
            json!({"value": value, "source": "https://example.com"}),
        );
    }
    for (key, value) in overrides {
        facts.insert(
            (*key).into(),
            json!({"value": value, "source": "https://example.com"}),
        );
    }
    let text = json!({"clients": [{"id": name.to_lowercase(), "name": name, "facts": facts}]});
    parse_clients(&text.to_string()).unwrap().remove(0)
}

fn view(agent: &Value) -> AgentView {
    AgentView::from_json(agent.as_object().unwrap())
}

fn one(c: &Client, agent: &Value, listings: &BTreeMap<String, bool>) -> ClientCompat {
    compatibility_with(std::slice::from_ref(c), &view(agent), listings).remove(0)
}

fn target(archive: &str) -> Value {
    json!({"archive": archive, "cmd": "./a"})
}

#[test]
fn a_client_that_refuses_the_only_kind_installs_nothing() {
    let zed = client("Zed", &[("kind.uvx", json!(false))]);
    let got = one(
        &zed,
        &json!({"distribution": {"uvx": {"package": "a==1.0.0"}}}),
        &BTreeMap::new(),
    );
    assert_eq!(got.installs, Installs::No);
    assert_eq!(
        got.why,
        ["Zed does not install uvx packages, and the entry offers nothing else"]
    );
    let both = one(
        &zed,
        &json!({"distribution": {"uvx": {"package": "a==1.0.0"}, "npx": {"package": "a@1.0.0"}}}),
        &BTreeMap::new(),
    );
    assert_eq!((both.installs, both.why.len()), (Installs::Yes, 0));
}

#[test]
fn an_archive_format_a_client_cannot_unpack_fails_on_its_platforms_only() {
    let acpr = client("acpr", &[("archive.tar.bz2", json!(false))]);
    let agent = json!({"distribution": {"binary": {
        "linux-x86_64": target("https://x/a.tar.bz2"),
        "darwin-aarch64": target("https://x/a.zip"),
    }}});
    let got = one(&acpr, &agent, &BTreeMap::new());
    assert_eq!(got.installs, Installs::Partly);
    assert_eq!(got.why, ["acpr cannot unpack .tar.bz2 (linux-x86_64)"]);
}

#[test]
fn a_raw_download_a_client_does_not_run_is_named() {
    let c = client("C", &[("archive.raw", json!(false))]);
    let got = one(
        &c,
        &json!({"distribution": {"binary": {"linux-x86_64": target("https://x/a")}}}),
        &BTreeMap::new(),
    );
    assert_eq!(got.installs, Installs::No);
    assert_eq!(
        got.why,
        ["C does not run a raw executable download (linux-x86_64)"]
    );
}

#[test]
fn a_client_with_an_order_never_falls_back() {
    // It takes npx first; npx is refused, so the binary is never tried.
    let c = client(
        "C",
        &[
            ("order", json!(["npx", "binary"])),
            ("kind.npx", json!(false)),
        ],
    );
    let agent = json!({"distribution": {"npx": {"package": "a@1.0.0"},
        "binary": {"linux-x86_64": target("https://x/a.zip")}}});
    let got = one(&c, &agent, &BTreeMap::new());
    assert_eq!(got.installs, Installs::No);
    assert_eq!(got.why, ["C does not install npx packages"]);
}

#[test]
fn dropped_env_makes_an_install_partial() {
    let acpr = client("acpr", &[("env", json!(false))]);
    let agent = json!({"distribution": {"npx": {"package": "a@1.0.0", "env": {"A": "1"}}}});
    let got = one(&acpr, &agent, &BTreeMap::new());
    assert_eq!(got.installs, Installs::Partly);
    assert_eq!(got.why, ["acpr does not apply `env` (npx)"]);
    let binary = json!({"distribution": {"binary": {"linux-x86_64":
        {"archive": "https://x/a.zip", "cmd": "./a", "env": {"A": "1"}}}}});
    let got = one(&acpr, &binary, &BTreeMap::new());
    assert_eq!(
        got.why,
        ["acpr does not apply `env` of binary targets (linux-x86_64)"]
    );
}

#[test]
fn a_missing_auth_type_makes_an_install_partial() {
    let c = client("C", &[("auth.terminal", json!(false))]);
    let agent = json!({"auth": [{"id": "t", "type": "terminal"}],
        "distribution": {"npx": {"package": "a@1.0.0"}}});
    let got = one(&c, &agent, &BTreeMap::new());
    assert_eq!(got.installs, Installs::Partly);
    assert_eq!(got.why, ["C does not offer `terminal` auth"]);
}

#[test]
fn an_output_that_leaves_the_entry_out_means_no() {
    let jb = client(
        "JetBrains IDEs",
        &[("reads", json!(["registry-for-jetbrains.json"]))],
    );
    let agent = json!({"distribution": {"npx": {"package": "a@1.0.0"}}});
    let listings = BTreeMap::from([
        ("registry.json".to_string(), true),
        ("registry-for-jetbrains.json".to_string(), false),
    ]);
    let got = one(&jb, &agent, &listings);
    assert_eq!(got.installs, Installs::No);
    assert_eq!(
        got.why,
        ["JetBrains IDEs reads registry-for-jetbrains.json, which the configuration leaves the entry out of"]
    );
    // A build that writes none of the files a client reads says nothing about it.
    let only_main = BTreeMap::from([("registry.json".to_string(), true)]);
    assert_eq!(one(&jb, &agent, &only_main).installs, Installs::Yes);
}

#[test]
fn platforms_a_client_does_not_run_on_are_not_counted() {
    let c = client("C", &[("platforms", json!(["linux-x86_64"]))]);
    let elsewhere =
        json!({"distribution": {"binary": {"windows-x86_64": target("https://x/a.zip")}}});
    let got = one(&c, &elsewhere, &BTreeMap::new());
    assert_eq!(got.installs, Installs::No);
    assert_eq!(got.why, ["the entry offers nothing C runs"]);
}

#[test]
fn unknown_facts_are_never_reasons() {
    let unknown: Vec<(&str, Value)> = FACT_KEYS
        .iter()
        .filter(|k| **k != "reads")
        .map(|k| (*k, json!("unknown")))
        .collect();
    let c = client("C", &unknown);
    let agent = json!({"auth": [{"id": "t", "type": "terminal"}], "distribution": {
        "uvx": {"package": "a==1.0.0", "env": {"A": "1"}},
        "binary": {"linux-x86_64": target("https://x/a.tar.xz")}}});
    assert_eq!(one(&c, &agent, &BTreeMap::new()).installs, Installs::Yes);
}

#[test]
fn every_fact_of_the_committed_data_has_an_https_source() {
    let parsed = parse_clients(CLIENTS_FILE).unwrap();
    assert!(parsed.len() >= 3);
    for c in &parsed {
        for (key, fact) in &c.facts {
            assert!(
                fact.source.starts_with("https://") && fact.source.len() > "https://".len(),
                "{}: fact `{key}` needs an https source",
                c.id
            );
        }
    }
    let ids: Vec<&str> = client_list().iter().map(|(id, _)| *id).collect();
    for id in ["acpr", "jetbrains", "zed"] {
        assert!(ids.contains(&id), "{id}");
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
}

#[test]
fn installs_names_are_the_documents_words() {
    let words: Vec<&str> = [Installs::Yes, Installs::Partly, Installs::No]
        .iter()
        .map(|i| i.as_str())
        .collect();
    assert_eq!(words, ["yes", "partly", "no"]);
}
