//! The skills registry as the real clients read it (issue 31): what `build` writes, served on
//! 127.0.0.1 or read from its folder, installed by the `skills` CLI through each version of the
//! well-known index, validated and installed by Claude Code as a plugin marketplace, and
//! accepted by the Agent Skills reference validator; every installed file is byte-identical to
//! the registry's. The clients are pinned npm packages (`acp_test_kit::skill_clients`); without
//! npm's registry the tests say they skipped (under CI they must run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{acp_registry, copy_dir, repo_root, tree};
use acp_test_kit::agentskills;
use acp_test_kit::skill_clients::{serve_dir, SkillClients};

/// A registry built into a temporary folder.
struct Built {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    /// The registry's skills, by name: their folders in the registry.
    skills: BTreeMap<String, PathBuf>,
    site: PathBuf,
}

/// Every skill folder of a registry source: `skills/<name>/` and `<id>/skill/<name>/`.
fn registry_skills(registry: &Path) -> BTreeMap<String, PathBuf> {
    let mut found = BTreeMap::new();
    let folders = |dir: PathBuf| -> Vec<PathBuf> {
        let Ok(read) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        read.map(|e| e.unwrap().path())
            .filter(|p| p.join("SKILL.md").is_file())
            .collect()
    };
    let mut dirs = folders(registry.join("skills"));
    for entry in std::fs::read_dir(registry).unwrap() {
        dirs.extend(folders(entry.unwrap().path().join("skill")));
    }
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        found.insert(name, dir);
    }
    found
}

fn build(source: &Path) -> Built {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    copy_dir(source, &root.join("registry"));
    let run = acp_registry(&["build", "--registry", "registry", "--out", "dist"], &root);
    assert_eq!(run.code, 0, "build:\n{}{}", run.stdout, run.stderr);
    for dir in ["home", "project"] {
        std::fs::create_dir(root.join(dir)).unwrap();
    }
    let skills = registry_skills(&root.join("registry"));
    assert!(!skills.is_empty(), "{} holds no skill", source.display());
    Built {
        home: root.join("home"),
        project: root.join("project"),
        skills,
        site: root.join("dist/site"),
        _tmp: tmp,
    }
}

/// The registries the clients are run on: the bundled one and the test registry of
/// stand-alone skills.
fn registries() -> [PathBuf; 2] {
    [
        repo_root().join("registry"),
        repo_root().join("tests/fixtures/skills-registry"),
    ]
}

fn assert_installed(installed: &Path, skills: &BTreeMap<String, PathBuf>, by: &str) {
    for (name, source) in skills {
        let dir = installed.join(name);
        assert_eq!(
            tree(&dir),
            tree(source),
            "{by}: {} differs from the registry's {}",
            dir.display(),
            source.display()
        );
    }
}

fn run_skills_cli(clients: &SkillClients, built: &Built, hidden: &[&str], by: &str) {
    let _ = std::fs::remove_dir_all(built.project.join(".agents"));
    let server = serve_dir(&built.site, hidden);
    let out = clients.skills_add(&server.url(""), &built.project, &built.home);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{by}: skills add failed:\n{text}");
    let installed = built.project.join(".agents/skills");
    let names: Vec<String> = std::fs::read_dir(&installed)
        .unwrap_or_else(|e| panic!("{by}: nothing installed ({e}):\n{text}"))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.len(),
        built.skills.len(),
        "{by}: installed {names:?}, the registry has {:?}",
        built.skills.keys()
    );
    assert_installed(&installed, &built.skills, by);
}

/// A registry whose one skill has a file name too long for a ustar header (120 bytes), which
/// `build` publishes as a `.zip` instead of a `.tar.gz`.
fn long_name_registry() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("skills/long-names");
    std::fs::create_dir_all(skill.join("references")).unwrap();
    std::fs::write(tmp.path().join("acp-registry.jsonc"), "{}\n").unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: long-names\ndescription: A skill with a long file name.\n---\n\nSee the references.\n",
    )
    .unwrap();
    let long = format!("references/{}.md", "d".repeat(120));
    std::fs::write(skill.join(long), "deep\n").unwrap();
    tmp
}

#[test]
fn the_skills_cli_installs_every_skill_through_both_index_versions_byte_for_byte() {
    let Some(clients) = SkillClients::find(Path::new(env!("CARGO_TARGET_TMPDIR"))) else {
        return;
    };
    let long = long_name_registry();
    let mut sources = registries().to_vec();
    sources.push(long.path().to_path_buf());
    for registry in sources {
        let built = build(&registry);
        let what = registry.display();
        if registry == long.path() {
            let zip = built.site.join(".well-known/agent-skills/long-names.zip");
            assert!(zip.is_file(), "no zip for a name ustar cannot hold");
        }
        // The CLI reads the 0.2.0 index first (archives and SKILL.md artifacts, digests).
        run_skills_cli(&clients, &built, &[], &format!("{what} (0.2.0)"));
        // Without it, the 0.1.0 index and its listed files.
        let hidden = [".well-known/agent-skills/"];
        run_skills_cli(&clients, &built, &hidden, &format!("{what} (0.1.0)"));
    }
}

