//! `init` (docs/collab-protocol.md#init): argument validation in the published order, then the
//! collaboration files. Symlinks at any target are refused before anything
//! is written (docs/collab-protocol.md#links-refused).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::events::{append_line, format_event_line, AppendLock};
use super::model::{deliverable_spec, EVENTS_FILE, PROTOCOL_FILE};
use super::paths::{self, check_no_symlink};
use super::protocol::write_atomic;
use super::templates::{self, TemplateInput};
use super::time::utc_now;
use super::CollabError;

/// The `init` flags, as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct InitOptions {
    pub folder: String,
    pub participants: Vec<String>,
    pub objective: String,
    pub completion: Vec<String>,
    pub primary_type: String,
    pub primary_file: Option<String>,
    pub primary_checks: Vec<String>,
    pub deliverables_mode: String,
    pub deliverables_dir: String,
    pub repo_root: Option<String>,
    pub resume: bool,
}

/// What `init` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitOutcome {
    Initialized(PathBuf),
    /// `--resume` found an existing `protocol.json`; nothing was written.
    AlreadyExists(PathBuf),
}

impl InitOutcome {
    /// The stdout line for a new or a resumed folder (docs/collab-protocol.md#init).
    pub fn message(&self) -> String {
        match self {
            InitOutcome::Initialized(p) => {
                format!(
                    "Initialized ACP schema v2 collaboration folder: {}",
                    p.display()
                )
            }
            InitOutcome::AlreadyExists(p) => {
                format!("Collaboration folder already exists: {}", p.display())
            }
        }
    }
}

fn usage(msg: &str) -> CollabError {
    CollabError::Usage(msg.to_owned())
}

fn trimmed_nonblank(values: &[String]) -> Vec<String> {
    values
        .iter()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect()
}

