//! `acp-registry new <id>`: scaffold an entry (a commented JSONC manifest in the layout `fmt`
//! writes, a placeholder icon, a README), then validate it and print what is left to do: the
//! `placeholder` findings. Never overwrites anything.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::canonical::formatted;
use super::display::{display_root, join_display};
use super::error::CommandError;
use super::exit::{self, Exit};
use super::online::{self, EndpointFlags, OnlineFlags};
use super::template::fill;
use crate::diagnostics::{
    escape, render, render_human_findings, Code, ReportFormat, PIN_DIGESTS_COMMAND,
};
use crate::flags::{ByteSize, Loopback, Registry};
use crate::manifest::names::is_valid_id;
use crate::manifest::PLATFORMS;
use crate::registry::check_registry;
use crate::rules::{package_name_and_pin, url_versions, Version, PLACEHOLDERS, SCAFFOLD_ICON};

/// Where `$schema` points: the schema `build` publishes at the default base URL.
pub(crate) const SCHEMA_URL: &str =
    "https://cdn.agentclientprotocol.com/registry/v1/latest/agent.schema.json";

const AGENT: &str = include_str!("../../templates/new/agent.json");
const NPX: &str = include_str!("../../templates/new/npx.jsonc");
const UVX: &str = include_str!("../../templates/new/uvx.jsonc");
const BINARY: &str = include_str!("../../templates/new/binary.jsonc");
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
    /// Per-platform archives: the ones given, each with its digest, or placeholders for every
    /// OS family when none is.
    Binary(Vec<Archive>),
}

/// One platform's release archive given to `new --binary --archive PLATFORM=URL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// The platform key, e.g. `linux-x86_64`.
    pub platform: String,
    /// The archive's URL.
    pub url: String,
    /// Its sha256, found by [`run`] before anything is written.
    pub sha256: Option<String>,
}

impl Archive {
    /// `PLATFORM=URL`, as the flag takes it.
    pub fn parse(text: &str) -> Result<Archive, String> {
        let (platform, url) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}` is not PLATFORM=URL"))?;
        if !PLATFORMS.contains(&platform) {
            return Err(format!(
                "unknown platform `{platform}`; platforms are {}",
                PLATFORMS.join(", ")
            ));
        }
        Ok(Archive {
            platform: platform.to_string(),
            url: url.to_string(),
            sha256: None,
        })
    }
}

/// What `new` scaffolds; the field docs are its `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(group = clap::ArgGroup::new("launch").required(true))]
#[allow(clippy::doc_markdown)] // The docs are `--help` text, written for users.
pub struct Options {
    /// `--registry`: the registry the entry folder is created in.
    #[command(flatten)]
    pub registry: Registry,
    /// The agent's id, also its folder name: lowercase letters, digits and `-`.
    pub id: String,
    /// Launched with npx: an npm package, `name` or `@scope/name`, optionally pinned `@X.Y.Z`.
    #[arg(long, value_name = "PKG", group = "launch")]
    pub npx: Option<String>,
    /// Launched with uvx: a PyPI package, optionally pinned `==X.Y.Z`.
    #[arg(long, value_name = "PKG", group = "launch")]
    pub uvx: Option<String>,
    /// Per-platform archives: those of --archive, each with its sha256, else placeholders for
    /// macOS, Linux and Windows.
    #[arg(long, group = "launch")]
    pub binary: bool,
    /// With --binary: one platform's release archive, e.g. `linux-x86_64=<asset URL>`
    /// (repeat per platform). The sha256 of the download is written, and refused when GitHub
    /// publishes another digest for the asset.
    #[arg(long, value_name = "PLATFORM=URL", requires = "binary", value_parser = Archive::parse)]
    pub archive: Vec<Archive>,
    /// Largest archive downloaded to hash it, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = ByteSize::mib(crate::online::DEFAULT_ARCHIVE_CAP_MIB))]
    pub archive_cap: ByteSize,
    /// GitHub API base URL asked for published digests (overrides `online.github_api`).
    #[arg(long, value_name = "URL")]
    pub github_api: Option<String>,
    /// The test-only loopback switch.
    #[command(flatten)]
    pub loopback: Loopback,
    /// Colour the printed next steps (set by the binary for a terminal).
    #[arg(skip)]
    pub color: bool,
    /// `--quiet` (set by the binary): the scaffold's findings only, no "created" or "next"
    /// lines.
    #[arg(skip)]
    pub quiet: bool,
}

