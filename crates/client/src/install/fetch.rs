//! A binary target's steps: download and verify ([`fetch_archive`]), unpack ([`unpack`]),
//! then find the program and write what the receipt needs. The first two are public so the
//! `acp-registry` tool's `verify` runs the very same code.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use super::error::{unusable, InstallError};
use super::options::{report, InstallOptions, PinPolicy, Progress, ProgressFn};
use crate::archive::{self, ArchiveError, ArchiveFormat};
use crate::net::Client;
use crate::platform::archive_file_name;
use crate::resolve::Resolution;
use crate::store::{pinned, Receipt};

/// What to download.
#[derive(Clone, Copy)]
pub struct FetchRequest<'a> {
    /// The archive's URL.
    pub url: &'a str,
    /// The pinned sha256 (hex, any case), when there is one: anything else is refused.
    pub sha256: Option<&'a str>,
    /// The largest download accepted, in bytes.
    pub cap: u64,
    /// A folder keeping verified downloads by their pinned sha256, reused when a file there
    /// still hashes to the pin (`None`: always download).
    pub cache: Option<&'a Path>,
    /// Told of the download's progress.
    pub progress: Option<&'a ProgressFn>,
}

/// A downloaded, verified archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Where it is: in the cache folder, or a new file in the scratch folder (the caller's).
    pub path: PathBuf,
    /// Its sha256, lowercase hex.
    pub sha256: String,
}

/// Download `request.url` into `scratch` (or take it from `request.cache`) with the HTTP
/// client's checks (https, public addresses, status 200, size cap, deadline), verifying the
/// pinned sha256. A failed or mismatching download leaves no file behind.
///
/// # Errors
/// [`InstallError::Download`], [`InstallError::Sha256Mismatch`], or
/// [`InstallError::Store`] when `scratch` cannot be written.
pub async fn fetch_archive(
    client: &Client,
    request: &FetchRequest<'_>,
    scratch: &Path,
) -> Result<Fetched, InstallError> {
    let io = |path: &Path, e| InstallError::Store(crate::store::io_at(path)(e));
    let pinned = request.sha256.map(str::to_ascii_lowercase);
    let cached = match (request.cache, &pinned) {
        (Some(dir), Some(sha)) if is_hex64(sha) => Some(dir.join(sha)),
        _ => None,
    };
    if let Some(path) = &cached {
        if sha256_of(path).as_ref() == pinned.as_ref() {
            return Ok(Fetched {
                path: path.clone(),
                sha256: pinned.unwrap_or_default(),
            });
        }
    }
    std::fs::create_dir_all(scratch).map_err(|e| io(scratch, e))?;
    let partial = scratch.join(format!(".download-{:016x}", fastrand::u64(..)));
    let url = request.url.to_string();
    let on_progress = |done, total| {
        if let Some(progress) = request.progress {
            progress(&Progress::Downloading {
                url: url.clone(),
                done,
                total,
            });
        }
    };
    let download = match client
        .download_to_with_progress(request.url, request.cap, &partial, &on_progress)
        .await
    {
        Ok(download) => download,
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            return Err(InstallError::Download { url, error });
        }
    };
    if let Some(expected) = pinned {
        if download.sha256 != expected {
            let _ = std::fs::remove_file(&partial);
            return Err(InstallError::Sha256Mismatch {
                url,
                expected,
                actual: download.sha256,
            });
        }
    }
    let sha256 = download.sha256;
    match cached {
        Some(path) if std::fs::create_dir_all(path.parent().unwrap_or(scratch)).is_ok() => {
            // A rename within one file system when the cache and the scratch share it; a
            // copy otherwise. The digest names the content, so a concurrent writer writes
            // the same.
            if std::fs::rename(&partial, &path).is_err() {
                std::fs::copy(&partial, &path).map_err(|e| io(&path, e))?;
                let _ = std::fs::remove_file(&partial);
            }
            Ok(Fetched { path, sha256 })
        }
        _ => Ok(Fetched {
            path: partial,
            sha256,
        }),
    }
}

/// Unpack the archive downloaded from `url` (its format and, for a raw executable, its
/// file name come from the URL) into `dest`, which must not exist, with
/// [`crate::archive::extract`]'s refusals (traversal, links out, duplicates, special files)
/// and at most `max_bytes` written. On failure nothing is left at `dest`.
///
/// # Errors
/// [`ArchiveError`] from the unpacker.
pub async fn unpack(
    archive: &Path,
    url: &str,
    dest: &Path,
    max_bytes: u64,
) -> Result<(), ArchiveError> {
    let raw_name = archive_file_name(url, "agent").to_string();
    let format = ArchiveFormat::of(url);
    let limits = archive::Limits::with_max_bytes(max_bytes);
    let (archive, dest_c) = (archive.to_path_buf(), dest.to_path_buf());
    tokio::task::spawn_blocking(move || {
        archive::extract(&archive, format, &dest_c, &raw_name, limits)
    })
    .await
    .map_err(|e| ArchiveError::Io {
        path: dest.display().to_string(),
        source: std::io::Error::other(e),
    })?
}

