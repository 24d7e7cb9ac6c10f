//! The registry tool's own file-system service: [`archive`], the safe extraction of downloaded
//! archives, which lives in the client library (`acp_registry_client::archive`) so editors
//! unpack with the same rules. Safe reads of an untrusted tree and atomic writes are the core's
//! `acp_registry_core::fs`, named by that path everywhere (shared with `acp-collab`).

pub(crate) use acp_registry_client::archive;
