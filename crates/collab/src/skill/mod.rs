//! `skill install`, `skill uninstall` and `skill list` (docs/collab-protocol.md#skill-install):
//! the bundled skill copied where agents read skills, with its launchers pointing at this
//! `acp-collab`.
//!
//! The skill is compiled in (`FILES`) from this crate's `skill/` folder, so any copy of the
//! binary can install it; the registry entry holds the same files, which a test checks.
//! `folder_name` is the one source of the installed folder's name. The installing, the record
//! (`.acp-collab-skill.json`: every file with its sha256, here also the engine's version and
//! path), the clients table, the `--agent`s and the link and ownership guarantees are the
//! core's one installer (`acp_registry_core::skill_install`), which `acp-registry skill`
//! uses too: a folder is replaced or removed only when it is exactly what an install
//! recorded, or, for a hand-edited install, with `--force`; a folder without that record is
//! never touched.
//!
//! One file per concern: `bundle` (the compiled-in skill) and `install` (the bundled skill
//! through the core's installer, and what `skill list` says of a copy). This file only
//! re-exports.

mod bundle;
mod install;

pub use acp_registry_core::skill_install::{Agent, AGENTS};
pub use bundle::{FILES, NAME, POINTER};

/// The record of an install, inside the installed folder (the core's).
pub const MARKER: &str = acp_registry_core::skill_install::RECORD_FILE;

pub(crate) use bundle::folder_name;
pub(crate) use install::{engine, install, list, state, uninstall, TOOL};
