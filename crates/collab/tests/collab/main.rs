//! `acp-collab` end to end. Self-contained (the test kit, the library's `collab` module and the
//! two binaries), so the group moves as it is when `acp-collab` becomes its own crate.

mod support;

mod acp;
mod append;
mod concurrency;
mod escape;
mod faults;
mod flow;
mod guidance;
mod hostile;
mod init;
mod props;
mod skill;
mod validate;

/// The collaboration tool as cargo built it for these tests.
const COLLAB: &str = env!("CARGO_BIN_EXE_acp-collab");
/// The registry tool, for the `matrix` row of the collaboration entry.
fn registry() -> std::path::PathBuf {
    acp_test_kit::workspace_bin("acp-registry")
}