fn marketplace(site: &Path) -> serde_json::Value {
    let text = std::fs::read(site.join(".claude-plugin/marketplace.json")).unwrap();
    serde_json::from_slice(&text).unwrap()
}

fn claude_ok(clients: &SkillClients, home: &Path, args: &[&str]) -> String {
    let out = clients.claude(home, args);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "claude {args:?}:\n{text}");
    text
}

/// The skills Claude Code's `plugin details` lists for an installed plugin.
fn claude_skills(clients: &SkillClients, home: &Path, id: &str) -> Vec<String> {
    let details = claude_ok(clients, home, &["plugin", "details", id]);
    let line = details
        .lines()
        .find_map(|l| l.trim().strip_prefix("Skills ("))
        .unwrap_or_else(|| panic!("claude plugin details {id} lists no skills:\n{details}"));
    let (_, names) = line.split_once(')').unwrap();
    names.split(',').map(|n| n.trim().to_owned()).collect()
}

/// Claude Code validates the marketplace of `built`, installs each plugin, and lists exactly
/// the registry's skills, each copied into its cache byte for byte.
fn claude_installs_every_skill(clients: &SkillClients, built: &Built, by: &str) {
    let site = built.site.to_str().unwrap();
    let report = claude_ok(clients, &built.home, &["plugin", "validate", site]);
    assert!(
        !report.contains('✘'),
        "{by}: claude plugin validate:\n{report}"
    );
    let market = marketplace(&built.site);
    let name = market["name"].as_str().unwrap();
    claude_ok(
        clients,
        &built.home,
        &["plugin", "marketplace", "add", site],
    );
    let mut seen = BTreeMap::new();
    for plugin in market["plugins"].as_array().unwrap() {
        let id = format!("{}@{name}", plugin["name"].as_str().unwrap());
        claude_ok(clients, &built.home, &["plugin", "install", &id]);
        let cache = built.home.join(".claude/plugins/cache").join(name);
        let version = std::fs::read_dir(cache.join(plugin["name"].as_str().unwrap()))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let listed = claude_skills(clients, &built.home, &id);
        for path in plugin["skills"].as_array().unwrap() {
            let dir = version.join(path.as_str().unwrap());
            let front = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
            let skill = listed
                .iter()
                .find(|n| front.contains(&format!("name: {n}\n")))
                .unwrap_or_else(|| panic!("{by}: {id} lists {listed:?}, not {}", dir.display()));
            seen.insert(skill.clone(), dir);
        }
    }
    assert_eq!(
        seen.keys().collect::<Vec<_>>(),
        built.skills.keys().collect::<Vec<_>>(),
        "{by}: the plugins installed other skills than the registry holds"
    );
    for (name, dir) in &seen {
        assert_eq!(
            tree(dir),
            tree(&built.skills[name]),
            "{by}: {}",
            dir.display()
        );
    }
}

#[test]
fn claude_code_validates_the_marketplace_and_installs_every_plugin_byte_for_byte() {
    let Some(clients) = SkillClients::find(Path::new(env!("CARGO_TARGET_TMPDIR"))) else {
        return;
    };
    for registry in registries() {
        claude_installs_every_skill(&clients, &build(&registry), &registry.display().to_string());
    }
}

/// One plugin holding every skill (`grouping`): its folder is the 0.1.0 folder of them all.
#[test]
fn claude_code_installs_the_one_plugin_of_every_skill() {
    let Some(clients) = SkillClients::find(Path::new(env!("CARGO_TARGET_TMPDIR"))) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("registry");
    copy_dir(&repo_root().join("tests/fixtures/skills-registry"), &source);
    std::fs::write(
        source.join("acp-registry.jsonc"),
        r#"{"skills": {"marketplace": {"grouping": {"plugin": "all-skills"}}}}"#,
    )
    .unwrap();
    let built = build(&source);
    let market = marketplace(&built.site);
    assert_eq!(market["plugins"].as_array().unwrap().len(), 1);
    claude_installs_every_skill(&clients, &built, "grouped");
}

#[test]
fn the_reference_validator_accepts_every_published_skill() {
    let Some(validator) = agentskills::agentskills(Path::new(env!("CARGO_TARGET_TMPDIR"))) else {
        return;
    };
    for registry in registries() {
        let built = build(&registry);
        for name in built.skills.keys() {
            agentskills::assert_valid(
                &validator,
                &built.site.join(".well-known/skills").join(name),
            );
        }
    }
}

#[test]
fn ci_installs_the_client_versions_the_tests_pin() {
    let script = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    let prefix = format!("target/tmp/{}", acp_test_kit::skill_clients::PREFIX);
    for pin in [
        acp_test_kit::skill_clients::SKILLS_CLI,
        acp_test_kit::skill_clients::NODE,
        acp_test_kit::skill_clients::CLAUDE_CODE,
        prefix.as_str(),
    ] {
        assert!(script.contains(pin), ".ci/run does not install {pin}");
    }
}
