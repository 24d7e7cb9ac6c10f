//! Issue 31, the registry side of skills: stand-alone skills (`skills/<name>/`) checked like an
//! agent's skill, and what `build` publishes of every skill in the site folder (both well-known
//! indexes with their artifacts and files, the marketplace and its plugins, `.nojekyll`,
//! `site/SHA256SUMS`), checked against the registry's bytes; determinism; hostile skill
//! folders, duplicate names and configuration problems refused before anything is written.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use acp_registry_client::skill_index::{
    digest_hex, ArtifactType, IndexV1, IndexV2, Marketplace, DISCOVERY_SCHEMA_V2,
};
use common::{acp_registry, build_registry, copy_dir, findings, repo_root, sha256_hex, tree, Run};

/// The test registry: two stand-alone skills (`hello`: SKILL.md alone; `pdf-tools`: with
/// `references/` and `scripts/`) and an agent with its skill (`example-agent`).
fn fixture() -> PathBuf {
    repo_root().join("tests/fixtures/skills-registry")
}

/// A copy of the fixture to change.
fn copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("registry");
    copy_dir(&fixture(), &root);
    (dir, root)
}

fn build(registry: &Path, out: &Path, extra: &[&str]) -> Run {
    build_registry(registry, out, extra, &[])
}

