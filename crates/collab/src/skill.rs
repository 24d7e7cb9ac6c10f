//! `skill install`, `skill uninstall` and `skill list` (docs/collab-protocol.md#skill-install):
//! the bundled skill copied where agents read skills, with its launchers pointing at this
//! `acp-collab`.
//!
//! The skill is compiled in from the registry entry's `skill/` folder, so any copy of the
//! binary can install it. An installed copy carries `.acp-collab-skill.json` (every file with
//! its sha256, the engine's version and path): a folder is replaced or removed only when it is
//! exactly what an install recorded, or, for a hand-edited install of ours, with `--force`; a
//! folder without that record is never touched.
//!
//! [`CLIENTS`] is the one table of which folders each client scans; installs, the visibility
//! report, the shadowing warnings and `skill list` all read it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::CollabError;
use crate::fs::digest::sha256_hex;
use crate::fs::Kind;

/// The skill's name as stored in the registry.
pub const NAME: &str = "agent-collaboration-protocol";
/// The record of an install, inside the installed folder.
pub const MARKER: &str = ".acp-collab-skill.json";
/// Where the launchers read the installed binary's path.
pub const POINTER: &str = "scripts/acp-collab-path.txt";
/// The engine version an install records.
pub(crate) const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The name of the installed skill folder, in every skills folder: the one place install,
/// uninstall, list and the shadowing checks take it from.
pub(crate) fn folder_name() -> &'static str {
    NAME
}

macro_rules! skill_files {
    ($($path:literal),* $(,)?) => {
        /// The skill's files (path below `skill/<name>/`, bytes), as compiled in.
        pub const FILES: &[(&str, &[u8])] = &[$((
            $path,
            include_bytes!(concat!("../skill/agent-collaboration-protocol/", $path)),
        )),*];
    };
}

skill_files!(
    "SKILL.md",
    "references/commands.md",
    "references/file-formats.md",
    "scripts/_acp_collab.py",
    "scripts/append_event.py",
    "scripts/init_collaboration.py",
    "scripts/next_action.py",
    "scripts/validate_collaboration.py",
    "scripts/wait_for_turn.py",
);

/// A client that reads Agent Skills, and the skills folders it scans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Client {
    /// How the client is called.
    pub title: &'static str,
    /// The skills folders it scans in a project, relative to the project.
    pub project: &'static [&'static str],
    /// The skills folders it scans for the user, relative to the home folder.
    pub user: &'static [&'static str],
}

/// The clients whose skill folders are known, by title.
pub(crate) const CLIENTS: &[Client] = &[
    Client {
        title: "Claude Code",
        project: &[".claude/skills"],
        user: &[".claude/skills"],
    },
    Client {
        title: "Codex",
        project: &[".agents/skills"],
        user: &[".agents/skills"],
    },
    Client {
        title: "Cursor",
        project: &[".agents/skills", ".cursor/skills", ".claude/skills"],
        user: &[".agents/skills", ".cursor/skills", ".claude/skills"],
    },
    Client {
        title: "Gemini CLI",
        project: &[".agents/skills", ".gemini/skills"],
        user: &[".agents/skills", ".gemini/skills"],
    },
    Client {
        title: "GitHub Copilot",
        project: &[".github/skills", ".claude/skills", ".agents/skills"],
        user: &[".copilot/skills", ".claude/skills", ".agents/skills"],
    },
    Client {
        title: "OpenCode",
        project: &[".opencode/skills", ".claude/skills", ".agents/skills"],
        user: &[
            ".config/opencode/skills",
            ".claude/skills",
            ".agents/skills",
        ],
    },
];

/// An `--agent`: the skills folders an install writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agent {
    /// The agent's name (`--agent`).
    pub name: &'static str,
    /// The user's skills folders, relative to the home folder.
    pub user: &'static [&'static str],
    /// A project's skills folders, relative to the project.
    pub project: &'static [&'static str],
}

/// The default `--agent`: the two folders every known client reads one of.
pub(crate) const UNIVERSAL: &str = "universal";

