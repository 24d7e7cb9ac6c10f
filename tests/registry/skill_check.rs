//! `acp-registry skill check` end to end (issue 31): other people's skills indexes and plugin
//! marketplaces, local and served on loopback, checked against the files they list.
//!
//! Cases: a good site (0.2.0 with a `skill-md` and a `.tar.gz` artifact, 0.1.0 with its files)
//! passes over loopback in every format, with the JSON document's shape pinned; hostile input:
//! a digest that differs from the bytes, URLs that climb out of the site (never requested),
//! links in a local site (never followed, their targets never printed), a 100,000-entry list
//! and a deeply nested index (bounded, reported), archives with `../` members, links, long
//! names or `SKILL.md` in a folder (refused, nothing written beside the site), marketplace
//! sources that climb (`../../etc`) or are links; an artifact on another origin (a warning,
//! still hashed); a third-party index of the opencode-compatible shape (no `description`); sources that are absent (exit 2).
#![cfg(unix)]

use std::path::Path;

use acp_test_kit::server::{Reply, Server};
use acp_test_kit::{symlink, write_tree, Findings};
use serde_json::{json, Value};

use crate::common::archives::{tar_gz, zip_entries, Entry};
use crate::common::{acp_registry_with_env, sha256_hex, Run};

const SKILL: &str = "---\nname: pdf\ndescription: Fill and merge PDF forms.\nlicense: MIT\n---\n\n# PDF\n\nRun `scripts/fill.py` to fill a form.\n";
const SCRIPT: &str = "print('fill')\n";
const DESCRIPTION: &str = "Fill and merge PDF forms.";
const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// `skill check ARGS… --format json` from `cwd`, the loopback switch on.
fn check(cwd: &Path, args: &[&str]) -> (Run, Findings) {
    let mut all = vec!["skill", "check", "--format", "json"];
    all.extend_from_slice(args);
    let run = acp_registry_with_env(&all, cwd, &[("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")]);
    let findings = Findings::parse(&run.stdout);
    (run, findings)
}

/// `code file:line:col` of every finding.
fn places(findings: &Findings) -> Vec<String> {
    findings
        .findings
        .iter()
        .map(|f| format!("{} {}", f.code, f.place()))
        .collect()
}

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// A good archive of the skill: `SKILL.md` at the root.
fn good_archive() -> Vec<u8> {
    tar_gz(&[
        Entry::File("SKILL.md", SKILL.as_bytes()),
        Entry::Dir("scripts/"),
        Entry::File("scripts/fill.py", SCRIPT.as_bytes()),
    ])
}

/// A site with a 0.2.0 index (`pdf` as an archive, `notes` as a SKILL.md) and a 0.1.0 index.
fn good_site(root: &Path) {
    let notes = "---\nname: notes\ndescription: Take notes.\n---\n\n# Notes\n";
    let archive = good_archive();
    let v2 = json!({"$schema": SCHEMA, "skills": [
        {"name": "pdf", "description": DESCRIPTION, "type": "archive", "url": "pdf.tar.gz", "digest": digest(&archive)},
        {"name": "notes", "description": "Take notes.", "type": "skill-md", "url": "notes/SKILL.md", "digest": digest(notes.as_bytes())},
    ]});
    let v1 = json!({"skills": [
        {"name": "pdf", "description": DESCRIPTION, "files": ["SKILL.md", "scripts/fill.py"]},
    ]});
    write_tree(
        root,
        &[
            (
                ".well-known/agent-skills/index.json",
                v2.to_string().into_bytes(),
            ),
            (".well-known/agent-skills/pdf.tar.gz", archive),
            (
                ".well-known/agent-skills/notes/SKILL.md",
                notes.as_bytes().to_vec(),
            ),
            (".well-known/skills/index.json", v1.to_string().into_bytes()),
            (".well-known/skills/pdf/SKILL.md", SKILL.as_bytes().to_vec()),
            (
                ".well-known/skills/pdf/scripts/fill.py",
                SCRIPT.as_bytes().to_vec(),
            ),
        ],
    );
}

/// A server answering `GET /<prefix><path>` with the file `<root>/<path>` (read at request
/// time, links not followed), 404 for anything else.
fn serve(root: &Path, prefix: &str) -> Server {
    let root = root.to_path_buf();
    let prefix = prefix.to_string();
    Server::start(move |request, _| {
        let Some(rel) = request.path.strip_prefix(&prefix) else {
            return Reply::status(404);
        };
        let path = root.join(rel.trim_start_matches('/'));
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => Reply::body(200, std::fs::read(&path).unwrap()),
            _ => Reply::status(404),
        }
    })
}