/// A successful build of `registry` into a fresh folder: the folder and its `site/` files.
fn built(registry: &Path) -> (tempfile::TempDir, BTreeMap<String, Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dist");
    let run = build(registry, &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let site = tree(&out.join("site"));
    (dir, site)
}

/// Every file of a skill folder of the registry, by path relative to it.
fn skill_files(registry: &Path, folder: &str) -> BTreeMap<String, Vec<u8>> {
    tree(&registry.join(folder))
}

/// Where each published skill lives in the fixture.
const SKILLS: [(&str, &str); 3] = [
    ("example-agent", "example-agent/skill/example-agent"),
    ("hello", "skills/hello"),
    ("pdf-tools", "skills/pdf-tools"),
];

fn is_skill_output(path: &str) -> bool {
    [
        ".well-known/",
        ".claude-plugin/",
        "plugins/",
        "skills/",
        ".nojekyll",
    ]
    .iter()
    .any(|p| path.starts_with(p))
}

#[test]
fn a_registry_with_stand_alone_skills_builds_into_exactly_the_skills_layout() {
    let (_dir, site) = built(&fixture());
    let outputs: Vec<&str> = site
        .keys()
        .map(String::as_str)
        .filter(|p| is_skill_output(p))
        .collect();
    let mut expected = vec![
        ".claude-plugin/marketplace.json".to_owned(),
        ".nojekyll".to_owned(),
        ".well-known/agent-skills/example-agent.tar.gz".to_owned(),
        ".well-known/agent-skills/hello/SKILL.md".to_owned(),
        ".well-known/agent-skills/index.json".to_owned(),
        ".well-known/agent-skills/pdf-tools.tar.gz".to_owned(),
        ".well-known/skills/index.json".to_owned(),
    ];
    for (name, folder) in SKILLS {
        for path in skill_files(&fixture(), folder).keys() {
            expected.push(format!(".well-known/skills/{name}/{path}"));
        }
        // The skill's page.
        expected.push(format!("skills/{name}/index.html"));
    }
    expected.push("skills/index.html".to_owned());
    expected.sort();
    assert_eq!(outputs, expected);
    // site/SHA256SUMS lists every file of the site folder (relative to it) but itself and the
    // ownership manifest, each with the digest of the bytes written.
    let sums = String::from_utf8(site["SHA256SUMS"].clone()).unwrap();
    let listed: BTreeMap<&str, &str> = sums
        .lines()
        .map(|l| {
            let (digest, path) = l.split_once("  ").unwrap();
            (path, digest)
        })
        .collect();
    let files: Vec<&String> = site
        .keys()
        .filter(|p| *p != "SHA256SUMS" && *p != ".acp-registry-output.json")
        .collect();
    assert_eq!(listed.keys().collect::<Vec<_>>(), files);
    for (path, digest) in listed {
        assert_eq!(sha256_hex(&site[path]), digest, "{path}");
    }
}

#[test]
fn every_url_digest_and_listed_file_matches_the_registrys_bytes() {
    let (_dir, site) = built(&fixture());
    let v2: IndexV2 = serde_json::from_slice(&site[".well-known/agent-skills/index.json"]).unwrap();
    assert_eq!(v2.schema, DISCOVERY_SCHEMA_V2);
    let names: Vec<&str> = v2.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["example-agent", "hello", "pdf-tools"]);
    for (entry, (_, folder)) in v2.skills.iter().zip(SKILLS) {
        let served = &site[&format!(".well-known/agent-skills/{}", entry.url)];
        assert_eq!(digest_hex(&entry.digest), Some(sha256_hex(served).as_str()));
        let files = skill_files(&fixture(), folder);
        match entry.kind {
            ArtifactType::SkillMd => {
                assert_eq!(files.len(), 1, "{}", entry.name);
                assert_eq!(served, &files["SKILL.md"]);
            }
            ArtifactType::Archive => {
                assert!(entry.url.ends_with(".tar.gz"), "{}", entry.url);
                assert_eq!(unpacked(served), files, "{}", entry.name);
            }
        }
    }
    let v1: IndexV1 = serde_json::from_slice(&site[".well-known/skills/index.json"]).unwrap();
    for (entry, (name, folder)) in v1.skills.iter().zip(SKILLS) {
        assert_eq!(entry.name, name);
        let files = skill_files(&fixture(), folder);
        assert_eq!(entry.files, files.keys().cloned().collect::<Vec<_>>());
        for (path, bytes) in &files {
            assert_eq!(&site[&format!(".well-known/skills/{name}/{path}")], bytes);
        }
    }
    let marketplace: Marketplace =
        serde_json::from_slice(&site[".claude-plugin/marketplace.json"]).unwrap();
    assert_eq!(marketplace.name, "acp-registry-skills");
    assert!(marketplace.metadata.unwrap().description.is_some());
    // Each plugin is its skill's 0.1.0 folder, described by its entry alone.
    for plugin in &marketplace.plugins {
        assert_eq!(
            plugin.source,
            format!("./.well-known/skills/{}", plugin.name)
        );
        assert_eq!(plugin.skills.as_deref(), Some(&["./".to_owned()][..]));
        assert_eq!(plugin.strict, Some(false));
        assert_eq!(plugin.author.as_ref().unwrap().name, marketplace.owner.name);
    }
    let version = |name: &str| {
        let plugin = marketplace.plugins.iter().find(|p| p.name == name).unwrap();
        plugin.version.clone().unwrap()
    };
    // The agent's version, the skill's metadata.version, else one from the files' digests.
    assert_eq!(version("example-agent"), "1.0.0");
    assert_eq!(version("pdf-tools"), "1.2.0");
    assert!(
        version("hello").starts_with("0.0.0-g"),
        "{}",
        version("hello")
    );
}

/// The archive unpacked by the client library's unpacker, every file by path; scripts are
/// executable.
fn unpacked(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    use acp_registry_client::archive::{extract, Limits};
    use acp_registry_client::platform::ArchiveFormat;
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("skill.tar.gz");
    std::fs::write(&archive, bytes).unwrap();
    let dest = dir.path().join("out");
    extract(&archive, ArchiveFormat::TarGz, &dest, "", Limits::default()).unwrap();
    #[cfg(unix)]
    for (path, _) in tree(&dest) {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dest.join(&path))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111 != 0, path.starts_with("scripts/"), "{path}");
    }
    tree(&dest)
}