/// The agents `skill install` knows, by name (`universal` first: the default).
pub const AGENTS: &[Agent] = &[
    Agent {
        name: UNIVERSAL,
        user: &[".agents/skills", ".claude/skills"],
        project: &[".agents/skills", ".claude/skills"],
    },
    Agent {
        name: "claude-code",
        user: &[".claude/skills"],
        project: &[".claude/skills"],
    },
    Agent {
        name: "codex",
        user: &[".agents/skills"],
        project: &[".agents/skills"],
    },
    Agent {
        name: "cursor",
        user: &[".cursor/skills"],
        project: &[".cursor/skills"],
    },
    Agent {
        name: "gemini-cli",
        user: &[".gemini/skills"],
        project: &[".gemini/skills"],
    },
    Agent {
        name: "github-copilot",
        user: &[".copilot/skills"],
        project: &[".github/skills"],
    },
    Agent {
        name: "opencode",
        user: &[".config/opencode/skills"],
        project: &[".opencode/skills"],
    },
];

/// Which of the two roots an install writes below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The user's folders, below the home folder.
    User,
    /// The project's folders, below the project folder.
    Project,
}

/// The two places clients scan: the home folder (when known) and the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Roots {
    /// The home folder.
    pub home: Option<PathBuf>,
    /// The project folder (for a user install, the current folder: checked for shadowing).
    pub project: PathBuf,
}

impl Roots {
    fn base(&self, scope: Scope) -> Result<&Path, CollabError> {
        match scope {
            Scope::Project => Ok(&self.project),
            Scope::User => self.home.as_deref().ok_or(CollabError::NoHome),
        }
    }

    /// Every skills folder some client scans, with the clients scanning it, sorted by path.
    fn scanned(&self) -> BTreeMap<PathBuf, Vec<&'static str>> {
        let mut out: BTreeMap<PathBuf, Vec<&'static str>> = BTreeMap::new();
        for client in CLIENTS {
            let mut add = |base: &Path, folders: &[&str]| {
                for folder in folders {
                    let titles = out.entry(base.join(folder)).or_default();
                    if !titles.contains(&client.title) {
                        titles.push(client.title);
                    }
                }
            };
            add(&self.project, client.project);
            if let Some(home) = &self.home {
                add(home, client.user);
            }
        }
        out
    }
}

/// The `skill install` flags.
#[derive(Debug, Clone)]
pub(crate) struct InstallOptions {
    /// `--agent`.
    pub agent: String,
    /// `--global` or `--project`.
    pub scope: Scope,
    /// The home and project folders.
    pub roots: Roots,
    /// The `acp-collab` the launchers will run.
    pub binary: PathBuf,
    /// `--force`: replace a hand-edited install, or a folder not written by an install.
    pub force: bool,
}

/// What an install did to one folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Written where nothing was.
    Installed,
    /// An earlier install of ours (another version or binary) replaced.
    Updated,
    /// Already exactly this install.
    Unchanged,
    /// A folder not written by an install replaced (`--force`).
    Replaced,
}

/// One installed skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placed {
    /// The skill folder.
    pub dir: PathBuf,
    /// What happened to it.
    pub outcome: Outcome,
    /// The clients that scan the folder holding it, sorted.
    pub seen_by: Vec<&'static str>,
}

/// What an install did, and what clients will find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InstallReport {
    /// The folders written (or found already written), in the agent's order.
    pub placed: Vec<Placed>,
    /// Other skills of the same name that a client seeing this install also scans.
    pub warnings: Vec<String>,
}

/// `skill install --list`: one line per agent with its folders.
pub(crate) fn agents_table() -> String {
    use std::fmt::Write;
    let name = folder_name();
    AGENTS.iter().fold(String::new(), |mut out, a| {
        let user: Vec<String> = a.user.iter().map(|f| format!("~/{f}/{name}/")).collect();
        let project: Vec<String> = a
            .project
            .iter()
            .map(|f| format!("<project>/{f}/{name}/"))
            .collect();
        let _ = writeln!(
            out,
            "{:<15} {}  {}",
            a.name,
            user.join(" "),
            project.join(" ")
        );
        out
    })
}

fn agent(name: &str) -> Result<&'static Agent, CollabError> {
    AGENTS
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| CollabError::UnknownAgent {
            name: name.to_owned(),
            known: AGENTS.iter().map(|a| a.name).collect(),
        })
}

/// The skill folders `agent` uses in `scope`.
fn targets(agent: &Agent, scope: Scope, roots: &Roots) -> Result<Vec<PathBuf>, CollabError> {
    let base = roots.base(scope)?;
    let folders = match scope {
        Scope::User => agent.user,
        Scope::Project => agent.project,
    };
    Ok(folders
        .iter()
        .map(|f| base.join(f).join(folder_name()))
        .collect())
}