/// Download, verify, unpack into `staged/files` and resolve `cmd`: the receipt of a binary
/// install (not yet written).
pub(super) async fn binary(
    client: &Client,
    resolution: &Resolution,
    options: &InstallOptions,
    work: &Path,
    staged: &Path,
) -> Result<Receipt, InstallError> {
    let target = resolution
        .target
        .as_ref()
        .ok_or_else(|| unusable(resolution, "no binary target for its platform"))?;
    let url = target.archive.as_str();
    let pin = pinned(resolution);
    if target.sha256.is_some() && pin.is_none() {
        return Err(unusable(resolution, "its sha256 is not 64 hex digits"));
    }
    if pin.is_none() && options.pin_policy == PinPolicy::Refuse {
        return Err(InstallError::Unpinned {
            id: resolution.entry.id.clone(),
            url: url.to_string(),
        });
    }
    let request = FetchRequest {
        url,
        sha256: pin.as_deref(),
        cap: options.download_cap,
        cache: None,
        progress: options.progress.as_deref(),
    };
    let fetched = fetch_archive(client, &request, work).await?;
    report(options, &Progress::Unpacking);
    let files = staged.join("files");
    unpack(&fetched.path, url, &files, options.unpack_cap)
        .await
        .map_err(|error| InstallError::Archive {
            url: url.to_string(),
            error,
        })?;
    let program = program_of(&files, staged, &target.cmd, url)?;
    let mut receipt = Receipt::new(resolution, program, Some(fetched.sha256.clone()));
    if pin.is_none() && options.pin_policy == PinPolicy::Warn {
        receipt.warnings.push(format!(
            "{url} has no sha256 pin in the registry; installed unverified (its sha256 is {})",
            fetched.sha256
        ));
    }
    Ok(receipt)
}

/// `cmd` in the unpacked `files`, made executable and checked to be a program: its path
/// relative to `staged`, `/`-separated.
fn program_of(files: &Path, staged: &Path, cmd: &str, url: &str) -> Result<String, InstallError> {
    let program_error = |reason: String| InstallError::Program {
        source_name: url.to_string(),
        reason,
    };
    let real = archive::resolve_cmd(files, cmd).map_err(program_error)?;
    let base = staged
        .canonicalize()
        .map_err(|e| program_error(e.to_string()))?;
    let rel = real
        .strip_prefix(&base)
        .map_err(|_| program_error(format!("`{cmd}` leads out of the unpacked archive")))?;
    looks_like_a_program(&real).map_err(|what| {
        program_error(format!(
            "`{cmd}` is not a program ({what}); the server may have sent an error page"
        ))
    })?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Ok(parts.join("/"))
}

/// Whether `path` starts like an executable: ELF, Mach-O (thin or universal), PE (`MZ`), or
/// a script (`#!`). Anything else (an HTML page, a JSON error) is refused before it is ever
/// recorded as the agent.
fn looks_like_a_program(path: &Path) -> Result<(), &'static str> {
    use std::io::Read;
    const MAGICS: [&[u8]; 8] = [
        b"\x7fELF",
        b"\xfe\xed\xfa\xce",
        b"\xfe\xed\xfa\xcf",
        b"\xce\xfa\xed\xfe",
        b"\xcf\xfa\xed\xfe",
        b"\xca\xfe\xba\xbe",
        b"MZ",
        b"#!",
    ];
    let mut head = [0u8; 4];
    let mut file = std::fs::File::open(path).map_err(|_| "it cannot be read")?;
    let n = file.read(&mut head).map_err(|_| "it cannot be read")?;
    let head = &head[..n];
    if MAGICS.iter().any(|magic| head.starts_with(magic)) {
        Ok(())
    } else if head.first().is_some_and(|b| matches!(b, b'<' | b'{')) {
        Err("it starts like an HTML or JSON document")
    } else {
        Err("it is not an executable or a script with `#!`")
    }
}

fn is_hex64(s: &str) -> bool {
    use acp_registry_core::fs::digest::{is_sha256_hex, HexCase};
    is_sha256_hex(s, HexCase::Any)
}

fn sha256_of(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).ok()?;
    Some(acp_registry_core::fs::digest::hex(&hasher.finalize()))
}
