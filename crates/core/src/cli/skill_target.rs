//! The flags saying where `skill install` and `skill uninstall` act, one definition for
//! `acp-collab skill` and `acp-registry skill` (both install through `skill_install`).

use std::path::PathBuf;

use crate::skill_install::{Roots, Scope, Target};

/// Where `skill install` and `skill uninstall` act; the field docs are their `--help`.
#[derive(Debug, Clone, clap::Args)]
pub struct SkillTarget {
    /// The agent (see skill install --list); universal writes .agents/skills and .claude/skills
    #[arg(long, default_value = "universal", add = clap_complete::ArgValueCandidates::new(agent_candidates))]
    pub agent: String,
    /// For the user, below the home folder (the default)
    #[arg(long, conflicts_with = "project")]
    pub global: bool,
    /// In this project folder instead
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Install: replace a hand-edited install or another skill of the same name. Uninstall:
    /// remove a hand-edited install's recorded files
    #[arg(long)]
    pub force: bool,
    /// Follow symbolic links to folders above the skill folder (a .claude managed by a
    /// dotfiles tool); the skill folder and what is in it are never links
    #[arg(long)]
    pub follow_links: bool,
}

/// Shell completion of `--agent`: the agents `skill install` knows, sorted.
fn agent_candidates() -> Vec<clap_complete::CompletionCandidate> {
    let mut names: Vec<&str> = crate::skill_install::AGENTS
        .iter()
        .map(|a| a.name)
        .collect();
    names.sort_unstable();
    names
        .into_iter()
        .map(clap_complete::CompletionCandidate::new)
        .collect()
}

impl SkillTarget {
    /// The installer's target: the project's folders with `--project`, else the user's;
    /// `tool` names the command in messages.
    ///
    /// # Errors
    /// The current folder cannot be read (no `--project`).
    pub fn target(&self, tool: &'static str) -> std::io::Result<Target> {
        Ok(Target {
            agent: self.agent.clone(),
            scope: if self.project.is_some() {
                Scope::Project
            } else {
                Scope::User
            },
            roots: Roots::from_env(self.project.clone())?,
            force: self.force,
            follow_links: self.follow_links,
            tool,
            uninstall_names_skill: true,
        })
    }
}
