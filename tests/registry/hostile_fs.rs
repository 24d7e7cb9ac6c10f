//! A registry is untrusted input: links (out of the registry and inside it), FIFOs, endless
//! devices, unreadable entries, folders where files belong (and the reverse) and an empty
//! registry. Every run is bounded by a timeout and a memory limit, so a reader that blocks on
//! a FIFO or reads `/dev/zero` fails the test instead of hanging the suite.
#![cfg(unix)]

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use crate::common;
use acp_test_kit::bounded::run_bin;
use acp_test_kit::Run;

const BIN: &str = crate::REGISTRY;
/// Marks content that must never be read through a link.
const SECRET: &str = "SECRET-OUTSIDE-THE-REGISTRY";

const ICON: &str = concat!(
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\">\n",
    "  <circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.5\"/>\n",
    "</svg>\n"
);

/// A valid entry `<root>/<id>/` (manifest and icon).
fn entry(root: &Path, id: &str) -> std::path::PathBuf {
    let dir = root.join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("agent.json"), common::valid_manifest(id, "")).unwrap();
    std::fs::write(dir.join("icon.svg"), ICON).unwrap();
    dir
}

fn replace_with_link(path: &Path, target: impl AsRef<Path>) {
    let _ = std::fs::remove_file(path);
    symlink(target, path).unwrap();
}

/// A FIFO at `path`, in place of what is there.
fn fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    acp_test_kit::fifo(path).unwrap_or_else(|e| panic!("mkfifo {path:?}: {e}"));
}

/// `/dev/zero` (char 1:5) at `path`; `false` when this system refuses `mknod`.
fn endless_device(path: &Path) -> bool {
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; makedev builds the device number.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 5)) };
    made == 0
}

/// Run `acp-registry` with a timeout and a memory limit; `unprivileged` drops to uid/gid
/// 65534 when running as root (permissions mean nothing to root).
fn run(args: &[&str], unprivileged: bool) -> Run {
    run_bin(BIN, args, unprivileged)
}

fn validate(root: &Path) -> Run {
    run(
        &[
            "validate",
            "--registry",
            root.to_str().unwrap(),
            "--format",
            "json",
        ],
        false,
    )
}

/// Validation failed (exit 1) with a `code` finding on each of `files`.
fn assert_findings(result: &Run, code: &str, files: &[&str]) {
    assert_eq!(result.exited(), Some(1), "{}", result.stderr);
    for file in files {
        assert!(
            result.has(code, file),
            "no {code} for {file}: {:?}",
            result.findings()
        );
    }
}

