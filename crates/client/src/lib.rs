//! acp-registry-client: install and run the agents of an ACP registry safely.
//!
//! The library the `acp-registry` tool's `install`, `run`, `list`, `which`, `uninstall` and
//! `cache gc` commands are built on, for editors and other clients to embed.

pub mod age;
pub mod archive;
pub mod document;
pub mod install;
pub mod launch;
#[doc(hidden)]
pub mod net;
pub mod platform;
pub mod registry;
pub mod resolve;
pub mod store;
