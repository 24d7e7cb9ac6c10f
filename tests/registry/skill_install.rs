//! `acp-registry skill install|uninstall|list`: skills from a site folder and a loopback-served
//! site (both discovery index versions), a marketplace folder and a registry folder, installed
//! byte-identical; hostile sources (a digest or a file that differs, an archive member that
//! climbs or links, a name that is not one everywhere, a target that is a link or someone
//! else's) refused with nothing written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use acp_test_kit::server::{Reply, Server};
use acp_test_kit::{sha256_hex, write_tree};

use crate::common::archives::{tar_gz, Entry};
use crate::common::{acp_registry_with_env, repo_root, tree, Run};

const RECORD: &str = ".acp-collab-skill.json";

/// A skill's files: `SKILL.md` naming `name`, a reference and a script.
fn skill(name: &str) -> BTreeMap<String, Vec<u8>> {
    BTreeMap::from([
        (
            "SKILL.md".to_owned(),
            format!("---\nname: {name}\ndescription: Does {name} things.\n---\n# {name}\n")
                .into_bytes(),
        ),
        ("references/guide.md".to_owned(), b"guide\n".to_vec()),
        ("scripts/run.py".to_owned(), b"print('hi')\n".to_vec()),
    ])
}

/// Which parts of the agreed site layout a fixture holds.
#[derive(Clone, Copy)]
struct Layout {
    v2: bool,
    v1: bool,
    marketplace: bool,
    sums: bool,
}

const ALL: Layout = Layout {
    v2: true,
    v1: true,
    marketplace: true,
    sums: true,
};

/// A site folder: both indexes, the 0.2.0 archives, the 0.1.0 files, a marketplace in the
/// classic layout (a folder per plugin, `plugins/<name>/skills/<name>/`, as third parties
/// publish them; `build` writes the other one, tested below), and `SHA256SUMS` of every file.
fn site(root: &Path, skills: &[(&str, BTreeMap<String, Vec<u8>>)], layout: Layout) {
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let (mut v2, mut v1, mut plugins) = (Vec::new(), Vec::new(), Vec::new());
    for (name, skill) in skills {
        let entries: Vec<Entry> = skill.iter().map(|(p, b)| Entry::File(p, b)).collect();
        let archive = tar_gz(&entries);
        v2.push(
            serde_json::json!({"name": name, "description": "d", "type": "archive",
            "url": format!("{name}.tar.gz"), "digest": format!("sha256:{}", sha256_hex(&archive))}),
        );
        files.insert(format!(".well-known/agent-skills/{name}.tar.gz"), archive);
        v1.push(serde_json::json!({"name": name, "description": "d", "files": skill.keys().collect::<Vec<_>>()}));
        plugins.push(serde_json::json!({"name": name, "source": format!("./plugins/{name}"), "description": "d"}));
        for (path, bytes) in skill {
            if layout.v1 {
                files.insert(format!(".well-known/skills/{name}/{path}"), bytes.clone());
            }
            if layout.marketplace {
                files.insert(
                    format!("plugins/{name}/skills/{name}/{path}"),
                    bytes.clone(),
                );
            }
        }
        if layout.marketplace {
            files.insert(
                format!("plugins/{name}/.claude-plugin/plugin.json"),
                format!("{{\"name\": \"{name}\"}}").into_bytes(),
            );
        }
    }
    let json = |v: serde_json::Value| serde_json::to_vec_pretty(&v).unwrap();
    if layout.v2 {
        files.insert(".well-known/agent-skills/index.json".into(), json(serde_json::json!({
            "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json", "skills": v2})));
    } else {
        files.retain(|p, _| !p.starts_with(".well-known/agent-skills/"));
    }
    if layout.v1 {
        files.insert(
            ".well-known/skills/index.json".into(),
            json(serde_json::json!({"skills": v1})),
        );
    }
    if layout.marketplace {
        files.insert(
            ".claude-plugin/marketplace.json".into(),
            json(serde_json::json!({
            "name": "test", "owner": {"name": "t"}, "plugins": plugins})),
        );
    }
    if layout.sums {
        let sums = files.iter().fold(String::new(), |mut out, (p, b)| {
            use std::fmt::Write;
            let _ = writeln!(out, "{}  {p}", sha256_hex(b));
            out
        });
        files.insert("SHA256SUMS".into(), sums.into_bytes());
    }
    let list: Vec<(&String, &Vec<u8>)> = files.iter().collect();
    write_tree(root, &list);
}

