//! A skill's files: reading a local skill folder (regular files only, no link, bounded), and
//! checking what was fetched (safe paths, `SKILL.md` present, one name everywhere, bounds).

use std::collections::BTreeMap;
use std::path::Path;

use super::error::{refused, SkillFetchError};
use super::fetched::FetchLimits;
use acp_registry_core::fs::Kind;
use acp_registry_core::skill_install::{is_safe_file_path, is_skill_name};

/// Every file below the local skill folder `dir` (shown as `shown`), by path: a link, a
/// special file or more than the limits allow is refused.
///
/// # Errors
/// [`SkillFetchError::Refused`] naming the file at fault.
pub fn read_folder(
    dir: &Path,
    shown: &str,
    limits: &FetchLimits,
) -> Result<BTreeMap<String, Vec<u8>>, SkillFetchError> {
    let mut out = BTreeMap::new();
    let mut total = 0u64;
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let here = if rel.is_empty() {
            shown.to_owned()
        } else {
            format!("{shown}/{rel}")
        };
        acp_registry_core::fs::no_link_below(dir, Path::new(&rel))
            .map_err(|e| refused(&here, e))?;
        let children =
            acp_registry_core::fs::list_dir(&dir.join(&rel)).map_err(|e| refused(&here, e))?;
        for child in children {
            let path = if rel.is_empty() {
                child.name()
            } else {
                format!("{rel}/{}", child.name())
            };
            let what = format!("{shown}/{path}");
            match child.kind {
                Kind::Dir => stack.push(path),
                Kind::File => {
                    let left = limits.skill_bytes.saturating_sub(total);
                    let bytes = acp_registry_core::fs::read_capped(dir, Path::new(&path), left)
                        .map_err(|e| {
                            refused(
                                &what,
                                format!("{e} (a skill holds at most {} bytes)", limits.skill_bytes),
                            )
                        })?;
                    total += bytes.len() as u64;
                    out.insert(path, bytes);
                    if out.len() > limits.files {
                        return Err(refused(
                            shown,
                            format!("it holds more than {} files", limits.files),
                        ));
                    }
                }
                Kind::Link => {
                    return Err(refused(
                        &what,
                        "it is a symbolic link; a skill's files must be regular files",
                    ))
                }
                Kind::Special(kind) => {
                    return Err(refused(&what, format!("it is {kind}, not a regular file")))
                }
            }
        }
    }
    Ok(out)
}

/// The `name` of a `SKILL.md`'s YAML front matter (a plain or quoted scalar on its own line),
/// or `None` when there is none.
#[must_use]
pub fn front_matter_name(skill_md: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(skill_md).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    for line in lines {
        if line.trim_end() == "---" {
            return None;
        }
        if let Some(value) = line.strip_prefix("name:") {
            let value = value.trim();
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            return Some(unquoted.to_owned());
        }
    }
    None
}

/// Refuses a skill `name` (as the index or folder names it) whose files, fetched from
/// `shown`, are not a skill of that name within the limits.
///
/// # Errors
/// [`SkillFetchError::Refused`] saying what is wrong.
pub fn check_skill(
    name: &str,
    files: &BTreeMap<String, Vec<u8>>,
    shown: &str,
    limits: &FetchLimits,
) -> Result<(), SkillFetchError> {
    if !is_skill_name(name) {
        return Err(refused(shown, format!("`{name}` is not a skill name (1-64 lowercase letters, digits and single hyphens inside)")));
    }
    if files.len() > limits.files {
        return Err(refused(
            shown,
            format!("the skill has more than {} files", limits.files),
        ));
    }
    let total: u64 = files.values().map(|b| b.len() as u64).sum();
    if total > limits.skill_bytes {
        return Err(refused(
            shown,
            format!("the skill is larger than {} bytes", limits.skill_bytes),
        ));
    }
    if let Some(bad) = files.keys().find(|p| !is_safe_file_path(p)) {
        return Err(refused(
            shown,
            format!("the file path `{bad}` could leave the skill folder"),
        ));
    }
    let skill_md = files
        .get("SKILL.md")
        .ok_or_else(|| refused(shown, "there is no SKILL.md at the skill's root"))?;
    match front_matter_name(skill_md) {
        Some(found) if found == name => Ok(()),
        Some(found) => Err(refused(
            shown,
            format!("SKILL.md names the skill `{found}`, the source names it `{name}`: one name everywhere (the index's, the folder's and SKILL.md's)"),
        )),
        None => Err(refused(shown, "SKILL.md has no front matter with a `name`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_matter_name_is_read_and_must_match() {
        let md = b"---\nname: \"pdf\"\ndescription: x\n---\nbody\nname: other\n";
        assert_eq!(front_matter_name(md).as_deref(), Some("pdf"));
        assert_eq!(front_matter_name(b"no front matter"), None);
        let files = BTreeMap::from([("SKILL.md".to_owned(), md.to_vec())]);
        let limits = FetchLimits::default();
        assert!(check_skill("pdf", &files, "x", &limits).is_ok());
        assert!(check_skill("docx", &files, "x", &limits)
            .unwrap_err()
            .to_string()
            .contains("one name everywhere"));
        let mut climbing = files.clone();
        climbing.insert("../x".into(), Vec::new());
        assert!(check_skill("pdf", &climbing, "x", &limits).is_err());
    }
}
