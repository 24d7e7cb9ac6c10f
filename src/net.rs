//! The tool's only HTTP client, [`acp_registry_client::net`]: one service shared with the
//! client library, named `crate::net` here like every other module.

pub(crate) use acp_registry_client::net::*;