/// Serves the folder `root` over loopback http.
fn serve(root: &Path) -> Server {
    let root = root.to_path_buf();
    Server::start(move |request, _| {
        let rel = request.path.trim_start_matches('/');
        match std::fs::read(root.join(rel)) {
            Ok(bytes) if !rel.contains("..") => Reply::body(200, bytes),
            _ => Reply::status(404),
        }
    })
}

/// A temporary home and project folder.
struct Place {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn place() -> Place {
    let tmp = tempfile::tempdir().unwrap();
    let (home, project) = (tmp.path().join("home"), tmp.path().join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    Place {
        _tmp: tmp,
        home,
        project,
    }
}

impl Place {
    fn run(&self, args: &[&str]) -> Run {
        let mut all = vec!["skill"];
        all.extend_from_slice(args);
        let project = self.project.to_str().unwrap();
        if matches!(args.first(), Some(&("install" | "uninstall"))) {
            all.extend(["--project", project]);
        }
        acp_registry_with_env(
            &all,
            &repo_root(),
            &[
                ("HOME", self.home.to_str().unwrap()),
                ("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1"),
            ],
        )
    }

    /// The installed skill `name` for the default agent, without the record.
    fn installed(&self, name: &str) -> BTreeMap<String, Vec<u8>> {
        let mut files = tree(&self.project.join(".agents/skills").join(name));
        assert!(files.remove(RECORD).is_some(), "no install record");
        assert_eq!(
            tree(&self.project.join(".claude/skills").join(name)).len(),
            files.len() + 1
        );
        files
    }

