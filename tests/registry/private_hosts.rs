//! Mirrors on private addresses (issue 33): `update` and `validate --online` against a fake
//! npm registry served from this machine's own private address (`192.0.2.2`, `10.1.0.4`, …;
//! nothing leaves the machine), refused by default and admitted by `--allow-private-host` or
//! the configuration's `network.private_hosts`, by address or by range; a bad value is a
//! finding at its line.

use crate::common;
use acp_test_kit::server::{local_private_address, Reply, Request, Server};

use std::net::IpAddr;
use std::path::Path;

use common::update::{json_run, manifest, npx, registry};
use serde_json::{json, Value};

/// A fake npm registry on this machine's private address, offering `mirror-agent` 1.0.0 and
/// 1.1.0, and a registry whose only entry pins 1.0.0, with the endpoints on that server.
/// `None` on a machine without a private address (said on stderr).
fn mirror() -> Option<(IpAddr, Server, tempfile::TempDir)> {
    let Some(ip) = local_private_address() else {
        eprintln!("this machine has no private address to serve from; nothing to check");
        return None;
    };
    let server = Server::start_on(ip, |request: &Request, _| match request.path.as_str() {
        "/npm/mirror-agent" => Reply::json(&json!({
            "name": "mirror-agent", "dist-tags": {"latest": "1.1.0"},
            "versions": {"1.0.0": {}, "1.1.0": {}}
        })),
        _ => Reply::status(404),
    });
    let base = server.url("").replacen("http://", "https://", 1);
    let entry = manifest("mirror-agent", "1.0.0", &npx("mirror-agent@1.0.0"));
    let root = registry(&base, &[("mirror-agent", entry)]);
    Some((ip, server, root))
}

/// Add `"network": network` to the registry's configuration.
fn configure(root: &Path, network: &Value) {
    let path = root.join("acp-registry.jsonc");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["network"] = network.clone();
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
}

fn slash24(ip: IpAddr) -> String {
    let IpAddr::V4(v4) = ip else {
        unreachable!("an IPv4 address")
    };
    let [a, b, c, _] = v4.octets();
    format!("{a}.{b}.{c}.0/24")
}

#[test]
fn update_reaches_a_private_mirror_only_when_the_flag_or_the_configuration_allows_it() {
    let Some((ip, server, root)) = mirror() else {
        return;
    };
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!(code, 1, "{doc}");
    let error = doc["errors"].to_string();
    assert!(error.contains(&format!("non-public address {ip}")), "{doc}");
    assert!(server.requests().is_empty(), "refused before connecting");
    let offered = json!([{"id": "mirror-agent", "from": "1.0.0", "to": "1.1.0"}]);
    let pick = |doc: &Value| {
        json!(doc["updates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| json!({"id": u["id"], "from": u["from"], "to": u["to"]}))
            .collect::<Vec<_>>())
    };
    for flag in [ip.to_string(), slash24(ip)] {
        let (code, doc) = json_run(root.path(), &["--allow-private-host", &flag]);
        assert_eq!((code, pick(&doc)), (1, offered.clone()), "{flag}: {doc}");
        assert_eq!(doc["errors"], json!([]), "{flag}");
    }
    configure(root.path(), &json!({"private_hosts": [slash24(ip)]}));
    let (code, doc) = json_run(root.path(), &[]);
    assert_eq!((code, pick(&doc)), (1, offered), "{doc}");
    assert_eq!(server.requests(), ["GET /npm/mirror-agent"; 3]);
}

/// `validate --online --format json` inside `root`, loopback switch on.
fn validate(root: &Path, args: &[&str]) -> (i32, String) {
    let output = std::process::Command::new(crate::REGISTRY)
        .args([
            "validate",
            "--registry",
            ".",
            "--online",
            "--no-cache",
            "--format",
            "json",
        ])
        .args(args)
        .current_dir(root)
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap();
    let code = output.status.code().unwrap_or(-1);
    (code, String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn validate_online_checks_pins_on_a_private_mirror_when_allowed() {
    let Some((ip, server, root)) = mirror() else {
        return;
    };
    let (_, refused) = validate(root.path(), &[]);
    assert!(
        refused.contains(&format!("non-public address {ip}")),
        "{refused}"
    );
    assert!(server.requests().is_empty());
    let (code, allowed) = validate(root.path(), &["--allow-private-host", &ip.to_string()]);
    assert!(!allowed.contains("non-public"), "{allowed}");
    assert_eq!(code, 0, "{allowed}");
    configure(root.path(), &json!({"private_hosts": [slash24(ip)]}));
    let (code, configured) = validate(root.path(), &[]);
    assert_eq!(code, 0, "{configured}");
    let asked = server.requests();
    assert_eq!(
        asked.len(),
        4,
        "the package and its version, twice: {asked:?}"
    );
    assert!(
        asked.iter().all(|r| r.starts_with("GET /npm/mirror-agent")),
        "{asked:?}"
    );
}

#[test]
fn a_bad_private_host_is_a_finding_at_its_line_and_a_bad_flag_a_usage_error() {
    let Some((_, _server, root)) = mirror() else {
        return;
    };
    std::fs::write(
        root.path().join("acp-registry.jsonc"),
        "{\n  \"severity\": {\"platform-coverage\": \"off\"},\n  \"network\": {\n    \"private_hosts\": [\"10.0.0.0/33\"]\n  }\n}\n",
    )
    .unwrap();
    let run = common::acp_registry(&["validate", "--registry", "."], root.path());
    assert_eq!(run.code, 1, "{}", run.stderr);
    let shown = format!("{}{}", run.stdout, run.stderr);
    assert!(
        shown.contains("acp-registry.jsonc:4:23")
            && shown.contains("`10.0.0.0/33` is not a private host: the prefix length `33` is not a number from 0 to 32"),
        "{shown}"
    );
    let run = common::acp_registry(
        &[
            "update",
            "--registry",
            ".",
            "--allow-private-host",
            "127.0.0.0/8",
        ],
        root.path(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("loopback is only for tests"),
        "{}",
        run.stderr
    );
}

/// Every command that fetches takes the same network flags: a `--ca-file` that cannot be read
/// and a proxy variable naming no usable proxy are usage errors (exit 2) naming them, before
/// anything is requested.
#[test]
fn every_fetching_command_takes_the_network_flags_and_names_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let registry = "https://registry.invalid/registry.json";
    let commands: [&[&str]; 4] = [
        &["update", "--registry", "."],
        &["install", "demo", "--registry", registry],
        &["skill", "check", "https://skills.invalid/"],
        &[
            "skill",
            "install",
            "https://skills.invalid/",
            "--agent",
            "codex",
            "--project",
            ".",
        ],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.extend(["--ca-file", "missing.pem"]);
        let run = common::acp_registry(&args, dir.path());
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("--ca-file missing.pem"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let install = [
        "install",
        "demo",
        "--registry",
        registry,
        "--proxy-from-env",
    ];
    let run = common::acp_registry_with_env(
        &install,
        dir.path(),
        &[("HTTPS_PROXY", "socks5://proxy.invalid:1080")],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("--proxy-from-env"), "{}", run.stderr);
}
