//! `acp-registry pack`: deterministic archives, the sha256 follows the inputs, `--check`
//! catches tampering, and the manifest is edited in place with every comment kept.
//!
//! Also: identical bytes twice and across folders, archive contents and metadata, every platform
//! then `validate --deny-warnings`, the bundled entry validates, builds and is on the site, and the
//! release workflow's pinned actions.

use crate::common;

use std::path::Path;

use common::pack::{PackFx as Fx, ID, LINUX, WINDOWS};
use common::{acp_registry, repo_root, sha256_hex, Run};

fn edit(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    f(&mut bytes);
    std::fs::write(path, bytes).unwrap();
}

/// Every target the release workflow builds and `pack` knows.
const TARGETS: [&str; 6] = [
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
    "aarch64-pc-windows-msvc",
];

/// `pack --check` failed (exit 1) saying `text` on stdout.
fn assert_check_fails(run: &Run, text: &str) {
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(text), "{}", run.stdout);
}

#[test]
fn packing_twice_gives_byte_identical_archives() {
    for target in [LINUX, WINDOWS] {
        let fx = Fx::new();
        let first = fx.packed(target);
        let second = fx.packed(target);
        assert_eq!(sha256_hex(&first), sha256_hex(&second), "{target}");
        // Another folder, another time: still the same bytes.
        let other = Fx::new();
        assert_eq!(
            sha256_hex(&first),
            sha256_hex(&other.packed(target)),
            "{target}"
        );
    }
}

