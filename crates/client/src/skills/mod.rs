//! Fetching Agent Skills from where skill clients find them, verified before anything is
//! installed: a site (a URL or a local site folder) with a well-known discovery index (0.2.0
//! first, then 0.1.0), or a Claude Code plugin marketplace (`.claude-plugin/marketplace.json`).
//!
//! Everything a source serves is untrusted: every request goes through [`net`](crate::net)
//! (https only, public addresses unless configured), a local folder is read through the core's
//! `fs` readers (no link followed, regular files only, sizes capped), and every list and file is
//! bounded ([`FetchLimits`]). A 0.2.0 artifact is checked against its `digest` before it is
//! unpacked (with [`archive`](crate::archive)'s rules, links refused); a 0.1.0 file or a
//! marketplace file against the source's `SHA256SUMS` (required unless the caller allows
//! unverified files; over HTTP a marketplace cannot be listed, so its `SHA256SUMS` is what
//! names the files). The name in the index, the folder's and `SKILL.md`'s front-matter `name`
//! must be one. The result is files in memory: the caller installs them
//! (`acp_registry_core::skill_install`) only once every file of every skill is fetched and
//! verified.
//!
//! One file per concern: `fetched` (what a fetch returns, its options and bounds), `error`,
//! `place` (a site folder or URL, and reading one file of it), `sums` (`SHA256SUMS`), `tree`
//! (reading a folder, checking a skill's files and name), `site` (both index versions),
//! `marketplace`, and `fetch` (which source a text names, and choosing the skills).

mod error;
mod fetch;
mod fetched;
mod marketplace;
mod place;
mod site;
mod sums;
mod tree;

pub use error::SkillFetchError;
pub use fetch::fetch_skills;
pub use fetched::{FetchLimits, FetchOptions, FetchedSkill, Selection};
pub use tree::{check_skill, front_matter_name, read_folder};
