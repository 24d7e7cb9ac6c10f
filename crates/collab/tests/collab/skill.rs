//! `acp-collab skill install`: every known agent's layout in a temporary HOME (and a
//! project), launchers that run the installed binary, and no overwriting of a different
//! skill without `--force`.

use acp_test_kit::agentskills;

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{bin, stderr, stdout};
use acp_collab::skill::{AGENTS, FILES, MARKER, NAME, POINTER};

fn install(home: &Path, args: &[&str]) -> Output {
    bin()
        .args(["skill", "install"])
        .args(args)
        .env("HOME", home)
        .output()
        .unwrap()
}

fn exe() -> PathBuf {
    PathBuf::from(crate::COLLAB).canonicalize().unwrap()
}

#[test]
fn every_known_agent_gets_the_skill_in_its_global_and_project_folders() {
    let expected: [(&str, &[&str], &[&str]); 7] = [
        (
            "universal",
            &[".agents/skills", ".claude/skills"],
            &[".agents/skills", ".claude/skills"],
        ),
        ("claude-code", &[".claude/skills"], &[".claude/skills"]),
        ("codex", &[".agents/skills"], &[".agents/skills"]),
        ("cursor", &[".cursor/skills"], &[".cursor/skills"]),
        ("gemini-cli", &[".gemini/skills"], &[".gemini/skills"]),
        ("github-copilot", &[".copilot/skills"], &[".github/skills"]),
        (
            "opencode",
            &[".config/opencode/skills"],
            &[".opencode/skills"],
        ),
    ];
    assert_eq!(AGENTS.len(), expected.len());
    for (agent, global, project) in expected {
        let home = tempfile::tempdir().unwrap();
        let out = install(home.path(), &["--agent", agent, "--global"]);
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", stderr(&out));
        let installed: Vec<String> = stdout(&out)
            .lines()
            .filter(|l| l.starts_with("installed: "))
            .map(str::to_owned)
            .collect();
        let expected_lines: Vec<String> = global
            .iter()
            .map(|g| {
                format!(
                    "installed: {} (scripts run {})",
                    home.path().join(g).join(NAME).display(),
                    exe().display()
                )
            })
            .collect();
        assert_eq!(installed, expected_lines, "{agent}");
        for dir in global.iter().map(|g| home.path().join(g).join(NAME)) {
            assert_installed(&dir, agent);
        }
        let repo = tempfile::tempdir().unwrap();
        let out = install(
            home.path(),
            &["--agent", agent, "--project", repo.path().to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", stderr(&out));
        for dir in project.iter().map(|p| repo.path().join(p).join(NAME)) {
            assert_installed(&dir, agent);
        }
    }
}

/// The skill's files, the launchers' pointer at this binary, executable launchers; and the
/// Agent Skills reference validator accepts the installed folder.
fn assert_installed(dir: &Path, agent: &str) {
    if let Some(agentskills) =
        agentskills::agentskills(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")))
    {
        agentskills::assert_valid(&agentskills, dir);
    }
    for (path, bytes) in FILES {
        assert_eq!(
            &std::fs::read(dir.join(path)).unwrap(),
            bytes,
            "{agent}: {}",
            dir.join(path).display()
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
}

#[test]
fn the_default_is_universal_for_the_user_and_reinstalling_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let out = install(home.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let agents = home.path().join(".agents/skills").join(NAME);
    let claude = home.path().join(".claude/skills").join(NAME);
    let run = format!("(scripts run {})", exe().display());
    assert_eq!(
        stdout(&out),
        format!(
            "installed: {} {run}\n  seen by: Codex, Cursor, Gemini CLI, GitHub Copilot, OpenCode\n\
             installed: {} {run}\n  seen by: Claude Code, Cursor, GitHub Copilot, OpenCode\n",
            agents.display(),
            claude.display()
        )
    );
    let again = install(home.path(), &[]);
    assert_eq!(again.status.code(), Some(0));
    let text = stdout(&again);
    let verbs: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.split(": ").next().unwrap())
        .collect();
    assert_eq!(verbs, ["already installed", "already installed"]);
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
    let old_sha = acp_test_kit::sha256_hex(b"/old/acp-collab\n");
    let new_sha = acp_test_kit::sha256_hex(format!("{}\n", exe().display()).as_bytes());
    std::fs::write(dir.join(MARKER), marker.replace(&new_sha, &old_sha)).unwrap();
    let out = install(home.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("\nupdated: {} ", dir.display())),
        "{}",
        stdout(&out)
    );
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
    assert!(text.starts_with(&format!(
        "universal       ~/.agents/skills/{NAME}/ ~/.claude/skills/{NAME}/  <project>/.agents/skills/{NAME}/"
    )));
    assert!(text.contains(&format!("<project>/.github/skills/{NAME}/")));
    let out = install(home.path(), &["--agent", "emacs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown agent 'emacs'; use one of: universal, claude-code, codex"),
        "{}",
        stderr(&out)
    );
}

/// Every file under `root`, as (path relative to `root`, bytes), sorted.
fn files_under(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut on_disk = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for item in std::fs::read_dir(dir).unwrap() {
            let path = item.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace('\\', "/");
                on_disk.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    on_disk.sort();
    on_disk
}

/// The skill's canonical copy is this crate's `skill/` (a package ships only files inside its
/// folder); the registry entry publishes the same files. `ACP_REGISTRY_REGENERATE=1` rewrites
/// the entry's copy from the canonical one.
#[test]
fn the_compiled_in_skill_is_the_crates_and_the_registry_entrys_skill_folder() {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let canonical = manifest_dir.join("skill").join(NAME);
    let entry = manifest_dir
        .join("../../registry")
        .join(NAME)
        .join("skill")
        .join(NAME);
    let compiled: Vec<(String, Vec<u8>)> = FILES
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
        .collect();
    if std::env::var_os("ACP_REGISTRY_REGENERATE").is_some() {
        std::fs::remove_dir_all(&entry).unwrap();
        for (rel, _) in &compiled {
            let path = entry.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            // A copy keeps the scripts' executable bit.
            std::fs::copy(canonical.join(rel), path).unwrap();
        }
    }
    assert_eq!(
        files_under(&canonical),
        compiled,
        "list every file of skill/<name>/ in collab::skill::FILES"
    );
    assert_eq!(
        files_under(&entry),
        compiled,
        "registry/{NAME}/skill/ differs from crates/collab/skill/ (ACP_REGISTRY_REGENERATE=1 copies it)"
    );
}

/// `acp-collab skill «args»` with this HOME, from this folder.
fn skill(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    bin()
        .arg("skill")
        .args(args)
        .env("HOME", home)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// Where each client reads skills, as its documentation says: (client, project, user).
const CLIENT_LAYOUTS: [(&str, &[&str], &[&str]); 6] = [
    ("Claude Code", &[".claude/skills"], &[".claude/skills"]),
    ("Codex", &[".agents/skills"], &[".agents/skills"]),
    (
        "Cursor",
        &[".agents/skills", ".cursor/skills"],
        &[".agents/skills", ".cursor/skills"],
    ),
    (
        "Gemini CLI",
        &[".agents/skills", ".gemini/skills"],
        &[".agents/skills", ".gemini/skills"],
    ),
    (
        "GitHub Copilot",
        &[".github/skills", ".claude/skills"],
        &[".copilot/skills", ".claude/skills"],
    ),
    (
        "OpenCode",
        &[".opencode/skills", ".agents/skills"],
        &[".config/opencode/skills", ".agents/skills"],
    ),
];

#[test]
fn a_universal_install_reaches_every_known_client_for_the_user_and_in_a_project() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let user = skill(home.path(), repo.path(), &["install", "--global"]);
    assert_eq!(user.status.code(), Some(0), "{}", stderr(&user));
    let project = skill(
        home.path(),
        repo.path(),
        &["install", "--project", repo.path().to_str().unwrap()],
    );
    assert_eq!(project.status.code(), Some(0), "{}", stderr(&project));
    for (client, in_project, for_user) in CLIENT_LAYOUTS {
        let found = |base: &Path, folders: &[&str]| {
            folders
                .iter()
                .any(|f| base.join(f).join(NAME).join("SKILL.md").is_file())
        };
        assert!(
            found(home.path(), for_user),
            "{client} finds no user install"
        );
        assert!(
            found(repo.path(), in_project),
            "{client} finds no project install"
        );
        for out in [&user, &project] {
            assert!(
                stdout(out)
                    .lines()
                    .any(|l| l.starts_with("  seen by: ") && l.contains(client)),
                "{client} is named: {}",
                stdout(out)
            );
        }
    }
    let skill_md = home
        .path()
        .join(".agents/skills")
        .join(NAME)
        .join("SKILL.md");
    let text = std::fs::read_to_string(skill_md).unwrap();
    assert!(
        text.contains(&format!("name: {NAME}\n")),
        "the folder is named like the skill"
    );
}

#[test]
fn another_skill_of_the_same_name_in_a_scanned_folder_is_a_warning() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let theirs = repo.path().join(".agents/skills").join(NAME);
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join("SKILL.md"), "---\nname: theirs\n---\n").unwrap();
    // For the user: the project's copy would shadow (or be shadowed by) ours.
    let out = skill(home.path(), repo.path(), &["install"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "warning: Codex, Cursor, Gemini CLI, GitHub Copilot, OpenCode also scan {}, which \
             holds another skill named {NAME}: one shadows the other; acp-collab skill install \
             did not write that copy, so rename or remove it yourself, or remove this install \
             with: acp-collab skill uninstall --agent universal --global\n",
            theirs.display()
        )
    );
    // A second install of ours in a folder the same clients scan is a duplicate, said so.
    let out = skill(
        home.path(),
        repo.path(),
        &["install", "--agent", "gemini-cli"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ours = home.path().join(".agents/skills").join(NAME);
    assert!(
        stderr(&out).contains(&format!(
            "Gemini CLI also scans {}, which holds an identical copy of this skill",
            ours.display()
        )),
        "{}",
        stderr(&out)
    );
    // Into the project itself: theirs is never overwritten, and nothing is half-written.
    let out = skill(
        home.path(),
        repo.path(),
        &["install", "--project", repo.path().to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("holds a different skill"),
        "{}",
        stderr(&out)
    );
    assert!(!repo.path().join(".claude/skills").join(NAME).exists());
    assert_eq!(
        std::fs::read_to_string(theirs.join("SKILL.md")).unwrap(),
        "---\nname: theirs\n---\n"
    );
}

/// A shadowing warning ends with the exact `skill uninstall` that removes the other copy (the
/// agent that wrote only that folder, its scope, the project quoted for a shell), and running
/// it removes that copy and nothing else; a hand-edited copy needs `--force`.
#[test]
fn a_shadowing_warning_names_the_uninstall_that_removes_the_other_copy() {
    let home = tempfile::tempdir().unwrap();
    let base = tempfile::tempdir().unwrap();
    let repo = base.path().join("my repo");
    std::fs::create_dir(&repo).unwrap();
    let project = repo.to_str().unwrap();
    let out = skill(
        home.path(),
        &repo,
        &["install", "--agent", "claude-code", "--project", project],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // For the user, in .agents/skills: Cursor, GitHub Copilot and OpenCode read both folders.
    let out = skill(home.path(), &repo, &["install", "--agent", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let theirs = repo.join(".claude/skills").join(NAME);
    let command = format!("acp-collab skill uninstall --agent claude-code --project '{project}'");
    assert_eq!(
        stderr(&out),
        format!(
            "warning: Cursor, GitHub Copilot, OpenCode also scan {}, which holds an identical \
             copy of this skill named {NAME}: one shadows the other; remove that copy with: \
             {command}\n",
            theirs.display()
        )
    );
    // The command does what the warning says.
    let words = shlex::split(&command).unwrap();
    let args: Vec<&str> = words[2..].iter().map(String::as_str).collect();
    let out = skill(home.path(), &repo, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ours = home.path().join(".agents/skills").join(NAME);
    assert!(!theirs.exists() && ours.join("SKILL.md").exists());

    // A hand-edited copy: the same command with --force, which keeps its other files.
    std::fs::write(ours.join("SKILL.md"), "edited\n").unwrap();
    let out = skill(
        home.path(),
        &repo,
        &["install", "--agent", "claude-code", "--project", project],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).ends_with(
            "which holds a hand-edited install of this skill named agent-collaboration-protocol: \
             one shadows the other; remove that copy's installed files (its other files are \
             kept) with: acp-collab skill uninstall --agent codex --global --force\n"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn uninstall_removes_only_what_install_wrote() {
    let home = tempfile::tempdir().unwrap();
    let cwd = home.path();
    assert_eq!(skill(home.path(), cwd, &["install"]).status.code(), Some(0));
    let agents = home.path().join(".agents/skills").join(NAME);
    let claude = home.path().join(".claude/skills").join(NAME);
    // A hand-edited install is kept without --force; with it, the user's own file stays.
    std::fs::write(claude.join("notes.md"), "mine\n").unwrap();
    let out = skill(home.path(), cwd, &["uninstall"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("edited since"), "{}", stderr(&out));
    assert!(
        agents.join("SKILL.md").is_file(),
        "a refusal removes nothing"
    );
    let out = skill(home.path(), cwd, &["uninstall", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "removed: {}\nremoved the installed files of {}; kept what the install did not \
             write: notes.md\n",
            agents.display(),
            claude.display()
        )
    );
    assert!(!agents.exists());
    assert_eq!(std::fs::read_dir(&claude).unwrap().count(), 1);
    // A folder without an install record is never removed, even with --force.
    let out = skill(
        home.path(),
        cwd,
        &["uninstall", "--agent", "claude-code", "--force"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("was not written by acp-collab skill install"));
    assert!(claude.join("notes.md").is_file());
    let out = skill(home.path(), cwd, &["uninstall", "--agent", "codex"]);
    assert_eq!(
        stdout(&out),
        format!("not installed: {}\n", agents.display())
    );
}

#[test]
fn list_says_where_the_skill_is_which_engine_it_runs_and_whether_it_is_outdated() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let out = skill(home.path(), repo.path(), &["list"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).starts_with(&format!("{NAME} is not installed")),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        skill(home.path(), repo.path(), &["install", "--agent", "codex"])
            .status
            .code(),
        Some(0)
    );
    let dir = home.path().join(".agents/skills").join(NAME);
    let engine = format!(
        "  engine: scripts run {}, acp-collab {}",
        exe().display(),
        env!("CARGO_PKG_VERSION")
    );
    let out = skill(home.path(), repo.path(), &["list"]);
    assert_eq!(
        stdout(&out),
        format!(
            "{}\n  state: current\n{engine}\n  seen by: Codex, Cursor, Gemini CLI, GitHub Copilot, OpenCode\n",
            dir.display()
        )
    );
    // As an older release installed it: other skill bytes, its record matching them.
    let old = b"---\nname: agent-collaboration-protocol\ndescription: older\n---\n";
    let record = std::fs::read_to_string(dir.join(MARKER)).unwrap();
    let sha = |b: &[u8]| acp_test_kit::sha256_hex(b);
    let record = record
        .replace(&sha(FILES[0].1), &sha(old))
        .replace(env!("CARGO_PKG_VERSION"), "0.0.1");
    std::fs::write(dir.join(MARKER), record).unwrap();
    std::fs::write(dir.join("SKILL.md"), old).unwrap();
    let out = skill(home.path(), repo.path(), &["list"]);
    assert!(
        stdout(&out).contains(&format!(
            "  state: outdated: installed by acp-collab 0.0.1, this is {}",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        stdout(&out)
    );
    // install refreshes it without --force.
    let out = skill(home.path(), repo.path(), &["install", "--agent", "codex"]);
    assert!(stdout(&out).starts_with("updated: "), "{}", stderr(&out));
    assert_eq!(std::fs::read(dir.join("SKILL.md")).unwrap(), FILES[0].1);
}
