//! Where skills go: [`CLIENTS`], the one table of which folders each client scans (installs,
//! the visibility report, the shadowing warnings and `skill list` all read it), the
//! `--agent`s and the folders each writes, and the two roots (home and project).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::SkillInstallError;
use crate::escape::shell_word;

/// A client that reads Agent Skills, and the skills folders it scans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// How the client is called.
    pub title: &'static str,
    /// The skills folders it scans in a project, relative to the project.
    pub project: &'static [&'static str],
    /// The skills folders it scans for the user, relative to the home folder.
    pub user: &'static [&'static str],
}

/// The clients whose skill folders are known, by title.
pub const CLIENTS: &[Client] = &[
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
pub const UNIVERSAL: &str = "universal";

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
pub enum Scope {
    /// The user's folders, below the home folder.
    User,
    /// The project's folders, below the project folder.
    Project,
}

/// The two places clients scan: the home folder (when known) and the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// The home folder.
    pub home: Option<PathBuf>,
    /// The project folder (for a user install, the current folder: checked for shadowing).
    pub project: PathBuf,
}

impl Roots {
    /// The home folder from the environment (`HOME`, else `USERPROFILE`) and `project`, else
    /// the current folder.
    ///
    /// # Errors
    /// The current folder cannot be read (no `project` given).
    pub fn from_env(project: Option<PathBuf>) -> std::io::Result<Roots> {
        let project = match project {
            Some(dir) => dir,
            None => std::env::current_dir()?,
        };
        let home = std::env::var_os("HOME")
            .or_else(|| std::env::var_os("USERPROFILE"))
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        Ok(Roots { home, project })
    }

    /// The folder an install in `scope` writes below.
    ///
    /// # Errors
    /// [`SkillInstallError::NoHome`] for the user's scope without a home folder.
    pub fn base(&self, scope: Scope) -> Result<&Path, SkillInstallError> {
        match scope {
            Scope::Project => Ok(&self.project),
            Scope::User => self.home.as_deref().ok_or(SkillInstallError::NoHome),
        }
    }

    /// Every skills folder some client scans, with the clients scanning it, sorted by path.
    #[must_use]
    pub fn scanned(&self) -> BTreeMap<PathBuf, Vec<&'static str>> {
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

/// `skill install --list`: one line per agent with its folders for the skill `name`.
#[must_use]
pub fn agents_table(name: &str) -> String {
    use std::fmt::Write;
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

/// The `--agent` called `name`.
///
/// # Errors
/// [`SkillInstallError::UnknownAgent`] listing the known ones.
pub fn agent(name: &str) -> Result<&'static Agent, SkillInstallError> {
    AGENTS
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| SkillInstallError::UnknownAgent {
            name: name.to_owned(),
            known: AGENTS.iter().map(|a| a.name).collect(),
        })
}

/// The folders of the skill `name` that `agent` uses in `scope`.
///
/// # Errors
/// [`SkillInstallError::NoHome`] for a user install without a home folder.
pub fn targets(
    agent: &Agent,
    scope: Scope,
    roots: &Roots,
    name: &str,
) -> Result<Vec<PathBuf>, SkillInstallError> {
    let base = roots.base(scope)?;
    let folders = match scope {
        Scope::User => agent.user,
        Scope::Project => agent.project,
    };
    Ok(folders.iter().map(|f| base.join(f).join(name)).collect())
}

/// The clients scanning the skills folder that holds `dir`.
#[must_use]
pub fn seen_by(scanned: &BTreeMap<PathBuf, Vec<&'static str>>, dir: &Path) -> Vec<&'static str> {
    let mut titles = dir
        .parent()
        .and_then(|p| scanned.get(p))
        .cloned()
        .unwrap_or_default();
    titles.sort_unstable();
    titles
}

/// Where an install (or uninstall) goes, and how careful it is.
#[derive(Debug, Clone)]
pub struct Target {
    /// `--agent`.
    pub agent: String,
    /// `--global` or `--project`.
    pub scope: Scope,
    /// The home and project folders.
    pub roots: Roots,
    /// `--force`: replace a hand-edited install, or a folder not written by an install.
    pub force: bool,
    /// `--follow-links`: follow links above the skill folder (never at it or inside it).
    pub follow_links: bool,
    /// The command group the messages name, e.g. `acp-collab skill`.
    pub tool: &'static str,
    /// Whether `«tool» uninstall` takes the skill's name (`acp-registry skill uninstall pdf`)
    /// or knows it (`acp-collab skill uninstall`, for its one bundled skill): the shadowing
    /// warnings print the command that removes a copy.
    pub uninstall_names_skill: bool,
}

/// The `--agent` and scope whose install writes `dir`, and as few other folders as possible
/// (`codex` rather than `universal`, whose uninstall would remove a second copy too): the
/// user's first, as `--global` is the default.
pub(crate) fn owner(dir: &Path, roots: &Roots, name: &str) -> Option<(&'static Agent, Scope)> {
    [Scope::User, Scope::Project]
        .into_iter()
        .flat_map(|scope| AGENTS.iter().map(move |agent| (agent, scope)))
        .filter_map(|(agent, scope)| {
            let dirs = targets(agent, scope, roots, name).ok()?;
            dirs.iter()
                .any(|d| d == dir)
                .then_some((dirs.len(), agent, scope))
        })
        .min_by_key(|(count, _, _)| *count)
        .map(|(_, agent, scope)| (agent, scope))
}

/// The command that removes the install of `name` that `agent` made in `scope`:
/// `«tool» uninstall [«name»] --agent «agent» --global | --project «folder»`, each word quoted
/// for a POSIX shell where it needs it.
#[must_use]
pub fn uninstall_command(target: &Target, agent: &Agent, scope: Scope, name: &str) -> String {
    let mut words = vec![format!("{} uninstall", target.tool)];
    if target.uninstall_names_skill {
        words.push(shell_word(name));
    }
    words.push(format!("--agent {}", shell_word(agent.name)));
    match scope {
        Scope::User => words.push("--global".to_owned()),
        Scope::Project => words.push(format!(
            "--project {}",
            shell_word(&target.roots.project.display().to_string())
        )),
    }
    if target.follow_links {
        words.push("--follow-links".to_owned());
    }
    words.join(" ")
}
