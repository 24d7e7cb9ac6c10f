//! The canonical key order of every object of a manifest (docs/format.md#build-outputs).
//!
//! One place for it: `build` publishes agents in this order (`published::order`), `fmt`
//! rewrites manifests in it and the editing layer inserts new members where it says.

use std::cmp::Ordering;

use super::{DISTRIBUTION_KINDS, FIELD_ORDER, PLATFORMS};

/// Keys of a binary target, in order.
pub(crate) const TARGET_ORDER: [&str; 5] = ["archive", "cmd", "args", "env", "sha256"];
/// Keys of an `npx` or `uvx` package, in order.
pub(crate) const PACKAGE_ORDER: [&str; 3] = ["package", "args", "env"];
/// Keys of an `auth` method, in order.
pub(crate) const AUTH_ORDER: [&str; 7] =
    ["type", "id", "name", "description", "args", "env", "vars"];
/// Keys of the published `icons` object.
pub(crate) const ICONS_ORDER: [&str; 2] = ["light", "dark"];

/// The order of one object's keys: the listed keys first in that order, every other key after
/// them, sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyOrder(pub &'static [&'static str]);

impl KeyOrder {
    /// Where `key` goes: its place in the list, else after the list by name.
    pub(crate) fn rank<'k>(&self, key: &'k str) -> (usize, &'k str) {
        match self.0.iter().position(|k| *k == key) {
            Some(i) => (i, ""),
            None => (self.0.len(), key),
        }
    }

    /// Order two keys of this object canonically.
    pub(crate) fn compare(&self, a: &str, b: &str) -> Ordering {
        self.rank(a).cmp(&self.rank(b))
    }
}

/// The order of the object at `path` (object keys and array indices from the manifest's
/// root). Objects the format does not order (`env`, unknown fields, ...) are sorted.
pub(crate) fn key_order(path: &[&str]) -> KeyOrder {
    match path {
        [] | ["preview"] => KeyOrder(&FIELD_ORDER),
        ["icons"] => KeyOrder(&ICONS_ORDER),
        ["auth", index] if is_index(index) => KeyOrder(&AUTH_ORDER),
        ["distribution", rest @ ..] | ["preview", "distribution", rest @ ..] => distribution(rest),
        _ => KeyOrder(&[]),
    }
}

/// Below `distribution` (the legacy form puts platform keys directly there).
fn distribution(path: &[&str]) -> KeyOrder {
    match path {
        [] => KeyOrder(&DISTRIBUTION_KINDS),
        ["binary"] => KeyOrder(&PLATFORMS),
        ["binary", _] => KeyOrder(&TARGET_ORDER),
        ["npx" | "uvx"] => KeyOrder(&PACKAGE_ORDER),
        [platform] if PLATFORMS.contains(platform) => KeyOrder(&TARGET_ORDER),
        _ => KeyOrder(&[]),
    }
}

fn is_index(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_objects_get_the_order_of_their_place() {
        assert_eq!(key_order(&[]).0[2], "id");
        assert_eq!(
            key_order(&["distribution", "binary", "linux-x86_64"]).0,
            TARGET_ORDER
        );
        assert_eq!(
            key_order(&["preview", "distribution", "npx"]).0,
            PACKAGE_ORDER
        );
        assert_eq!(key_order(&["distribution", "linux-x86_64"]).0, TARGET_ORDER);
        assert_eq!(key_order(&["auth", "3"]).0, AUTH_ORDER);
        assert!(key_order(&["auth", "x"]).0.is_empty());
        assert!(key_order(&["distribution", "npx", "env"]).0.is_empty());
        assert!(key_order(&["custom", "distribution"]).0.is_empty());
    }

    #[test]
    fn unlisted_keys_sort_after_listed_ones_by_name() {
        let order = KeyOrder(&PACKAGE_ORDER);
        let mut keys = ["zeta", "env", "alpha", "package"];
        keys.sort_by(|a, b| order.compare(a, b));
        assert_eq!(keys, ["package", "env", "alpha", "zeta"]);
    }
}
