//! ACP (Agent Client Protocol) on stdio: newline-delimited JSON-RPC 2.0.
//!
//! Sans I/O, so a client (`verify`, `matrix`) and a server (`acp-collab acp`) share it:
//! [`framing`] splits a byte stream into capped lines, [`jsonrpc`] classifies a line as a
//! request, response or notification and writes messages back, [`methods`] takes the method
//! names and the `initialize` shapes from the `agent-client-protocol-schema` crate, so the
//! catalogue follows the protocol rather than a copy of it.

pub mod framing;
mod jsonrpc;
pub mod methods;

pub use framing::{Frame, LineBuffer};
pub use jsonrpc::error_codes;
pub use jsonrpc::{Id, Message, ParseError, RpcError};
