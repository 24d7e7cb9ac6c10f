//! acp-registry: validate, build and publish an ACP (Agent Client Protocol) agent registry.
//!
//! Layers, data flowing one way: the binaries parse arguments and call [`commands`];
//! commands use the domain ([`registry`], [`rules`]); the ground floor ([`source`],
//! [`time`], [`manifest`], [`diagnostics`]) imports nothing above it. Every file of a registry or a
//! collaboration folder is read through [`fs`] (no links followed, regular files only, sizes
//! capped while reading). The shared services [`net`] (the one HTTP client) and [`online`]
//! serve the network rules; `verify`, `update` and `pack` are reached only through their
//! commands.

pub mod commands;
pub mod diagnostics;
pub mod fs;
pub mod manifest;
pub mod net;
pub mod online;
pub(crate) mod pack;
pub mod registry;
pub mod rules;
pub mod site;
pub mod update;
pub mod verify;

#[cfg(test)]
mod tests;
// The ground floor shared with `acp-collab` lives in the core crate; re-exported under the
// old paths so `crate::source`, `crate::time` and `crate::acp` still name it.
pub use acp_registry_core::{acp, source, time};
