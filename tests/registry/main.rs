//! The registry tool end to end: every command of `acp-registry`, its network layer against
//! scripted servers and the hostile and fault-injection corpora. One binary, so the crate is
//! linked once for all of them; each module is one area (`cargo test --test registry AREA::`).
//!
//! Areas: `build`, `embed_icons`, `validate_cli`, `fmt`, `fix`, `edit`, `scaffold`, `update`,
//! `feeds` (`update` from release feeds), `pack*`, `verify*`, `schema_docs`, `snapshots`
//! (every renderer and `--help`), `golden`
//! (every published byte), `properties`, `parity`, `docs`, `integrations` (release script,
//! action, workflows, `cargo package`, `cargo tree`), `layering` (ARCHITECTURE.md's import
//! tables); the network (`online`, `online_net`, `net_faults`) and the hostile corpora
//! (`hostile`, `hostile_fs`, `faults`); `trust` (issue 29: where the token goes, pins only
//! of hashed bytes, no writes through links), `bounds` (issue 29: every untrusted document
//! and the configuration in bounded memory), `evidence` (issue 29: forged matrix parts and
//! rows), `client` (issue 30: `install`, `run`, `list`, `which`, `uninstall`, `cache gc`
//! against local servers); issue 31: `skills_build` (stand-alone skills, the skills indexes
//! and marketplace `build` writes), `skill_clients` (the `skills` CLI, Claude Code and the
//! reference validator on what `build` publishes), `skill_check` (`skill check` on hostile and
//! good skills indexes and marketplaces), `skill_install` (`skill install` from sites,
//! marketplaces and registries); issue 32: `lifecycle` (`deprecations.json`,
//! `lifecycle.json`); issue 33: `identity` (a registry's own name, URLs, logo and footer on
//! the site and in every output; `base-url-public`). Helpers that need the registry's types live in
//! `common/`.

mod common;

mod bounds;
mod build;
mod cli_flags;
mod client;
mod docs;
mod edit;
mod embed_icons;
mod evidence;
mod feeds;
mod fix;
mod fmt;
mod golden;
mod identity;
mod integrations;
mod layering;
mod lifecycle;
mod pack;
mod pack_skill;
mod pack_verify;
mod parity;
mod properties;
mod scaffold;
mod schema_docs;
mod skill_check;
mod skill_clients;
mod skill_install;
mod snapshots;
mod trust;
mod update;
mod validate_cli;
mod verify;
mod verify_archive;
mod verify_contain;
mod verify_fixtures;
mod verify_real_agents;

// The network: `validate --online`, the `net` layer and network faults.
mod net_faults;
mod online;
mod online_net;
mod private_hosts;

// Hostile input and killed writers.
mod faults;
mod hostile;
mod hostile_fs;

// Issue 31: stand-alone skills and the skills outputs of `build`.
mod skills_build;

/// The registry tool as cargo built it for these tests.
const REGISTRY: &str = env!("CARGO_BIN_EXE_acp-registry");
/// The collaboration tool (another package: the workspace build's), packed and verified by
/// the registry tests.
fn collab() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        acp_test_kit::workspace_bin("acp-collab")
            .display()
            .to_string()
    })
}
