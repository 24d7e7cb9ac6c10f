//! `init` (docs/collab-protocol.md#init): argument validation in the published order, then the
//! collaboration files. Symlinks at any target are refused before anything
//! is written (docs/collab-protocol.md#links-refused).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::error::CollabError;
use crate::events::{append_line, format_event_line, AppendLock};
use crate::guide::{self, Invocation};
use crate::paths::{self, check_no_symlink};
use crate::protocol::write_atomic;
use crate::spec::{deliverable_spec, EVENTS_FILE, PROTOCOL_FILE};
use crate::templates::{self, TemplateInput};
use acp_registry_core::time::utc_now;

/// The `init` flags, as given on the command line: the library's options and the binary's
/// arguments at once (the doc comments are the `--help` texts).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct InitOptions {
    /// The collaboration folder (created if missing)
    #[arg(long)]
    pub folder: String,
    /// A participant id; the first one is the proposal owner (repeatable)
    #[arg(
        id = "participant",
        long = "participant",
        value_name = "PARTICIPANT",
        required = true
    )]
    pub participants: Vec<String>,
    /// The objective
    #[arg(long)]
    pub objective: String,
    /// An objective completion gate (repeatable)
    #[arg(long, required = true)]
    pub completion: Vec<String>,
    /// The primary deliverable type
    #[arg(
        id = "primary_deliverable_type",
        long = "primary-deliverable-type",
        value_name = "PRIMARY_DELIVERABLE_TYPE",
        value_parser = crate::spec::DELIVERABLE_TYPES
    )]
    pub primary_type: String,
    /// The primary deliverable file, relative to the deliverables directory
    #[arg(
        id = "primary_deliverable_file",
        long = "primary-deliverable-file",
        value_name = "PRIMARY_DELIVERABLE_FILE"
    )]
    pub primary_file: Option<String>,
    /// A required section of a custom deliverable (repeatable)
    #[arg(
        id = "primary_deliverable_check",
        long = "primary-deliverable-check",
        value_name = "PRIMARY_DELIVERABLE_CHECK"
    )]
    pub primary_checks: Vec<String>,
    /// Where deliverables live
    #[arg(long, default_value = "internal", value_parser = ["internal", "external"])]
    pub deliverables_mode: String,
    /// The deliverables directory
    #[arg(long, default_value = "deliverables")]
    pub deliverables_dir: String,
    /// The repository root, relative to the folder (external mode only)
    #[arg(long)]
    pub repo_root: Option<String>,
    /// Accept an existing collaboration folder without changing it
    #[arg(long)]
    pub resume: bool,
}

/// What `init` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitOutcome {
    /// A new folder was written.
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

impl InitOutcome {
    /// The folder written or found.
    pub fn folder(&self) -> &Path {
        match self {
            InitOutcome::Initialized(p) | InitOutcome::AlreadyExists(p) => p,
        }
    }

