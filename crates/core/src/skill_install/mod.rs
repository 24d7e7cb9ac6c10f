//! Installing an Agent Skill where agents read skills: the one installer both tools use
//! (`acp-collab skill …` for its bundled skill, `acp-registry skill …` for a skill fetched from
//! a registry, a site's well-known index or a marketplace).
//!
//! The caller brings a [`Skill`]: its name ([`is_skill_name`]), its files (path → bytes, and
//! which are executable) and what the record should say about where it came from. An install
//! writes the files plus [`RECORD_FILE`], which lists every file with its sha256: a folder is
//! replaced or removed only when it is exactly what an install recorded, or, for an install
//! edited since, with `--force`; a folder without a record is never touched without `--force`.
//! Nothing is written or deleted through a link, and every target is checked before any is
//! written.
//!
//! One file per concern: `names` (the name and path rules), `clients` (who scans which
//! folders, the `--agent`s, the roots), `record` (the record, who wrote a folder, reading and
//! writing a tree), `install` (with the shadowing warnings), `uninstall` (with `list`) and
//! `error`. This file only re-exports.

mod clients;
mod error;
mod install;
mod names;
mod record;
mod uninstall;

pub use clients::{
    agent, agents_table, seen_by, targets, uninstall_command, Agent, Client, Roots, Scope, Target,
    AGENTS, CLIENTS, UNIVERSAL,
};
pub use error::SkillInstallError;
pub use install::{install, InstallReport, Outcome, Placed, Skill};
pub use names::{is_safe_file_path, is_skill_name, MAX_NAME_CHARS};
pub use record::{inspect, read_tree, Found, RECORD_FILE};
pub use uninstall::{list, uninstall, Listed, Removal};
