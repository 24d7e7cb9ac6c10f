//! One skill folder of an entry, as the skill rules see it, and the size limit of `skill/`.

use crate::rules::entry::{display_path, EntryDir};

/// Size limit of an entry's `skill/` folder, all files together.
pub(crate) const MAX_SKILL_BYTES: u64 = 1024 * 1024;

/// One skill folder of an entry: `skill/<folder>` (or `skill` itself in the older layout).
pub(super) struct SkillDir<'a> {
    pub(super) entry: &'a EntryDir,
    /// Below the entry: `skill/<folder>`.
    pub(super) rel: String,
    /// The folder's name when the layout is right; `None` for the older `skill/SKILL.md`.
    pub(super) folder: Option<String>,
}

impl SkillDir<'_> {
    pub(super) fn path(&self) -> std::path::PathBuf {
        self.entry.path.join(&self.rel)
    }

    pub(super) fn display(&self, file: &str) -> String {
        display_path(self.entry, &format!("{}/{file}", self.rel))
    }
}
