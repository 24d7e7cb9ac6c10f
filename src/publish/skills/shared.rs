//! What the skills outputs' files share: the skills published, a file of the outputs, the
//! JSON writer and the build error about a skill.

use std::borrow::Cow;

use serde::Serialize;

use crate::publish::error::BuildError;
use crate::rules::CheckedSkill;

/// One skill the build publishes, and the agent it ships with.
pub(crate) struct Published<'a> {
    pub(crate) skill: &'a CheckedSkill,
    /// The agent's id, name and version, for an agent's skill.
    pub(crate) agent: Option<Agent>,
}

/// The agent a skill ships with.
pub(crate) struct Agent {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) version: String,
}

/// A file of the skills outputs: its path below the site folder and its bytes.
pub(crate) type OutputFile<'a> = (String, Cow<'a, [u8]>);

/// The build error about the skill (or file) `path`.
pub(super) fn skill_error(path: &str, reason: &str) -> BuildError {
    BuildError::Skill {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

/// `value` as written: two-space indented JSON and a final newline.
pub(super) fn json(value: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("the index types serialize");
    bytes.push(b'\n');
    bytes
}
