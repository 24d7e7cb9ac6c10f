//! Registries of agents launched from a binary distribution on every platform, and `verify`
//! run inside them (shared by `tests/verify.rs`, `tests/verify_fixtures.rs` and
//! `tests/net_faults.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use super::repo_root;

/// The platforms a test agent is offered on (those a test machine may be).
pub(crate) const PLATFORMS: [&str; 4] = [
    "linux-x86_64",
    "linux-aarch64",
    "darwin-aarch64",
    "darwin-x86_64",
];

/// The scriptable test agent `tests/agents/acp_agent.py`.
pub(crate) fn agent_script() -> Vec<u8> {
    std::fs::read(repo_root().join("tests/agents/acp_agent.py")).unwrap()
}

/// A pure-Python wheel of the test agent named `name` (its console script has the same name,
/// the command `uvx <name>` runs), declaring `Requires-Python` when given: a zip with the
/// module, `METADATA`, `WHEEL`, `entry_points.txt` and a `RECORD` of their digests.
pub(crate) fn wheel(name: &str, version: &str, requires_python: Option<&str>) -> (String, Vec<u8>) {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};
    use std::io::Write as _;
    let module = name.replace('-', "_");
    let info = format!("{module}-{version}.dist-info");
    let mut metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    if let Some(requires) = requires_python {
        metadata.push_str(&format!("Requires-Python: {requires}\n"));
    }
    let files: Vec<(String, Vec<u8>)> = vec![
        (format!("{module}/__init__.py"), agent_script()),
        (format!("{info}/METADATA"), metadata.into_bytes()),
        (
            format!("{info}/WHEEL"),
            b"Wheel-Version: 1.0\nGenerator: acp-registry-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
        ),
        (
            format!("{info}/entry_points.txt"),
            format!("[console_scripts]\n{name} = {module}:main\n").into_bytes(),
        ),
    ];
    let mut record = String::new();
    for (path, data) in &files {
        let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(data));
        record.push_str(&format!("{path},sha256={digest},{}\n", data.len()));
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (path, data) in files
        .iter()
        .chain([(format!("{info}/RECORD"), record.into_bytes())].iter())
    {
        writer.start_file(path.as_str(), options).unwrap();
        writer.write_all(data).unwrap();
    }
    let bytes = writer.finish().unwrap().into_inner();
    (format!("{module}-{version}-py3-none-any.whl"), bytes)
}

/// `{"binary": {platform: target}}` for every platform of [`PLATFORMS`].
pub(crate) fn binary_everywhere(target: &Value) -> Value {
    let binary: serde_json::Map<String, Value> = PLATFORMS
        .iter()
        .map(|p| (p.to_string(), target.clone()))
        .collect();
    json!({ "binary": binary })
}

pub(crate) struct Registry {
    _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
}

/// A registry holding each manifest as `<id>/agent.json`.
pub(crate) fn registry(entries: &[Value]) -> Registry {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("registry");
    for entry in entries {
        let folder = root.join(entry["id"].as_str().unwrap());
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("agent.json"),
            serde_json::to_string_pretty(entry).unwrap(),
        )
        .unwrap();
    }
    Registry { _dir: dir, root }
}

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
    let mut command = Command::new(env!("CARGO_BIN_EXE_acp-registry"));
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
