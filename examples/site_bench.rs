//! Benchmark of the catalogue site: `site::render` over N synthetic agents.
//!
//! ```text
//! cargo run --release --example site_bench -- [--agents N] [--runs R] [--out DIR]
//! ```
//!
//! Every agent has a README (about 1.5 KB of Markdown with headings, lists, code and links;
//! every fifth also has raw HTML, which goes through the HTML sanitiser),
//! an icon, tags, capabilities and auth methods; the distributions rotate through npx, uvx
//! and six-platform binaries, and every fifth agent has a preview channel. Generation is
//! deterministic and not timed. Prints one line per run and a summary (min, median, max)
//! of the wall time and of the CPU time (all threads) of `render` alone; with `--out`, also
//! the time to write every file. On a busy machine the CPU time is the steadier number.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use acp_registry::site::{self, SiteAgent, SiteClient, SiteOptions, SiteRetirement};
use serde_json::{json, Map, Value};

const ICON: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><path d="M2 8a6 6 0 1 0 12 0A6 6 0 0 0 2 8z" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M5 8h6" stroke="currentColor" stroke-width="1.5" stroke-linecap="round"/></svg>"#;

const WORDS: [&str; 24] = [
    "agent",
    "code",
    "review",
    "terminal",
    "refactor",
    "tests",
    "model",
    "local",
    "cloud",
    "planner",
    "editor",
    "shell",
    "python",
    "rust",
    "typescript",
    "go",
    "search",
    "docs",
    "fast",
    "secure",
    "team",
    "open",
    "reasoning",
    "tools",
];

const CAPABILITIES: [&str; 10] = [
    "session/new",
    "session/prompt",
    "session/cancel",
    "session/load",
    "session/set_mode",
    "session/set_config_option",
    "session/list",
    "terminal/create",
    "fs/read_text_file",
    "fs/write_text_file",
];

const LICENSES: [&str; 3] = ["MIT", "Apache-2.0", "proprietary"];

const PLATFORMS: [&str; 6] = [
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

/// A small deterministic generator (64-bit LCG).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
    fn word(&mut self) -> &'static str {
        WORDS[self.next() % WORDS.len()]
    }
}

fn readme(name: &str, raw_html: bool, rng: &mut Rng) -> String {
    let mut text = format!(
        "# {name}\n\n{name} is a {} {} agent that helps with {} and {}. It speaks ACP over stdio.\n\n",
        rng.word(),
        rng.word(),
        rng.word(),
        rng.word()
    );
    text.push_str("## Features\n\n");
    for _ in 0..6 {
        text.push_str(&format!(
            "- **{}** {}: works with `{}` and [{}](https://example.com/{}).\n",
            rng.word(),
            rng.word(),
            rng.word(),
            rng.word(),
            rng.word()
        ));
    }
    text.push_str("\n## Signing in\n\nSet an API key before starting the editor:\n\n```sh\nexport AGENT_API_KEY=\"your-key\"\n```\n\n");
    text.push_str(
        "| option | meaning |\n|---|---|\n| `--acp` | speak ACP |\n| `--verbose` | log more |\n\n",
    );
    text.push_str(
        "> Note: previews may change without notice.\n\nSource: <https://example.com/source>\n",
    );
    if raw_html {
        // Raw HTML takes the sanitiser (ammonia) path.
        text.push_str("\n<details><summary>More</summary>\n\n<p align=\"center\"><img src=\"https://example.com/logo.png\" alt=\"logo\"></p>\n\n</details>\n");
    }
    text
}

fn distribution(id: &str, version: &str, kind: usize) -> Value {
    match kind {
        0 => json!({"npx": {"package": format!("@example/{id}@{version}"), "args": ["--acp"]}}),
        1 => {
            json!({"uvx": {"package": format!("{id}-acp=={version}"), "args": ["acp"], "env": {"AGENT_MODE": "acp"}}})
        }
        _ => {
            let mut binary = Map::new();
            for platform in PLATFORMS {
                let ext = if platform.starts_with("windows") {
                    "zip"
                } else {
                    "tar.gz"
                };
                let cmd = if platform.starts_with("windows") {
                    format!("./{id}.exe")
                } else {
                    format!("./{id}")
                };
                binary.insert(
                    platform.to_string(),
                    json!({
                        "archive": format!("https://example.com/{id}/releases/download/v{version}/{id}-{platform}.{ext}"),
                        "cmd": cmd,
                        "args": ["acp"],
                        "sha256": "0123456789abcdef".repeat(4),
                    }),
                );
            }
            json!({ "binary": binary })
        }
    }
}