    /// The first command of each participant, in declaration order: the proposal owner's
    /// `next` (it drafts first), everyone else's `wait`. A resumed folder gets `next` for all.
    pub fn first_commands(&self, invocation: &Invocation) -> Result<Vec<String>, CollabError> {
        let protocol = crate::protocol::load_or_fail(self.folder())?;
        let owner = protocol
            .map
            .get("proposalOwner")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        let phase = protocol.map.get("currentPhase").and_then(Value::as_str);
        let waiting: Vec<String> = protocol
            .map
            .get("waitingFor")
            .and_then(Value::as_array)
            .map(|ids| {
                ids.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let folder = self.folder();
        Ok(protocol
            .participants()
            .iter()
            .map(|p| {
                let is_owner = owner.as_deref() == Some(p.as_str());
                let first = guide::turn_command(invocation, folder, p, phase, &waiting);
                match self {
                    InitOutcome::Initialized(_) if is_owner => {
                        format!("{p} (proposal owner) first runs: {first}")
                    }
                    InitOutcome::Initialized(_) => format!("{p} first runs: {first}"),
                    InitOutcome::AlreadyExists(_) => {
                        format!("{p} runs: {}", guide::next_command(invocation, folder, p))
                    }
                }
            })
            .collect())
    }

    /// The message and, one line each, every participant's first command (none when the
    /// resumed folder's `protocol.json` does not load: `next` then says why).
    pub fn report(&self, invocation: &Invocation) -> String {
        let mut out = self.message();
        for line in self.first_commands(invocation).unwrap_or_default() {
            out.push('\n');
            out.push_str(&line);
        }
        out.push('\n');
        out
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

/// The arguments after validation, in the published order.
struct Checked<'a> {
    objective: &'a str,
    participants: Vec<String>,
    gates: Vec<String>,
    kind: &'a str,
    title: &'static str,
    sections: Vec<String>,
    checks: Vec<String>,
    file: String,
    dir: &'a str,
    external: bool,
}

/// Creates a collaboration folder (or acknowledges one with `--resume`).
pub fn init(opts: &InitOptions) -> Result<InitOutcome, CollabError> {
    let args = check_arguments(opts)?;
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
        return Err(CollabError::NotAFolder(folder));
    }
    write_folder(opts, &args, folder)
}

/// Every argument check, in the published order; the first failure is the usage error.
fn check_arguments(opts: &InitOptions) -> Result<Checked<'_>, CollabError> {
    let objective = opts.objective.trim();
    if objective.is_empty() {
        return Err(usage("--objective must not be blank"));
    }
    let participants = check_participants(&opts.participants)?;
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
    let file = check_primary_file(opts, kind, &checks, default_file)?;
    let dir = opts.deliverables_dir.as_str();
    if paths::escapes(dir) {
        return Err(usage(
            "--deliverables-dir must be relative and must not contain ..",
        ));
    }
    let external = check_mode(opts)?;
    let sections = if kind == "custom" {
        checks.clone()
    } else {
        builtin_sections.iter().map(|s| (*s).to_owned()).collect()
    };
    Ok(Checked {
        objective,
        participants,
        gates,
        kind,
        title,
        sections,
        checks,
        file,
        dir,
        external,
    })
}

/// The participants trimmed, blanks and repeats dropped; at least two.
fn check_participants(values: &[String]) -> Result<Vec<String>, CollabError> {
    let mut participants: Vec<String> = Vec::new();
    for p in trimmed_nonblank(values) {
        if !participants.contains(&p) {
            participants.push(p);
        }
    }
    if participants.len() < 2 {
        return Err(usage(
            "at least two non-blank --participant values are required",
        ));
    }
    Ok(participants)
}

/// The primary deliverable file: given, or the type's default; Markdown, relative.
fn check_primary_file(
    opts: &InitOptions,
    kind: &str,
    checks: &[String],
    default_file: Option<&str>,
) -> Result<String, CollabError> {
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
    Ok(file)
}

/// Whether deliverables are external, checked against `--repo-root`.
fn check_mode(opts: &InitOptions) -> Result<bool, CollabError> {
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
        (None, true) => Err(usage(
            "--repo-root is required when --deliverables-mode external",
        )),
        (Some(root), true) if Path::new(root).is_absolute() || root.starts_with('/') => Err(usage(
            "--repo-root must be relative to the collaboration folder",
        )),
        (Some(_), false) => Err(usage(
            "--repo-root is only allowed when --deliverables-mode external",
        )),
        _ => Ok(external),
    }
}

