//! The bounds of one `skill check` run: what one index, skill, file and run may cost.

/// Largest index or manifest read, in bytes.
pub(crate) const MAX_INDEX_BYTES: u64 = 16 * 1024 * 1024;
/// Most JSON values an index or manifest may hold.
pub(crate) const MAX_INDEX_VALUES: u64 = 2_000_000;
/// Most skills (or plugins) of one index checked; the rest are reported, not read.
pub(crate) const MAX_SKILLS: usize = 10_000;
/// Most files of one skill (the `skills` CLI's limit).
pub(crate) const MAX_SKILL_FILES: usize = 1000;
/// Most bytes of one skill, file or artifact (the `skills` CLI's 50 MiB).
pub(crate) const MAX_SKILL_BYTES: u64 = 50 * 1024 * 1024;
/// Most bytes read over a whole run; past it, files are not fetched.
pub(crate) const MAX_TOTAL_BYTES: u64 = 2 * 1024 * 1024 * 1024;
