//! The registry on disk and its checking: discovering entries, the configuration file, every
//! rule over every entry, quarantine and git. Publishing what it checked is the `publish`
//! module's.
//!
//! - `discover`: the entry folders, [`RegistryError`];
//! - `config`: `acp-registry.jsonc`, one file per section;
//! - `check`: every rule over every entry, and the published form of each (`published`);
//! - `git`: `--changed-since`; `select`: `validate PATH…`; `fix`: `validate --fix`;
//! - `quarantine`: `--quarantine-retagged`;
//! - `releases`: `releases.json`, the release history `update --apply` records.

pub(crate) mod check;
pub(crate) mod config;
mod discover;
pub(crate) mod fix;
pub(crate) mod git;
pub(crate) mod quarantine;
pub(crate) mod releases;
pub(crate) mod select;

pub use check::check_registry;
pub(crate) use check::{check_registry_since, check_registry_to_build, Checked};
pub(crate) use config::Config;
pub(crate) use discover::discover;
pub(crate) use discover::RegistryError;
pub(crate) use releases::Releases;