#[test]
fn one_changed_input_byte_changes_the_recorded_sha256() {
    let fx = Fx::new();
    let before = sha256_hex(&fx.packed(LINUX));
    let recorded = |fx: &Fx| {
        fx.manifest_json()["distribution"]["binary"]["linux-x86_64"]["sha256"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(recorded(&fx), before);
    edit(&fx.root.join("_bin/acp-collab"), |b| b[0] ^= 1);
    let after_binary = sha256_hex(&fx.packed(LINUX));
    assert_ne!(after_binary, before);
    assert_eq!(recorded(&fx), after_binary);
    edit(
        &fx.root
            .join(ID)
            .join("skill")
            .join(ID)
            .join("references/commands.md"),
        |b| b.push(b'\n'),
    );
    let after_skill = sha256_hex(&fx.packed(LINUX));
    assert_ne!(after_skill, after_binary);
    assert_eq!(recorded(&fx), after_skill);
}

#[test]
fn archives_hold_the_binary_skill_readme_and_licence_with_fixed_metadata() {
    let fx = Fx::new();
    let bytes = fx.packed(LINUX);
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
    let mut names = Vec::new();
    for entry in archive.entries().unwrap() {
        let entry = entry.unwrap();
        let header = entry.header();
        assert_eq!(header.mtime().unwrap(), 0);
        assert_eq!((header.uid().unwrap(), header.gid().unwrap()), (0, 0));
        let name = entry.path().unwrap().display().to_string();
        let mode = header.mode().unwrap();
        let exec = name == "acp-collab"
            || name.ends_with('/')
            || name.starts_with(&format!("{ID}/scripts/"));
        assert_eq!(mode, if exec { 0o755 } else { 0o644 }, "{name}");
        names.push(name);
    }
    // The skill's folder is named as the skill (its `name`), as agents and
    // `agentskills validate` expect it.
    for expected in [
        "LICENSE",
        "README.md",
        "acp-collab",
        "agent-collaboration-protocol/SKILL.md",
        "agent-collaboration-protocol/references/commands.md",
        "agent-collaboration-protocol/scripts/init_collaboration.py",
        "agent-collaboration-protocol/scripts/append_event.py",
        "agent-collaboration-protocol/scripts/next_action.py",
        "agent-collaboration-protocol/scripts/wait_for_turn.py",
        "agent-collaboration-protocol/scripts/validate_collaboration.py",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);

    let zip = fx.packed(WINDOWS);
    let zip = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
    assert!(zip
        .file_names()
        .any(|n| n.is_ok_and(|n| n == "acp-collab.exe")));
}

#[test]
fn pack_check_passes_on_the_packed_archive_and_catches_a_tampered_one() {
    let fx = Fx::new();
    fx.packed(LINUX);
    let check = |fx: &Fx| {
        acp_registry(
            &["pack", ID, "--registry", ".", "--target", LINUX, "--check"],
            &fx.root,
        )
    };
    let run = check(&fx);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    edit(&fx.archive(LINUX), |b| {
        let last = b.len() - 1;
        b[last] ^= 0x55;
    });
    let run = check(&fx);
    assert_check_fails(&run, "the archive changed after pack");
    // With the inputs given, a rebuilt archive is compared too.
    let run = fx.pack(LINUX, &["--check"]);
    assert_check_fails(&run, "differs from a fresh pack");
}

#[test]
fn pack_check_reports_a_platform_without_an_archive() {
    let fx = Fx::new();
    let run = acp_registry(
        &["pack", ID, "--registry", ".", "--target", LINUX, "--check"],
        &fx.root,
    );
    assert_check_fails(&run, "cannot read the archive");
}

#[test]
fn the_manifest_diff_touches_only_the_changed_values_and_keeps_every_comment() {
    let fx = Fx::new();
    let path = fx.root.join(ID).join("agent.json");
    let commented = fx
        .manifest()
        .replacen("{\n", "{\n  // The collaboration engine's own entry.\n", 1)
        .replace(
            "      \"linux-x86_64\": {\n",
            "      /* musl: runs on every distribution */\n      \"linux-x86_64\": { // static\n",
        );
    std::fs::write(&path, &commented).unwrap();
    let sha = sha256_hex(&fx.packed(LINUX));
    let after = fx.manifest();
    let tail =
        "        \"args\": [\n          \"acp\"\n        ]\n      },\n      \"windows-aarch64\"";
    let expected = commented.replacen(
        tail,
        &format!(
            "        \"args\": [\n          \"acp\"\n        ],\n        \"sha256\": \"{sha}\"\n      }},\n      \"windows-aarch64\""
        ),
        1,
    );
    assert_ne!(
        expected, commented,
        "the fixture has the linux-x86_64 block"
    );
    assert_eq!(
        after, expected,
        "only the new sha256 member (and its comma) is added"
    );
    assert!(after.contains("// The collaboration engine's own entry."));
    assert!(after.contains("/* musl: runs on every distribution */"));
    assert!(after.contains("{ // static"));
    // Packing the same inputs again leaves the manifest byte for byte.
    fx.packed(LINUX);
    assert_eq!(fx.manifest(), after);
}

#[test]
fn a_new_version_and_base_url_rewrite_the_archive_url_and_version() {
    let fx = Fx::new();
    let run = fx.pack(LINUX, &["--base-url", "http://127.0.0.1:8123/"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut args = vec!["pack", ID, "--registry", ".", "--target", LINUX];
    args.extend([
        "--binary",
        "_bin/acp-collab",
        "--version",
        "0.2.0",
        "--license",
        "LICENSE",
    ]);
    let run = acp_registry(&args, &fx.root);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let m = fx.manifest_json();
    assert_eq!(m["version"], "0.2.0");
    let target = &m["distribution"]["binary"]["linux-x86_64"];
    assert_eq!(
        target["archive"],
        format!("http://127.0.0.1:8123/v0.2.0/acp-collab-{LINUX}.tar.gz")
    );
    assert_eq!(target["cmd"], "./acp-collab");
    assert!(fx
        .root
        .join(format!("dist/packages/v0.2.0/acp-collab-{LINUX}.tar.gz"))
        .is_file());
    let line = std::fs::read_to_string(fx.root.join(format!(
        "dist/packages/v0.2.0/acp-collab-{LINUX}.tar.gz.sha256"
    )))
    .unwrap();
    assert_eq!(
        line,
        format!(
            "{}  acp-collab-{LINUX}.tar.gz\n",
            target["sha256"].as_str().unwrap()
        )
    );
}

#[test]
fn an_archive_pack_did_not_write_is_never_overwritten() {
    let fx = Fx::new();
    let archive = fx.archive(LINUX);
    std::fs::create_dir_all(archive.parent().unwrap()).unwrap();
    std::fs::write(&archive, "someone else's file").unwrap();
    let run = fx.pack(LINUX, &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("was not written by pack"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&archive).unwrap(),
        "someone else's file"
    );
}

#[test]
fn bad_targets_versions_and_skill_links_are_usage_errors() {
    let fx = Fx::new();
    let run = fx.pack("riscv64gc-unknown-linux-gnu", &[]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--target `riscv64gc-unknown-linux-gnu`"),
        "{}",
        run.stderr
    );
    let mut args = vec!["pack", ID, "--registry", ".", "--target", LINUX];
    args.extend([
        "--binary",
        "_bin/acp-collab",
        "--version",
        "1.0",
        "--license",
        "LICENSE",
    ]);
    let run = acp_registry(&args, &fx.root);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--version `1.0` is not X.Y.Z"),
        "{}",
        run.stderr
    );
    #[cfg(unix)]
    {
        let link = fx.root.join(ID).join("skill").join(ID).join("passwd");
        std::os::unix::fs::symlink("/etc/passwd", link).unwrap();
        let run = fx.pack(LINUX, &[]);
        assert_eq!(run.code, 2);
        assert!(
            run.stderr.contains(&format!("skill/{ID}/passwd")),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
        assert!(!fx.archive(LINUX).exists());
    }
}

#[test]
fn an_entry_packed_for_every_platform_validates_without_warnings() {
    let fx = Fx::new();
    for target in TARGETS {
        fx.packed(target);
    }
    // No configuration here, so no exemption: every target carries its sha256.
    let run = acp_registry(
        &["validate", "--registry", ".", "--deny-warnings"],
        &fx.root,
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn the_bundled_collaboration_entry_validates_cleanly_builds_and_is_on_the_site() {
    let root = repo_root();
    let run = acp_registry(
        &["validate", "--registry", "registry", "--format", "json"],
        &root,
    );
    let doc = run.findings();
    let ours: Vec<&acp_test_kit::Finding> = doc
        .findings
        .iter()
        .filter(|f| f.file.contains(ID))
        .collect();
    assert!(ours.is_empty(), "{ours:#?}");
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let run = acp_registry(
        &[
            "build",
            "--registry",
            "registry",
            "--out",
            dist.to_str().unwrap(),
        ],
        &root,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let registry = std::fs::read_to_string(dist.join("registry.json")).unwrap();
    assert!(registry.contains(&format!("\"id\": \"{ID}\"")));
    let page =
        std::fs::read_to_string(dist.join("site/agents").join(ID).join("index.html")).unwrap();
    assert!(page.contains("Agent Collaboration Protocol"));
}

#[test]
fn the_release_workflow_pins_every_action_by_commit_and_starts_without_permissions() {
    let text = std::fs::read_to_string(repo_root().join(".github/workflows/release.yml")).unwrap();
    let allowed = [
        "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
        "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02",
        "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093",
        "actions/attest-build-provenance@e8998f949152b193b063cb0ec769d69d929409be",
        "peter-evans/create-pull-request@271a8d0340265f705b14b6d32b9829c1cb33d45e",
    ];
    let uses: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().trim_start_matches("- ").strip_prefix("uses: "))
        .map(|u| u.split_whitespace().next().unwrap())
        .collect();
    assert!(uses.len() >= 5, "{uses:?}");
    for action in uses {
        assert!(
            allowed.contains(&action),
            "{action} is not a pinned, allowed action"
        );
    }
    assert!(
        text.contains("\npermissions: {}\n"),
        "no default permissions"
    );
    assert!(
        !text.contains("pull_request"),
        "never runs for pull requests"
    );
    for target in TARGETS {
        assert!(text.contains(&format!("target: {target},")), "{target}");
    }
}
