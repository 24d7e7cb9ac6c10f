//! Every published byte pinned: the sha256 of every file `build` writes (the registry files,
//! icons, schemas, the site, `SHA256SUMS` and the ownership manifests; nothing left out) for
//! the bundled registry, the public sample and a synthetic registry (`examples/gen_registry.rs`,
//! the benchmarks' generator), recorded before the published form was given one owner (issue
//! 28, at d318e5f) so that any byte a refactoring changes fails here.
//!
//! An intended change of the output regenerates the pins:
//! `UPDATE_GOLDEN=1 cargo test --test registry golden::`, and the diff of
//! `tests/registry/golden/` shows which files changed.

use std::path::Path;

use crate::common::{build_registry, repo_root, sha256_hex, tree};

#[path = "../../examples/gen_registry.rs"]
#[allow(dead_code)]
mod gen_registry;

/// `<sha256>  <path>` for every file below `out`, sorted by path (`sha256sum`'s format).
fn listing(out: &Path) -> String {
    use std::fmt::Write as _;
    tree(out)
        .iter()
        .fold(String::new(), |mut text, (path, bytes)| {
            let _ = writeln!(text, "{}  {path}", sha256_hex(bytes));
            text
        })
}

/// Build `registry` (with its site, under its configured `base_url`) and return the listing.
fn built(registry: &Path) -> String {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("dist");
    let run = build_registry(registry, &out, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    listing(&out)
}

/// `found` equals the pinned text of `tests/registry/golden/<name>`, or (with
/// `UPDATE_GOLDEN=1`) becomes it.
fn assert_pinned(name: &str, found: &str) {
    let path = repo_root().join("tests/registry/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, found).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(&path).unwrap();
    let changed: Vec<String> = diff(&pinned, found);
    assert!(
        changed.is_empty(),
        "the published bytes differ from {}:\n{}\n(an intended change: UPDATE_GOLDEN=1 cargo test --test registry golden::)",
        path.display(),
        changed.join("\n")
    );
}

/// The lines only one side has, marked `-` (pinned) and `+` (found).
fn diff(pinned: &str, found: &str) -> Vec<String> {
    let old: std::collections::BTreeSet<&str> = pinned.lines().collect();
    let new: std::collections::BTreeSet<&str> = found.lines().collect();
    let removed = old.difference(&new).map(|l| format!("- {l}"));
    let added = new.difference(&old).map(|l| format!("+ {l}"));
    removed.chain(added).collect()
}

#[test]
fn the_bundled_registry_publishes_the_pinned_bytes() {
    assert_pinned("bundled.sha256", &built(&repo_root().join("registry")));
}

#[test]
fn the_public_sample_publishes_the_pinned_bytes() {
    let sample = repo_root().join("tests/fixtures/public-registry-sample");
    assert_pinned("public-registry-sample.sha256", &built(&sample));
}

/// The synthetic registry of `count` entries, built; the sha256 of its listing (one line,
/// the listing itself runs to thousands of lines).
fn synthetic(count: usize) -> String {
    let work = tempfile::tempdir().unwrap();
    let registry = work.path().join("registry");
    gen_registry::generate(&registry, count);
    let listing = built(&registry);
    format!(
        "{}  listing of {} files\n",
        sha256_hex(listing.as_bytes()),
        listing.lines().count()
    )
}

#[test]
fn a_synthetic_registry_publishes_the_pinned_bytes() {
    assert_pinned("synthetic-300.sha256", &synthetic(300));
}

/// The benchmarks' 10,000 entries: a long run (`ACP_REGISTRY_LONG_TESTS=1`).
#[test]
fn the_ten_thousand_entry_benchmark_registry_publishes_the_pinned_bytes() {
    if !acp_test_kit::long_tests() {
        return;
    }
    assert_pinned("synthetic-10000.sha256", &synthetic(10_000));
}
