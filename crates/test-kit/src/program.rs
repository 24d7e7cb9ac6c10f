//! Programs a test needs from the machine.

/// The uv version `.ci/run` installs, named by the tests that need `uvx`.
pub const UV_PIN: &str = "0.13.9";

/// Whether `program` is a file in a folder of PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Whether `uvx` is installed. Without it a test of uvx launches cannot say anything: in CI
/// (`CI` set, as `.ci/run` and GitHub Actions run) that fails loudly, since `.ci/run`
/// installs uv; elsewhere `what` is announced as skipped.
pub fn uvx_or_skip(what: &str) -> bool {
    let found = on_path("uvx");
    if !found {
        let install = format!("python3 -m pip install uv=={UV_PIN}");
        assert!(
            std::env::var_os("CI").is_none(),
            "{what}: uvx is not installed; .ci/run installs it (`{install}`)"
        );
        eprintln!("skipped {what}: uvx is not installed (`{install}`; in CI this fails)");
    }
    found
}
