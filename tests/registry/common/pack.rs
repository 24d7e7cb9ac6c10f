//! A registry ready for `pack`: a copy of the bundled collaboration entry, a licence and a
//! stand-in binary (shared by `tests/registry/pack.rs` and the kill tests of `tests/registry/faults.rs`).

use std::path::PathBuf;

use super::{acp_registry, copy_dir, repo_root, Run};

pub(crate) const ID: &str = "agent-collaboration-protocol";
pub(crate) const LINUX: &str = "x86_64-unknown-linux-musl";
pub(crate) const WINDOWS: &str = "aarch64-pc-windows-msvc";

/// `pack` of the collaboration entry at version 0.1.0 for `target`, run with `--registry .`.
pub(crate) fn pack_args<'a>(target: &'a str, binary: &'a str, license: &'a str) -> Vec<&'a str> {
    vec![
        "pack",
        ID,
        "--registry",
        ".",
        "--target",
        target,
        "--binary",
        binary,
        "--version",
        "0.1.0",
        "--license",
        license,
    ]
}

/// A registry holding a copy of the collaboration entry, a licence and a small stand-in
/// binary (the archive layout does not depend on what the binary is).
pub(crate) struct PackFx {
    _tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
}

impl PackFx {
    pub(crate) fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("registry");
        copy_dir(&repo_root().join("registry").join(ID), &root.join(ID));
        std::fs::write(root.join("LICENSE"), "Apache License 2.0 (test copy)\n").unwrap();
        std::fs::create_dir_all(root.join("_bin")).unwrap();
        std::fs::write(root.join("_bin/acp-collab"), b"\x7fELF stand-in binary\n").unwrap();
        PackFx { _tmp: tmp, root }
    }

    /// The `pack` arguments for `target` with the fixture's binary and licence.
    pub(crate) fn args<'a>(&self, target: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = pack_args(target, "_bin/acp-collab", "LICENSE");
        args.extend_from_slice(extra);
        args
    }

    pub(crate) fn pack(&self, target: &str, extra: &[&str]) -> Run {
        acp_registry(&self.args(target, extra), &self.root)
    }

    pub(crate) fn packed(&self, target: &str) -> Vec<u8> {
        let run = self.pack(target, &[]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        std::fs::read(self.archive(target)).unwrap()
    }

    pub(crate) fn archive(&self, target: &str) -> PathBuf {
        let ext = if target.contains("windows") {
            "zip"
        } else {
            "tar.gz"
        };
        self.root
            .join(format!("dist/packages/v0.1.0/acp-collab-{target}.{ext}"))
    }

    pub(crate) fn manifest(&self) -> String {
        std::fs::read_to_string(self.root.join(ID).join("agent.json")).unwrap()
    }

    pub(crate) fn manifest_json(&self) -> serde_json::Value {
        acp_registry::parse(&self.manifest()).unwrap().to_json()
    }
}