/// Whether a missing manifest or icon is reported: a link or special file is the one finding.
fn missing_manifest_or_icon(result: &Run) -> bool {
    result
        .codes()
        .iter()
        .any(|c| c == "missing-manifest" || c == "icon-missing")
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn links_out_of_the_registry_are_refused_and_never_read() {
    let temp = temp();
    let root = temp.path().join("registry");
    let outside = temp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    for name in [
        "agent.json",
        "icon.svg",
        "README.md",
        "SKILL.md",
        "config",
        "quarantine",
    ] {
        std::fs::write(outside.join(name), format!("{SECRET} {name}\n")).unwrap();
    }
    std::fs::create_dir_all(outside.join("agent-folder")).unwrap();
    std::fs::write(
        outside.join("agent-folder/agent.json"),
        common::valid_manifest("linked-agent", ""),
    )
    .unwrap();

    let a = entry(&root, "manifest-agent");
    replace_with_link(&a.join("agent.json"), outside.join("agent.json"));
    let b = entry(&root, "icon-agent");
    replace_with_link(&b.join("icon.svg"), outside.join("icon.svg"));
    let c = entry(&root, "readme-agent");
    replace_with_link(&c.join("README.md"), outside.join("README.md"));
    let d = entry(&root, "skill-agent");
    std::fs::create_dir(d.join("skill")).unwrap();
    replace_with_link(&d.join("skill/SKILL.md"), outside.join("SKILL.md"));
    replace_with_link(&root.join("acp-registry.jsonc"), outside.join("config"));
    replace_with_link(&root.join("quarantine.json"), outside.join("quarantine"));
    replace_with_link(&root.join("linked-agent"), outside.join("agent-folder"));

    let result = validate(&root);
    assert_findings(
        &result,
        "file-link",
        &[
            "manifest-agent/agent.json",
            "icon-agent/icon.svg",
            "readme-agent/README.md",
            "skill-agent/skill/SKILL.md",
            "acp-registry.jsonc",
            "quarantine.json",
            "linked-agent",
        ],
    );
    // Neither a missing manifest nor a missing icon: the link is the one finding.
    assert!(!missing_manifest_or_icon(&result));
    let human = run(&["validate", "--registry", root.to_str().unwrap()], false);
    assert!(!human.stdout.contains(SECRET) && !result.stdout.contains(SECRET));
}

#[test]
fn links_that_stay_inside_the_registry_are_refused_too() {
    let temp = temp();
    let root = temp.path().join("registry");
    let real = entry(&root, "real-agent");
    let copy = entry(&root, "copy-agent");
    replace_with_link(&copy.join("icon.svg"), "../real-agent/icon.svg");
    replace_with_link(&copy.join("agent.json"), "../real-agent/agent.json");
    std::fs::create_dir_all(real.join("skill/references")).unwrap();
    std::fs::write(
        real.join("skill/SKILL.md"),
        "---\nname: real-agent\ndescription: Use it.\n---\n\nSee references/guide.md.\n",
    )
    .unwrap();
    replace_with_link(&real.join("skill/references/guide.md"), "../SKILL.md");
    replace_with_link(&root.join("alias-agent"), "real-agent");

    let result = validate(&root);
    assert_findings(
        &result,
        "file-link",
        &[
            "copy-agent/agent.json",
            "copy-agent/icon.svg",
            "real-agent/skill/references/guide.md",
            "alias-agent",
        ],
    );
    // The link into skill/ is not also reported as a broken skill link.
    assert!(!result.codes().iter().any(|c| c == "skill-link"));
    // The linked entry is not checked a second time under the link's name.
    assert!(!result.has("id-mismatch", "alias-agent/agent.json"));
}

#[test]
fn build_writes_nothing_when_a_file_is_a_link() {
    let temp = temp();
    let root = temp.path().join("registry");
    entry(&root, "real-agent");
    let copy = entry(&root, "copy-agent");
    replace_with_link(&copy.join("icon.svg"), "../real-agent/icon.svg");
    let out = temp.path().join("dist");
    let result = run(
        &[
            "build",
            "--registry",
            root.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        false,
    );
    assert_eq!(result.exited(), Some(1), "{}", result.stderr);
    assert!(
        result
            .stderr
            .contains("copy-agent/icon.svg is a symbolic link"),
        "{}",
        result.stderr
    );
    assert!(!out.exists());
}

/// One entry per reader (manifest, icon, README) plus the configuration, each replaced by
/// `make`; returns the paths expected in the findings.
fn special_everywhere(root: &Path, make: &dyn Fn(&Path) -> bool) -> Option<Vec<&'static str>> {
    let a = entry(root, "manifest-agent");
    let b = entry(root, "icon-agent");
    let c = entry(root, "readme-agent");
    let made = make(&a.join("agent.json"))
        && make(&b.join("icon.svg"))
        && make(&c.join("README.md"))
        && make(&root.join("acp-registry.jsonc"));
    made.then(|| {
        vec![
            "manifest-agent/agent.json",
            "icon-agent/icon.svg",
            "readme-agent/README.md",
            "acp-registry.jsonc",
        ]
    })
}

#[test]
fn fifos_are_refused_without_blocking() {
    let temp = temp();
    let root = temp.path().join("registry");
    let files = special_everywhere(&root, &|p| {
        fifo(p);
        true
    })
    .unwrap();
    let result = validate(&root);
    assert_findings(&result, "file-not-regular", &files);
    assert!(!missing_manifest_or_icon(&result));
}

#[test]
fn an_endless_device_is_refused_without_reading_it() {
    let temp = temp();
    let root = temp.path().join("registry");
    let Some(files) = special_everywhere(&root, &endless_device) else {
        eprintln!("skipped: mknod of a character device is refused here (not root, or a restricted container)");
        return;
    };
    let result = validate(&root);
    assert_findings(&result, "file-not-regular", &files);
}

#[test]
fn an_unreadable_entry_is_an_error_naming_it_never_a_dropped_agent() {
    let temp = temp();
    // The unprivileged child must be able to traverse the temporary folder.
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = temp.path().join("registry");
    entry(&root, "good-agent");
    let locked = entry(&root, "locked-agent");
    let secret = entry(&root, "secret-agent");
    std::fs::set_permissions(
        secret.join("agent.json"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();

    let result = run(
        &[
            "validate",
            "--registry",
            root.to_str().unwrap(),
            "--format",
            "json",
        ],
        true,
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(result.exited(), Some(1), "{}", result.stderr);
    assert!(
        result.has("file-unreadable", "locked-agent"),
        "{:?}",
        result.findings()
    );
    assert!(
        result.has("file-unreadable", "secret-agent/agent.json"),
        "{:?}",
        result.findings()
    );
    assert!(
        !result.codes().iter().any(|c| c == "missing-manifest"),
        "{:?}",
        result.findings()
    );
    assert_eq!(result.json()["summary"]["entries"], 3);
}

#[test]
fn a_folder_where_a_file_belongs_and_the_reverse_are_unreadable() {
    let temp = temp();
    let root = temp.path().join("registry");
    let a = entry(&root, "manifest-agent");
    std::fs::remove_file(a.join("agent.json")).unwrap();
    std::fs::create_dir(a.join("agent.json")).unwrap();
    let b = entry(&root, "icon-agent");
    std::fs::remove_file(b.join("icon.svg")).unwrap();
    std::fs::create_dir(b.join("icon.svg")).unwrap();
    let c = entry(&root, "skill-agent");
    std::fs::write(c.join("skill"), "---\nname: skill-agent\n---\n").unwrap();

    let result = validate(&root);
    assert_findings(
        &result,
        "file-unreadable",
        &[
            "manifest-agent/agent.json",
            "icon-agent/icon.svg",
            "skill-agent/skill",
        ],
    );
    for code in ["missing-manifest", "icon-missing", "unexpected-file"] {
        assert!(
            !result.codes().iter().any(|c| c == code),
            "{code}: {:?}",
            result.findings()
        );
    }
}

fn usage_error(root: &Path) -> String {
    let result = run(&["validate", "--registry", root.to_str().unwrap()], false);
    assert_eq!(
        result.exited(),
        Some(2),
        "stdout: {}\nstderr: {}",
        result.stdout,
        result.stderr
    );
    assert!(result.stdout.is_empty(), "{}", result.stdout);
    result.stderr
}

#[test]
fn an_empty_registry_is_a_usage_error_saying_what_it_found() {
    let temp = temp();
    let root = temp.path().join("empty");
    std::fs::create_dir(&root).unwrap();
    let message = usage_error(&root);
    assert!(
        message.contains("holds no agent folders (it is empty)"),
        "{message}"
    );
    assert!(message.contains("--registry DIR"), "{message}");

    std::fs::write(root.join("README.md"), "# Registry\n").unwrap();
    std::fs::write(root.join("LICENSE"), "MIT\n").unwrap();
    std::fs::create_dir(root.join(".github")).unwrap();
    let message = usage_error(&root);
    assert!(
        message.contains("holds no agent folders (found: 2 files, 1 hidden or skipped folder)"),
        "{message}"
    );
}

#[test]
fn an_empty_registry_hints_at_the_folder_meant() {
    let temp = temp();
    let entry_dir = entry(temp.path(), "some-agent");
    std::fs::create_dir(entry_dir.join("skill")).unwrap();
    std::fs::write(entry_dir.join("skill/SKILL.md"), "---\n---\n").unwrap();
    let message = usage_error(&entry_dir);
    assert!(
        message.contains(
            "this folder is itself an entry (it has agent.json): pass its parent with --registry"
        ),
        "{message}"
    );

    let repo = temp.path().join("repo");
    std::fs::create_dir_all(repo.join("registry")).unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let message = usage_error(&repo);
    // The harness runs inside the folder with `--registry .`.
    let wanted = "it holds a `registry/` folder: pass --registry ./registry";
    assert!(message.contains(wanted), "{message}");
}

#[test]
fn collab_reads_refuse_a_fifo_without_blocking() {
    for name in ["readiness.md", "events.jsonl"] {
        let temp = temp();
        let folder = temp.path().join("collab");
        acp_collab::init(&acp_collab::InitOptions {
            folder: folder.display().to_string(),
            participants: vec!["server".into(), "reader".into()],
            objective: "Design the cache".into(),
            completion: vec!["Gate A".into()],
            primary_type: "design-spec".into(),
            deliverables_mode: "internal".into(),
            deliverables_dir: "deliverables".into(),
            ..Default::default()
        })
        .unwrap();
        fifo(&folder.join(name));
        let result = run_bin(
            crate::collab(),
            &["validate", "--folder", folder.to_str().unwrap()],
            false,
        );
        assert_eq!(result.exited(), Some(2), "{name}: {}", result.stderr);
        let wanted = format!("{name}: it is a FIFO (named pipe), not a regular file");
        assert!(result.stderr.contains(&wanted), "{name}: {}", result.stderr);
    }
}
