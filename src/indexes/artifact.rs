//! A 0.2.0 artifact laid out as a skill folder in scratch: a `SKILL.md` written as is, an
//! archive first read member by member as the `skills` CLI reads it (zip stored or deflated,
//! gzip tar of ustar regular files, no links, no long names, safe paths, `SKILL.md` at the
//! root, 1,000 files and 50 MiB at most), then unpacked by `fs::archive`'s safe unpacker.

use std::io::Read;
use std::path::Path;

use acp_registry_client::skill_index::is_safe_listed_path;

use super::limits::{MAX_SKILL_BYTES, MAX_SKILL_FILES};
use crate::fs::archive::{self, ArchiveFormat, Limits};

/// Write a `skill-md` artifact as `<dir>/<name>/SKILL.md`; the problems when it is not one.
pub(crate) fn skill_md(bytes: &[u8], dir: &Path, name: &str) -> Result<(), Vec<String>> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(vec!["a `skill-md` artifact that is not UTF-8 text".into()]);
    };
    if !text.starts_with("---") {
        return Err(vec![
            "a `skill-md` artifact that does not start with `---` front matter: not a SKILL.md"
                .into(),
        ]);
    }
    let folder = dir.join(name);
    std::fs::create_dir(&folder)
        .and_then(|()| std::fs::write(folder.join("SKILL.md"), bytes))
        .map_err(|e| vec![format!("cannot lay it out in scratch: {e}")])
}

/// Unpack an `archive` artifact into `<dir>/<name>/`; every problem the `skills` CLI would
/// refuse it for when it is not clean.
pub(crate) fn unpack(bytes: &[u8], dir: &Path, name: &str) -> Result<(), Vec<String>> {
    let format = match bytes {
        [b'P', b'K', 3, 4, ..] => ArchiveFormat::Zip,
        [0x1f, 0x8b, ..] => ArchiveFormat::TarGz,
        _ => {
            return Err(vec![
                "an `archive` artifact that is neither a zip nor a gzip-compressed tar".into(),
            ])
        }
    };
    let members = match format {
        ArchiveFormat::Zip => zip_members(bytes),
        _ => tar_members(bytes),
    };
    let mut problems = match members {
        Ok(members) => judge_members(&members),
        Err(problem) => vec![problem],
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    let file = dir.join(".artifact");
    if let Err(e) = std::fs::write(&file, bytes) {
        return Err(vec![format!("cannot lay it out in scratch: {e}")]);
    }
    let limits = Limits {
        max_bytes: MAX_SKILL_BYTES,
        max_entries: (MAX_SKILL_FILES * 2) as u64,
    };
    if let Err(e) = archive::extract(&file, format, &dir.join(name), "", limits) {
        problems.push(format!("refused by the safe unpacker: {e}"));
    }
    let _ = std::fs::remove_file(&file);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// One member as the CLI sees it.
struct Member {
    path: String,
    size: u64,
    /// `None` for a regular file or folder, else why the CLI refuses its kind.
    refused: Option<String>,
}

fn judge_members(members: &[Member]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut files = 0usize;
    let mut total = 0u64;
    let mut seen = std::collections::BTreeSet::new();
    let mut root_skill = false;
    for member in members {
        let path = member.path.strip_prefix("./").unwrap_or(&member.path);
        let is_dir = path.ends_with('/');
        let path = path.trim_end_matches('/');
        if let Some(why) = &member.refused {
            problems.push(format!("member `{}` {why}", member.path));
            continue;
        }
        if path.is_empty() && is_dir {
            continue;
        }
        if !is_safe_listed_path(path) {
            problems.push(format!(
                "member `{}` has a path the CLI refuses (absolute, `..`, backslash, empty segment or non-ASCII)",
                member.path
            ));
            continue;
        }
        if is_dir {
            continue;
        }
        if !seen.insert(path.to_lowercase()) {
            problems.push(format!("member `{path}` is in the archive twice"));
        }
        files += 1;
        total = total.saturating_add(member.size);
        root_skill |= path == "SKILL.md";
    }
    if files > MAX_SKILL_FILES {
        problems.push(format!("{files} files, over the CLI's {MAX_SKILL_FILES}"));
    }
    if total > MAX_SKILL_BYTES {
        problems.push(format!(
            "unpacks to {total} bytes, over the CLI's {MAX_SKILL_BYTES}"
        ));
    }
    if !root_skill && problems.is_empty() {
        problems.push(
            "no `SKILL.md` at the archive's root (the CLI needs it there, not inside a `<name>/` folder)"
                .into(),
        );
    }
    problems
}

fn zip_members(bytes: &[u8]) -> Result<Vec<Member>, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("the zip cannot be read: {e}"))?;
    let mut members = Vec::new();
    for i in 0..zip.len() {
        let file = zip
            .by_index_raw(i)
            .map_err(|e| format!("the zip cannot be read: {e}"))?;
        let method = file.compression();
        let link = file
            .unix_mode()
            .is_some_and(|mode| mode & 0o170_000 == 0o120_000);
        let refused = if link {
            Some("is a symbolic link".to_string())
        } else if !matches!(
            method,
            zip::CompressionMethod::Stored | zip::CompressionMethod::Deflated
        ) {
            Some(format!(
                "is compressed with {method:?}; the CLI reads stored and deflated members only"
            ))
        } else {
            None
        };
        members.push(Member {
            path: String::from_utf8_lossy(file.name_raw()).into_owned(),
            size: file.size(),
            refused,
        });
    }
    Ok(members)
}

fn tar_members(bytes: &[u8]) -> Result<Vec<Member>, String> {
    let gz = flate2::read::GzDecoder::new(bytes);
    // The decompressed stream is read once, capped: a bomb ends the listing, not the machine.
    let mut tar = tar::Archive::new(gz.take(MAX_SKILL_BYTES.saturating_mul(2)));
    let mut members = Vec::new();
    let entries = tar
        .entries()
        .map_err(|e| format!("the tar cannot be read: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("the tar cannot be read: {e}"))?;
        if members.len() > MAX_SKILL_FILES * 2 {
            return Err(format!("more than {} members", MAX_SKILL_FILES * 2));
        }
        let header = entry.header();
        let kind = header.entry_type();
        let path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let refused = if kind.is_symlink() || kind.is_hard_link() {
            Some("is a link".to_string())
        } else if !(kind.is_file() || kind.is_dir()) {
            Some(format!(
                "is of tar type `{}`, not a regular file",
                char::from(kind.as_byte()).escape_default()
            ))
        } else if entry.path_bytes().as_ref() != header.path_bytes().as_ref() {
            Some("has a GNU or PAX long name, which the CLI cannot read (keep paths within ustar's 100-byte name and 155-byte prefix)".to_string())
        } else {
            None
        };
        members.push(Member {
            path,
            size: header.size().unwrap_or(u64::MAX),
            refused,
        });
    }
    Ok(members)
}
