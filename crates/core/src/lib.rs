//! acp-registry-core: what the registry tool (`acp-registry`) and the collaboration tool
//! (`acp-collab`) share, and nothing that pulls in HTTP, JSON Schema, templates or archives.
//!
//! The ground floor of both: no module here imports anything of either tool.
//!
//! - [`source`]: source files, byte spans and line:column mapping;
//! - [`time`]: UTC timestamps;
//! - [`fs`]: safe reads of an untrusted tree and atomic writes;
//! - [`acp`]: ACP on stdio (framing, JSON-RPC, the method catalogue);
//! - [`escape`]: escaping untrusted text for terminals and other outputs;
//! - [`skill_install`]: the one skill installer (where agents read skills, the install
//!   record, no writes through links);
//! - [`cli`]: the failure line and the manual/completions both binaries print.

// The public surface: these seven modules, each a shared library of both tools. Inside them `pub`
// marks what a tool uses; the rest is `pub(crate)`.
#[cfg(feature = "acp")]
pub mod acp;
#[cfg(feature = "cli")]
pub mod cli;
pub mod escape;
pub mod fs;
pub mod skill_install;
pub mod source;
pub mod time;
