//! One skill folder, as the skill rules see it (an entry's `skill/<name>/` or a stand-alone
//! `skills/<name>/`), and the size limit of a skill.

use crate::rules::entry::{display_path, EntryDir};

/// Size limit of an entry's `skill/` folder (or a stand-alone skill's folder), all files
/// together.
pub(crate) const MAX_SKILL_BYTES: u64 = 1024 * 1024;

/// One skill folder: `skill/<folder>` of an entry (or `skill` itself in the older layout), or
/// `<folder>` of the registry's `skills/` (then `entry` is `skills/` itself).
pub(super) struct SkillDir<'a> {
    pub(super) entry: &'a EntryDir,
    /// Below the entry: `skill/<folder>` (stand-alone: `<folder>`).
    pub(super) rel: String,
    /// The folder's name when the layout is right; `None` for the older `skill/SKILL.md`.
    pub(super) folder: Option<String>,
    /// A stand-alone skill of `skills/`, which belongs to no entry.
    pub(super) standalone: bool,
}

impl SkillDir<'_> {
    pub(super) fn path(&self) -> std::path::PathBuf {
        self.entry.path.join(&self.rel)
    }

    pub(super) fn display(&self, file: &str) -> String {
        display_path(self.entry, &format!("{}/{file}", self.rel))
    }

    /// The folder as messages name it: `skill/<folder>` (below the entry), `skills/<folder>`.
    pub(super) fn shown_folder(&self) -> String {
        if self.standalone {
            format!("skills/{}", self.rel)
        } else {
            self.rel.clone()
        }
    }

    /// The folder a skill named `name` belongs in, as findings name it: `skill/<name>/`, or
    /// `skills/<name>/` for a stand-alone skill.
    pub(super) fn folder_for(&self, name: &str) -> String {
        if self.standalone {
            format!("skills/{name}/")
        } else {
            format!("skill/{name}/")
        }
    }
}
