//! The published form of an agent: what it looks like in each output `build` writes and on
//! the site. One owner for the steps from the manifest as clients read it (the legacy
//! platform keys already under `binary`, see [`crate::rules::normalized_json`]) to the bytes
//! of an agent in a registry file: `$schema` and `icon` dropped, the preview block served
//! when newer, icon URLs under `base_url`, the output's patches, the embedded icon, the
//! canonical key order and the indentation inside `agents`.
//!
//! `registry::check` composes every output's agent once per entry (and keeps what `build`
//! writes), `publish::build` writes those or composes the same [`Form`] under another
//! `--base-url`, and the site reads both channels from one [`Form`].
//!
//! - `form`: [`Form`], one entry's published form, and [`preview_wins`];
//! - `patch`: an output's patches applied to an agent;
//! - `order`: the canonical key order of a published agent and its indented text;
//! - `output`: [`Output`], [`Channel`] and [`Patch`], an output as configured.

mod form;
mod order;
mod output;
mod patch;

pub(crate) use form::{preview_wins, Form};
pub(crate) use order::indented;
pub(crate) use output::{listings, Channel, Output, Patch};
pub(crate) use output::{VERIFICATION_FILE, VERIFICATION_SCHEMA_FILE};
#[cfg(test)]
pub(crate) use patch::apply_patch;
