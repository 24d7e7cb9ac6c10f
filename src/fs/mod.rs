//! The registry tool's own file-system service: [`archive`], the safe extraction of downloaded
//! archives, which only this tool needs (it links the archive crates). Safe reads of an
//! untrusted tree and atomic writes are the core's `acp_registry_core::fs`, named by that path
//! everywhere (shared with `acp-collab`).

pub(crate) mod archive;