fn https(server: &Server, path: &str) -> String {
    format!("https://{}{path}", server.addr)
}

#[test]
fn a_good_site_served_on_loopback_passes_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    good_site(dir.path());
    let server = serve(dir.path(), "");
    let url = https(&server, "/");
    let (run, findings) = check(dir.path(), &[&url]);
    run.assert_code(0);
    assert!(findings.findings.is_empty(), "{:?}", places(&findings));
    // Three skills: two of the 0.2.0 index, one of the 0.1.0 index.
    assert_eq!(findings.summary.entries, 3);
    let asked = server.requests();
    for path in [
        "GET /.well-known/agent-skills/index.json",
        "GET /.well-known/agent-skills/pdf.tar.gz",
        "GET /.well-known/skills/pdf/scripts/fill.py",
    ] {
        assert!(
            asked.iter().any(|r| r == path),
            "{path} not asked: {asked:?}"
        );
    }
    for format in ["human", "github", "sarif"] {
        let run = acp_registry_with_env(
            &["skill", "check", "--format", format, &url],
            dir.path(),
            &[("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")],
        );
        run.assert_code(0);
    }
}

#[test]
fn the_json_report_names_the_index_url_by_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    good_site(dir.path());
    let index = dir.path().join(".well-known/agent-skills/index.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&index).unwrap()).unwrap();
    doc["skills"][1]["digest"] = json!(digest(b"older bytes"));
    std::fs::write(&index, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let server = serve(dir.path(), "");
    let url = https(&server, "/.well-known/agent-skills/index.json");
    let (run, findings) = check(dir.path(), &[&url]);
    run.assert_code(1);
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(document["summary"]["errors"], 1);
    let finding = &findings.findings[0];
    assert_eq!(finding.code, "index-digest");
    assert_eq!(finding.file, url);
    // The second skill's `digest` value, in the file as written.
    let text = std::fs::read_to_string(&index).unwrap();
    let older = digest(b"older bytes");
    let line = text.lines().position(|l| l.contains(&older)).unwrap() + 1;
    assert_eq!((finding.line, finding.column), (Some(line), Some(17)));
    let served = digest(b"---\nname: notes\ndescription: Take notes.\n---\n\n# Notes\n");
    assert!(
        finding.help.as_deref().unwrap().contains(&served),
        "{finding:?}"
    );
}

#[test]
fn urls_that_climb_out_of_the_site_are_refused_and_never_requested() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("docs");
    good_site(&site);
    write_tree(dir.path(), &[("secret.txt", "top secret\n")]);
    let index = json!({"$schema": SCHEMA, "skills": [
        {"name": "pdf", "description": DESCRIPTION, "type": "skill-md", "url": "../../../secret.txt", "digest": digest(b"top secret\n")},
        {"name": "notes", "description": DESCRIPTION, "type": "skill-md", "url": "%2e%2e/%2e%2e/%2e%2e/secret.txt", "digest": digest(b"top secret\n")},
    ]});
    write_tree(
        &site,
        &[(".well-known/agent-skills/index.json", index.to_string())],
    );
    // Served under /docs/: the whole server root is reachable, the site is /docs/.
    let server = serve(dir.path(), "");
    let url = https(&server, "/docs/.well-known/agent-skills/index.json");
    let (run, findings) = check(dir.path(), &[&url]);
    run.assert_code(1);
    assert_eq!(
        findings.with_code("index-url").count(),
        2,
        "{:?}",
        places(&findings)
    );
    assert!(!server.requests().iter().any(|r| r.contains("secret")));
    // The same index read locally: refused the same way, the file never read.
    let (run, findings) = check(dir.path(), &["docs"]);
    run.assert_code(1);
    assert_eq!(
        findings.with_code("index-url").count(),
        2,
        "{:?}",
        places(&findings)
    );
    assert!(!run.stdout.contains("top secret"));
}

