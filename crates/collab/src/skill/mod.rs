//! `skill install`, `skill uninstall` and `skill list` (docs/collab-protocol.md#skill-install):
//! the bundled skill copied where agents read skills, with its launchers pointing at this
//! `acp-collab`.
//!
//! The skill is compiled in (`FILES`) from this crate's `skill/` folder, so any copy of the
//! binary can install it; the registry entry holds the same files, which a test checks.
//! `folder_name` is the one source of the installed folder's name. An installed copy carries
//! `.acp-collab-skill.json` (every file with its sha256, the engine's version and path): a
//! folder is replaced or removed only when it is exactly what an install recorded, or, for a
//! hand-edited install of ours, with `--force`; a folder without that record is never touched.
//!
//! `clients::CLIENTS` is the one table of which folders each client scans; installs, the
//! visibility report, the shadowing warnings and `skill list` all read it. `AGENTS` lists the
//! install targets of each `--agent`, `universal` (the default) first.
//!
//! One file per concern: `bundle` (the compiled-in skill), `clients` (who scans which
//! folders, the `--agent`s), `record` (an install's record, and who wrote a folder),
//! `install`, and `uninstall` (with `list`). This file only re-exports.

mod bundle;
mod clients;
mod install;
mod record;
mod uninstall;

pub use bundle::{FILES, MARKER, NAME, POINTER};
pub use clients::{Agent, AGENTS};

pub(crate) use bundle::folder_name;
pub(crate) use clients::{agents_table, Roots, Scope};
pub(crate) use install::{install, InstallOptions, Outcome};
pub(crate) use uninstall::{list, uninstall, Removal, UninstallOptions};
