//! No writes or deletes through links (issue 29): `skill install` and `skill uninstall` refuse
//! a symlinked folder on the way to the skill folder, a symlinked skill folder and a dangling
//! link, in the project and in the home folder; `init` writes through the core's safe writer.
//! Each case checks that nothing was written, replaced or deleted outside.

#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{bin, init_options, stderr};
use acp_collab::skill::NAME;

fn skill(verb: &str, home: &Path, args: &[&str]) -> Output {
    bin()
        .args(["skill", verb, "--agent", "claude-code"])
        .args(args)
        .env("HOME", home)
        .output()
        .unwrap()
}

/// Every file and folder below `dir`, relative, sorted (links listed, never followed).
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            if meta.is_dir() {
                stack.push(path);
                out.push((rel, Vec::new()));
            } else if meta.is_file() {
                out.push((rel, std::fs::read(&path).unwrap()));
            } else {
                out.push((rel, b"<link>".to_vec()));
            }
        }
    }
    out.sort();
    out
}

/// The links a hostile project can hold where the skill goes: what the case is, the link
/// (relative to the root) and its target.
fn hostile_layouts(outside: &Path) -> [(&'static str, String, PathBuf); 4] {
    [
        (".claude", ".claude".into(), outside.to_path_buf()),
        (
            ".claude/skills",
            ".claude/skills".into(),
            outside.join("skills"),
        ),
        (
            "the skill folder",
            format!(".claude/skills/{NAME}"),
            outside.join("skills").join(NAME),
        ),
        (
            "a dangling .claude",
            ".claude".into(),
            outside.join("nothing-here"),
        ),
    ]
}

#[test]
fn skill_install_refuses_every_link_below_the_project_and_the_home_folder() {
    for scope in ["--project", "--global"] {
        for index in 0..4 {
            let (home, project, outside) = (
                tempfile::tempdir().unwrap(),
                tempfile::tempdir().unwrap(),
                tempfile::tempdir().unwrap(),
            );
            std::fs::create_dir_all(outside.path().join("skills").join(NAME)).unwrap();
            std::fs::write(outside.path().join("skills/keep.txt"), "keep").unwrap();
            let root = if scope == "--global" {
                home.path()
            } else {
                project.path()
            };
            let (what, rel, target) = &hostile_layouts(outside.path())[index];
            let link = root.join(rel);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            symlink(target, link).unwrap();
            let before = tree(outside.path());
            let project_arg = project.path().to_str().unwrap();
            for force in [false, true] {
                let mut args = if scope == "--global" {
                    vec!["--global"]
                } else {
                    vec!["--project", project_arg]
                };
                if force {
                    args.push("--force");
                }
                let out = skill("install", home.path(), &args);
                let err = stderr(&out);
                assert_eq!(out.status.code(), Some(2), "{scope} {what}: {err}");
                assert!(
                    err.contains("is a symbolic link")
                        && err.contains("never writes or deletes through a link"),
                    "{scope} {what}: {err}"
                );
                assert_eq!(
                    tree(outside.path()),
                    before,
                    "{scope} {what}: nothing outside changed"
                );
            }
        }
    }
}

#[test]
fn skill_uninstall_never_deletes_through_a_link() {
    let (home, project, outside) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    // A real install somewhere else, then the project's `.claude` pointing at it.
    let elsewhere = outside.path().to_str().unwrap();
    let out = skill("install", home.path(), &["--project", elsewhere]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let before = tree(outside.path());
    assert!(before.len() > 3, "the install wrote its files");
    symlink(
        outside.path().join(".claude"),
        project.path().join(".claude"),
    )
    .unwrap();
    for force in [false, true] {
        let mut args = vec!["--project", project.path().to_str().unwrap()];
        if force {
            args.push("--force");
        }
        let out = skill("uninstall", home.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "{} is a symbolic link",
                project.path().join(".claude").display()
            )),
            "{err}"
        );
        assert_eq!(tree(outside.path()), before, "nothing deleted outside");
    }
}