/// Creates a collaboration folder (or acknowledges one with `--resume`).
pub fn init(opts: &InitOptions) -> Result<InitOutcome, CollabError> {
    let objective = opts.objective.trim();
    if objective.is_empty() {
        return Err(usage("--objective must not be blank"));
    }
    let mut participants: Vec<String> = Vec::new();
    for p in trimmed_nonblank(&opts.participants) {
        if !participants.contains(&p) {
            participants.push(p);
        }
    }
    if participants.len() < 2 {
        return Err(usage(
            "at least two non-blank --participant values are required",
        ));
    }
    let gates = trimmed_nonblank(&opts.completion);
    if gates.is_empty() {
        return Err(usage("at least one non-blank --completion is required"));
    }
    let kind = opts.primary_type.as_str();
    let Some((title, default_file, builtin_sections)) = deliverable_spec(kind) else {
        return Err(usage(&format!(
            "argument --primary-deliverable-type: invalid choice: '{kind}'"
        )));
    };
    let checks = trimmed_nonblank(&opts.primary_checks);
    if kind == "custom" && opts.primary_file.is_none() {
        return Err(usage(
            "custom deliverables require --primary-deliverable-file",
        ));
    }
    if kind == "custom" && checks.is_empty() {
        return Err(usage(
            "custom deliverables require at least one --primary-deliverable-check",
        ));
    }
    let file = opts
        .primary_file
        .clone()
        .or(default_file.map(str::to_owned))
        .unwrap_or_default();
    if !file.ends_with(".md") {
        return Err(usage("primary deliverable file must end with .md"));
    }
    if paths::escapes(&file) {
        return Err(usage(
            "primary deliverable file must be relative and must not contain ..",
        ));
    }
    let dir = opts.deliverables_dir.as_str();
    if paths::escapes(dir) {
        return Err(usage(
            "--deliverables-dir must be relative and must not contain ..",
        ));
    }
    let external = match opts.deliverables_mode.as_str() {
        "internal" => false,
        "external" => true,
        other => {
            return Err(usage(&format!(
                "argument --deliverables-mode: invalid choice: '{other}' (choose from 'internal', 'external')"
            )))
        }
    };
    match (&opts.repo_root, external) {
        (None, true) => {
            return Err(usage(
                "--repo-root is required when --deliverables-mode external",
            ))
        }
        (Some(root), true) if Path::new(root).is_absolute() || root.starts_with('/') => {
            return Err(usage(
                "--repo-root must be relative to the collaboration folder",
            ))
        }
        (Some(_), false) => {
            return Err(usage(
                "--repo-root is only allowed when --deliverables-mode external",
            ))
        }
        _ => {}
    }

    let folder = paths::resolve_folder(&opts.folder);
    if paths::exists_no_follow(&folder, PROTOCOL_FILE) {
        if opts.resume {
            return Ok(InitOutcome::AlreadyExists(folder));
        }
        return Err(usage(
            "collaboration folder already contains protocol.json; use --resume to acknowledge it",
        ));
    }
    if folder.exists() && !folder.is_dir() {
        return Err(CollabError::Protocol(format!(
            "{} exists and is not a directory; choose another --folder",
            folder.display()
        )));
    }

    let primary_ref = if external {
        format!("external:{file}")
    } else {
        paths::posix_join(dir, &file)
    };
    let sections: Vec<String> = if kind == "custom" {
        checks.clone()
    } else {
        builtin_sections.iter().map(|s| (*s).to_owned()).collect()
    };
    let generated = templates::generated_gates(kind, &primary_ref);
    let (deliverable_base, deliverable_rel) = if external {
        let root = opts.repo_root.as_deref().unwrap_or_default();
        let base = paths::resolve_lexically_with_links(&folder.join(root).join(dir));
        (base, file.clone())
    } else {
        (folder.clone(), paths::posix_join(dir, &file))
    };

    let t = TemplateInput {
        objective,
        participants: &participants,
        objective_gates: &gates,
        generated_gates: &generated,
        kind,
        primary_ref: &primary_ref,
        dir,
    };
    let files: [(&str, String); 6] = [
        ("README.md", templates::readme(&t)),
        ("proposal.md", templates::proposal(&t)),
        ("review.md", templates::review(&t)),
        ("decisions.md", templates::decisions(&t)),
        ("readiness.md", templates::readiness(&t)),
        ("conclusion.md", templates::conclusion(&t)),
    ];

    // Refuse symlinks before writing anything, so a refusal leaves no half-made folder.
    for name in [PROTOCOL_FILE, EVENTS_FILE] {
        check_no_symlink(&folder, name)?;
    }
    for (name, _) in &files {
        check_no_symlink(&folder, name)?;
    }
    check_no_symlink(&deliverable_base, &deliverable_rel)?;
    if !external {
        check_no_symlink(&folder, dir)?;
    }

    let mkdir = |p: &Path| {
        std::fs::create_dir_all(p)
            .map_err(|e| CollabError::Protocol(format!("cannot create {}: {e}", p.display())))
    };
    mkdir(&folder)?;
    let _lock = AppendLock::acquire(&folder)?;
    let now = utc_now();

    let mut completion_gates: Vec<Value> = gates
        .iter()
        .map(|g| json!({"source": "objective", "text": g}))
        .collect();
    completion_gates.extend(
        generated
            .iter()
            .map(|g| json!({"source": "generated", "text": g})),
    );
    let mut protocol = Map::new();
    protocol.insert("completionGates".into(), Value::Array(completion_gates));
    protocol.insert("createdAt".into(), json!(now));
    protocol.insert("currentPhase".into(), json!("drafting"));
    protocol.insert(
        "deliverables".into(),
        json!({
            "attachments": [],
            "coAuthors": [],
            "dir": dir,
            "mode": if external { "external" } else { "internal" },
            "owner": participants[0],
            "primary": {"checklist": checks, "file": file, "type": kind},
            "supporting": [],
        }),
    );
    protocol.insert("objective".into(), json!(objective));
    protocol.insert("objectiveGates".into(), json!(gates));
    protocol.insert(
        "participants".into(),
        Value::Array(participants.iter().map(|p| json!({"id": p})).collect()),
    );
    protocol.insert("proposalOwner".into(), json!(participants[0]));
    protocol.insert("protocol".into(), json!("acp"));
    if let Some(root) = opts.repo_root.as_deref().filter(|_| external) {
        protocol.insert("repoRoot".into(), json!(root));
    }
    protocol.insert("schemaVersion".into(), json!(2));
    protocol.insert("updatedAt".into(), json!(now));
    protocol.insert("waitingFor".into(), json!([participants[0]]));
    write_atomic(&folder, &protocol)?;

    let deliverable_path = deliverable_base.join(&deliverable_rel);
    write_file(
        &deliverable_path,
        &templates::deliverable(title, kind, &sections),
    )?;
    for (name, text) in &files {
        write_file(&folder.join(name), text)?;
    }

    let mut event = super::events::Event::default();
    event.insert("seq", json!(1));
    event.insert("from", json!(participants[0]));
    event.insert("event", json!("initialized"));
    event.insert("at", json!(now));
    event.insert(
        "summary",
        json!("Initialized ACP schema v2 collaboration workspace."),
    );
    event.insert("doc", json!("protocol.json"));
    // A stale log is appended to, never truncated (docs/collab-protocol.md#init).
    let stale_unterminated = paths::read_bytes(&folder, EVENTS_FILE)
        .is_ok_and(|b| b.is_some_and(|b| !b.is_empty() && !b.ends_with(b"\n")));
    append_line(&folder, &format_event_line(&event), stale_unterminated)?;
    Ok(InitOutcome::Initialized(folder))
}

fn write_file(path: &Path, text: &str) -> Result<(), CollabError> {
    let fail =
        |e: std::io::Error| CollabError::Protocol(format!("cannot write {}: {e}", path.display()));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    std::fs::write(path, text).map_err(fail)
}