#[test]
fn links_in_a_local_site_are_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    good_site(&site);
    write_tree(
        dir.path(),
        &[
            ("outside/fill.py", "print('outside')\n"),
            ("outside/SKILL.md", SKILL),
        ],
    );
    let script = site.join(".well-known/skills/pdf/scripts/fill.py");
    std::fs::remove_file(&script).unwrap();
    symlink(dir.path().join("outside/fill.py"), &script).unwrap();
    // The 0.2.0 skill-md folder replaced by a link to a folder outside the site.
    let notes = site.join(".well-known/agent-skills/notes");
    std::fs::remove_dir_all(&notes).unwrap();
    symlink(dir.path().join("outside"), &notes).unwrap();
    let (run, findings) = check(dir.path(), &["site"]);
    run.assert_code(1);
    let missing: Vec<String> = findings
        .with_code("index-file-missing")
        .map(|f| f.message.clone())
        .collect();
    assert_eq!(missing.len(), 2, "{:?}", places(&findings));
    assert!(
        missing.iter().all(|m| m.contains("symbolic link")),
        "{missing:?}"
    );
    assert!(!run.stdout.contains("outside')"), "a link target was read");
}

#[test]
fn a_linked_index_is_reported_not_read() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &[("elsewhere.json", r#"{"skills": []}"#)]);
    let folder = dir.path().join("site/.well-known/skills");
    std::fs::create_dir_all(&folder).unwrap();
    symlink(
        dir.path().join("elsewhere.json"),
        &folder.join("index.json"),
    )
    .unwrap();
    let (run, findings) = check(dir.path(), &["site"]);
    run.assert_code(1);
    let finding = findings
        .with_code("index-format")
        .next()
        .expect("a finding");
    assert!(finding.message.contains("symbolic link"), "{finding:?}");
}

#[test]
fn a_100k_entry_index_is_checked_in_bounds_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let skills: Vec<Value> = (0..100_000)
        .map(|i| json!({"name": format!("s{i}"), "description": "d", "files": ["SKILL.md"]}))
        .collect();
    let index = json!({"skills": skills}).to_string();
    write_tree(dir.path(), &[("site/.well-known/skills/index.json", index)]);
    let (run, findings) = check(dir.path(), &["site"]);
    run.assert_code(1);
    let limit = findings
        .with_code("index-format")
        .next()
        .expect("the limit reported");
    assert!(
        limit
            .message
            .contains("100000 skills; only the first 10000"),
        "{limit:?}"
    );
    assert_eq!(findings.summary.entries, 10_000);
    assert_eq!(findings.with_code("index-file-missing").count(), 10_000);
}

#[test]
fn a_deeply_nested_or_oversized_index_is_a_finding_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!(
        "{{\"skills\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let wide = format!("{{\"skills\": [{}0]}}", "0,".repeat(2_000_001));
    write_tree(
        dir.path(),
        &[
            ("deep/.well-known/skills/index.json", deep),
            ("wide/.well-known/skills/index.json", wide),
        ],
    );
    for (site, said) in [
        ("deep", "recursion limit"),
        ("wide", "more than 2000000 JSON values"),
    ] {
        let (run, findings) = check(dir.path(), &[site]);
        run.assert_code(1);
        let finding = findings
            .with_code("index-format")
            .next()
            .expect("a finding");
        assert!(finding.message.contains(said), "{site}: {finding:?}");
    }
}

/// A 0.2.0 index of one archive skill `pdf` at `pdf.<ext>` holding `bytes`.
fn archive_site(root: &Path, ext: &str, bytes: Vec<u8>) {
    let index = json!({"$schema": SCHEMA, "skills": [
        {"name": "pdf", "description": DESCRIPTION, "type": "archive", "url": format!("pdf.{ext}"), "digest": digest(&bytes)},
    ]});
    write_tree(
        root,
        &[
            (
                ".well-known/agent-skills/index.json".to_string(),
                index.to_string().into_bytes(),
            ),
            (format!(".well-known/agent-skills/pdf.{ext}"), bytes),
        ],
    );
}

/// A tar.gz with `SKILL.md` and a member whose path needs a GNU long name (over 100 bytes).
fn long_name_tar(skill: &[u8]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, data) in [
        ("SKILL.md".to_string(), skill),
        (format!("{}x.md", "deep/".repeat(30)), b"x".as_slice()),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        builder.append_data(&mut header, path, data).unwrap();
    }
    let plain = builder.into_inner().unwrap();
    crate::common::archives::compress(acp_registry::archive::ArchiveFormat::TarGz, &plain)
}

