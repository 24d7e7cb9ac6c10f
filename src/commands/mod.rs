//! Commands: what each subcommand does, between argument parsing (the binaries) and the
//! domain (`registry`, `rules`). Each command module holds its `Options`, which derive
//! `clap::Args` and are what the binary parses (their field docs are the `--help` text), and a
//! `run` returning `Result<`[`Exit`]`, `[`CommandError`]`>`; output goes to the writers given,
//! coloured only when the binary found the [`Stream`] allows it.
//!
//! No command imports another: what several share is in the helper files beside them, re-exported
//! here ([`exit`] codes, [`CommandError`] in `error`, paths as the user named them in
//! `display`, the standard [`Stream`]s in `stream`, the canonical manifest layout in
//! `canonical`, the client commands' flags and library set-up in [`client`]), in [`online`] (the `--online` flag groups), in `template`, in
//! `crate::flags` (flag groups and unit parsers) and in `crate::diagnostics` (`--format`
//! and its renderers). A test below keeps it so.
//!
//! Paths as the user named them: rules report paths relative to the registry root, and a command
//! relocates the report once (`display_root`: relative to the working directory as `--registry`
//! named it; for SARIF the registry's place in its git work tree, under `uriBaseId` `SRCROOT`),
//! so annotations attach to pull-request lines in either layout.
//!
//! Errors: the library's are `thiserror` types (`RegistryError`, `BuildError`, `GitError`,
//! `SiteError`, …, one variant per failure); a command wraps them in [`CommandError`] without
//! changing their message. Only the binary uses `anyhow`, to print an error's cause chain once
//! (`failure_line`). Bad input is always a finding with a file and a fix; I/O and usage failures
//! exit 2 with a message naming the path or the flag to change.

pub mod build;
mod build_report;
pub mod cache;
mod canonical;
pub mod client;
mod client_text;
mod display;
mod error;
pub mod exit;
pub mod explain;
pub mod fmt;
pub mod init;
pub mod install;
pub mod list;
pub mod matrix;
pub mod new;
pub mod online;
pub mod pack;
pub mod run;
pub mod skill;
pub mod skill_check;
mod skill_install;
mod skill_registry;
mod stream;
mod template;
pub mod uninstall;
pub mod update;
pub mod validate;
pub mod verify;
pub mod which;

// Shared with `acp-collab`, so they live in the core.
pub use crate::flags::DEFAULT_REGISTRY;
pub use acp_registry_core::cli::{failure_line, manual};

pub use error::CommandError;
pub use exit::Exit;
pub use stream::Stream;

error::failed_from!(init::InitError, new::NewError);

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Each command module's source: none may name another (see the module doc).
    const COMMANDS: [(&str, &str); 17] = [
        ("build", include_str!("build.rs")),
        ("cache", include_str!("cache.rs")),
        ("explain", include_str!("explain.rs")),
        ("fmt", include_str!("fmt.rs")),
        ("init", include_str!("init.rs")),
        ("install", include_str!("install.rs")),
        ("list", include_str!("list.rs")),
        ("matrix", include_str!("matrix.rs")),
        ("new", include_str!("new.rs")),
        ("pack", include_str!("pack.rs")),
        ("run", include_str!("run.rs")),
        ("skill", include_str!("skill.rs")),
        ("uninstall", include_str!("uninstall.rs")),
        ("update", include_str!("update.rs")),
        ("validate", include_str!("validate.rs")),
        ("verify", include_str!("verify.rs")),
        ("which", include_str!("which.rs")),
    ];

    /// The other commands `source` (the module `name`) names through `super::` or
    /// `commands::`, grouped imports (`super::{a, b}`) included.
    fn commands_named<'a>(name: &str, source: &'a str) -> BTreeSet<&'a str> {
        let mut named = BTreeSet::new();
        for prefix in ["super::", "commands::"] {
            for (at, _) in source.match_indices(prefix) {
                let rest = &source[at + prefix.len()..];
                let paths = match rest.strip_prefix('{') {
                    Some(group) => &group[..group.find('}').unwrap_or(group.len())],
                    None => rest,
                };
                for path in paths.split(',') {
                    let mut segments = path
                        .trim()
                        .split(|c: char| !c.is_alphanumeric() && c != '_');
                    let module = segments.next().unwrap_or_default();
                    if module != name && COMMANDS.iter().any(|(command, _)| *command == module) {
                        named.insert(module);
                    }
                    if rest.strip_prefix('{').is_none() {
                        break;
                    }
                }
            }
        }
        named
    }

    #[test]
    fn no_command_imports_another_command() {
        for (name, source) in COMMANDS {
            let named = commands_named(name, source);
            assert!(
                named.is_empty(),
                "commands::{name} names commands {named:?}: move what they share to a helper file of commands/, crate::flags or crate::diagnostics"
            );
        }
    }

    #[test]
    fn the_scan_finds_a_command_named_alone_or_in_a_group() {
        let named = |source| {
            commands_named("new", source)
                .into_iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(
            named("use super::validate::{render, Format};"),
            ["validate"]
        );
        assert_eq!(named("use super::{exit, fmt, Exit};"), ["fmt"]);
        assert_eq!(named("let x = crate::commands::verify::run;"), ["verify"]);
        assert_eq!(
            named("use super::template::fill; use super::{exit, new};"),
            Vec::<&str>::new()
        );
        assert_eq!(named("use crate::verify::Options;"), Vec::<&str>::new());
    }

    /// `validate --online` and `update` flatten the same endpoint flags: the same command
    /// line gives the same overrides and loopback switch.
    #[test]
    fn validate_online_and_update_read_the_endpoint_flags_the_same_way() {
        let endpoints = ["--npm-registry", "http://n", "--pypi-url", "http://p"];
        let endpoints = [&endpoints[..], &["--github-api", "http://g"]].concat();
        let endpoints = [&endpoints[..], &["--allow-loopback-for-tests"]].concat();
        let validate: validate::Options =
            crate::flags::parse(&[&["--online"], &endpoints[..]].concat()).expect("validate");
        let update: update::Options = crate::flags::parse(&endpoints).expect("update");
        assert!(validate.online.enabled());
        for flags in [&validate.online.endpoints, &update.endpoints] {
            let overrides = flags.overrides();
            assert_eq!(overrides.npm.as_deref(), Some("http://n"));
            assert_eq!(overrides.pypi.as_deref(), Some("http://p"));
            assert_eq!(overrides.github_api.as_deref(), Some("http://g"));
            assert!(flags.loopback.allow_loopback_for_tests);
        }
        let config = crate::registry::Config::default();
        let online = online::options(&validate.online, &config).unwrap();
        assert_eq!(online.endpoints.github_api, "http://g");
        assert!(online.net.allow_loopback);
    }
}
