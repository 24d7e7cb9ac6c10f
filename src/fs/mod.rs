//! Safe reading of an untrusted tree and atomic writes: the core's (`acp_registry_core::fs`,
//! shared with `acp-collab`), re-exported so `crate::fs` keeps naming them, plus [`archive`],
//! which only the registry tool needs (it links the archive crates).

pub(crate) mod archive;

pub(crate) use acp_registry_core::fs::*;