/// The files an install writes: the skill, the launchers' pointer and the record.
fn install_files(binary: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = skill_tree();
    files.insert(
        POINTER.into(),
        format!("{}\n", binary.display()).into_bytes(),
    );
    let listed: serde_json::Map<String, Value> = files
        .iter()
        .map(|(p, b)| (p.clone(), json!(sha256_hex(b))))
        .collect();
    let record = json!({
        "format": 1,
        "skill": folder_name(),
        "engine": {"version": ENGINE_VERSION, "binary": binary.display().to_string()},
        "files": listed,
    });
    files.insert(MARKER.into(), format!("{record:#}\n").into_bytes());
    files
}

/// The compiled-in skill, by path.
fn skill_tree() -> BTreeMap<String, Vec<u8>> {
    FILES
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
        .collect()
}

fn io(path: &Path, e: impl std::fmt::Display) -> CollabError {
    CollabError::Install {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Who wrote an existing skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing there.
    Absent,
    /// Exactly what an install recorded; `current` when it is this binary's skill.
    Ours {
        /// Its skill files are this engine's.
        current: bool,
        /// The engine version its record names (`None`: recorded before versions were).
        version: Option<String>,
        /// The binary its launchers run.
        binary: Option<PathBuf>,
    },
    /// An install of ours changed since (files edited, added or removed).
    Modified,
    /// No install record: another skill, or a copy made by hand.
    Foreign,
    /// Not a folder.
    NotAFolder,
}

/// Reads what is at `dir`.
pub(crate) fn inspect(dir: &Path) -> Result<Found, CollabError> {
    match crate::fs::kind(dir).map_err(|e| io(dir, e))? {
        None => Ok(Found::Absent),
        Some(Kind::Dir) => Ok(classify(&read_tree(dir)?)),
        Some(_) => Ok(Found::NotAFolder),
    }
}

fn classify(current: &BTreeMap<String, Vec<u8>>) -> Found {
    let Some(record) = current
        .get(MARKER)
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
    else {
        return Found::Foreign;
    };
    if !matches_record(current, &record) {
        return Found::Modified;
    }
    let skill = skill_tree();
    let same_skill =
        skill.iter().all(|(p, b)| current.get(p) == Some(b)) && current.len() == skill.len() + 2;
    let engine = record.get("engine");
    let text = |key: &str| engine.and_then(|e| e.get(key)).and_then(Value::as_str);
    let pointer = current
        .get(POINTER)
        .map(|b| String::from_utf8_lossy(b).trim().to_owned());
    Found::Ours {
        current: same_skill,
        version: text("version").map(str::to_owned),
        binary: text("binary")
            .map(str::to_owned)
            .or(pointer)
            .map(PathBuf::from),
    }
}

/// Installs the skill for one agent: every target is checked before any is written.
pub(crate) fn install(opts: &InstallOptions) -> Result<InstallReport, CollabError> {
    let agent = agent(&opts.agent)?;
    let dirs = targets(agent, opts.scope, &opts.roots)?;
    let files = install_files(&opts.binary);
    let mut plan = Vec::new();
    for dir in &dirs {
        plan.push((dir, plan_one(dir, &files, opts.force)?));
    }
    for (dir, outcome) in &plan {
        if *outcome != Outcome::Unchanged {
            write_tree(dir, &files)?;
        }
    }
    let scanned = opts.roots.scanned();
    let placed: Vec<Placed> = plan
        .into_iter()
        .map(|(dir, outcome)| Placed {
            seen_by: seen_by(&scanned, dir),
            dir: dir.clone(),
            outcome,
        })
        .collect();
    let warnings = shadowing(&scanned, &placed)?;
    Ok(InstallReport { placed, warnings })
}

/// What installing into `dir` will do; clears the way when it may replace what is there.
fn plan_one(
    dir: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    force: bool,
) -> Result<Outcome, CollabError> {
    let refuse = |what| CollabError::InTheWay {
        dir: dir.to_path_buf(),
        what,
    };
    match crate::fs::kind(dir).map_err(|e| io(dir, e))? {
        None => Ok(Outcome::Installed),
        Some(Kind::Dir) => {
            let current = read_tree(dir)?;
            if &current == files {
                return Ok(Outcome::Unchanged);
            }
            let outcome = match classify(&current) {
                Found::Ours { .. } => Outcome::Updated,
                Found::Modified if force => Outcome::Updated,
                _ if force => Outcome::Replaced,
                Found::Modified => return Err(refuse("is an install of this skill edited since")),
                _ => {
                    return Err(refuse(
                        "holds a different skill (not written by acp-collab skill install)",
                    ))
                }
            };
            std::fs::remove_dir_all(dir).map_err(|e| io(dir, e))?;
            Ok(outcome)
        }
        Some(_) if force => {
            std::fs::remove_file(dir).map_err(|e| io(dir, e))?;
            Ok(Outcome::Replaced)
        }
        Some(_) => Err(refuse("exists and is not a folder")),
    }
}

/// The clients scanning the skills folder that holds `dir`.
fn seen_by(scanned: &BTreeMap<PathBuf, Vec<&'static str>>, dir: &Path) -> Vec<&'static str> {
    let mut titles = dir
        .parent()
        .and_then(|p| scanned.get(p))
        .cloned()
        .unwrap_or_default();
    titles.sort_unstable();
    titles
}

/// A warning for every other folder of the same name that a client seeing `placed` scans.
fn shadowing(
    scanned: &BTreeMap<PathBuf, Vec<&'static str>>,
    placed: &[Placed],
) -> Result<Vec<String>, CollabError> {
    let ours: Vec<&Path> = placed.iter().map(|p| p.dir.as_path()).collect();
    let mut warnings = Vec::new();
    for (folder, clients) in scanned {
        let dir = folder.join(folder_name());
        if ours.contains(&dir.as_path()) {
            continue;
        }
        let affected: Vec<&str> = clients
            .iter()
            .copied()
            .filter(|c| placed.iter().any(|p| p.seen_by.contains(c)))
            .collect();
        if affected.is_empty() {
            continue;
        }
        let what = match inspect(&dir)? {
            Found::Absent => continue,
            Found::Ours { current: true, .. } => "an identical copy of this skill",
            Found::Ours { .. } => "an older install of this skill",
            Found::Modified => "a hand-edited install of this skill",
            Found::Foreign | Found::NotAFolder => "another skill",
        };
        warnings.push(format!(
            "{} also scan{} {}, which holds {what} named {}: one shadows the other; \
             remove one of them",
            affected.join(", "),
            if affected.len() == 1 { "s" } else { "" },
            dir.display(),
            folder_name()
        ));
    }
    Ok(warnings)
}

/// The `skill uninstall` flags.
#[derive(Debug, Clone)]
pub(crate) struct UninstallOptions {
    /// `--agent`.
    pub agent: String,
    /// `--global` or `--project`.
    pub scope: Scope,
    /// The home and project folders.
    pub roots: Roots,
    /// `--force`: also remove an install of ours edited since (its recorded files only).
    pub force: bool,
}

/// What an uninstall did to one folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Removal {
    /// The folder is gone.
    Removed,
    /// Nothing was installed there.
    NotInstalled,
    /// The recorded files are gone; these others, not written by an install, were kept.
    Kept(Vec<String>),
}

/// Removes what an install wrote for one agent; every target is checked first, and a
/// folder without an install record is never touched.
pub(crate) fn uninstall(opts: &UninstallOptions) -> Result<Vec<(PathBuf, Removal)>, CollabError> {
    let agent = agent(&opts.agent)?;
    let dirs = targets(agent, opts.scope, &opts.roots)?;
    for dir in &dirs {
        match inspect(dir)? {
            Found::Absent | Found::Ours { .. } => {}
            Found::Modified if opts.force => {}
            Found::Modified => return Err(CollabError::EditedInstall(dir.clone())),
            Found::Foreign | Found::NotAFolder => {
                return Err(CollabError::ForeignInstall(dir.clone()))
            }
        }
    }
    dirs.into_iter()
        .map(|dir| {
            let removal = remove_recorded(&dir)?;
            Ok((dir, removal))
        })
        .collect()
}

/// Deletes the files the record lists (and the record), then the folders left empty.
fn remove_recorded(dir: &Path) -> Result<Removal, CollabError> {
    if crate::fs::kind(dir).map_err(|e| io(dir, e))?.is_none() {
        return Ok(Removal::NotInstalled);
    }
    let current = read_tree(dir)?;
    let record: Value = current
        .get(MARKER)
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or_default();
    let listed = record.get("files").and_then(Value::as_object);
    let mut kept = Vec::new();
    for path in current.keys() {
        if path == MARKER || listed.is_some_and(|l| l.contains_key(path)) {
            std::fs::remove_file(dir.join(path)).map_err(|e| io(dir, e))?;
        } else {
            kept.push(path.clone());
        }
    }
    prune_empty(dir)?;
    Ok(if kept.is_empty() {
        Removal::Removed
    } else {
        Removal::Kept(kept)
    })
}

/// Removes `dir` and the folders below it that are empty, deepest first.
fn prune_empty(dir: &Path) -> Result<(), CollabError> {
    for child in crate::fs::list_dir(dir).map_err(|e| io(dir, e))? {
        if child.kind == Kind::Dir {
            prune_empty(&dir.join(child.name()))?;
        }
    }
    if crate::fs::list_dir(dir).map_err(|e| io(dir, e))?.is_empty() {
        std::fs::remove_dir(dir).map_err(|e| io(dir, e))?;
    }
    Ok(())
}

/// One skill folder `skill list` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    /// The skill folder.
    pub dir: PathBuf,
    /// Who wrote it.
    pub found: Found,
    /// The clients scanning the folder holding it, sorted.
    pub seen_by: Vec<&'static str>,
}

