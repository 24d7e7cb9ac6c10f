//! The Agent Collaboration Protocol engine (see `../shared/specs/collab-protocol.md`).