    fn nothing_written(&self) {
        assert!(
            tree(&self.project).is_empty(),
            "{:?}",
            tree(&self.project).keys()
        );
    }
}

#[test]
fn a_site_folder_installs_by_the_0_2_0_index_byte_identical() {
    let (src, p) = (tempfile::tempdir().unwrap(), place());
    site(
        src.path(),
        &[("alpha", skill("alpha")), ("beta", skill("beta"))],
        ALL,
    );
    let run = p.run(&["install", src.path().to_str().unwrap(), "beta"]);
    run.assert_ok();
    assert!(
        run.stdout.contains("installed: ") && run.stdout.contains("the index's digest"),
        "{}",
        run.stdout
    );
    assert_eq!(p.installed("beta"), skill("beta"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(p.project.join(".agents/skills/beta/scripts/run.py"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "scripts are executable");
    }
    // Several skills and no name: refused, naming them.
    let run = p.run(&["install", src.path().to_str().unwrap()]);
    assert!(
        run.stderr.contains("alpha, beta") && run.stderr.contains("--all"),
        "{}",
        run.stderr
    );
    // list, then uninstall removes both folders.
    let list = p.run(&["list", "--project", p.project.to_str().unwrap()]);
    assert!(
        list.stdout.contains("state: installed from"),
        "{}",
        list.stdout
    );
    p.run(&["uninstall", "beta"]).assert_ok();
    p.nothing_written_below_skills();
}

impl Place {
    fn nothing_written_below_skills(&self) {
        for folder in [".agents/skills", ".claude/skills"] {
            assert!(tree(&self.project.join(folder)).is_empty());
        }
    }
}

#[test]
fn a_loopback_site_installs_by_either_index_version() {
    for (layout, verified) in [
        (ALL, "the index's digest"),
        (Layout { v2: false, ..ALL }, "SHA256SUMS"),
    ] {
        let (src, p) = (tempfile::tempdir().unwrap(), place());
        site(src.path(), &[("alpha", skill("alpha"))], layout);
        let server = serve(src.path());
        let run = p.run(&["install", &server.url("/"), "--all"]);
        run.assert_ok();
        assert!(run.stdout.contains(verified), "{}", run.stdout);
        assert_eq!(p.installed("alpha"), skill("alpha"));
    }
}

#[test]
fn a_0_1_0_site_without_sha256sums_needs_allow_unverified() {
    let (src, p) = (tempfile::tempdir().unwrap(), place());
    site(
        src.path(),
        &[("alpha", skill("alpha"))],
        Layout {
            v2: false,
            sums: false,
            ..ALL
        },
    );
    let server = serve(src.path());
    let run = p.run(&["install", &server.url("/")]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(
        run.stderr.contains("SHA256SUMS") && run.stderr.contains("--allow-unverified"),
        "{}",
        run.stderr
    );
    p.nothing_written();
    p.run(&["install", &server.url("/"), "--allow-unverified"])
        .assert_ok();
    assert_eq!(p.installed("alpha"), skill("alpha"));
}

#[test]
fn a_marketplace_folder_and_a_registry_folder_install_byte_identical() {
    let (src, p) = (tempfile::tempdir().unwrap(), place());
    site(
        src.path(),
        &[("alpha", skill("alpha"))],
        Layout {
            v2: false,
            v1: false,
            ..ALL
        },
    );
    let marketplace = src.path().join(".claude-plugin/marketplace.json");
    let run = p.run(&["install", marketplace.to_str().unwrap()]);
    run.assert_ok();
    assert_eq!(p.installed("alpha"), skill("alpha"));

    // The bundled registry's agent skill, checked by the registry's rules first.
    let p = place();
    let registry = repo_root().join("registry");
    p.run(&[
        "install",
        "--registry",
        registry.to_str().unwrap(),
        "agent-collaboration-protocol",
    ])
    .assert_ok();
    let from =
        tree(&registry.join("agent-collaboration-protocol/skill/agent-collaboration-protocol"));
    assert_eq!(p.installed("agent-collaboration-protocol"), from);
}

#[test]
fn a_registry_skill_with_rule_errors_is_refused() {
    let (reg, p) = (tempfile::tempdir().unwrap(), place());
    crate::common::copy_dir(
        &repo_root().join("registry/agent-collaboration-protocol"),
        &reg.path().join("agent-collaboration-protocol"),
    );
    let skill_md = reg
        .path()
        .join("agent-collaboration-protocol/skill/agent-collaboration-protocol/SKILL.md");
    std::fs::write(
        &skill_md,
        "---\nname: other-name\ndescription: x\n---\nbody\n",
    )
    .unwrap();
    let run = p.run(&[
        "install",
        "--registry",
        reg.path().to_str().unwrap(),
        "agent-collaboration-protocol",
    ]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(
        run.stderr.contains("skill rules found errors"),
        "{}",
        run.stderr
    );
    p.nothing_written();
}

#[test]
fn a_digest_or_a_file_that_differs_installs_nothing() {
    // 0.2.0: the archive changed after the index was written.
    let (src, p) = (tempfile::tempdir().unwrap(), place());
    site(src.path(), &[("alpha", skill("alpha"))], ALL);
    std::fs::write(
        src.path().join(".well-known/agent-skills/alpha.tar.gz"),
        tar_gz(&[Entry::File("SKILL.md", b"x")]),
    )
    .unwrap();
    let run = p.run(&["install", src.path().to_str().unwrap()]);
    assert!(
        run.code == 2 && run.stderr.contains("the index's digest says"),
        "{}",
        run.all()
    );
    p.nothing_written();
    // 0.1.0: a listed file differs from SHA256SUMS.
    let (src, p) = (tempfile::tempdir().unwrap(), place());
    site(
        src.path(),
        &[("alpha", skill("alpha"))],
        Layout { v2: false, ..ALL },
    );
    std::fs::write(
        src.path()
            .join(".well-known/skills/alpha/references/guide.md"),
        "changed",
    )
    .unwrap();
    let run = p.run(&["install", src.path().to_str().unwrap()]);
    assert!(
        run.code == 2
            && run
                .stderr
                .contains("differs from what the source published"),
        "{}",
        run.all()
    );
    p.nothing_written();
    // 0.1.0: a listed file is missing.
    std::fs::remove_file(
        src.path()
            .join(".well-known/skills/alpha/references/guide.md"),
    )
    .unwrap();
    let run = p.run(&["install", src.path().to_str().unwrap()]);
    assert!(
        run.code == 2 && run.stderr.contains("does not exist"),
        "{}",
        run.all()
    );
    p.nothing_written();
}

/// A 0.2.0 site whose one archive holds `entries`, its digest correct.
fn site_with_archive(root: &Path, name: &str, archive: &[u8]) {
    let index = serde_json::json!({"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
        "skills": [{"name": name, "description": "d", "type": "archive", "url": "a.tar.gz",
        "digest": format!("sha256:{}", sha256_hex(archive))}]});
    write_tree(
        root,
        &[
            (
                ".well-known/agent-skills/index.json",
                serde_json::to_vec(&index).unwrap(),
            ),
            (".well-known/agent-skills/a.tar.gz", archive.to_vec()),
        ],
    );
}

#[test]
fn an_archive_member_that_climbs_or_links_or_a_name_that_differs_installs_nothing() {
    let md = b"---\nname: alpha\ndescription: d\n---\n";
    for (entries, said) in [
        (
            vec![Entry::File("SKILL.md", md), Entry::File("../evil", b"x")],
            "refused",
        ),
        (
            vec![
                Entry::File("SKILL.md", md),
                Entry::Symlink("link", "SKILL.md"),
            ],
            "symbolic link",
        ),
        (
            vec![Entry::File("alpha/SKILL.md", md)],
            "no SKILL.md at the skill's root",
        ),
        (
            vec![Entry::File(
                "SKILL.md",
                b"---\nname: beta\ndescription: d\n---\n",
            )],
            "one name everywhere",
        ),
    ] {
        let (src, p) = (tempfile::tempdir().unwrap(), place());
        site_with_archive(src.path(), "alpha", &tar_gz(&entries));
        let run = p.run(&["install", src.path().to_str().unwrap()]);
        assert!(
            run.code == 2 && run.stderr.contains(said),
            "{said}: {}",
            run.all()
        );
        p.nothing_written();
        assert!(!src.path().parent().unwrap().join("evil").exists());
    }
}

#[test]
fn a_target_that_is_a_link_or_holds_another_skill_is_refused_without_force() {
    let (src, p) = (tempfile::tempdir().unwrap(), place());
    site(src.path(), &[("alpha", skill("alpha"))], ALL);
    // Someone else's skill of that name.
    write_tree(&p.project, &[(".claude/skills/alpha/SKILL.md", "mine")]);
    let run = p.run(&["install", src.path().to_str().unwrap()]);
    assert!(
        run.code == 2 && run.stderr.contains("holds a different skill"),
        "{}",
        run.all()
    );
    assert!(
        !p.project.join(".agents/skills/alpha").exists(),
        "nothing written when one target refuses"
    );
    assert_eq!(
        std::fs::read(p.project.join(".claude/skills/alpha/SKILL.md")).unwrap(),
        b"mine"
    );
    p.run(&["install", src.path().to_str().unwrap(), "--force"])
        .assert_ok();
    assert_eq!(p.installed("alpha"), skill("alpha"));
    // A skills folder that is a link.
    #[cfg(unix)]
    {
        let (outside, p) = (tempfile::tempdir().unwrap(), place());
        std::fs::create_dir_all(p.project.join(".agents")).unwrap();
        acp_test_kit::symlink(outside.path(), &p.project.join(".agents/skills")).unwrap();
        let run = p.run(&["install", src.path().to_str().unwrap(), "--force"]);
        assert!(
            run.code == 2 && run.stderr.contains("symbolic link"),
            "{}",
            run.all()
        );
        assert!(tree(outside.path()).is_empty());
    }
}

/// The marketplace `build` writes: each plugin's folder is a 0.1.0 skill folder, or the 0.1.0
/// folder of them all with each listed in the entry's `skills`; installed from the folder and
/// over HTTP (checked against the site's `SHA256SUMS`) byte-identical to the registry.
#[test]
fn the_marketplace_build_writes_installs_each_listed_skill_folder() {
    let fixture = repo_root().join("tests/fixtures/skills-registry");
    for config in [
        "{}",
        r#"{"skills": {"marketplace": {"grouping": {"plugin": "all"}}}}"#,
    ] {
        let work = tempfile::tempdir().unwrap();
        let registry = work.path().join("registry");
        crate::common::copy_dir(&fixture, &registry);
        std::fs::write(registry.join("acp-registry.jsonc"), config).unwrap();
        let out = work.path().join("dist");
        crate::common::acp_registry(
            &[
                "build",
                "--registry",
                registry.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            work.path(),
        )
        .assert_ok();
        let site = out.join("site");
        let server = serve(&site);
        let file = site.join(".claude-plugin/marketplace.json");
        for source in [
            file.to_str().unwrap().to_owned(),
            server.url("/.claude-plugin/marketplace.json"),
        ] {
            let p = place();
            p.run(&["install", "--all", &source]).assert_ok();
            for name in ["hello", "pdf-tools"] {
                assert_eq!(
                    p.installed(name),
                    tree(&registry.join("skills").join(name)),
                    "{config} {source}"
                );
            }
            assert_eq!(
                p.installed("example-agent"),
                tree(&registry.join("example-agent/skill/example-agent")),
                "{config} {source}"
            );
        }
    }
}

/// A marketplace entry's `skills` paths that climb out of the plugin are refused with the
/// entry named, and nothing is written.
#[test]
fn a_listed_skill_folder_that_leaves_the_plugin_is_refused() {
    let (src, p) = (tempfile::tempdir().unwrap(), place());
    for path in ["../../outside", "/etc", "./a/../../x", "skills"] {
        let doc = serde_json::json!({"name": "m", "owner": {"name": "o"}, "plugins": [
            {"name": "alpha", "source": "./.well-known/skills/alpha", "strict": false, "skills": [path]}]});
        let mut files: Vec<(String, Vec<u8>)> = skill("alpha")
            .into_iter()
            .map(|(p, b)| (format!(".well-known/skills/alpha/{p}"), b))
            .collect();
        files.push((
            ".claude-plugin/marketplace.json".into(),
            doc.to_string().into_bytes(),
        ));
        let list: Vec<(&String, &Vec<u8>)> = files.iter().map(|(p, b)| (p, b)).collect();
        write_tree(src.path(), &list);
        let marketplace = src.path().join(".claude-plugin/marketplace.json");
        let run = p.run(&[
            "install",
            "--allow-unverified",
            marketplace.to_str().unwrap(),
        ]);
        assert!(
            run.code == 2
                && run.stderr.contains("plugins[0]")
                && run.stderr.contains("leaves the plugin"),
            "{path}: {}",
            run.all()
        );
        p.nothing_written();
    }
}

#[test]
fn a_marketplace_is_checked_against_sha256sums_and_over_http_needs_them() {
    let (src, p) = (tempfile::tempdir().unwrap(), place());
    site(
        src.path(),
        &[("alpha", skill("alpha"))],
        Layout {
            v2: false,
            v1: false,
            ..ALL
        },
    );
    let server = serve(src.path());
    p.run(&["install", &server.url("/.claude-plugin/marketplace.json")])
        .assert_ok();
    assert_eq!(p.installed("alpha"), skill("alpha"));

    // A plugin's file changed after SHA256SUMS was written: refused, locally and over HTTP.
    let p = place();
    std::fs::write(
        src.path()
            .join("plugins/alpha/skills/alpha/references/guide.md"),
        "changed",
    )
    .unwrap();
    for source in [src.path().to_str().unwrap().to_owned(), server.url("/")] {
        let run = p.run(&["install", &source]);
        assert!(
            run.code == 2 && run.stderr.contains("differs"),
            "{source}: {}",
            run.all()
        );
        p.nothing_written();
    }
    // Without SHA256SUMS: over HTTP nothing names the files.
    std::fs::remove_file(src.path().join("SHA256SUMS")).unwrap();
    let run = p.run(&["install", &server.url("/"), "--allow-unverified"]);
    assert!(
        run.code == 2 && run.stderr.contains("lists no files"),
        "{}",
        run.all()
    );
    p.nothing_written();
}