/// Every folder named like the skill in a folder some client scans, sorted by path.
pub(crate) fn list(roots: &Roots) -> Result<Vec<Listed>, CollabError> {
    let scanned = roots.scanned();
    let mut out = Vec::new();
    for folder in scanned.keys() {
        let dir = folder.join(folder_name());
        let found = inspect(&dir)?;
        if found != Found::Absent {
            out.push(Listed {
                seen_by: seen_by(&scanned, &dir),
                dir,
                found,
            });
        }
    }
    Ok(out)
}

impl Listed {
    /// The state line of `skill list`.
    pub(crate) fn state(&self) -> String {
        match &self.found {
            Found::Ours { current: true, .. } => "current".to_owned(),
            Found::Ours { version, .. } => format!(
                "outdated: installed by acp-collab {}, this is {ENGINE_VERSION}; \
                 `acp-collab skill install` updates it",
                version.as_deref().unwrap_or("(an earlier version)")
            ),
            Found::Modified => {
                "edited since it was installed (`skill install --force` replaces it)".to_owned()
            }
            Found::Foreign | Found::NotAFolder => {
                "not written by acp-collab skill install".to_owned()
            }
            Found::Absent => "absent".to_owned(),
        }
    }

    /// The engine line of `skill list`, when the folder is an install of ours.
    pub(crate) fn engine(&self) -> Option<String> {
        let Found::Ours {
            version, binary, ..
        } = &self.found
        else {
            return None;
        };
        let binary = binary.as_ref()?;
        let missing = if binary.is_file() { "" } else { " (missing)" };
        Some(format!(
            "scripts run {}{missing}, acp-collab {}",
            binary.display(),
            version.as_deref().unwrap_or("of an unrecorded version")
        ))
    }
}