/// Writes `protocol.json`, the deliverable, the Markdown files and the first event, after
/// refusing every symlink among them.
fn write_folder(
    opts: &InitOptions,
    args: &Checked,
    folder: PathBuf,
) -> Result<InitOutcome, CollabError> {
    let (dir, file) = (args.dir, &args.file);
    let primary_ref = if args.external {
        format!("external:{file}")
    } else {
        paths::posix_join(dir, file)
    };
    let generated = templates::generated_gates(args.kind, &primary_ref);
    let (deliverable_base, deliverable_rel) = if args.external {
        let root = opts.repo_root.as_deref().unwrap_or_default();
        let base = paths::resolve_lexically_with_links(&folder.join(root).join(dir));
        (base, file.clone())
    } else {
        (folder.clone(), paths::posix_join(dir, file))
    };
    let t = TemplateInput {
        objective: args.objective,
        participants: &args.participants,
        objective_gates: &args.gates,
        generated_gates: &generated,
        kind: args.kind,
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
    if !args.external {
        check_no_symlink(&folder, dir)?;
    }
    std::fs::create_dir_all(&folder).map_err(|source| CollabError::Create {
        path: folder.clone(),
        source,
    })?;
    let _lock = AppendLock::acquire(&folder)?;
    let now = utc_now();
    write_atomic(&folder, &protocol_map(opts, args, &generated, &now))?;
    write_file(
        &deliverable_base,
        &deliverable_rel,
        &templates::deliverable(args.title, args.kind, &args.sections),
    )?;
    for (name, text) in &files {
        write_file(&folder, name, text)?;
    }
    append_initialized(&folder, &args.participants[0], &now)?;
    Ok(InitOutcome::Initialized(folder))
}

/// The new `protocol.json` (keys sorted as the published script writes them).
fn protocol_map(
    opts: &InitOptions,
    args: &Checked,
    generated: &[String],
    now: &str,
) -> Map<String, Value> {
    let owner = &args.participants[0];
    let mut completion_gates: Vec<Value> = args
        .gates
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
            "dir": args.dir,
            "mode": if args.external { "external" } else { "internal" },
            "owner": owner,
            "primary": {"checklist": args.checks, "file": args.file, "type": args.kind},
            "supporting": [],
        }),
    );
    protocol.insert("objective".into(), json!(args.objective));
    protocol.insert("objectiveGates".into(), json!(args.gates));
    protocol.insert(
        "participants".into(),
        Value::Array(args.participants.iter().map(|p| json!({"id": p})).collect()),
    );
    protocol.insert("proposalOwner".into(), json!(owner));
    protocol.insert("protocol".into(), json!("acp"));
    if let Some(root) = opts.repo_root.as_deref().filter(|_| args.external) {
        protocol.insert("repoRoot".into(), json!(root));
    }
    protocol.insert("schemaVersion".into(), json!(2));
    protocol.insert("updatedAt".into(), json!(now));
    protocol.insert("waitingFor".into(), json!([owner]));
    protocol
}

/// Appends the `initialized` event. A stale log is appended to, never truncated
/// (docs/collab-protocol.md#init).
fn append_initialized(folder: &Path, owner: &str, now: &str) -> Result<(), CollabError> {
    let mut event = crate::events::Event::default();
    event.insert("seq", json!(1));
    event.insert("from", json!(owner));
    event.insert("event", json!("initialized"));
    event.insert("at", json!(now));
    event.insert(
        "summary",
        json!("Initialized ACP schema v2 collaboration workspace."),
    );
    event.insert("doc", json!("protocol.json"));
    let stale_unterminated = paths::read_bytes(folder, EVENTS_FILE)
        .is_ok_and(|b| b.is_some_and(|b| !b.is_empty() && !b.ends_with(b"\n")));
    append_line(folder, &format_event_line(&event), stale_unterminated)
}

/// Writes `base/rel` whole through the core's safe writer: `base` and the folders below it
/// created, and the file written atomically, never through a link below `base` (one that
/// appeared after the checks above is refused as they refuse it).
fn write_file(base: &Path, rel: &str, text: &str) -> Result<(), CollabError> {
    let path = base.join(rel);
    // `base` (the folder, or the external deliverables directory with its links resolved)
    // may not exist yet; only what lies below it is checked for links.
    std::fs::create_dir_all(base).map_err(|source| CollabError::Create {
        path: base.to_path_buf(),
        source,
    })?;
    acp_registry_core::fs::write_below(base, Path::new(rel), text.as_bytes()).map_err(|e| match e {
        acp_registry_core::fs::ReadError::Link { rel } => {
            paths::ReadError::Symlink(paths::symlink_message(&base.join(rel))).into()
        }
        e => CollabError::Write {
            path,
            source: e.into(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::{spec, templates};

    #[test]
    fn the_generated_snapshot_gate_is_the_one_append_and_validate_read() {
        let gates = templates::generated_gates("adr", "deliverables/adr.md");
        assert_eq!(gates.last().map(String::as_str), Some(spec::SNAPSHOT_GATE));
    }
}
