//! Generates a completed, valid collaboration with a given number of events
//! (default 10,000) for the `acp-collab validate` benchmark.
//!
//! Usage: `cargo run --release --example gen_collab -- <folder> [events]`
//!
//! `gen_collab --decode <events.jsonl>` is the benchmark's reference instead: it only reads
//! the log and decodes each line into a `serde_json::Value`, the floor under `validate`.
//!
//! The bulk of the log is supporting-deliverable drafts (legal in any
//! phase), written directly; the normal path's ten events are then appended
//! through the library, so the folder ends `completed` and validates.

use acp_collab::{self as collab, format_event_line, AppendOptions, Event, InitOptions};
use acp_registry_core::fs::digest::sha256_hex;
use serde_json::json;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let folder = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: gen_collab <folder> [events] | --decode <file>"))?;
    if folder == "--decode" {
        let file = args
            .next()
            .ok_or_else(|| anyhow::anyhow!("--decode needs a file"))?;
        return decode(&file);
    }
    let total: usize = args
        .next()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(10_000);
    anyhow::ensure!(total >= FLOW, "at least {FLOW} events");
    let dir = init(&folder)?;
    write_bulk(&dir, total)?;
    append_flow(&folder, &dir, total)?;
    println!("{}", dir.display());
    Ok(())
}

/// `initialized` plus the ten events of the normal path.
const FLOW: usize = 11;

/// The reference: every line decoded into a JSON value, nothing checked.
fn decode(file: &str) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file)?;
    let mut objects = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(line)?;
        objects += usize::from(value.is_object());
    }
    println!("{objects} objects");
    Ok(())
}

/// A design-spec collaboration with one supporting deliverable, `notes.md`.
fn init(folder: &str) -> anyhow::Result<std::path::PathBuf> {
    let outcome = collab::init(&InitOptions {
        folder: folder.to_owned(),
        participants: vec!["server".into(), "reader".into()],
        objective: "Benchmark the validator".into(),
        completion: vec!["Gate A".into()],
        primary_type: "design-spec".into(),
        deliverables_mode: "internal".into(),
        deliverables_dir: "deliverables".into(),
        ..InitOptions::default()
    })?;
    let dir = match outcome {
        collab::InitOutcome::Initialized(p) => p,
        collab::InitOutcome::AlreadyExists(p) => anyhow::bail!("{} already exists", p.display()),
    };
    let path = |rel: &str| dir.join(rel);
    let mut protocol: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path("protocol.json"))?)?;
    protocol["deliverables"]["supporting"] = json!([{"type": "custom", "file": "notes.md"}]);
    std::fs::write(
        path("protocol.json"),
        serde_json::to_string_pretty(&protocol)?,
    )?;
    std::fs::write(path("deliverables/notes.md"), "# Notes\nStatus: Draft\n")?;
    Ok(dir)
}

/// The bulk of the log: supporting-deliverable drafts, written directly.
fn write_bulk(dir: &std::path::Path, total: usize) -> anyhow::Result<()> {
    let path = |rel: &str| dir.join(rel);
    let first: Event = serde_json::from_str(std::fs::read_to_string(path("events.jsonl"))?.trim())?;
    let mut bulk = String::new();
    for seq in 2..=(total - FLOW + 1) {
        let event = json!({
            "seq": seq, "from": if seq.is_multiple_of(2) { "server" } else { "reader" },
            "event": "deliverable_drafted", "at": first.get("at").cloned(), "summary": format!("notes draft {seq}"),
            "doc": "deliverables/notes.md", "reply_to": seq - 1, "role": "supporting",
        });
        bulk.push_str(&format_event_line(&Event::from(
            event.as_object().expect("object").clone(),
        )));
    }
    std::fs::OpenOptions::new()
        .append(true)
        .open(path("events.jsonl"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, bulk.as_bytes()))?;
    Ok(())
}

/// The normal path's ten events, through the library, so the folder ends `completed`.
fn append_flow(folder: &str, dir: &std::path::Path, total: usize) -> anyhow::Result<()> {
    let path = |rel: &str| dir.join(rel);
    let edit = |rel: &str, f: &dyn Fn(String) -> String| -> anyhow::Result<()> {
        let text = std::fs::read_to_string(path(rel))?;
        std::fs::write(path(rel), f(text))?;
        Ok(())
    };
    let mut last = (total - FLOW + 1) as i64;
    let mut append = |who: &str, event: &str, extra: &[(&str, &str)]| -> anyhow::Result<()> {
        let mut opts = AppendOptions {
            folder: folder.to_owned(),
            participant: who.into(),
            event: event.into(),
            summary: format!("{event} by {who}"),
            reply_to: Some(last),
            ..AppendOptions::default()
        };
        for (k, v) in extra {
            match *k {
                "doc" => opts.doc = Some((*v).into()),
                "role" => opts.role = Some((*v).into()),
                _ => opts.sha256 = Some((*v).into()),
            }
        }
        last = collab::append(&opts)?.seq;
        Ok(())
    };
    let spec = "deliverables/design-spec.md";
    append(
        "server",
        "deliverable_drafted",
        &[("doc", spec), ("role", "primary")],
    )?;
    append("server", "proposal_submitted", &[])?;
    edit("review.md", &|t| {
        format!(
            "{t}\n## 2026-11-30T00:00:00Z - reader - seq {}\n",
            total - 7
        )
    })?;
    append("reader", "review_submitted", &[])?;
    append("server", "proposal_revised", &[])?;
    edit("readiness.md", &|t| {
        t.replace("- [unresolved]", "- [resolved]")
    })?;
    append("server", "question_classified", &[])?;
    append("reader", "decision_accepted", &[])?;
    append("server", "decision_accepted", &[])?;
    edit(spec, &|t| {
        t.replace("Status: Draft", "Status: Frozen")
            .replace("\n\n\n\n", "\n\nWritten.\n\n")
            .replace("Open Questions\n\n\n", "Open Questions\n\nNone.\n")
    })?;
    let sha = sha256_hex(&std::fs::read(path(spec))?);
    append(
        "server",
        "deliverable_frozen",
        &[("doc", spec), ("role", "primary"), ("sha256", &sha)],
    )?;
    edit("readiness.md", &|t| t.replace("- [ ]", "- [x]"))?;
    append("server", "readiness_passed", &[])?;
    edit("conclusion.md", &|t| {
        t.replace("- [blocked]", "- [proceed]")
    })?;
    append("server", "completed", &[("doc", "conclusion.md")])
}
