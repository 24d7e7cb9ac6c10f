//! Publishing a checked registry: everything `build` and `site` write, planned from
//! [`crate::registry::Checked`] (every input problem found first), then produced one file at a
//! time into the output folder. The agents come from their published form
//! ([`crate::published`]); this module writes them, with the icons, schemas, sums and site.
//!
//! - `archive`: deterministic tar.gz and zip archives (`pack`'s packages, the skills' archives);
//! - `build`: the plan ([`build::plan`]) and the files it produces on demand;
//! - `document`: a registry file written one agent at a time;
//! - `entries`: which entries a build publishes;
//! - `icons`: the published icons and the safety rules they are held to;
//! - `site_source`: the site's view of the published entries;
//! - `skills`: the skills indexes and marketplace in the site folder, and the site's skills;
//! - `error`: [`BuildError`], below both the plan and the output folder;
//! - `output`: the output folder (ownership, destination, staging, `--check`);
//! - `last_good`: `build --last-good`, the previous output's objects for failing entries;
//! - `evidence`: `build --matrix`, what `matrix` found, as `verification.json`;
//! - `lifecycle`: `lifecycle.json`, each entry's status, compatibility and release history.
//!
//! Deterministic: entries are sorted after discovery, `serde_json` keeps insertion order
//! (`preserve_order`) so each output is written in an explicit canonical order
//! (`published::order` with `manifest::order`), no `HashMap` is iterated into an output, and no
//! timestamp is written.

pub(crate) mod archive;
pub(crate) mod build;
mod document;
mod entries;
pub(crate) mod error;
pub(crate) mod evidence;
mod icons;
pub(crate) mod last_good;
mod lifecycle;
pub(crate) mod output;
mod site_source;
pub(crate) mod skills;

pub(crate) use error::BuildError;
pub use site_source::site_agents;
