//! `skill install` (docs/collab-protocol.md#skill-install): copies the bundled skill where an
//! agent reads skills, with its launchers pointing at this `acp-collab`.
//!
//! The skill is compiled in from the registry entry's `skill/` folder, so any copy of the
//! binary can install it. An installed copy carries `.acp-collab-skill.json` (every file with
//! its sha256): a folder is replaced only when it is exactly what an earlier install wrote,
//! or with `--force`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::paths::sha256_hex;
use super::CollabError;
use crate::fs::Kind;

/// The skill's name: its folder name wherever it is installed.
pub const NAME: &str = "agent-collaboration-protocol";
/// The record of an install, inside the installed folder.
pub const MARKER: &str = ".acp-collab-skill.json";
/// Where the launchers read the installed binary's path.
pub const POINTER: &str = "scripts/acp-collab-path.txt";

macro_rules! skill_files {
    ($($path:literal),* $(,)?) => {
        /// The skill's files (path below `skill/`, bytes), as compiled in.
        pub const FILES: &[(&str, &[u8])] = &[$((
            $path,
            include_bytes!(concat!("../../registry/agent-collaboration-protocol/skill/agent-collaboration-protocol/", $path)),
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

/// An agent that reads Agent Skills, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agent {
    /// The agent's name (`--agent`).
    pub name: &'static str,
    /// The user's skills folder, relative to the home folder.
    pub global: &'static str,
    /// A project's skills folder, relative to the project.
    pub project: &'static str,
}

/// The agents `skill install` knows, by name.
pub const AGENTS: &[Agent] = &[
    Agent {
        name: "claude-code",
        global: ".claude/skills",
        project: ".claude/skills",
    },
    Agent {
        name: "codex",
        global: ".agents/skills",
        project: ".agents/skills",
    },
    Agent {
        name: "cursor",
        global: ".cursor/skills",
        project: ".cursor/skills",
    },
    Agent {
        name: "gemini-cli",
        global: ".gemini/skills",
        project: ".gemini/skills",
    },
    Agent {
        name: "github-copilot",
        global: ".copilot/skills",
        project: ".github/skills",
    },
    Agent {
        name: "opencode",
        global: ".config/opencode/skills",
        project: ".opencode/skills",
    },
];

/// Where to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The user's folder for the agent, below this home folder.
    Global(PathBuf),
    /// The project's folder for the agent, below this project folder.
    Project(PathBuf),
}

/// The `skill install` flags.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// `--agent`.
    pub agent: String,
    /// Where to install.
    pub scope: Scope,
    /// The `acp-collab` the launchers will run.
    pub binary: PathBuf,
    /// `--force`: replace a different skill folder.
    pub force: bool,
}

/// What an install did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The installed skill folder.
    pub dir: PathBuf,
    /// False when the same skill was already there.
    pub changed: bool,
}

/// `--list`: one line per agent with its two folders.
pub fn list() -> String {
    use std::fmt::Write;
    AGENTS.iter().fold(String::new(), |mut out, a| {
        let _ = writeln!(
            out,
            "{:<15} ~/{}/{NAME}/  <project>/{}/{NAME}/",
            a.name, a.global, a.project
        );
        out
    })
}

fn agent(name: &str) -> Result<&'static Agent, CollabError> {
    AGENTS.iter().find(|a| a.name == name).ok_or_else(|| {
        let known: Vec<&str> = AGENTS.iter().map(|a| a.name).collect();
        CollabError::Protocol(format!(
            "unknown agent '{name}'; use one of: {} (see skill install --list)",
            known.join(", ")
        ))
    })
}

/// The files an install writes: the skill, the launchers' pointer and the record.
fn install_files(binary: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files: BTreeMap<String, Vec<u8>> = FILES
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
        .collect();
    files.insert(
        POINTER.into(),
        format!("{}\n", binary.display()).into_bytes(),
    );
    let listed: serde_json::Map<String, Value> = files
        .iter()
        .map(|(p, b)| (p.clone(), json!(sha256_hex(b))))
        .collect();
    let record = json!({"format": 1, "skill": NAME, "files": listed});
    files.insert(MARKER.into(), format!("{record:#}\n").into_bytes());
    files
}

fn io(path: &Path, e: impl std::fmt::Display) -> CollabError {
    CollabError::Protocol(format!("cannot install into {}: {e}", path.display()))
}

/// Installs the skill for one agent.
pub fn install(opts: &InstallOptions) -> Result<Installed, CollabError> {
    let agent = agent(&opts.agent)?;
    let base = match &opts.scope {
        Scope::Global(home) => home.join(agent.global),
        Scope::Project(dir) => dir.join(agent.project),
    };
    let dir = base.join(NAME);
    let files = install_files(&opts.binary);
    match crate::fs::kind(&dir).map_err(|e| io(&dir, e))? {
        None => {}
        Some(Kind::Dir) => {
            let current = read_tree(&dir)?;
            if current == files {
                return Ok(Installed {
                    dir,
                    changed: false,
                });
            }
            if !opts.force && !written_by_us(&current) {
                return Err(CollabError::Protocol(format!(
                    "{} holds a different skill (not an unchanged earlier install); \
                     pass --force to replace it",
                    dir.display()
                )));
            }
            std::fs::remove_dir_all(&dir).map_err(|e| io(&dir, e))?;
        }
        Some(_) if opts.force => std::fs::remove_file(&dir).map_err(|e| io(&dir, e))?,
        Some(_) => {
            return Err(CollabError::Protocol(format!(
                "{} exists and is not a folder; pass --force to replace it",
                dir.display()
            )))
        }
    }
    write_tree(&dir, &files)?;
    Ok(Installed { dir, changed: true })
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

/// Whether `current` is exactly what its record lists, unchanged.
fn written_by_us(current: &BTreeMap<String, Vec<u8>>) -> bool {
    let Some(record) = current
        .get(MARKER)
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
    else {
        return false;
    };
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
