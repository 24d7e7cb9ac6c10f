//! `verify` and `matrix` run inside a registry of test agents (`acp_test_kit::wheel` writes
//! them), as `verify.rs`, `verify_fixtures.rs` and `net_faults.rs` run them.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

pub(crate) struct Run {
    pub(crate) code: i32,
    /// Standard output then standard error.
    pub(crate) stdout: String,
    /// Standard output as JSON (`Null` when it is not).
    pub(crate) json: Value,
}

/// `acp-registry ARGS --registry .` inside `root`, loopback allowed, with a `GITHUB_TOKEN`
/// the sandbox must not pass on.
pub(crate) fn command(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(crate::REGISTRY);
    command
        .args(args)
        .args(["--registry", "."])
        .current_dir(root)
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")
        .env("GITHUB_TOKEN", "secret-token");
    command
}

pub(crate) fn run_command(command: &mut Command) -> Run {
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    Run {
        code: output.status.code().unwrap_or(-1),
        json: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stdout: stdout + &String::from_utf8_lossy(&output.stderr),
    }
}

/// [`command`] with `--no-cache`, run to the end.
pub(crate) fn run(root: &Path, args: &[&str]) -> Run {
    run_command(command(root, args).arg("--no-cache"))
}

/// The code of every finding of a `--format json` run.
pub(crate) fn codes(run: &Run) -> Vec<String> {
    run.json["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|d| d["code"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}