/// Every regular file below `dir`; a link or special file makes the folder foreign.
fn read_tree(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, CollabError> {
    let mut out = BTreeMap::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let children = crate::fs::list_dir(&dir.join(&rel)).map_err(|e| io(dir, e))?;
        for child in children {
            let path = if rel.is_empty() {
                child.name()
            } else {
                format!("{rel}/{}", child.name())
            };
            match child.kind {
                Kind::Dir => stack.push(path),
                Kind::File => {
                    let bytes = crate::fs::read_capped(dir, Path::new(&path), 1 << 20)
                        .map_err(|e| io(&dir.join(&path), e))?;
                    out.insert(path, bytes);
                }
                // Not something an install writes: the folder is someone else's.
                _ => {
                    out.insert(path, Vec::new());
                    out.insert(MARKER.into(), Vec::new());
                }
            }
        }
    }
    Ok(out)
}

/// Whether `current` is exactly what `record` lists, unchanged.
fn matches_record(current: &BTreeMap<String, Vec<u8>>, record: &Value) -> bool {
    let Some(listed) = record.get("files").and_then(Value::as_object) else {
        return false;
    };
    current.len() == listed.len() + 1
        && listed.iter().all(|(path, sha)| {
            current
                .get(path)
                .is_some_and(|b| Some(sha256_hex(b).as_str()) == sha.as_str())
        })
}

fn write_tree(dir: &Path, files: &BTreeMap<String, Vec<u8>>) -> Result<(), CollabError> {
    for (rel, bytes) in files {
        let path = dir.join(rel);
        let parent = path.parent().expect("files are below the folder");
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(if rel.starts_with("scripts/") {
                0o755
            } else {
                0o644
            });
        }
        let mut file = crate::fs::no_follow(&mut options)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        std::io::Write::write_all(&mut file, bytes).map_err(|e| io(&path, e))?;
    }
    Ok(())
}