#[test]
fn the_same_registry_written_in_another_order_builds_the_same_bytes() {
    let (_a, first) = built(&fixture());
    // The same files created in reverse order, in a fresh folder.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("registry");
    let files = tree(&fixture());
    for (path, bytes) in files.iter().rev() {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let script = root.join("skills/pdf-tools/scripts/extract.py");
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (_b, second) = built(&root);
    assert_eq!(first, second);
}

#[test]
fn no_site_leaves_every_skill_output_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dist");
    let run = build(&fixture(), &out, &["--no-site"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!out.join("site").exists());
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    assert!(
        !sums.contains("well-known") && !sums.contains("plugins/"),
        "{sums}"
    );
}

#[cfg(unix)]
#[test]
fn hostile_skill_folders_are_refused_at_validate_and_build_writes_nothing() {
    use acp_test_kit::files::{fifo, symlink};
    let (dir, root) = copy();
    let skills = root.join("skills");
    symlink("/etc/passwd", &skills.join("hello/passwd")).unwrap();
    symlink("hello", &skills.join("linked")).unwrap();
    fifo(&skills.join("pdf-tools/references/pipe")).unwrap();
    std::fs::write(skills.join("notes.md"), "stray\n").unwrap();
    std::fs::write(skills.join("pdf-tools/references/..guide.md"), "climb\n").unwrap();
    let (code, found) = findings(&root);
    assert_eq!(code, 1);
    let has = |code: &str, file: &str| {
        found
            .iter()
            .any(|(_, c, place)| c == code && place.starts_with(file))
    };
    assert!(has("file-link", "skills/hello/passwd"), "{found:?}");
    assert!(has("file-link", "skills/linked"), "{found:?}");
    assert!(
        has("file-not-regular", "skills/pdf-tools/references/pipe"),
        "{found:?}"
    );
    assert!(has("skill-layout", "skills/notes.md"), "{found:?}");
    assert!(
        has("skill-file-path", "skills/pdf-tools/references/..guide.md"),
        "{found:?}"
    );
    let out = dir.path().join("dist");
    let run = build(&root, &out, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!out.exists());
}

#[test]
fn a_skill_name_used_twice_in_the_registry_is_an_error_at_the_later_name() {
    let (dir, root) = copy();
    let twin = root.join("skills/example-agent");
    std::fs::create_dir_all(&twin).unwrap();
    std::fs::write(
        twin.join("SKILL.md"),
        "---\nname: example-agent\ndescription: Use for a second review.\n---\n\nReview again.\n",
    )
    .unwrap();
    let (code, found) = findings(&root);
    assert_eq!(code, 1);
    let duplicates: Vec<&(String, String, String)> = found
        .iter()
        .filter(|(_, c, _)| c == "skill-name-duplicate")
        .collect();
    assert_eq!(duplicates.len(), 1, "{found:?}");
    assert_eq!(duplicates[0].2, "skills/example-agent/SKILL.md:2:7");
    let out = dir.path().join("dist");
    assert_eq!(build(&root, &out, &[]).code, 1);
    assert!(!out.exists());
}

#[test]
fn a_windows_device_name_is_not_a_skill_name() {
    let (_dir, root) = copy();
    let aux = root.join("skills/aux");
    std::fs::create_dir_all(&aux).unwrap();
    std::fs::write(
        aux.join("SKILL.md"),
        "---\nname: aux\ndescription: Use for auxiliary tasks.\n---\n\nHelp.\n",
    )
    .unwrap();
    let (_, found) = findings(&root);
    assert!(
        found
            .iter()
            .any(|(_, c, p)| c == "skill-name" && p == "skills/aux/SKILL.md:2:7"),
        "{found:?}"
    );
}

#[test]
fn validate_skills_name_reports_that_skill_only() {
    let (_dir, root) = copy();
    std::fs::write(
        root.join("skills/hello/SKILL.md"),
        "---\nname: hello\n---\n\nNo description.\n",
    )
    .unwrap();
    std::fs::write(
        root.join("skills/pdf-tools/SKILL.md"),
        "---\nname: pdf-tools\n---\n\nNo description.\n",
    )
    .unwrap();
    let run = acp_registry(
        &[
            "validate",
            "--registry",
            ".",
            "--format",
            "json",
            "skills/hello",
        ],
        &root,
    );
    let files: Vec<String> = run
        .findings()
        .triples()
        .into_iter()
        .map(|(_, _, place)| place)
        .collect();
    assert_eq!(files, ["skills/hello/SKILL.md:1:1"], "{}", run.stderr);
}

#[test]
fn a_registry_holding_only_skills_is_not_empty() {
    let (_dir, root) = copy();
    std::fs::remove_dir_all(root.join("example-agent")).unwrap();
    let (code, found) = findings(&root);
    assert_eq!((code, found.len()), (0, 0), "{found:?}");
}

/// `acp-registry.jsonc` with `skills` set to `section`.
fn configure(root: &Path, section: &str) {
    std::fs::write(
        root.join("acp-registry.jsonc"),
        format!("{{\"skills\": {section}}}\n"),
    )
    .unwrap();
}

#[test]
fn the_skills_configuration_shapes_the_outputs() {
    let (_dir, root) = copy();
    configure(
        &root,
        r#"{"well_known": false, "site_url": "https://acme.example/registry/",
            "marketplace": {"name": "acme-skills", "owner": {"name": "Acme", "email": "a@acme.example"},
                            "description": "Acme's skills", "grouping": {"plugin": "acme"}}}"#,
    );
    let (_out, site) = built(&root);
    // No index: only the skill folders the marketplace's plugin is.
    assert!(!site
        .keys()
        .any(|p| p.starts_with(".well-known/agent-skills/")
            || p.as_str() == ".well-known/skills/index.json"));
    let marketplace: Marketplace =
        serde_json::from_slice(&site[".claude-plugin/marketplace.json"]).unwrap();
    assert_eq!(marketplace.name, "acme-skills");
    assert_eq!(marketplace.owner.email.as_deref(), Some("a@acme.example"));
    let plugins: Vec<&str> = marketplace
        .plugins
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(plugins, ["acme"]);
    let acme = &marketplace.plugins[0];
    assert_eq!(acme.source, "./.well-known/skills");
    assert_eq!(
        acme.homepage.as_deref(),
        Some("https://acme.example/registry/skills/")
    );
    let listed: Vec<String> = SKILLS.iter().map(|(name, _)| format!("./{name}")).collect();
    assert_eq!(acme.skills.as_ref(), Some(&listed));
    for (name, folder) in SKILLS {
        for (path, bytes) in skill_files(&fixture(), folder) {
            assert_eq!(site[&format!(".well-known/skills/{name}/{path}")], bytes);
        }
    }
    configure(&root, r#"{"marketplace": false}"#);
    let (_out, site) = built(&root);
    assert!(!site.keys().any(|p| p.starts_with(".claude-plugin/")));
    assert!(site.contains_key(".well-known/skills/index.json"));
    configure(&root, r#"{"marketplace": false, "well_known": false}"#);
    let (_out, site) = built(&root);
    assert!(!site
        .keys()
        .any(|p| p.starts_with(".claude-plugin/") || p.starts_with(".well-known/")));
}

#[test]
fn every_skills_configuration_problem_is_a_config_finding() {
    let (_dir, root) = copy();
    configure(
        &root,
        r#"{"well_known": 1, "site_url": "http://insecure.example",
            "marketplace": {"name": "Acme Skills", "owner": {"name": "", "email": "nobody"},
                            "grouping": "per-agent", "colour": "red"}}"#,
    );
    let (code, found) = findings(&root);
    assert_eq!(code, 1);
    let config: Vec<&str> = found
        .iter()
        .filter(|(_, c, p)| p.starts_with("acp-registry.jsonc:") && c != "base-url-public")
        .map(|(_, c, _)| c.as_str())
        .collect();
    assert_eq!(config.len(), 7, "{found:?}");
    assert!(config.iter().all(|c| *c == "config-invalid"), "{found:?}");
}
