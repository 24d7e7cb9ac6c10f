//! The scriptable test agent and registries of it: as a wheel for `uvx`, as a binary on
//! every platform, each manifest written as `<id>/agent.json`.

use std::path::PathBuf;

use serde_json::{json, Value};

/// The platforms a test agent is offered on (those a test machine may be).
pub const PLATFORMS: [&str; 4] = [
    "linux-x86_64",
    "linux-aarch64",
    "darwin-aarch64",
    "darwin-x86_64",
];

/// The scriptable test agent `tests/agents/acp_agent.py`.
pub fn agent_script() -> Vec<u8> {
    std::fs::read(crate::repo_root().join("tests/agents/acp_agent.py")).expect("the test agent")
}

/// A pure-Python wheel of the test agent named `name` (its console script has the same name,
/// the command `uvx <name>` runs), declaring `Requires-Python` when given: a zip with the
/// module, `METADATA`, `WHEEL`, `entry_points.txt` and a `RECORD` of their digests.
pub fn wheel(name: &str, version: &str, requires_python: Option<&str>) -> (String, Vec<u8>) {
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
pub fn binary_everywhere(target: &Value) -> Value {
    let binary: serde_json::Map<String, Value> = PLATFORMS
        .iter()
        .map(|p| (p.to_string(), target.clone()))
        .collect();
    json!({ "binary": binary })
}

/// A registry in a temporary folder, removed when dropped.
pub struct Registry {
    _dir: tempfile::TempDir,
    /// Its root folder.
    pub root: PathBuf,
}

/// A registry holding each manifest as `<id>/agent.json`.
pub fn registry(entries: &[Value]) -> Registry {
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