#[test]
fn init_refuses_a_dangling_link_and_a_linked_deliverables_folder_leaving_outside_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let cases: [(&str, PathBuf); 2] = [
        ("README.md", outside.join("created-by-init.md")),
        ("deliverables", outside.clone()),
    ];
    for (i, (rel, target)) in cases.iter().enumerate() {
        let folder = tmp.path().join(format!("c{i}"));
        std::fs::create_dir(&folder).unwrap();
        symlink(target, folder.join(rel)).unwrap();
        let error = acp_collab::init(&init_options(&folder, &["a", "b"])).unwrap_err();
        assert!(error.to_string().contains("is a symlink"), "{rel}: {error}");
        assert!(tree(&outside).is_empty(), "{rel}: nothing written outside");
        assert!(!folder.join("protocol.json").exists(), "{rel}");
    }
}

#[test]
fn follow_links_installs_through_a_linked_claude_folder_at_its_target() {
    for scope in ["--project", "--global"] {
        let (home, project, outside) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let root = if scope == "--global" {
            home.path()
        } else {
            project.path()
        };
        // A dotfiles-managed `.claude`: a link to a real folder elsewhere, `skills` missing.
        symlink(outside.path(), root.join(".claude")).unwrap();
        let project_arg = project.path().to_str().unwrap();
        let mut args = if scope == "--global" {
            vec!["--global"]
        } else {
            vec!["--project", project_arg]
        };
        let refused = skill("install", home.path(), &args);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{scope}: {}",
            stderr(&refused)
        );
        assert!(stderr(&refused).contains("pass --follow-links"), "{scope}");
        args.push("--follow-links");
        let out = skill("install", home.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{scope}: {}", stderr(&out));
        let landed = outside.path().join("skills").join(NAME);
        assert!(
            landed.join("SKILL.md").is_file(),
            "{scope}: installed at the target"
        );
        assert!(
            std::fs::symlink_metadata(root.join(".claude"))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{scope}: the link is left a link"
        );
        // Installing again finds its own install through the link.
        let again = skill("install", home.path(), &args);
        assert_eq!(again.status.code(), Some(0), "{scope}: {}", stderr(&again));
        assert!(String::from_utf8_lossy(&again.stdout).contains("already installed"));
    }
}

#[test]
fn follow_links_still_refuses_a_link_as_the_skill_folder_or_inside_it() {
    let (home, project, outside) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::fs::create_dir_all(outside.path().join(NAME)).unwrap();
    std::fs::write(outside.path().join(NAME).join("keep.txt"), "keep").unwrap();
    let skills = project.path().join(".claude/skills");
    std::fs::create_dir_all(&skills).unwrap();
    symlink(outside.path().join(NAME), skills.join(NAME)).unwrap();
    let before = tree(outside.path());
    let project_arg = project.path().to_str().unwrap();
    for verb in ["install", "uninstall"] {
        for force in [false, true] {
            let mut args = vec!["--project", project_arg, "--follow-links"];
            if force {
                args.push("--force");
            }
            let out = skill(verb, home.path(), &args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{verb} {force}: {err}");
            assert!(
                err.contains(&format!(
                    "{} is a symbolic link",
                    skills.join(NAME).display()
                )),
                "{verb} {force}: {err}"
            );
            assert_eq!(
                tree(outside.path()),
                before,
                "{verb} {force}: outside untouched"
            );
        }
    }
}

#[test]
fn follow_links_uninstall_removes_only_what_the_install_wrote_through_the_link() {
    let (home, project, outside) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::fs::create_dir_all(outside.path().join("skills/other-skill")).unwrap();
    std::fs::write(outside.path().join("skills/other-skill/SKILL.md"), "other").unwrap();
    std::fs::write(outside.path().join("settings.json"), "{}").unwrap();
    let before = tree(outside.path());
    symlink(outside.path(), project.path().join(".claude")).unwrap();
    let args = [
        "--project",
        project.path().to_str().unwrap(),
        "--follow-links",
    ];
    let out = skill("install", home.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A file the user added to the installed folder is not the install's.
    let added = outside.path().join("skills").join(NAME).join("notes.md");
    std::fs::write(&added, "mine").unwrap();
    let forced = [&args[..], &["--force"]].concat();
    let out = skill("uninstall", home.path(), &forced);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("kept what the install did not write: notes.md"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::remove_file(&added).unwrap();
    std::fs::remove_dir(added.parent().unwrap()).unwrap();
    assert_eq!(
        tree(outside.path()),
        before,
        "only the install's files were removed"
    );
    assert!(std::fs::symlink_metadata(project.path().join(".claude")).is_ok());
}
