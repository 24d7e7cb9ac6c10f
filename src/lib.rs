//! acp-registry: validate, build and publish an ACP (Agent Client Protocol) agent registry.
//!
//! Layers, data flowing one way (ARCHITECTURE.md draws them; a test enforces its import
//! tables): the binary parses arguments and calls [`commands`]; below them [`verify`] and
//! `pack`, then [`update`] and `publish` (everything `build` writes), then `registry` (the
//! checking of a whole registry), then [`online`], `published` (an agent's published form) and
//! [`flags`], then `rules` and `net` (the one HTTP client), [`site`] and `fs` (`fs::archive`),
//! `manifest` and `diagnostics`, on the core crate (`acp-registry-core`: spans, time, safe
//! reads and atomic writes, ACP framing, escaping). Every file of a registry is read through
//! the core's `fs` (no links followed, regular files only, sizes capped while reading).

mod diagnostics;
mod fs;
mod indexes;
mod manifest;
mod net;
mod pack;
mod publish;
mod published;
mod registry;
mod rules;

#[cfg(test)]
mod tests;

// The public surface, all of it: what the binary, the integration tests, the examples and the
// fuzz targets use. Every other module is private, so `unreachable_pub` flags a `pub` item
// nothing outside reaches. Namespaces where the users need many items of one area (a command
// each, or `run`/`Options` pairs whose names would clash at the root); single items otherwise.

// The binary's commands, one module each, with their error and exit codes; then the library
// entry points whose `run`/`Options`/`check` keep their module's name.
pub mod commands;
pub mod flags;
pub mod online;
pub mod site;
pub mod update;
pub mod verify;

/// Archive extraction with hostile archives refused and sizes capped.
pub mod archive {
    pub use crate::fs::archive::{
        extract, resolve_cmd, ArchiveError, ArchiveFormat, Limits, DEFAULT_UNPACK_CAP_MIB,
    };
}

pub use acp_registry_client::net::{Client, NetConfig, NetError, TEST_ALLOW_LOOPBACK_ENV};
pub use acp_registry_core::acp;
pub use diagnostics::{
    render, render_github_summary, rules_markdown, Code, Report, ReportFormat, Severity,
};
pub use manifest::distribution::Kind as DistributionKind;
pub use manifest::edit::{Editor, Position};
pub use manifest::{escape_pointer, parse, Node, NodeValue};
pub use publish::site_agents;
pub use registry::check_registry;
pub use registry::config::MAX_MIN_AGE_DAYS;
pub use rules::{check_entry, check_icon, registry_validator, EntryDir, EntryReport, Policy};
