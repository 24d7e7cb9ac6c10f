//! `acp-collab skill install`: every known agent's layout in a temporary HOME (and a
//! project), launchers that run the installed binary, and no overwriting of a different
//! skill without `--force`.

mod collab_support;

use std::path::{Path, PathBuf};
use std::process::Output;

use acp_registry::collab::skill::{AGENTS, FILES, MARKER, NAME, POINTER};
use collab_support::{bin, stderr, stdout};

fn install(home: &Path, args: &[&str]) -> Output {
    bin()
        .args(["skill", "install"])
        .args(args)
        .env("HOME", home)
        .output()
        .unwrap()
}

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_acp-collab"))
        .canonicalize()
        .unwrap()
}

#[test]
fn every_known_agent_gets_the_skill_in_its_global_and_project_folders() {
    let expected = [
        ("claude-code", ".claude/skills", ".claude/skills"),
        ("codex", ".agents/skills", ".agents/skills"),
        ("cursor", ".cursor/skills", ".cursor/skills"),
        ("gemini-cli", ".gemini/skills", ".gemini/skills"),
        ("github-copilot", ".copilot/skills", ".github/skills"),
        ("opencode", ".config/opencode/skills", ".opencode/skills"),
    ];
    assert_eq!(AGENTS.len(), expected.len());
    for (agent, global, project) in expected {
        let home = tempfile::tempdir().unwrap();
        let out = install(home.path(), &["--agent", agent, "--global"]);
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", stderr(&out));
        let dir = home.path().join(global).join(NAME);
        assert_eq!(
            stdout(&out),
            format!(
                "installed: {} (scripts run {})\n",
                dir.display(),
                exe().display()
            )
        );
        for (path, bytes) in FILES {
            assert_eq!(
                &std::fs::read(dir.join(path)).unwrap(),
                bytes,
                "{agent}: {path}"
            );
        }
        let pointer = std::fs::read_to_string(dir.join(POINTER)).unwrap();
        assert_eq!(pointer.trim_end(), exe().display().to_string());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("scripts/next_action.py"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o111, 0o111, "{agent}: launchers are executable");
        }
        let repo = tempfile::tempdir().unwrap();
        let project = repo.path().join(project).join(NAME);
        let out = install(
            home.path(),
            &["--agent", agent, "--project", repo.path().to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", stderr(&out));
        assert!(
            project.join("SKILL.md").is_file(),
            "{agent}: {}",
            project.display()
        );
    }
}

#[test]
fn the_default_is_claude_code_for_the_user_and_reinstalling_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    assert_eq!(install(home.path(), &[]).status.code(), Some(0));
    let dir = home.path().join(".claude/skills").join(NAME);
    assert!(dir.join("SKILL.md").is_file());
    let again = install(home.path(), &[]);
    assert_eq!(again.status.code(), Some(0));
    assert!(
        stdout(&again).starts_with("already installed: "),
        "{}",
        stdout(&again)
    );
}

#[test]
fn installed_launchers_run_the_installed_binary_without_path() {
    let home = tempfile::tempdir().unwrap();
    assert_eq!(
        install(home.path(), &["--agent", "codex"]).status.code(),
        Some(0)
    );
    let scripts = home
        .path()
        .join(".agents/skills")
        .join(NAME)
        .join("scripts");
    let folder = home.path().join("collab");
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = PathBuf::from(String::from_utf8(python.stdout).unwrap().trim());
    let out = std::process::Command::new(&python)
        .arg(scripts.join("init_collaboration.py"))
        .args([
            "--folder",
            folder.to_str().unwrap(),
            "--participant",
            "a",
            "--participant",
            "b",
        ])
        .args([
            "--objective",
            "o",
            "--completion",
            "g",
            "--primary-deliverable-type",
            "adr",
        ])
        .env("PATH", python.parent().unwrap())
        .env_remove("ACP_COLLAB")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(folder.join("protocol.json").is_file());
}

#[test]
fn a_different_skill_is_replaced_only_with_force() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".cursor/skills").join(NAME);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), "---\nname: someone-elses\n---\n").unwrap();
    let out = install(home.path(), &["--agent", "cursor"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("holds a different skill"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(dir.join("SKILL.md")).unwrap(),
        "---\nname: someone-elses\n---\n"
    );
    // An earlier install edited by hand is someone's work too.
    let other = home.path().join(".gemini/skills").join(NAME);
    assert_eq!(
        install(home.path(), &["--agent", "gemini-cli"])
            .status
            .code(),
        Some(0)
    );
    std::fs::write(other.join("references/commands.md"), "my notes\n").unwrap();
    assert_eq!(
        install(home.path(), &["--agent", "gemini-cli"])
            .status
            .code(),
        Some(2)
    );
    // --force replaces both.
    for agent in ["cursor", "gemini-cli"] {
        let out = install(home.path(), &["--agent", agent, "--force"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read(dir.join("SKILL.md")).unwrap(), FILES[0].1);
    assert!(dir.join(MARKER).is_file());
}

#[test]
fn an_unchanged_earlier_install_is_upgraded_in_place() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".claude/skills").join(NAME);
    assert_eq!(install(home.path(), &[]).status.code(), Some(0));
    // As written by another acp-collab (another binary path): still ours to replace.
    std::fs::write(dir.join(POINTER), "/old/acp-collab\n").unwrap();
    let marker = std::fs::read_to_string(dir.join(MARKER)).unwrap();
    let old_sha = acp_registry::collab::paths::sha256_hex(b"/old/acp-collab\n");
    let new_sha =
        acp_registry::collab::paths::sha256_hex(format!("{}\n", exe().display()).as_bytes());
    std::fs::write(dir.join(MARKER), marker.replace(&new_sha, &old_sha)).unwrap();
    let out = install(home.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("installed: "));
    assert_eq!(
        std::fs::read_to_string(dir.join(POINTER))
            .unwrap()
            .trim_end(),
        exe().display().to_string()
    );
}

#[test]
fn list_shows_every_agent_and_unknown_agents_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let out = install(home.path(), &["--list"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), AGENTS.len());
    assert!(text.contains(&format!("~/.claude/skills/{NAME}/")));
    assert!(text.contains(&format!("<project>/.github/skills/{NAME}/")));
    let out = install(home.path(), &["--agent", "emacs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown agent 'emacs'; use one of: claude-code, codex"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_compiled_in_skill_is_the_registry_entrys_skill_folder() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("registry")
        .join(NAME)
        .join("skill")
        .join(NAME);
    let mut on_disk = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for item in std::fs::read_dir(dir).unwrap() {
            let path = item.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace('\\', "/");
                on_disk.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    on_disk.sort();
    let compiled: Vec<(String, Vec<u8>)> = FILES
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
        .collect();
    assert_eq!(
        on_disk, compiled,
        "list every file of skill/<name>/ in collab::skill::FILES"
    );
}
