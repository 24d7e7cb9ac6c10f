//! The fuzz harness stays complete and keeps passing: every target in `fuzz/fuzz_targets/` is
//! built by `fuzz/Cargo.toml`, has a checked-in seed corpus and its run recorded in
//! `FUZZING.md`, and runs over that corpus in the normal suite. The targets' sources are
//! compiled here unchanged (so a library change that breaks a target fails `cargo test`, not
//! the next fuzzing session), and every input the fuzzers kept, crashers' regression inputs
//! included, passes the target's own assertions. (Fuzzing itself needs cargo-fuzz.)
//!
//! `libfuzzer-sys` is not a dependency of this crate: `extern crate self as libfuzzer_sys`
//! lets each target's `use libfuzzer_sys::fuzz_target;` find the `fuzz_target!` below, which
//! turns the target's body into a plain function.

extern crate self as libfuzzer_sys;

use std::path::Path;

/// The body of a `fuzz_target!(|data: &[u8]| …)` as `fn fuzz_one(data: &[u8])`.
#[macro_export]
macro_rules! fuzz_target {
    (|$data:ident: &[u8]| $body:block) => {
        pub(crate) fn fuzz_one($data: &[u8]) $body
    };
}

macro_rules! targets {
    ($($name:ident = $path:literal),* $(,)?) => {
        $(
            #[allow(unused_attributes, unused_imports, clippy::all, clippy::pedantic)]
            #[path = $path]
            mod $name;
        )*

        /// Every target compiled here, by name, with its entry point.
        const TARGETS: &[(&str, fn(&[u8]))] = &[$((stringify!($name), $name::fuzz_one)),*];
    };
}

targets!(
    acp_lines = "../fuzz/fuzz_targets/acp_lines.rs",
    archive_extract = "../fuzz/fuzz_targets/archive_extract.rs",
    collab_validate = "../fuzz/fuzz_targets/collab_validate.rs",
    icon_rules = "../fuzz/fuzz_targets/icon_rules.rs",
    jsonc_edit = "../fuzz/fuzz_targets/jsonc_edit.rs",
    jsonc_parse = "../fuzz/fuzz_targets/jsonc_parse.rs",
    manifest_entry = "../fuzz/fuzz_targets/manifest_entry.rs",
);

fn fuzz_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz"))
}

#[test]
fn every_fuzz_target_is_compiled_by_the_suite() {
    let mut on_disk: Vec<String> = std::fs::read_dir(fuzz_root().join("fuzz_targets"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    on_disk.sort();
    let compiled: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        on_disk, compiled,
        "add the new target to `targets!` in tests/fuzz_replay.rs"
    );
}

#[test]
fn every_corpus_input_passes_its_target() {
    for (name, fuzz_one) in TARGETS {
        let corpus = fuzz_root().join("corpus").join(name);
        let mut inputs: Vec<_> = std::fs::read_dir(&corpus)
            .unwrap_or_else(|e| panic!("{}: {e}", corpus.display()))
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{}: empty corpus", corpus.display());
        for input in inputs {
            let data = std::fs::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| fuzz_one(&data));
            assert!(
                outcome.is_ok(),
                "fuzz target {name} fails on {}",
                input.display()
            );
        }
    }
}

#[test]
fn every_fuzz_target_has_a_bin_entry_a_corpus_and_a_fuzzing_md_row() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("fuzz/Cargo.toml")).unwrap();
    let record = std::fs::read_to_string(root.join("FUZZING.md")).unwrap();
    let mut targets: Vec<String> = std::fs::read_dir(root.join("fuzz/fuzz_targets"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".rs").map(str::to_owned))
        .collect();
    targets.sort();
    assert!(targets.len() >= 6, "{targets:?}");
    for target in &targets {
        assert!(
            manifest.contains(&format!("path = \"fuzz_targets/{target}.rs\"")),
            "fuzz/Cargo.toml has no [[bin]] for {target}"
        );
        let corpus = root.join("fuzz/corpus").join(target);
        let seeds = std::fs::read_dir(&corpus).map_or(0, std::iter::Iterator::count);
        assert!(seeds > 0, "no seed corpus in {}", corpus.display());
        assert!(
            record.contains(&format!("| `{target}` |")),
            "FUZZING.md records no run of {target}"
        );
    }
}
