//! `acp-registry new <id>`: scaffold an entry (a commented JSONC manifest, a placeholder icon
//! that passes the icon rules, a README), then validate it. Never overwrites anything.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::validate::{exit_code, render, Format};
use crate::manifest::names::is_valid_id;
use crate::registry::check_registry;
use crate::rules::{package_name_and_pin, Version};

/// Where `$schema` points: the schema `build` publishes at the default base URL.
pub const SCHEMA_URL: &str =
    "https://cdn.agentclientprotocol.com/registry/v1/latest/agent.schema.json";

const AGENT: &str = include_str!("../../templates/new/agent.json");
const NPX: &str = include_str!("../../templates/new/npx.jsonc");
const UVX: &str = include_str!("../../templates/new/uvx.jsonc");
const BINARY: &str = include_str!("../../templates/new/binary.jsonc");
const ICON: &str = include_str!("../../templates/new/icon.svg");
const README: &str = include_str!("../../templates/new/README.md");

/// The version a scaffold starts at when the package names none.
const FIRST_VERSION: &str = "0.1.0";

/// How the new agent is launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// An npm package: `name`, `@scope/name` or pinned `name@X.Y.Z`.
    Npx(String),
    /// A `PyPI` package: `name`, or pinned `name==X.Y.Z`.
    Uvx(String),
    /// Per-platform archives (placeholders for every OS family).
    Binary,
}

#[derive(Debug, Clone)]
/// What `new` scaffolds.
pub struct Options {
    /// The registry root the entry folder is created in.
    pub registry: PathBuf,
    /// The new entry's id (and folder name).
    pub id: String,
    /// How the agent launches.
    pub launch: Launch,
    /// Colour the printed next steps.
    pub color: bool,
}

#[derive(Debug, thiserror::Error)]
/// Why `new` created nothing.
pub enum NewError {
    #[error("`{0}` is not a valid id: use lowercase letters, digits and `-`, starting with a letter, at most 64 bytes, not a Windows device name (e.g. `my-agent`)")]
    /// The id is not a valid entry id.
    InvalidId(String),
    #[error("`{}` already exists; `new` never overwrites: pick another id or edit that entry", .0.display())]
    /// The entry folder already exists.
    Exists(PathBuf),
    #[error("package `{spec}` pins `{pin}`, not an exact `X.Y.Z` version; pin one (`{name}{separator}1.2.3`) or leave the version out")]
    /// The package spec pins something other than an exact version.
    Unpinned {
        /// The spec as given.
        spec: String,
        /// The package name, for the suggested spec.
        name: String,
        /// The pin that is not `X.Y.Z`.
        pin: String,
        /// `@` (npm) or `==` (`PyPI`) between name and version.
        separator: &'static str,
    },
    #[error("cannot write `{}`: {source}", path.display())]
    /// Writing the new entry failed.
    Io {
        /// The file or folder being written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    #[error(transparent)]
    /// The registry could not be read.
    Registry(#[from] crate::registry::RegistryError),
}

/// The files of a new entry, by name, for `id` launched by `launch`.
pub fn scaffold(id: &str, launch: &Launch) -> Result<Vec<(&'static str, String)>, NewError> {
    if !is_valid_id(id) {
        return Err(NewError::InvalidId(id.to_string()));
    }
    let (version, distribution) = match launch {
        Launch::Npx(spec) => package(NPX, spec, true)?,
        Launch::Uvx(spec) => package(UVX, spec, false)?,
        Launch::Binary => (FIRST_VERSION.to_string(), BINARY.to_string()),
    };
    let name = display_name(id);
    let fill = |template: &str| {
        template
            .replace("{{distribution}}", distribution.trim_end())
            .replace("{{schema_url}}", SCHEMA_URL)
            .replace("{{version}}", &version)
            .replace("{{name}}", &name)
            .replace("{{id}}", id)
    };
    Ok(vec![
        ("agent.json", fill(AGENT)),
        ("icon.svg", ICON.to_string()),
        ("README.md", fill(README)),
    ])
}

/// The distribution block for a package and the version it pins (or the first version,
/// pinned for it).
fn package(template: &str, spec: &str, npm: bool) -> Result<(String, String), NewError> {
    let (name, pin) = package_name_and_pin(spec, npm);
    let separator = if npm { "@" } else { "==" };
    let version = match pin {
        None => FIRST_VERSION.to_string(),
        Some(pin) if Version::parse(pin).is_some() => pin.to_string(),
        Some(pin) => {
            return Err(NewError::Unpinned {
                spec: spec.to_string(),
                name: name.to_string(),
                pin: pin.to_string(),
                separator,
            })
        }
    };
    let pinned = match pin {
        Some(_) => spec.to_string(),
        None => format!("{spec}{separator}{version}"),
    };
    let quoted = serde_json::to_string(&pinned).expect("a string serialises");
    let block = template.replace("{{package}}", &quoted[1..quoted.len() - 1]);
    Ok((version, block))
}

/// `my-agent` → `My Agent`.
fn display_name(id: &str) -> String {
    id.split('-')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Write the entry into `<registry>/<id>/`, then validate it: the findings (placeholders to
/// replace, for binaries the missing checksums) and the exit code of `validate`.
pub fn run(options: &Options, out: &mut dyn Write) -> anyhow::Result<u8> {
    let files = scaffold(&options.id, &options.launch)?;
    let folder = options.registry.join(&options.id);
    create(&options.registry, &folder, &files)?;
    for (name, _) in &files {
        writeln!(out, "created {}", folder.join(name).display())?;
    }
    let only = BTreeSet::from([options.id.clone()]);
    let report = super::relocated(
        &check_registry(&options.registry, Some(&only))?.report,
        &options.registry,
    );
    out.write_all(render(&report, Format::Human, options.color).as_bytes())?;
    writeln!(
        out,
        "next: replace the placeholders in {}, then run `acp-registry validate`",
        folder.join("agent.json").display()
    )?;
    Ok(exit_code(&report, false))
}

/// Create the folder (and the registry root when missing) and every file, refusing anything
/// that exists, links included.
fn create(root: &Path, folder: &Path, files: &[(&str, String)]) -> Result<(), NewError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| NewError::Io { path, source }
    };
    if !root.exists() {
        std::fs::create_dir_all(root).map_err(io(root))?;
    }
    match std::fs::create_dir(folder) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(NewError::Exists(folder.to_path_buf()))
        }
        other => other.map_err(io(folder))?,
    }
    for (name, text) in files {
        let path = folder.join(name);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .map_err(io(&path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_without_a_pin_is_pinned_to_the_first_version() {
        let (version, block) = package(NPX, "@scope/tool", true).unwrap();
        assert_eq!(version, "0.1.0");
        assert!(
            block.contains(r#""package": "@scope/tool@0.1.0""#),
            "{block}"
        );
        let (version, block) = package(UVX, "tool[acp]==2.3.4", false).unwrap();
        assert_eq!(version, "2.3.4");
        assert!(
            block.contains(r#""package": "tool[acp]==2.3.4""#),
            "{block}"
        );
    }

    #[test]
    fn a_moving_pin_is_refused_before_anything_is_written() {
        let error = package(NPX, "tool@latest", true).unwrap_err().to_string();
        assert!(error.contains("tool@1.2.3"), "{error}");
    }

    #[test]
    fn ids_become_display_names_word_by_word() {
        assert_eq!(display_name("my-agent"), "My Agent");
        assert_eq!(display_name("x2"), "X2");
    }
}