#[test]
fn archives_the_skills_cli_refuses_are_reported_and_nothing_is_written_outside() {
    let skill = SKILL.as_bytes();
    let cases: Vec<(&str, &str, Vec<u8>, &str)> = vec![
        (
            "climb",
            "tar.gz",
            tar_gz(&[
                Entry::File("SKILL.md", skill),
                Entry::File("../../evil.sh", b"x"),
            ]),
            "../../evil.sh",
        ),
        (
            "link",
            "tar.gz",
            tar_gz(&[
                Entry::File("SKILL.md", skill),
                Entry::Symlink("scripts", "/etc"),
            ]),
            "is a link",
        ),
        (
            "nested",
            "tar.gz",
            tar_gz(&[Entry::File("pdf/SKILL.md", skill)]),
            "no `SKILL.md` at the archive's root",
        ),
        (
            "zip-link",
            "zip",
            zip_entries(&[
                Entry::File("SKILL.md", skill),
                Entry::Symlink("x", "/etc/passwd"),
            ]),
            "symbolic link",
        ),
        (
            "twice",
            "zip",
            zip_entries(&[
                Entry::File("SKILL.md", skill),
                Entry::File("SKILL.md", b"other"),
            ]),
            "twice",
        ),
        (
            "not-an-archive",
            "tar.gz",
            skill.to_vec(),
            "neither a zip nor",
        ),
        (
            "long-name",
            "tar.gz",
            long_name_tar(skill),
            "GNU or PAX long name",
        ),
    ];
    for (name, ext, bytes, said) in cases {
        let dir = tempfile::tempdir().unwrap();
        archive_site(&dir.path().join("site"), ext, bytes);
        let (run, findings) = check(dir.path(), &["site"]);
        run.assert_code(1);
        let messages: Vec<&str> = findings
            .with_code("index-artifact")
            .map(|f| f.message.as_str())
            .collect();
        assert!(
            messages.iter().any(|m| m.contains(said)),
            "{name}: {messages:?}"
        );
        assert!(!dir.path().join("evil.sh").exists() && !dir.path().join("site/evil.sh").exists());
    }
}

#[test]
fn a_good_zip_archive_passes_and_its_members_are_judged_by_the_skill_rules() {
    let dir = tempfile::tempdir().unwrap();
    // SKILL.md mentions scripts/fill.py, which the archive lacks: a skill-link finding
    // placed in the archive member.
    let bytes = zip_entries(&[Entry::File("SKILL.md", SKILL.as_bytes())]);
    archive_site(&dir.path().join("site"), "zip", bytes);
    let (run, findings) = check(dir.path(), &["site"]);
    run.assert_code(1);
    assert_eq!(
        places(&findings),
        ["skill-link site/.well-known/agent-skills/pdf.zip#SKILL.md:9:6"]
    );
}

/// A marketplace with one plugin whose source is `source`.
fn marketplace(root: &Path, source: &str) {
    let doc = json!({"name": "example-skills", "owner": {"name": "Example"},
        "metadata": {"description": "Example skills."},
        "plugins": [{"name": "pdf", "source": source, "description": DESCRIPTION}]});
    let plugin = json!({"name": "pdf", "description": DESCRIPTION, "version": "1.0.0"});
    write_tree(
        root,
        &[
            (".claude-plugin/marketplace.json", doc.to_string()),
            ("plugins/pdf/.claude-plugin/plugin.json", plugin.to_string()),
            ("plugins/pdf/skills/pdf/SKILL.md", SKILL.to_string()),
            ("plugins/pdf/skills/pdf/scripts/fill.py", SCRIPT.to_string()),
        ],
    );
}

#[test]
fn marketplace_sources_that_climb_or_are_links_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mp");
    marketplace(&root, "./plugins/pdf");
    let (run, findings) = check(dir.path(), &["mp"]);
    run.assert_code(0);
    assert!(findings.findings.is_empty(), "{:?}", places(&findings));

    marketplace(&root, "../../etc");
    let (run, findings) = check(dir.path(), &["mp"]);
    run.assert_code(1);
    let text = std::fs::read_to_string(root.join(".claude-plugin/marketplace.json")).unwrap();
    let column = text.find("\"../../etc\"").unwrap() + 1;
    assert_eq!(
        places(&findings),
        [format!(
            "marketplace-source mp/.claude-plugin/marketplace.json:1:{column}"
        )]
    );

    // A plugin folder that is a link to a folder outside the marketplace.
    marketplace(&root, "./plugins/linked");
    symlink(
        dir.path().join("mp/plugins/pdf"),
        &root.join("plugins/linked"),
    )
    .unwrap();
    let (run, findings) = check(dir.path(), &["mp/.claude-plugin/marketplace.json"]);
    run.assert_code(1);
    let finding = findings
        .with_code("marketplace-source")
        .next()
        .expect("a finding");
    assert!(finding.message.contains("symbolic link"), "{finding:?}");
}

