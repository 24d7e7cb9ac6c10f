//! Generated documentation stays in sync with the code.

#[test]
fn rules_md_is_generated_from_the_catalogue() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let expected = acp_registry::rules::rules_markdown();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/rules.md is stale: run `cargo run -- explain --markdown > docs/rules.md` (or UPDATE_DOCS=1 cargo test --test docs)"
    );
}
