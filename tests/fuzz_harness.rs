//! The fuzz harness stays complete: every target in `fuzz/fuzz_targets/` is built by
//! `fuzz/Cargo.toml`, has a checked-in seed corpus, and has its run recorded in `FUZZING.md`.
//! (The fuzzers themselves need cargo-fuzz and are not run by the suite.)

use std::path::Path;

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
