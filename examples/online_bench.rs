//! Benchmark of `validate --online`: N archive URLs (default 2,000) spread over H local
//! hosts (default 20, addresses 127.0.0.1 to 127.0.0.H, Linux routes all of 127/8 to `lo`),
//! each answering after a delay (default 50 ms).
//!
//! ```text
//! cargo run --example online_bench -- [--urls N] [--hosts H] [--delay-ms D]
//! ```
//!
//! Writes a registry of N/5 entries with five binary platforms each, runs the online rules
//! (`online::check`, as `validate --online` does, cache off) with the default limits, then
//! again with one request at a time, and prints both wall times, their ratio, the most
//! requests any host served at once, and the process's peak memory. Uses the test-only
//! loopback switch, as the servers are local.

use acp_test_kit::server as net_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_registry::check_registry;
use acp_registry::online::{self, Endpoints, Silent};
use acp_registry::NetConfig;
use net_server::{Reply, Server};
use serde_json::json;

const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\"><circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"currentColor\"/></svg>\n";
const PLATFORMS: [&str; 5] = [
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-x86_64",
];

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

/// A registry whose archive URLs go round-robin over the servers.
fn write_registry(root: &std::path::Path, servers: &[Server], urls: usize) {
    for entry in 0..urls.div_ceil(PLATFORMS.len()) {
        let id = format!("agent-{entry:05}");
        let mut binary = serde_json::Map::new();
        for (p, platform) in PLATFORMS.iter().enumerate() {
            let n = entry * PLATFORMS.len() + p;
            if n >= urls {
                break;
            }
            let server = &servers[n % servers.len()];
            // https, as the rules require; the test-only loopback switch fetches it over http.
            let url = server
                .url(&format!("/releases/download/v1.0.0/{id}-{platform}.tar.gz"))
                .replacen("http://", "https://", 1);
            binary.insert(
                platform.to_string(),
                json!({"archive": url, "cmd": "./agent", "sha256": "a".repeat(64)}),
            );
        }
        let manifest = json!({
            "id": id, "name": id, "version": "1.0.0",
            "description": "A synthetic agent for the online benchmark.",
            "authors": ["Bench"], "license": "MIT",
            "distribution": {"binary": binary}
        });
        let dir = root.join(&id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("agent.json"), manifest.to_string()).unwrap();
        std::fs::write(dir.join("icon.svg"), ICON).unwrap();
    }
}

fn run(root: &std::path::Path, net: NetConfig) -> (Duration, usize) {
    let checked = check_registry(root, None).unwrap();
    let options = online::Options {
        net,
        endpoints: Endpoints::default(),
        verify_archives: false,
        archive_cap: 0,
        cache_dir: None,
        max_age: Duration::ZERO,
        provenance: online::ProvenanceConfig::default(),
        github_token: acp_registry::online::GitHubToken::default(),
        baseline: None,
    };
    let start = Instant::now();
    let outcome = online::check(
        &checked.entries,
        None,
        &checked.config.policy,
        &options,
        Arc::new(Silent),
    )
    .unwrap();
    (start.elapsed(), outcome.diagnostics.len())
}

fn peak_rss_mib() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_string)
        })
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or("unknown".into(), |kb| {
            format!("{:.1} MiB", kb as f64 / 1024.0)
        })
}

fn main() {
    let (urls, hosts, delay) = (
        arg("--urls", 2000) as usize,
        arg("--hosts", 20),
        arg("--delay-ms", 50),
    );
    let servers: Vec<Server> = (1..=hosts)
        .map(|h| {
            let ip = format!("127.0.0.{h}").parse().unwrap();
            Server::start_on(ip, move |_: &net_server::Request, _| {
                Reply::status(200).after(Duration::from_millis(delay))
            })
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    write_registry(dir.path(), &servers, urls);
    let concurrent = NetConfig {
        allow_loopback: true,
        ..NetConfig::default()
    };
    let per_host = concurrent.per_host;
    let (fast, findings) = run(dir.path(), concurrent.clone());
    let max_busy = servers.iter().map(Server::max_busy).max().unwrap_or(0);
    let one_by_one = NetConfig {
        max_in_flight: 1,
        per_host: 1,
        ..concurrent
    };
    let (slow, slow_findings) = run(dir.path(), one_by_one);
    let requests: usize = servers.iter().map(|s| s.requests().len()).sum();
    println!(
        "{urls} archive URLs over {hosts} hosts, {delay} ms per answer, {requests} requests in all"
    );
    println!(
        "concurrent (global {}, per host {per_host}): {:.2} s, {findings} findings",
        NetConfig::default().max_in_flight,
        fast.as_secs_f64()
    );
    println!(
        "one by one: {:.2} s, {slow_findings} findings",
        slow.as_secs_f64()
    );
    println!("speed-up: {:.1}x", slow.as_secs_f64() / fast.as_secs_f64());
    println!(
        "most requests one host served at once (concurrent run): {max_busy} (limit {per_host})"
    );
    println!("peak memory (VmHWM): {}", peak_rss_mib());
    assert!(max_busy <= per_host, "the per-host limit was exceeded");
}
