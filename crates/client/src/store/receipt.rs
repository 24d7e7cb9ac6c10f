//! The receipt `install.json` that makes a folder of the cache an install, and the checks a
//! receipt must pass before anything it names is run: it is read bounded (no link, a regular
//! file, at most [`MAX_RECEIPT_BYTES`]), and it must describe the folder it lies in.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::platform::Kind;
use crate::resolve::Resolution;

/// The receipt's file name inside an install folder.
pub const RECEIPT: &str = "install.json";
/// The largest receipt read.
pub const MAX_RECEIPT_BYTES: u64 = 256 * 1024;
/// The receipt format this code writes and reads.
const FORMAT: u32 = 1;

/// What `install.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Receipt {
    pub(crate) format: u32,
    pub(crate) id: String,
    pub(crate) version: String,
    pub(crate) platform: String,
    pub(crate) kind: Kind,
    /// Relative to the install folder (`/`-separated); for uvx the bare `uvx`, found on `PATH`.
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) sha256: Option<String>,
    /// Whether `sha256` is the registry's pin (it names the folder) or was computed.
    pub(crate) pinned: bool,
    pub(crate) installed_at: String,
    /// The archive URL or the package spec.
    pub(crate) source: String,
    /// [`identity`] of the resolution installed: what must match for the install to be used.
    pub(crate) identity: String,
    #[serde(default)]
    pub(crate) warnings: Vec<String>,
}

impl Receipt {
    /// A receipt for `resolution`, with what the install produced.
    pub(crate) fn new(resolution: &Resolution, program: String, sha256: Option<String>) -> Self {
        Receipt {
            format: FORMAT,
            id: resolution.entry.id.clone(),
            version: resolution.entry.version.clone(),
            platform: resolution.platform.clone(),
            kind: resolution.kind,
            program,
            args: resolution.args.clone(),
            env: resolution.env.clone(),
            pinned: sha256.is_some() && sha256 == pinned(resolution),
            sha256,
            installed_at: acp_registry_core::time::utc_now(),
            source: source(resolution),
            identity: identity(resolution),
            warnings: Vec::new(),
        }
    }

    /// The receipt in `folder`, when there is a valid one describing that folder (named
    /// `<root>/agents/<id>/<version>/<name>`).
    pub(crate) fn load(folder: &Path, id: &str, version: &str) -> Option<Receipt> {
        let bytes =
            acp_registry_core::fs::read_capped(folder, Path::new(RECEIPT), MAX_RECEIPT_BYTES)
                .ok()?;
        let receipt: Receipt = serde_json::from_slice(&bytes).ok()?;
        let name = folder.file_name()?.to_str()?;
        let matches = receipt.format == FORMAT
            && receipt.id == id
            && receipt.version == version
            && name == folder_name(&receipt.platform, receipt.kind, &receipt.key())
            && program_path(folder, receipt.kind, &receipt.program).is_some();
        matches.then_some(receipt)
    }

    /// The 12 hex digits that end the folder's name.
    fn key(&self) -> String {
        let pin = self
            .sha256
            .as_deref()
            .filter(|_| self.pinned && self.kind == Kind::Binary);
        key(pin, &self.source)
    }
}

/// The archive URL of a binary, the package spec of npx and uvx.
pub(crate) fn source(resolution: &Resolution) -> String {
    match (&resolution.target, &resolution.package) {
        (Some(target), _) => target.archive.clone(),
        (None, Some(package)) => package.package.clone(),
        (None, None) => String::new(),
    }
}

/// The pinned sha256 of a binary target, lowercase, when it is a valid one.
pub(crate) fn pinned(resolution: &Resolution) -> Option<String> {
    use acp_registry_core::fs::digest::{is_sha256_hex, HexCase};
    let sha = resolution.target.as_ref()?.sha256.as_deref()?;
    is_sha256_hex(sha, HexCase::Any).then(|| sha.to_ascii_lowercase())
}

/// Everything about a resolution that changes what an install runs, hashed: kind, platform,
/// source, pin, `cmd`, args and env. An install is used only for an equal identity.
pub(crate) fn identity(resolution: &Resolution) -> String {
    let cmd = resolution.target.as_ref().map(|t| t.cmd.as_str());
    let value = serde_json::json!([
        resolution.kind,
        resolution.platform,
        source(resolution),
        pinned(resolution),
        cmd,
        resolution.args,
        resolution.env,
    ]);
    acp_registry_core::fs::digest::sha256_hex(value.to_string().as_bytes())
}

/// The first 12 hex digits of the pinned sha256, else of the sha256 of the source.
pub(crate) fn key(pinned: Option<&str>, source: &str) -> String {
    let digest = match pinned {
        Some(sha) => sha.to_ascii_lowercase(),
        None => acp_registry_core::fs::digest::hex(&Sha256::digest(source.as_bytes())),
    };
    digest.chars().take(12).collect()
}

/// `<platform>-<kind>-<key>`.
pub(crate) fn folder_name(platform: &str, kind: Kind, key: &str) -> String {
    format!("{platform}-{kind}-{key}")
}

/// The install folder's name for `resolution`.
pub(crate) fn folder_name_of(resolution: &Resolution) -> String {
    let pinned = pinned(resolution);
    folder_name(
        &resolution.platform,
        resolution.kind,
        &key(pinned.as_deref(), &source(resolution)),
    )
}

/// The program a receipt names: `uvx` for uvx (found on `PATH` at launch); otherwise a
/// relative path of plain components naming a regular file in `folder` (not a link).
pub(crate) fn program_path(folder: &Path, kind: Kind, program: &str) -> Option<PathBuf> {
    if kind == Kind::Uvx {
        return (program == "uvx").then(|| PathBuf::from("uvx"));
    }
    let rel = Path::new(program);
    let plain =
        rel.components().count() > 0 && rel.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return None;
    }
    let path = folder.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    // A link in a folder on the way must not lead out either.
    let inside = path
        .canonicalize()
        .ok()?
        .starts_with(folder.canonicalize().ok()?);
    (meta.is_file() && inside).then_some(path)
}
