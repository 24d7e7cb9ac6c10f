//! `pack`: one platform's release archive of a registry entry, built deterministically, and
//! the entry's manifest updated to point at it (docs/format.md#packages).
//!
//! [`plan`] composes the archive in memory from the binary, the entry's `skill/` folder, a
//! README and the licence; [`pack`] writes it (with a `sha256sum` line beside it) and edits
//! that platform's target and `version` in `agent.json` through the comment-keeping JSONC
//! editor; [`check`] compares an existing archive with the manifest (and with a rebuild when
//! the binary is given).
//!
//! Deterministic by construction ([`archive`]): entries in a `BTreeMap`, tar headers built field
//! by field, gzip and zip without time or host, so nothing of the machine reaches the bytes and
//! the release workflow's pull-request job can pack the released binaries again and get the
//! released archives byte for byte. The manifest is edited, never re-serialised: each field of
//! the target is set only when it differs, so a re-run is a no-op and a release diff is the
//! version, the URLs and the sha256 values.

pub(crate) mod contents;
pub(crate) mod manifest;
mod package;
pub(crate) mod target;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::manifest::names;
use crate::publish::archive;
use crate::rules::Version;
use acp_registry_core::fs::digest::sha256_hex;
pub(crate) use archive::Entry;
pub(crate) use package::{PackError, Package};
pub(crate) use target::Platform;

/// The inputs of one package: also `acp-registry pack`'s flags, so the field docs are its
/// `--help` (flattened into `commands::pack::Options`).
#[derive(Debug, Clone, clap::Args)]
pub struct PackOptions {
    /// `--registry`: the registry root holding the entry.
    #[arg(long, value_name = "DIR", default_value = crate::flags::DEFAULT_REGISTRY, help = crate::flags::REGISTRY_HELP)]
    pub registry: PathBuf,
    /// The entry id, e.g. `agent-collaboration-protocol`.
    pub id: String,
    /// The Rust target triple the binary was built for, e.g. `x86_64-unknown-linux-musl`.
    #[arg(long, value_name = "TRIPLE")]
    pub target: String,
    /// The built executable to ship (optional with --check: then the archive is compared
    /// with the manifest only).
    #[arg(long, value_name = "PATH", required_unless_present = "check")]
    pub binary: Option<PathBuf>,
    /// The release version, X.Y.Z (with --check, the manifest's by default).
    #[arg(long, value_name = "X.Y.Z", required_unless_present = "check")]
    pub version: Option<String>,
    /// Archives are published at <URL>/v<version>/<file> [default: the current archive
    /// URL's folder, else the repository's GitHub releases].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The licence file bundled as LICENSE.
    #[arg(long, value_name = "FILE", default_value = "LICENSE")]
    pub license: PathBuf,
    /// Output folder; archives go to <DIR>/v<version>/.
    #[arg(long, value_name = "DIR", default_value = "dist/packages")]
    pub out: PathBuf,
    /// The tar entries' time: `SOURCE_DATE_EPOCH` when set, else 0 (not a flag: the binary
    /// reads the variable).
    #[arg(skip)]
    pub mtime: u64,
}

/// The entry as `pack` reads it.
struct EntryManifest {
    dir: PathBuf,
    path: String,
    text: String,
    json: Value,
}

fn load_entry(opts: &PackOptions) -> Result<EntryManifest, PackError> {
    if !names::is_valid_id(&opts.id) {
        return Err(PackError::Usage(format!(
            "`{}` is not an entry id (lowercase letters, digits and `-`, starting with a letter)",
            opts.id
        )));
    }
    let dir = opts.registry.join(&opts.id);
    let path = dir.join("agent.json").display().to_string();
    let bytes = acp_registry_core::fs::read_capped(
        &dir,
        Path::new("agent.json"),
        crate::manifest::MAX_MANIFEST_BYTES,
    )
    .map_err(|e| PackError::Input {
        path: path.clone(),
        what: "the manifest".into(),
        reason: e.to_string(),
    })?;
    let text = String::from_utf8(bytes).map_err(|_| PackError::Manifest {
        path: path.clone(),
        message: "not UTF-8; run `acp-registry validate`".into(),
    })?;
    let json = crate::manifest::jsonc::parse(&text)
        .map_err(|e| PackError::Manifest {
            path: path.clone(),
            message: format!("{}; run `acp-registry validate`", e.message),
        })?
        .to_json();
    Ok(EntryManifest {
        dir,
        path,
        text,
        json,
    })
}