#[test]
fn a_third_party_index_of_the_opencode_shape_is_judged_as_the_cli_would() {
    // The shape opencode-compatible sites serve: `name` and `files`, no `description`. The
    // `skills` CLI 0.1.0 drops such an index whole.
    let dir = tempfile::tempdir().unwrap();
    let index = r#"{
  "skills": [
    { "name": "deploy", "files": ["SKILL.md", "references/x.md"] }
  ]
}
"#;
    let skill =
        "---\nname: deploy\ndescription: Deploy the app.\n---\n\nSee [x](references/x.md).\n";
    write_tree(
        dir.path(),
        &[
            ("site/.well-known/skills/index.json", index),
            ("site/.well-known/skills/deploy/SKILL.md", skill),
            ("site/.well-known/skills/deploy/references/x.md", "# X\n"),
        ],
    );
    let (run, findings) = check(dir.path(), &["site"]);
    run.assert_code(1);
    assert_eq!(
        places(&findings),
        ["index-entry site/.well-known/skills/index.json:3:5"]
    );
    assert!(findings.findings[0]
        .message
        .contains("drops the WHOLE index"));
}

#[test]
fn a_source_with_nothing_to_check_exits_2_naming_what_was_tried() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), "");
    for source in [https(&server, "/"), "missing-folder".to_string()] {
        let run = acp_registry_with_env(
            &["skill", "check", &source],
            dir.path(),
            &[("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1")],
        );
        run.assert_code(2);
        assert!(run.stderr.contains(&source), "{}", run.explain());
    }
}

#[test]
fn an_artifact_on_another_origin_is_a_warning_and_still_checked() {
    let dir = tempfile::tempdir().unwrap();
    let archive = good_archive();
    write_tree(dir.path(), &[("cdn/pdf.tar.gz", archive.clone())]);
    let cdn = serve(&dir.path().join("cdn"), "");
    let elsewhere = https(&cdn, "/pdf.tar.gz");
    for (name, pin, code) in [("pdf", digest(&archive), 0), ("pdf", digest(b"other"), 1)] {
        let index = json!({"$schema": SCHEMA, "skills": [
            {"name": name, "description": DESCRIPTION, "type": "archive", "url": elsewhere, "digest": pin},
        ]});
        write_tree(
            dir.path(),
            &[(
                "site/.well-known/agent-skills/index.json",
                index.to_string(),
            )],
        );
        let site = serve(&dir.path().join("site"), "");
        let (run, findings) = check(dir.path(), &[&https(&site, "/")]);
        run.assert_code(code);
        let url = findings.with_code("index-url").next().expect("a warning");
        assert_eq!(url.severity, "warning");
        assert_eq!(findings.with_code("index-digest").count(), code as usize);
    }
}

#[test]
fn a_plugin_without_plugin_json_is_checked_as_claude_code_reads_it() {
    // The manifest is optional to Claude Code: a `strict: false` entry describes the plugin
    // (claude plugin validate and install accept this marketplace, 2.1.328).
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({"name": "example-skills", "owner": {"name": "Example"},
        "metadata": {"description": "Example skills."},
        "plugins": [{"name": "pdf", "source": "./plugins/pdf", "description": DESCRIPTION,
            "version": "1.0.0", "strict": false}]});
    write_tree(
        &dir.path().join("mp"),
        &[
            (".claude-plugin/marketplace.json", doc.to_string()),
            ("plugins/pdf/skills/pdf/SKILL.md", SKILL.to_string()),
            ("plugins/pdf/skills/pdf/scripts/fill.py", SCRIPT.to_string()),
        ],
    );
    let (run, findings) = check(dir.path(), &["mp"]);
    run.assert_code(0);
    assert!(findings.findings.is_empty(), "{:?}", places(&findings));
    // A manifest that is there is still checked.
    write_tree(
        &dir.path().join("mp"),
        &[(
            "plugins/pdf/.claude-plugin/plugin.json",
            "{\"name\": \"other\"}",
        )],
    );
    let (run, findings) = check(dir.path(), &["mp"]);
    run.assert_code(1);
    assert!(
        findings.with_code("plugin-manifest").next().is_some(),
        "{:?}",
        places(&findings)
    );
}

