//! Fixtures shared by the tests of the output steps.

use std::collections::BTreeMap;

/// A tree of files each holding its own name, for the tests of the output steps.
pub(super) fn test_files(names: &[&str]) -> BTreeMap<String, Vec<u8>> {
    names
        .iter()
        .map(|n| (n.to_string(), n.as_bytes().to_vec()))
        .collect()
}
