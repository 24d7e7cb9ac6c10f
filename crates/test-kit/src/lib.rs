//! Helpers shared by the integration tests of `acp-registry` and `acp-collab`: one [`Run`] of a
//! program with typed [`Findings`], file trees, git, FIFOs, symbolic links, digests, the
//! `acp-collab append` command line, a scripted HTTP server and bounded runs.
//!
//! A library, so each helper is built once and linked where it is used. It cannot see
//! `CARGO_BIN_EXE_*` (cargo sets that only for a package's own tests): every helper that runs
//! a program takes its path, and the test binaries pass `env!("CARGO_BIN_EXE_…")`.
//!
//! The kit never depends on the code it tests. Test data is in `tests/fixtures/`
//! (`public-registry-sample/`: real entries, origin and licence in its NOTICE), ACP agents in
//! `tests/agents/`; `fuzz/` is its own workspace (runs recorded in FUZZING.md); `bench/`
//! regenerates BENCHMARKS.md.

pub mod agentskills;
#[cfg(unix)]
pub mod bounded;
pub mod collab;
pub mod files;
pub mod findings;
pub mod git;
pub mod program;
pub mod proxy;
#[cfg(unix)]
pub mod rss;
pub mod run;
pub mod server;
pub mod skill_clients;
pub mod wheel;

pub use collab::Append;
pub use files::{copy_dir, fifo, hex, sha256_hex, symlink, tree, write_tree};
pub use findings::{Finding, Findings, Summary};
pub use program::{on_path, uvx_or_skip, UV_PIN};
pub use run::Run;

/// An executable of another workspace package, as `cargo test --workspace` built it beside the
/// test binaries (a test binary is `target/<profile>/deps/<name>`; executables are in
/// `target/<profile>/`). Cargo names only the package's own executables in `CARGO_BIN_EXE_*`.
pub fn workspace_bin(name: &str) -> std::path::PathBuf {
    let test = std::env::current_exe().expect("the test binary's path");
    let dir = test
        .parent()
        .and_then(std::path::Path::parent)
        .expect("a test binary lives in target/<profile>/deps/");
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is not built: run `cargo test --workspace` (or `cargo build --workspace` first)",
        path.display()
    );
    path
}

/// The root of the repository the tests run in (fixtures, agents, the bundled registry).
pub fn repo_root() -> std::path::PathBuf {
    // The kit lives at crates/test-kit of that repository; no `..` in the path, so it equals
    // the root package's CARGO_MANIFEST_DIR.
    let kit = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    kit.ancestors()
        .nth(2)
        .expect("crates/test-kit has two parents")
        .to_path_buf()
}

/// Whether the long runs are asked for (`ACP_REGISTRY_LONG_TESTS=1`, set by `.ci/run`).
pub fn long_tests() -> bool {
    std::env::var_os("ACP_REGISTRY_LONG_TESTS").is_some_and(|v| v == "1")
}

/// A small deterministic generator (xorshift64): random points that are the same on every run
/// of the suite, so a failure can be replayed.
pub fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