fn platform_of(opts: &PackOptions) -> Result<Platform, PackError> {
    target::platform(&opts.target).ok_or_else(|| {
        PackError::Usage(format!(
            "--target `{}` is not a target the registry has a platform for; use one of \
             x86_64/aarch64 with linux, apple-darwin or windows (e.g. x86_64-unknown-linux-musl)",
            opts.target
        ))
    })
}

fn checked_version(version: &str) -> Result<String, PackError> {
    Version::parse(version)
        .map(|_| version.to_owned())
        .ok_or_else(|| {
            PackError::Usage(format!("--version `{version}` is not X.Y.Z (digits only)"))
        })
}

/// The executable's name inside the archive: the binary's file name, `.exe` on Windows.
fn executable_name(binary: &Path, platform: &Platform) -> Result<String, PackError> {
    let name = binary
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".exe").unwrap_or(&name);
    if stem.is_empty() || names::file_name_problem(stem).is_some() {
        return Err(PackError::Usage(format!(
            "--binary `{}` does not end in a portable file name",
            binary.display()
        )));
    }
    Ok(if platform.windows {
        format!("{stem}.exe")
    } else {
        stem.to_owned()
    })
}

/// Composes the archive and the manifest target of `entry` in memory
/// (docs/format.md#packages).
fn plan(opts: &PackOptions, entry: &EntryManifest) -> Result<Package, PackError> {
    let platform = platform_of(opts)?;
    let version = match &opts.version {
        Some(v) => checked_version(v)?,
        None => return Err(PackError::Usage("--version is required".into())),
    };
    let binary = opts
        .binary
        .as_deref()
        .ok_or_else(|| PackError::Usage("--binary is required".into()))?;
    let exe = executable_name(binary, &platform)?;
    let (skill, mut files) = contents::skill_files(&entry.dir)?;
    let bin_bytes = contents::read_named(binary, contents::MAX_BINARY_BYTES, "the binary")?;
    files.insert(
        exe.clone(),
        Entry {
            bytes: bin_bytes,
            executable: true,
        },
    );
    let license = contents::read_named(&opts.license, contents::MAX_LICENSE_BYTES, "the licence")?;
    files.insert(
        "LICENSE".into(),
        Entry {
            bytes: license,
            executable: false,
        },
    );
    let name = entry
        .json
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or(&opts.id);
    let readme = contents::readme(name, &opts.id, &version, &opts.target, &exe, &skill);
    files.insert(
        "README.md".into(),
        Entry {
            bytes: readme.into_bytes(),
            executable: false,
        },
    );

    let bytes =
        archive::write(platform.format, &files, opts.mtime).map_err(|e| PackError::Output {
            path: "(archive in memory)".into(),
            reason: e.to_string(),
        })?;
    let sha256 = sha256_hex(&bytes);
    let stem = exe.strip_suffix(".exe").unwrap_or(&exe);
    let file_name = format!("{stem}-{}.{}", opts.target, platform.format.extension());
    let base = manifest::base_url(opts.base_url.as_deref(), &entry.json, platform.key).map_err(
        |message| PackError::Manifest {
            path: entry.path.clone(),
            message,
        },
    )?;
    let target = manifest::target_value(
        &entry.json,
        platform.key,
        &format!("{base}/v{version}/{file_name}"),
        &format!("./{exe}"),
        &sha256,
    );
    let path = opts.out.join(format!("v{version}")).join(&file_name);
    Ok(Package {
        platform,
        version,
        file_name,
        bytes,
        sha256,
        target,
        path,
    })
}

/// What `pack` did.
#[derive(Debug, Clone)]
pub(crate) struct Packed {
    pub(crate) package: Package,
    /// The manifest changed (it is unchanged when the same package was already recorded).
    pub(crate) manifest_changed: bool,
    pub(crate) manifest_path: String,
}

/// Builds the package, writes the archive and its `.sha256` line, and records the target
/// and version in the entry's manifest.
pub(crate) fn pack(opts: &PackOptions) -> Result<Packed, PackError> {
    crate::publish::output::refuse_overlap(&opts.out, &opts.registry)
        .map_err(|e| PackError::Usage(e.to_string()))?;
    let entry = load_entry(opts)?;
    let package = plan(opts, &entry)?;
    manifest::write_archive(&package)?;
    let updated =
        manifest::update(&entry.text, &package).map_err(|message| PackError::Manifest {
            path: entry.path.clone(),
            message,
        })?;
    let manifest_changed = updated != entry.text;
    if manifest_changed {
        manifest::write_manifest(&entry.dir, &updated)?;
    }
    Ok(Packed {
        package,
        manifest_changed,
        manifest_path: entry.path,
    })
}