/// A `strict: false` entry listing its skill folders in `skills` (the marketplace `build`
/// writes): each listed folder is judged by the skill rules, a folder of skill folders too;
/// a listed path that climbs, is a link or is missing is a `marketplace-source` finding.
#[test]
fn listed_skill_folders_are_checked_and_may_not_climb_link_or_be_missing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mp");
    let listing = |skills: Value| {
        let doc = json!({"name": "example-skills", "owner": {"name": "Example"},
            "metadata": {"description": "Example skills."},
            "plugins": [{"name": "pdf", "source": "./.well-known/skills", "strict": false,
                         "description": DESCRIPTION, "skills": skills}]});
        write_tree(
            &root,
            &[
                (".claude-plugin/marketplace.json", doc.to_string()),
                (".well-known/skills/pdf/SKILL.md", SKILL.to_string()),
                (".well-known/skills/pdf/scripts/fill.py", SCRIPT.to_string()),
            ],
        );
    };
    listing(json!(["./pdf"]));
    let (run, findings) = check(dir.path(), &["mp"]);
    run.assert_code(0);
    assert!(findings.findings.is_empty(), "{:?}", places(&findings));
    // A folder of skill folders.
    listing(json!(["./"]));
    let (run, findings) = check(dir.path(), &["mp"]);
    run.assert_code(0);
    assert!(findings.findings.is_empty(), "{:?}", places(&findings));

    // The listed skill is judged: its SKILL.md names another skill than its folder.
    write_tree(
        &root,
        &[(
            ".well-known/skills/pdf/SKILL.md",
            SKILL.replace("name: pdf", "name: other"),
        )],
    );
    listing(json!(["./pdf"]));
    std::fs::write(
        root.join(".well-known/skills/pdf/SKILL.md"),
        SKILL.replace("name: pdf", "name: other"),
    )
    .unwrap();
    let (run, findings) = check(dir.path(), &["mp"]);
    run.assert_code(1);
    assert!(
        findings
            .findings
            .iter()
            .any(|f| f.file.ends_with(".well-known/skills/pdf/SKILL.md")),
        "{:?}",
        places(&findings)
    );

    for (path, says) in [
        ("../../etc", "not a `./` path inside the plugin"),
        ("./missing", "does not exist"),
        ("./linked", "symbolic link"),
    ] {
        listing(json!([path]));
        let _ = symlink(dir.path(), &root.join(".well-known/skills/linked"));
        let (run, findings) = check(dir.path(), &["mp"]);
        run.assert_code(1);
        let finding = findings
            .with_code("marketplace-source")
            .next()
            .unwrap_or_else(|| panic!("{path}: {:?}", places(&findings)));
        assert!(finding.message.contains(says), "{path}: {finding:?}");
        assert!(
            !finding
                .message
                .contains(&dir.path().to_string_lossy().to_string()),
            "{path}: a link's target is never printed: {finding:?}"
        );
    }
}

/// What `build` publishes passes `skill check`, a plugin per skill and one for all.
#[test]
fn the_skills_build_publishes_pass_skill_check() {
    for config in [
        "{}",
        r#"{"skills": {"marketplace": {"grouping": {"plugin": "all"}}}}"#,
    ] {
        let work = tempfile::tempdir().unwrap();
        let registry = work.path().join("registry");
        crate::common::copy_dir(
            &crate::common::repo_root().join("tests/fixtures/skills-registry"),
            &registry,
        );
        std::fs::write(registry.join("acp-registry.jsonc"), config).unwrap();
        crate::common::acp_registry(
            &["build", "--registry", "registry", "--out", "dist"],
            work.path(),
        )
        .assert_ok();
        let (run, findings) = check(
            work.path(),
            &["dist/site", "dist/site/.claude-plugin/marketplace.json"],
        );
        run.assert_code(0);
        assert!(
            findings.findings.is_empty(),
            "{config}: {:?}",
            places(&findings)
        );
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        assert!(
            report["summary"]["entries"].as_u64() > Some(3),
            "{}",
            run.stdout
        );
    }
}