fn agents(count: usize) -> Vec<SiteAgent> {
    let mut rng = Rng(0x5eed);
    (0..count)
        .map(|i| {
            let id = format!("agent-{i:05}");
            let name = format!("{} {} {i}", rng.word(), rng.word());
            let version = format!("{}.{}.{}", 1 + i % 3, i % 17, i % 5);
            let tags: Vec<String> = (0..5).map(|k| format!("{}-{}", rng.word(), (i + k) % 12)).collect();
            let capabilities: Vec<&str> = CAPABILITIES.iter().copied().filter(|_| rng.next().is_multiple_of(2)).collect();
            let kind = i % 3;
            let mut agent: Map<String, Value> = serde_json::from_value(json!({
                "id": id,
                "name": name,
                "version": version,
                "description": format!("A {} {} agent for {} {} work in {} projects.", rng.word(), rng.word(), rng.word(), rng.word(), rng.word()),
                "repository": format!("https://github.com/example/{id}"),
                "website": format!("https://{id}.example.com"),
                "authors": ["Example Team"],
                "license": LICENSES[i % 3],
                "license_url": format!("https://github.com/example/{id}/blob/main/LICENSE"),
                "icon": format!("https://cdn.example.com/registry/v1/latest/{id}.svg"),
                "capabilities": capabilities,
                "auth": [
                    {"type": "agent", "id": "login", "name": "Log in", "description": "Signs in through the browser."},
                    {"type": "env_var", "id": "api-key", "name": "API key", "vars": ["AGENT_API_KEY"]}
                ],
                "tags": tags,
                "protocol_version": 1,
                "distribution": distribution(&id, &version, kind),
            }))
            .unwrap();
            let preview = (i % 5 == 0).then(|| {
                let mut preview = agent.clone();
                let next = format!("{}.{}.0-preview.1", 1 + i % 3, i % 17 + 1);
                preview.insert("distribution".into(), distribution(&id, &next, kind));
                preview.insert("version".into(), json!(next));
                preview
            });
            agent.insert("bundled".into(), json!(i % 7 == 0));
            SiteAgent {
                readme: Some(readme(&name, i % 5 == 0, &mut rng)),
                icons: BTreeMap::from([("icon.svg".to_string(), ICON.as_bytes().to_vec())]),
                quarantine: (i % 97 == 0).then(|| "Launch fails with the published package.".to_string()),
                id,
                agent,
                preview,
                verification: None,
                retirement: i.is_multiple_of(89).then(|| SiteRetirement {
                    status: "deprecated".into(),
                    reason: "Renamed; the new entry ships the same agent.".into(),
                    since: "2026-11-01".into(),
                    replacement: Some(format!("agent-{:05}", i + 1)),
                    replacement_on_site: true,
                }),
                clients: clients(i, kind),
            }
        })
        .collect()
}

/// Verdicts of three clients, as a build of such an agent would give them: uvx-only agents do
/// not install in the first client, every 11th agent only partly in the second.
fn clients(i: usize, kind: usize) -> Vec<SiteClient> {
    let verdict = |id: &str, name: &str, installs: &str, why: &[&str]| SiteClient {
        id: id.into(),
        name: name.into(),
        installs: installs.into(),
        why: why.iter().map(|w| (*w).to_string()).collect(),
    };
    let acpr = if i.is_multiple_of(11) {
        verdict(
            "acpr",
            "acpr",
            "partly",
            &["acpr cannot unpack .tar.bz2 (linux-x86_64)"],
        )
    } else {
        verdict("acpr", "acpr", "yes", &[])
    };
    let zed = if kind == 1 {
        verdict(
            "zed",
            "Zed",
            "no",
            &["Zed does not install uvx packages, and the entry offers nothing else"],
        )
    } else {
        verdict("zed", "Zed", "yes", &[])
    };
    vec![
        acpr,
        verdict("jetbrains", "JetBrains IDEs", "yes", &[]),
        zed,
    ]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// CPU time (user + system) of the whole process so far, all threads.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn main() {
    let mut count = 10_000;
    let mut runs = 5;
    let mut out: Option<std::path::PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--agents" => {
                count = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--agents N");
            }
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs R"),
            "--out" => out = args.next().map(Into::into),
            other => {
                eprintln!("unknown argument {other}; usage: site_bench [--agents N] [--runs R] [--out DIR]");
                std::process::exit(2);
            }
        }
    }
    let agents = agents(count);
    let options = SiteOptions {
        title: "ACP Agent Registry".into(),
        registry_json_url: Some("https://cdn.example/registry/v1/latest/registry.json".into()),
        lifecycle_json_url: Some("https://cdn.example/registry/v1/latest/lifecycle.json".into()),
        ..SiteOptions::default()
    };
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let mut files = BTreeMap::new();
    for run in 1..=runs.max(1) {
        drop(std::mem::take(&mut files));
        let cpu_before = cpu_time();
        let started = Instant::now();
        files = site::render(&agents, &[], &options).expect("render");
        let elapsed = started.elapsed();
        let used = cpu_time() - cpu_before;
        println!(
            "run {run}: render {count} agents in {:.1} ms wall, {:.1} ms CPU",
            ms(elapsed),
            ms(used)
        );
        times.push(elapsed);
        cpu.push(used);
    }
    times.sort();
    cpu.sort();
    let bytes: usize = files.values().map(Vec::len).sum();
    println!(
        "render ({count} agents, {} files, {:.1} MiB): min {:.1} ms, median {:.1} ms, max {:.1} ms over {} runs",
        files.len(),
        bytes as f64 / (1024.0 * 1024.0),
        ms(times[0]),
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1]),
        times.len()
    );
    println!(
        "render CPU time (user + system, all threads): min {:.1} ms, median {:.1} ms, max {:.1} ms",
        ms(cpu[0]),
        ms(cpu[cpu.len() / 2]),
        ms(cpu[cpu.len() - 1])
    );
    if let Some(dir) = out {
        let started = Instant::now();
        for (path, bytes) in &files {
            let target = dir.join(path);
            std::fs::create_dir_all(target.parent().unwrap()).expect("create folder");
            std::fs::write(&target, bytes).expect("write file");
        }
        println!(
            "write {} files to {}: {:.1} ms",
            files.len(),
            dir.display(),
            ms(started.elapsed())
        );
    }
}