/// Compares the archive in `<out>` with what the manifest records; with `--binary`, also
/// with a fresh build. Returns the problems found (none: the archive is the recorded one).
pub(crate) fn check(opts: &PackOptions) -> Result<Vec<String>, PackError> {
    let entry = load_entry(opts)?;
    let platform = platform_of(opts)?;
    let manifest_version = entry
        .json
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or("");
    let version = checked_version(opts.version.as_deref().unwrap_or(manifest_version))?;
    let mut problems = Vec::new();
    if version != manifest_version {
        problems.push(format!(
            "{}: version is `{manifest_version}`, not {version}; run pack",
            entry.path
        ));
    }
    let recorded = match recorded_target(&entry, &platform) {
        Ok(recorded) => recorded,
        Err(problem) => {
            problems.push(problem);
            return Ok(problems);
        }
    };
    let path = opts
        .out
        .join(format!("v{version}"))
        .join(recorded.file_name);
    let on_disk = match contents::read_named(&path, manifest::MAX_ARCHIVE_BYTES, "the archive") {
        Ok(bytes) => bytes,
        Err(e) => {
            problems.push(format!("{e}; run pack to build it"));
            return Ok(problems);
        }
    };
    problems.extend(digest_problem(
        &entry, &platform, &recorded, &path, &on_disk,
    ));
    if opts.binary.is_some() {
        let fresh = plan(
            &PackOptions {
                version: Some(version),
                ..opts.clone()
            },
            &entry,
        )?;
        problems.extend(rebuild_problems(
            &entry, &platform, &recorded, &path, &on_disk, &fresh,
        ));
    }
    Ok(problems)
}

/// The manifest's target for one platform and the file name of its archive URL.
struct Recorded<'a> {
    target: &'a Value,
    file_name: &'a str,
}

/// The platform's recorded target, or the problem that leaves nothing to compare.
fn recorded_target<'a>(
    entry: &'a EntryManifest,
    platform: &Platform,
) -> Result<Recorded<'a>, String> {
    let pointer = format!("/distribution/binary/{}", platform.key);
    let Some(target) = entry.json.pointer(&pointer) else {
        return Err(format!(
            "{}: distribution.binary has no `{}` target; run pack",
            entry.path, platform.key
        ));
    };
    let archive = target.get("archive").and_then(Value::as_str).unwrap_or("");
    let file_name = archive.rsplit('/').next().unwrap_or("");
    if file_name.is_empty() || names::file_name_problem(file_name).is_some() {
        return Err(format!(
            "{}: the `{}` archive URL has no file name",
            entry.path, platform.key
        ));
    }
    Ok(Recorded { target, file_name })
}

/// The archive on disk against the recorded `sha256`.
fn digest_problem(
    entry: &EntryManifest,
    platform: &Platform,
    recorded: &Recorded,
    path: &Path,
    on_disk: &[u8],
) -> Option<String> {
    let actual = sha256_hex(on_disk);
    match recorded.target.get("sha256").and_then(Value::as_str) {
        Some(expected) if expected == actual => None,
        Some(expected) => Some(format!(
            "{}: sha256 is {actual}, but {} records {expected} for `{}`: the archive changed \
             after pack; rebuild it with pack",
            path.display(),
            entry.path,
            platform.key
        )),
        None => Some(format!(
            "{}: the `{}` target has no sha256; run pack",
            entry.path, platform.key
        )),
    }
}

/// The archive on disk and the recorded target against a fresh pack of the given inputs.
fn rebuild_problems(
    entry: &EntryManifest,
    platform: &Platform,
    recorded: &Recorded,
    path: &Path,
    on_disk: &[u8],
    fresh: &Package,
) -> Vec<String> {
    let mut problems = Vec::new();
    if fresh.bytes != on_disk {
        problems.push(format!(
            "{}: differs from a fresh pack of the given inputs (sha256 {})",
            path.display(),
            fresh.sha256
        ));
    }
    if &fresh.target != recorded.target {
        problems.push(format!(
            "{}: the `{}` target is not the one pack writes: {}",
            entry.path, platform.key, fresh.target
        ));
    }
    problems
}
