//! A skill as the check read it: every file's bytes, read once while the folder is walked,
//! and the front-matter values the outputs publish, so `build` writes exactly what was
//! checked (`publish::skills`) without walking the folder again.

use acp_registry_client::skill_index::is_safe_listed_path;

use super::skill_dir::SkillDir;
use crate::diagnostics::{Code, Diagnostic};
use crate::manifest::skill::{FrontMatter, Value};
use crate::rules::sink::Sink;
use acp_registry_core::source::{SourceFile, Span};

/// One file of a skill.
#[derive(Debug, Clone)]
pub(crate) struct SkillFile {
    /// `/`-separated, relative to the skill's folder (`SKILL.md`, `scripts/run.py`).
    pub(crate) path: String,
    /// The bytes as read.
    pub(crate) bytes: Vec<u8>,
    /// Under `scripts/`: installed and archived executable.
    pub(crate) executable: bool,
}

/// A skill whose front matter and folder passed far enough to be published: named as its
/// folder, with a description, every file read.
#[derive(Debug, Clone)]
pub(crate) struct CheckedSkill {
    /// The skill's name (its folder's).
    pub(crate) name: String,
    /// Its folder as findings show it (`skills/pdf`, `acp-collab/skill/x`).
    pub(crate) dir: String,
    /// SKILL.md as read (the body is published on the site).
    pub(crate) skill_md: SourceFile,
    /// The `name` value in SKILL.md (a duplicate name is reported there).
    pub(crate) name_span: Span,
    /// `description`.
    pub(crate) description: String,
    /// `license`, when a string.
    pub(crate) license: Option<String>,
    /// `compatibility`, when a string.
    pub(crate) compatibility: Option<String>,
    /// `metadata.version`, when a string.
    pub(crate) version: Option<String>,
    /// Where the Markdown body starts in SKILL.md.
    pub(crate) body_start: usize,
    /// Every regular file, sorted by path.
    pub(crate) files: Vec<SkillFile>,
}

impl CheckedSkill {
    /// The Markdown body of SKILL.md.
    pub(crate) fn body(&self) -> &str {
        &self.skill_md.text[self.body_start..]
    }
}

/// The published view of `skill`, when its front matter names it as its folder and has a
/// description; `files`: every file read below its folder (relative to it).
pub(super) fn checked_skill(
    skill: &SkillDir<'_>,
    source: &SourceFile,
    front: &FrontMatter,
    files: Vec<(String, Vec<u8>)>,
) -> Option<CheckedSkill> {
    let folder = skill.folder.as_ref()?;
    let name_field = front.get("name")?;
    let string = |key: &str| match front.get(key).map(|f| &f.value) {
        Some(Value::Str(s)) if !s.trim().is_empty() => Some(s.clone()),
        _ => None,
    };
    if string("name").as_ref() != Some(folder) {
        return None;
    }
    let version = match front.get("metadata").map(|f| &f.value) {
        Some(Value::Map(fields)) => fields.iter().find_map(|f| match &f.value {
            Value::Str(v) if f.key == "version" && !v.trim().is_empty() => Some(v.clone()),
            _ => None,
        }),
        _ => None,
    };
    let mut files: Vec<SkillFile> = files
        .into_iter()
        .map(|(path, bytes)| SkillFile {
            executable: path.starts_with("scripts/"),
            path,
            bytes,
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Some(CheckedSkill {
        name: folder.clone(),
        dir: skill.display("").trim_end_matches('/').to_owned(),
        skill_md: source.clone(),
        name_span: name_field.value_span,
        description: string("description")?,
        license: string("license"),
        compatibility: string("compatibility"),
        version,
        body_start: front.body_start,
        files,
    })
}

/// `skill-file-path`: a file whose path a skills index cannot list (the well-known index's
/// clients refuse the whole index, or skip the skill, for one such path).
pub(super) fn check_paths(skill: &SkillDir<'_>, files: &[(String, Vec<u8>)], sink: &mut Sink) {
    for (path, _) in files {
        if is_safe_listed_path(path) {
            continue;
        }
        sink.push(
            Diagnostic::new(
                Code::SkillFilePath,
                format!(
                    "`{path}` cannot be listed in a skills index: a path there is printable \
                     ASCII, `/`-separated, without `..` or `\\`"
                ),
            )
            .in_file(skill.display(path))
            .help("rename the file with ASCII letters, digits, `-`, `_` and single dots"),
        );
    }
}

/// `skill-name-duplicate`: skill names are unique across the registry (stand-alone skills and
/// agents' skills alike), as every index and every client's skills folder is keyed by name.
/// Skills are taken in folder order; each later one is reported at its `name`.
pub(crate) fn check_duplicate_skill_names<'a>(
    skills: impl IntoIterator<Item = &'a CheckedSkill>,
    sink: &mut Sink,
) {
    let mut skills: Vec<&CheckedSkill> = skills.into_iter().collect();
    skills.sort_by(|a, b| a.dir.cmp(&b.dir));
    let mut first: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
    for skill in skills {
        match first.get(skill.name.as_str()) {
            Some(other) => sink.push(
                Diagnostic::new(
                    Code::SkillNameDuplicate,
                    format!(
                        "skill name `{}` is also the name of {other}/; every index and every \
                         client's skills folder holds one skill per name",
                        skill.name
                    ),
                )
                .at(&skill.skill_md, skill.name_span)
                .help("rename one of the two skills (its folder and its `name`)"),
            ),
            None => {
                first.insert(&skill.name, &skill.dir);
            }
        }
    }
}
