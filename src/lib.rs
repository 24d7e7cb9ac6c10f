//! acp-registry: validate, build and publish an ACP agent registry.
pub mod collab;
