//! `acp-collab` end to end, through the test kit and the two binaries (`acp-registry` only for
//! `matrix`).
//!
//! `init`, the `append` guards, the validator's checks, whole flows, `wait`, and the property
//! tests (`props`, proptest). `acp`: an ACP session over pipes, and `matrix` on the entry
//! recording its slash commands. `concurrency`: 8 processes appending at once. `guidance`: the
//! follow-up commands and flag reports, with a two-participant run driven only by the commands
//! `init` and `next` print, through the installed launchers, one thread per participant.
//! `skill`: `skill install`, `uninstall` and `list` per agent and client layout, and the
//! shadowing warnings. `escape`: hostile folder text escaped on stdout and stderr. `faults`:
//! writers killed midway. `hostile`: hostile folders. `links`: no write or delete through a link. Outside this group:
//! `fuzz/fuzz_targets/collab_validate.rs` (cargo-fuzz, its own workspace) and
//! `bench/collab_validate.sh` with `examples/gen_collab.rs` (BENCHMARKS.md).

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
mod links;
mod props;
mod skill;
mod validate;

/// The collaboration tool as cargo built it for these tests.
const COLLAB: &str = env!("CARGO_BIN_EXE_acp-collab");
/// The registry tool, for the `matrix` row of the collaboration entry.
fn registry() -> std::path::PathBuf {
    acp_test_kit::workspace_bin("acp-registry")
}
