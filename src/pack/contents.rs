//! What goes into a package: the binary, the entry's `skill/` folder, a short README and
//! the licence, read without following links and under size caps.
//!
//! The skill is read like a registry: no links, regular files only, under the rules' size cap.

use std::path::Path;

use super::package::PackError;
use crate::publish::archive::{Entries, Entry};
use crate::rules::MAX_SKILL_BYTES;
use acp_registry_core::fs::{read_capped, read_capped_named, Kind, ReadError};

/// The largest binary `pack` accepts: a release `acp-collab` is a few MiB, a debug build
/// (which the tests pack) a few hundred.
pub(crate) const MAX_BINARY_BYTES: u64 = 1 << 30;
/// The largest licence file `pack` accepts.
pub(crate) const MAX_LICENSE_BYTES: u64 = 1 << 20;

fn read(base: &Path, rel: &str, limit: u64, what: &str) -> Result<Vec<u8>, PackError> {
    let bytes = read_capped(base, Path::new(rel), limit);
    shown_failure(bytes, &base.join(rel), what)
}

/// A read's failure, naming the file as `shown` (the path as the user gave it).
fn shown_failure(
    bytes: Result<Vec<u8>, ReadError>,
    shown: &Path,
    what: &str,
) -> Result<Vec<u8>, PackError> {
    bytes.map_err(|e| PackError::Input {
        path: shown.display().to_string(),
        what: what.to_owned(),
        reason: match e {
            e @ ReadError::Link { .. } => format!("{e}; name the file itself"),
            e => e.to_string(),
        },
    })
}

/// Reads a file named on the command line (the binary, the licence): the file itself must
/// be a regular file, not a link.
pub(crate) fn read_named(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, PackError> {
    let (dir, name) = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => (dir, name.to_string_lossy().into_owned()),
        _ => {
            return Err(PackError::Usage(format!(
                "{what} `{}` is not a file path",
                path.display()
            )))
        }
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    // Named by the user: a build output may have several names (cargo hard-links it).
    let bytes = read_capped_named(dir, Path::new(&name), limit);
    shown_failure(bytes, path, what)
}

/// The skill's folder name: the one folder in `<entry>/skill/`, which its SKILL.md names
/// (docs/format.md#packages); anything else is refused with what `validate` says about it.
fn skill_folder(entry: &Path) -> Result<String, PackError> {
    let dir = entry.join("skill");
    let refuse = |reason: String| PackError::Input {
        path: dir.display().to_string(),
        what: "the skill folder".into(),
        reason: format!("{reason}; run `acp-registry validate` (skill-layout, skill-name)"),
    };
    let children = acp_registry_core::fs::list_dir(&dir).map_err(|e| refuse(e.to_string()))?;
    let (folders, others): (Vec<_>, Vec<_>) =
        children.into_iter().partition(|c| c.kind == Kind::Dir);
    if let Some(other) = others.first() {
        return Err(refuse(format!(
            "it holds `{}` beside the skill's folder; the skill belongs in skill/<name>/",
            other.name()
        )));
    }
    let [folder] = folders.as_slice() else {
        return Err(refuse(format!(
            "it holds {} folders; it must hold exactly one, skill/<name>/",
            folders.len()
        )));
    };
    let folder = folder.name();
    let rel = format!("skill/{folder}/SKILL.md");
    let text = read(entry, &rel, MAX_SKILL_BYTES, "the skill")?;
    let name = std::str::from_utf8(&text)
        .ok()
        .and_then(crate::manifest::skill::declared_name);
    if name.as_deref() != Some(folder.as_str()) {
        return Err(refuse(format!(
            "skill/{folder}/SKILL.md does not declare `name: {folder}`"
        )));
    }
    Ok(folder)
}

/// Every regular file of the skill, keyed `<name>/...` (the archive holds the skill's folder
/// under its name, beside the executable); files under `scripts/` are executable. A link, a
/// special file or more than the skill limit in total is refused.
pub(crate) fn skill_files(entry: &Path) -> Result<(String, Entries), PackError> {
    let folder = skill_folder(entry)?;
    let mut stored = Entries::new();
    let mut total = 0;
    walk(entry, &format!("skill/{folder}"), &mut stored, &mut total)?;
    if total > MAX_SKILL_BYTES {
        return Err(PackError::Input {
            path: entry.join("skill").display().to_string(),
            what: "the skill".into(),
            reason: format!("it holds {total} bytes, over the {MAX_SKILL_BYTES}-byte limit"),
        });
    }
    let prefix = format!("skill/{folder}/");
    let files = stored
        .into_iter()
        .map(|(path, mut entry)| {
            let inside = path.strip_prefix(&prefix).unwrap_or(&path).to_owned();
            entry.executable = inside.starts_with("scripts/");
            (format!("{folder}/{inside}"), entry)
        })
        .collect();
    Ok((folder, files))
}

fn walk(entry: &Path, rel: &str, files: &mut Entries, total: &mut u64) -> Result<(), PackError> {
    let children =
        acp_registry_core::fs::list_dir(&entry.join(rel)).map_err(|e| PackError::Input {
            path: entry.join(rel).display().to_string(),
            what: "the skill folder".into(),
            reason: e.to_string(),
        })?;
    for child in children {
        let path = format!("{rel}/{}", child.name());
        match child.kind {
            Kind::Dir => walk(entry, &path, files, total)?,
            Kind::File => {
                let bytes = read(entry, &path, MAX_SKILL_BYTES, "a skill file")?;
                *total += bytes.len() as u64;
                files.insert(
                    path,
                    Entry {
                        bytes,
                        executable: false,
                    },
                );
            }
            Kind::Link | Kind::Special(_) => {
                let reason = match child.kind {
                    Kind::Special(special) => format!("it is {special}, not a regular file"),
                    _ => "it is a symbolic link; replace it with the file itself".to_owned(),
                };
                return Err(PackError::Input {
                    path: entry.join(&path).display().to_string(),
                    what: "a skill file".into(),
                    reason,
                });
            }
        }
    }
    Ok(())
}

/// The package's README: what it is, what is inside and how to use it.
pub(crate) fn readme(
    name: &str,
    id: &str,
    version: &str,
    triple: &str,
    exe: &str,
    skill: &str,
) -> String {
    format!(
        "# {name} {version} ({triple})\n\n\
         This archive is the `{id}` entry of the ACP agent registry.\n\n\
         - `{exe}`: the collaboration engine (`{exe} --help`).\n\
         - `{skill}/`: the Agent Skill `{skill}` (`{skill}/SKILL.md`, `{skill}/references/`, and \
         `{skill}/scripts/`, Python launchers that run the bundled `{exe}`), in a folder named \
         as the skill, as agents expect it.\n\
         - `LICENSE`: the licence.\n\n\
         Install the skill for your agent with `{exe} skill install --agent claude-code` \
         (`{exe} skill install --list` shows the agents it knows), or point your agent at \
         `{skill}/SKILL.md` and run the scripts with `python3 {skill}/scripts/<script>.py`.\n"
    )
}
