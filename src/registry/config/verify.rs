//! The launch and update sections of the configuration: `verify` (the auth types an agent
//! must offer, how old `build --matrix` evidence may be) and `update` (the release-age
//! cooldown), both counting whole days.

use crate::manifest::fields::{Fields, Keys};
use crate::manifest::{Node, NodeValue};

/// The longest release-age cooldown `update.min_age_days` (and `update --min-age`) takes.
pub const MAX_MIN_AGE_DAYS: u32 = 365;
/// How old evidence may be before it is expired, when neither `verify.max_age_days` nor
/// `build --max-age` says: a nightly `matrix` renews it well within that.
pub(crate) const DEFAULT_MAX_AGE_DAYS: u32 = 30;

/// `"verify": {"auth_types": ["agent", "terminal"], "max_age_days": 30}` (an empty
/// `auth_types` accepts any answer).
pub(super) fn read_verify(
    fields: &mut Fields,
    node: &Node,
    auth_types: &mut Option<Vec<String>>,
    max_age_days: &mut u32,
) {
    let help = "write `{\"auth_types\": [\"agent\", \"terminal\"], \"max_age_days\": 30}`";
    let Some(members) = fields.object(node, "verify must be an object", help) else {
        return;
    };
    let mut keys = Keys::new(members);
    for member in keys.get("auth_types") {
        if let Some(types) = read_auth_types(fields, &member.value) {
            *auth_types = Some(types);
        }
    }
    for member in keys.get("max_age_days") {
        if let Some(days) = read_days(fields, &member.value, "verify.max_age_days", 1) {
            *max_age_days = days;
        }
    }
    keys.finish(fields);
}

/// `verify.auth_types`: a list of auth types.
fn read_auth_types(fields: &mut Fields, value: &Node) -> Option<Vec<String>> {
    const TYPES: [&str; 3] = ["agent", "terminal", "env_var"];
    let items = value.as_array().unwrap_or_default();
    let valid: Vec<String> = items
        .iter()
        .filter_map(Node::as_str)
        .filter(|t| TYPES.contains(t))
        .map(str::to_string)
        .collect();
    if value.as_array().is_none() || valid.len() != items.len() {
        fields.problem(
            value.span,
            "verify.auth_types must be a list of auth types",
            "write `{\"auth_types\": [\"agent\", \"terminal\"]}` (types: agent, terminal, env_var)",
        );
        return None;
    }
    Some(valid)
}

/// A whole number of days from `min` to [`MAX_MIN_AGE_DAYS`] (`key` names it in the finding).
fn read_days(fields: &mut Fields, value: &Node, key: &str, min: u32) -> Option<u32> {
    let days = match &value.value {
        NodeValue::Number(raw) => raw.parse::<u32>().ok(),
        _ => None,
    };
    let days = days.filter(|d| (min..=MAX_MIN_AGE_DAYS).contains(d));
    if days.is_none() {
        fields.problem(
            value.span,
            format!("{key} must be a whole number of days"),
            format!("write a whole number of days from {min} to {MAX_MIN_AGE_DAYS}"),
        );
    }
    days
}

/// `"update": {"min_age_days": N}`: a whole number of days, 0 to [`MAX_MIN_AGE_DAYS`].
pub(super) fn read_update(fields: &mut Fields, node: &Node, min_age_days: &mut u32) {
    let help = "write `{\"min_age_days\": 7}`";
    let Some(members) = fields.object(node, "update must be an object", help) else {
        return;
    };
    let mut keys = Keys::new(members);
    for member in keys.get("min_age_days") {
        if let Some(days) = read_days(fields, &member.value, "update.min_age_days", 0) {
            *min_age_days = days;
        }
    }
    keys.finish(fields);
}