impl Options {
    /// How the agent launches: `--npx`, `--uvx`, else `--binary` with its archives.
    pub fn launch(&self) -> Launch {
        match (&self.npx, &self.uvx) {
            (Some(package), _) => Launch::Npx(package.clone()),
            (_, Some(package)) => Launch::Uvx(package.clone()),
            _ => Launch::Binary(self.archive.clone()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
/// Why `new` created nothing.
pub enum NewError {
    #[error("`{0}` is not a valid id: use lowercase letters, digits and `-`, starting with a letter, at most 64 bytes, not a Windows device name (e.g. `my-agent`)")]
    /// The id is not a valid entry id.
    InvalidId(String),
    #[error("registry folder `{}` does not exist; run `acp-registry init` to set up a registry repository, or pass the registry root with --registry DIR", .0.display())]
    /// The registry root does not exist (a typo would otherwise start a registry of its own).
    NoRegistry(PathBuf),
    #[error("`{}` already exists; `new` never overwrites: pick another id or edit that entry", .0.display())]
    /// The entry folder already exists.
    Exists(PathBuf),
    #[error("`{}` is a symbolic link; `new` never writes through a link (it could point anywhere): remove the link or pick another id", .0.display())]
    /// The entry folder is a link (dangling or not): nothing is written through it.
    Link(PathBuf),
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
        source: acp_registry_core::fs::ReadError,
    },
    #[error(transparent)]
    /// The registry could not be read.
    Registry(#[from] crate::registry::RegistryError),
    #[error("--archive {platform}={url}: {message}")]
    /// An `--archive` flag cannot be used.
    Archive {
        /// The platform key.
        platform: String,
        /// The URL as given.
        url: String,
        /// What is wrong.
        message: String,
    },
    #[error("cannot find the sha256 of `{url}` ({error}); nothing was created: check the URL, or run again later")]
    /// The archive could not be downloaded to hash it, or its hash is not GitHub's published digest.
    Digest {
        /// The archive's URL.
        url: String,
        /// Why.
        error: crate::online::PinError,
    },
    #[error(transparent)]
    /// The network could not be set up.
    Online(#[from] crate::online::OnlineError),
    #[error("{0}")]
    /// The network settings (the configuration's `network` section) are unusable.
    Network(String),
    #[error("the scaffold does not fill or format ({0}); this is a bug of acp-registry, please report it")]
    /// A template of `templates/new/` is broken.
    Template(String),
}

/// The files of a new entry, by name, for `id` launched by `launch`. The manifest is passed
/// through `fmt`'s formatter, so `fmt --check` accepts what `new` writes whatever the
/// package spec (the templates are canonical already: a test keeps them so).
pub(crate) fn scaffold(id: &str, launch: &Launch) -> Result<Vec<(&'static str, String)>, NewError> {
    let mut files = filled(id, launch)?;
    files[0].1 = formatted(&files[0].1, "agent.json").map_err(NewError::Template)?;
    Ok(files)
}

/// The templates filled for `id`: `agent.json`, `icon.svg`, `README.md`.
fn filled(id: &str, launch: &Launch) -> Result<Vec<(&'static str, String)>, NewError> {
    if !is_valid_id(id) {
        return Err(NewError::InvalidId(id.to_string()));
    }
    let (version, package, distribution) = match launch {
        Launch::Npx(spec) => package(NPX, spec, true)?,
        Launch::Uvx(spec) => package(UVX, spec, false)?,
        Launch::Binary(archives) if archives.is_empty() => {
            (FIRST_VERSION.to_string(), String::new(), BINARY.to_string())
        }
        Launch::Binary(archives) => (
            archives_version(archives),
            String::new(),
            binary_block(id, archives),
        ),
    };
    let name = display_name(id);
    let value = |key: &str| -> Option<String> {
        let placeholder = PLACEHOLDERS.iter().find(|p| p.token == key);
        Some(match key {
            "id" => id.to_string(),
            "name" => name.clone(),
            "version" => version.clone(),
            "schema_url" => SCHEMA_URL.to_string(),
            "package" => package.clone(),
            "pin_digests" => PIN_DIGESTS_COMMAND.to_string(),
            _ => placeholder?.text.to_string(),
        })
    };
    let block = fill(&distribution, &value).map_err(NewError::Template)?;
    let manifest = fill(AGENT, &|key| match key {
        "distribution" => Some(block.trim_end().to_string()),
        _ => value(key),
    })
    .map_err(NewError::Template)?;
    Ok(vec![
        ("agent.json", manifest),
        ("icon.svg", SCAFFOLD_ICON.to_string()),
        (
            "README.md",
            fill(README, &value).map_err(NewError::Template)?,
        ),
    ])
}

/// The version every archive URL names, else the first version (`version-mismatch` then
/// says what to align).
fn archives_version(archives: &[Archive]) -> String {
    let named: BTreeSet<String> = archives
        .iter()
        .filter_map(|a| url::Url::parse(&a.url).ok())
        .flat_map(|url| url_versions(url.path()))
        .collect();
    match named.into_iter().collect::<Vec<_>>().as_slice() {
        [one] if Version::parse(one).is_some() => one.clone(),
        _ => FIRST_VERSION.to_string(),
    }
}

/// The distribution block of the given archives, each with its `cmd` guess and its digest;
/// `fmt`'s formatter puts it in the canonical layout.
fn binary_block(id: &str, archives: &[Archive]) -> String {
    let mut archives = archives.to_vec();
    archives.sort_by(|a, b| a.platform.cmp(&b.platform));
    let targets: serde_json::Map<String, serde_json::Value> = archives
        .iter()
        .map(|a| {
            let cmd = if a.platform.starts_with("windows") {
                format!("{id}.exe")
            } else {
                format!("./{id}")
            };
            let mut target = serde_json::json!({ "archive": a.url, "cmd": cmd });
            if let Some(sha256) = &a.sha256 {
                target["sha256"] = serde_json::Value::String(sha256.clone());
            }
            (a.platform.clone(), target)
        })
        .collect();
    let json = serde_json::to_string_pretty(&serde_json::json!({ "binary": targets }))
        .expect("a JSON value serialises");
    // The members of the outer object, indented as `distribution`'s: the layout `fmt` writes.
    let lines: Vec<String> = json
        .lines()
        .skip(1)
        .take_while(|line| *line != "}")
        .map(|line| format!("  {line}"))
        .collect();
    format!(
        "    // One archive per platform, downloaded and unpacked by the client; `cmd` is the\n    // executable inside it (check it), `sha256` the archive's digest.\n{}",
        lines.join("\n")
    )
}

/// Find the digest of every `--archive` (GitHub's published one, else the download's),
/// before anything is written.
fn pin_archives(options: &Options) -> Result<Launch, NewError> {
    let launch = options.launch();
    let Launch::Binary(archives) = &launch else {
        return Ok(launch);
    };
    if archives.is_empty() {
        return Ok(launch);
    }
    let mut seen = BTreeSet::new();
    for a in archives {
        if !seen.insert(a.platform.as_str()) {
            return Err(NewError::Archive {
                platform: a.platform.clone(),
                url: a.url.clone(),
                message: "the platform is given twice".into(),
            });
        }
    }
    let (config, _) = crate::registry::Config::load(&options.registry.root);
    // Only the GitHub API, the archive cap and the loopback switch apply to the digests.
    let flags = OnlineFlags {
        archive_cap: options.archive_cap,
        endpoints: EndpointFlags {
            github_api: options.github_api.clone(),
            loopback: options.loopback,
            ..EndpointFlags::default()
        },
        ..OnlineFlags::default()
    };
    let online = online::options(&flags, &config).map_err(|e| NewError::Network(e.to_string()))?;
    let urls: Vec<String> = archives.iter().map(|a| a.url.clone()).collect();
    let digests = crate::online::digest::pin_digests(&urls, &online)?;
    let mut pinned = Vec::new();
    for (archive, digest) in archives.iter().zip(digests) {
        let digest = digest.map_err(|error| NewError::Digest {
            url: archive.url.clone(),
            error,
        })?;
        pinned.push(Archive {
            sha256: Some(digest.sha256),
            ..archive.clone()
        });
    }
    Ok(Launch::Binary(pinned))
}

/// The version a package spec pins (or the first version, pinned for it), the pinned spec
/// escaped for a JSON string, and the distribution template it goes into.
fn package(
    template: &'static str,
    spec: &str,
    npm: bool,
) -> Result<(String, String, String), NewError> {
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
    let quoted = serde_json::Value::String(pinned).to_string();
    let escaped = quoted[1..quoted.len() - 1].to_string();
    Ok((version, escaped, template.to_string()))
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

/// Write the entry into `<registry>/<id>/`, then validate it and print the findings as the
/// to-do list (the placeholders to replace; for binaries the missing checksums) and the
/// command to run next. Exit 0: the entry was created; its findings are expected.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Exit, CommandError> {
    // Refused before the network is asked.
    scaffold(&options.id, &options.launch())?;
    let registry = &options.registry.root;
    let folder = registry.join(&options.id);
    if !registry.is_dir() {
        return Err(NewError::NoRegistry(registry.clone()).into());
    }
    if let Some(taken) = taken(&folder) {
        return Err(taken.into());
    }
    let launch = pin_archives(options)?;
    let files = scaffold(&options.id, &launch)?;
    create(registry, &folder, &files)?;
    let root = display_root(registry);
    let entry = join_display(&root, &options.id);
    for (name, _) in files.iter().filter(|_| !options.quiet) {
        let shown = join_display(&entry, name);
        writeln!(out, "created {}", escape::terminal(&shown))?;
    }
    let only = BTreeSet::from([options.id.clone()]);
    let report =
        super::display::relocated(&check_registry(registry, Some(&only))?.report, registry);
    if options.quiet {
        out.write_all(render_human_findings(&report, options.color).as_bytes())?;
        return Ok(exit::OK);
    }
    out.write_all(render(&report, ReportFormat::Human, options.color).as_bytes())?;
    let todo = if report.diagnostics.is_empty() {
        "next:"
    } else {
        "next: the findings above are what is left to do; replace each placeholder, then run"
    };
    writeln!(
        out,
        "{todo}\n  {}",
        escape::terminal(&next_command(VALIDATE, &root, &entry))
    )?;
    if report
        .diagnostics
        .iter()
        .any(|d| d.code == Code::Sha256Missing)
    {
        writeln!(
            out,
            "once the release is published, pin the archives' digests with\n  {}",
            escape::terminal(&next_command(PIN_DIGESTS_COMMAND, &root, &entry))
        )?;
    }
    Ok(exit::OK)
}

const VALIDATE: &str = "acp-registry validate";

/// `command <entry>` (`command` a `validate` command line), with `--registry` when the
/// registry is not the default one every command assumes.
fn next_command(command: &str, root: &str, entry: &str) -> String {
    let quote = acp_registry_core::escape::shell_word;
    match root {
        crate::flags::DEFAULT_REGISTRY => format!("{command} {}", quote(entry)),
        "" => format!("{command} --registry . {}", quote(entry)),
        _ => format!("{command} --registry {} {}", quote(root), quote(entry)),
    }
}

/// Why the entry folder cannot be created: something is there, named as a link when it is
/// one (dangling or not), so the message says what to remove.
fn taken(folder: &Path) -> Option<NewError> {
    match acp_registry_core::fs::kind(folder) {
        Ok(None) => None,
        Ok(Some(acp_registry_core::fs::Kind::Link)) => Some(NewError::Link(folder.to_path_buf())),
        Ok(Some(_)) | Err(_) => Some(NewError::Exists(folder.to_path_buf())),
    }
}

/// Create the entry folder in the existing registry root and every file, refusing anything
/// that exists, links included.
fn create(root: &Path, folder: &Path, files: &[(&str, String)]) -> Result<(), NewError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| NewError::Io {
            path,
            source: acp_registry_core::fs::ReadError::Io(source),
        }
    };
    if !root.is_dir() {
        return Err(NewError::NoRegistry(root.to_path_buf()));
    }
    match std::fs::create_dir(folder) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(taken(folder).unwrap_or_else(|| NewError::Exists(folder.to_path_buf())))
        }
        other => other.map_err(io(folder))?,
    }
    for (name, text) in files {
        let path = folder.join(name);
        acp_registry_core::fs::write_new(&path, text.as_bytes())
            .map_err(|source| NewError::Io { path, source })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_without_a_pin_is_pinned_to_the_first_version() {
        let (version, spec, _) = package(NPX, "@scope/tool", true).unwrap();
        assert_eq!(
            (version.as_str(), spec.as_str()),
            ("0.1.0", "@scope/tool@0.1.0")
        );
        let (version, spec, _) = package(UVX, "tool[acp]==2.3.4", false).unwrap();
        assert_eq!(
            (version.as_str(), spec.as_str()),
            ("2.3.4", "tool[acp]==2.3.4")
        );
    }

    #[test]
    fn a_moving_pin_is_refused_before_anything_is_written() {
        let error = package(NPX, "tool@latest", true).unwrap_err().to_string();
        assert!(error.contains("tool@1.2.3"), "{error}");
    }

    #[test]
    fn the_manifest_templates_are_in_the_layout_fmt_writes() {
        for launch in [
            Launch::Npx("@scope/tool".into()),
            Launch::Uvx("tool[acp]".into()),
            Launch::Binary(Vec::new()),
            Launch::Binary(vec![Archive {
                platform: "linux-x86_64".into(),
                url: "https://github.com/o/my-agent/releases/download/v1.2.3/a.tar.gz".into(),
                sha256: Some("ab".repeat(32)),
            }]),
        ] {
            let manifest = &filled("my-agent", &launch).unwrap()[0].1;
            let canonical = formatted(manifest, "agent.json").unwrap();
            assert_eq!(
                &canonical, manifest,
                "templates/new/ for {launch:?} is not canonical: write it as `fmt` does"
            );
        }
    }

    #[test]
    fn every_placeholder_is_written_by_a_template_and_no_key_is_left() {
        let files: Vec<String> = [Launch::Npx("tool".into()), Launch::Binary(Vec::new())]
            .iter()
            .flat_map(|launch| scaffold("my-agent", launch).unwrap())
            .map(|(_, text)| text)
            .collect();
        let all = files.join("\n");
        assert!(!all.contains("{{"), "{all}");
        for p in PLACEHOLDERS {
            assert!(all.contains(p.text), "no template writes `{}`", p.token);
        }
    }

    #[test]
    fn the_binary_scaffold_names_the_pin_command_the_sha256_missing_help_names() {
        let files = scaffold("my-agent", &Launch::Binary(Vec::new())).unwrap();
        assert!(
            files[0].1.contains(&format!("`{PIN_DIGESTS_COMMAND}`")),
            "{}",
            files[0].1
        );
        assert!(Code::Sha256Missing
            .explanation()
            .contains(PIN_DIGESTS_COMMAND));
        assert_eq!(
            next_command(PIN_DIGESTS_COMMAND, "registry", "registry/my-agent"),
            "acp-registry validate --fix --verify-archives registry/my-agent"
        );
    }

    #[test]
    fn the_next_command_names_the_registry_only_when_it_is_not_the_default() {
        assert_eq!(
            next_command(VALIDATE, "registry", "registry/my-agent"),
            "acp-registry validate registry/my-agent"
        );
        assert_eq!(
            next_command(VALIDATE, "", "my-agent"),
            "acp-registry validate --registry . my-agent"
        );
        assert_eq!(
            next_command(VALIDATE, "my registry", "my registry/a"),
            "acp-registry validate --registry 'my registry' 'my registry/a'"
        );
    }

    #[test]
    fn ids_become_display_names_word_by_word() {
        assert_eq!(display_name("my-agent"), "My Agent");
        assert_eq!(display_name("x2"), "X2");
    }
}
