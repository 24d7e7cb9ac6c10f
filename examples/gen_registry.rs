//! Synthetic registry generator for benchmarks: `cargo run --release --example gen_registry --
//! <out-dir> <entries>`. Entries rotate through npx, uvx and six-platform binary distributions,
//! with RFD fields, a preview block on every tenth and a README on every fifth, so every rule
//! family does real work. Output is deterministic for a given count.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const ICON: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">
  <circle cx="8" cy="8" r="6" fill="none" stroke="currentColor" stroke-width="1.5"/>
  <path d="M5 8h6M8 5v6" stroke="currentColor" stroke-width="1.5"/>
</svg>
"#;

const PLATFORMS: [(&str, &str); 6] = [
    ("darwin-aarch64", "aarch64-apple-darwin.tar.gz"),
    ("darwin-x86_64", "x86_64-apple-darwin.tar.gz"),
    ("linux-aarch64", "aarch64-unknown-linux-gnu.tar.gz"),
    ("linux-x86_64", "x86_64-unknown-linux-gnu.tar.gz"),
    ("windows-aarch64", "aarch64-pc-windows-msvc.zip"),
    ("windows-x86_64", "x86_64-pc-windows-msvc.zip"),
];

fn manifest(i: usize) -> String {
    let id = format!("agent-{i:05}");
    let version = format!("{}.{}.{}", i % 7 + 1, i % 13, i % 29);
    let distribution = match i % 3 {
        0 => format!(r#"{{ "npx": {{ "package": "@bench/{id}@{version}", "args": ["--acp"] }} }}"#),
        1 => format!(r#"{{ "uvx": {{ "package": "{id}=={version}", "args": ["acp"] }} }}"#),
        _ => {
            let mut targets = String::new();
            for (n, (platform, suffix)) in PLATFORMS.iter().enumerate() {
                let exe = if platform.starts_with("windows") {
                    ".exe"
                } else {
                    ""
                };
                let _ = write!(
                    targets,
                    r#"{}"{platform}": {{ "archive": "https://github.com/bench/{id}/releases/download/v{version}/{id}-{suffix}", "cmd": "./{id}{exe}", "args": ["acp"], "sha256": "{:064x}" }}"#,
                    if n == 0 { "" } else { ",\n      " },
                    i * 6 + n
                );
            }
            format!("{{ \"binary\": {{\n      {targets}\n    }} }}")
        }
    };
    let preview = if i.is_multiple_of(10) {
        let (major, minor, patch) = (i % 7 + 1, i % 13, i % 29 + 1);
        format!(
            r#",
  "preview": {{ "version": "{major}.{minor}.{patch}-preview.1", "distribution": {{ "npx": {{ "package": "@bench/{id}@{major}.{minor}.{patch}-preview.1" }} }} }}"#
        )
    } else {
        String::new()
    };
    format!(
        r#"{{
  // synthetic entry {i}
  "id": "{id}",
  "name": "Bench Agent {i}",
  "version": "{version}",
  "description": "Synthetic agent number {i} for benchmarks.",
  "repository": "https://github.com/bench/{id}",
  "website": "https://bench.example.com/{id}",
  "authors": ["Bench Team"],
  "license": "{license}",
  "license_url": "https://github.com/bench/{id}/blob/main/LICENSE",
  "capabilities": ["session/load", "session/set_mode", "fs/read_text_file"],
  "auth": [{{ "type": "agent", "id": "login", "name": "Log in" }}],
  "tags": ["bench", "group-{group}"],
  "protocol_version": 1,
  "distribution": {distribution}{preview}
}}
"#,
        license = ["MIT", "Apache-2.0", "MIT OR Apache-2.0", "proprietary"][i % 4],
        group = i % 50,
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(
        args.next()
            .expect("usage: gen_registry <out-dir> <entries>"),
    );
    let count: usize = args
        .next()
        .expect("usage: gen_registry <out-dir> <entries>")
        .parse()
        .expect("entries must be a number");
    generate(&out, count);
    eprintln!("generated {count} entries in {}", out.display());
}

/// Write the registry of `count` entries at `out` (also used by the tests that pin the
/// published bytes, `tests/registry/golden.rs`).
pub(crate) fn generate(out: &Path, count: usize) {
    std::fs::create_dir_all(out).expect("create output folder");
    for i in 0..count {
        let dir = out.join(format!("agent-{i:05}"));
        std::fs::create_dir_all(&dir).expect("create entry folder");
        std::fs::write(dir.join("agent.json"), manifest(i)).expect("write manifest");
        std::fs::write(dir.join("icon.svg"), ICON).expect("write icon");
        if i.is_multiple_of(5) {
            std::fs::write(
                dir.join("README.md"),
                format!("# Bench Agent {i}\n\nA synthetic agent.\n\n```sh\nbench-agent acp\n```\n"),
            )
            .expect("write readme");
        }
    }
    std::fs::write(out.join("quarantine.json"), "{}\n").expect("write quarantine");
}
