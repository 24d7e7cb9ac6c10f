//! CLI behaviour as data: every `tests/cmd/*.toml` case runs the binary and compares its
//! output and exit code with the files beside it (`TRYCMD=overwrite` refreshes them).

#[test]
fn cli_cases() {
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}
