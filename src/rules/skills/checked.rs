//! A skill as the check read it: every file's bytes, read once while the folder is walked,
//! and the front-matter values the outputs publish, so `build` writes exactly what was
//! checked (`publish::skills`) without walking the folder again.

use crate::diagnostics::{Code, Diagnostic};
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
