//! The packaged skill works as published: a whole two-participant collaboration run through
//! the Python launchers extracted from a `pack` archive, with the commands SKILL.md gives
//! and the `run:` commands that `next` prints, using the `acp-collab` bundled beside the
//! skill (nothing on PATH, no `ACP_COLLAB`).

use crate::common;
use acp_test_kit::collab::finish_deliverable;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::pack::{pack_args, ID};
use common::{acp_registry, copy_dir, repo_root};

const TARGET: &str = "x86_64-unknown-linux-musl";

struct Package {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    /// The extracted archive.
    pkg: PathBuf,
    scripts: PathBuf,
    folder: PathBuf,
    python: PathBuf,
}

/// The interpreter itself, not a shim, so PATH can be reduced to its folder.
fn python() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is installed");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

impl Package {
    /// Packs the real `acp-collab` and extracts the archive.
    fn extracted() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let registry = root.join("registry");
        copy_dir(&repo_root().join("registry").join(ID), &registry.join(ID));
        let binary = crate::collab();
        let license = repo_root().join("LICENSE");
        let args = pack_args(TARGET, binary, license.to_str().unwrap());
        let run = acp_registry(&args, &registry);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        let archive = registry.join(format!("dist/packages/v0.1.0/acp-collab-{TARGET}.tar.gz"));
        let file = std::fs::File::open(archive).unwrap();
        let pkg = root.join("pkg");
        tar::Archive::new(flate2::read::GzDecoder::new(file))
            .unpack(&pkg)
            .unwrap();
        Package {
            _tmp: tmp,
            pkg: pkg.clone(),
            scripts: pkg.join(ID).join("scripts"),
            folder: root.join("work/collab"),
            root,
            python: python(),
        }
    }

    fn env(&self, cmd: &mut Command) {
        let python_dir = self.python.parent().unwrap().display().to_string();
        cmd.current_dir(&self.root)
            .env("PATH", format!("{python_dir}:/usr/bin:/bin"))
            .env_remove("ACP_COLLAB")
            .env_remove("ACP_COLLAB_SCRIPTS");
    }

    /// `python3 <skill>/scripts/<script>.py <args>`, as SKILL.md writes it.
    fn script(&self, script: &str, args: &[&str]) -> Output {
        let mut cmd = Command::new(&self.python);
        cmd.arg(self.scripts.join(format!("{script}.py")))
            .args(args);
        self.env(&mut cmd);
        cmd.output().unwrap()
    }

    fn ok(&self, script: &str, args: &[&str]) -> String {
        let out = self.script(script, args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{script} {args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    }

    fn folder_str(&self) -> String {
        self.folder.display().to_string()
    }

    /// The `next_action.py` report for `who`.
    fn next(&self, who: &str) -> String {
        self.ok(
            "next_action",
            &["--folder", &self.folder_str(), "--participant", who],
        )
    }

    /// Runs every `run:` command of `who`'s report through the shell, with a summary.
    fn follow(&self, who: &str) -> String {
        let report = self.next(who);
        let commands: Vec<&str> = report
            .lines()
            .filter_map(|l| l.strip_prefix("run: "))
            .collect();
        assert!(!commands.is_empty(), "nothing to run for {who}:\n{report}");
        for command in commands {
            assert!(
                command.contains(&self.scripts.display().to_string()),
                "the report names the launchers it was run through: {command}"
            );
            let command = command.replace("'<one line: what you did>'", "'done as told'");
            let mut sh = Command::new("sh");
            sh.args(["-c", &command]);
            self.env(&mut sh);
            let out = sh.output().unwrap();
            assert!(
                out.status.success(),
                "{command}\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        report
    }

    fn edit(&self, rel: &str, f: impl FnOnce(String) -> String) {
        let path = self.folder.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, f(text)).unwrap();
    }
}

fn field<'a>(report: &'a str, key: &str) -> &'a str {
    report
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no `{key}` line in:\n{report}"))
}

/// Every event of the collaboration, in the order the run appends them.
const EXPECTED_EVENTS: [&str; 12] = [
    "initialized",
    "deliverable_drafted",
    "proposal_submitted",
    "review_submitted",
    "deliverable_revised",
    "proposal_revised",
    "question_classified",
    "decision_accepted",
    "decision_accepted",
    "deliverable_frozen",
    "readiness_passed",
    "completed",
];

/// Initializes the two-participant collaboration in the package's folder `f`.
fn init_collaboration(p: &Package, f: &str) {
    let init = p.ok(
        "init_collaboration",
        &acp_test_kit::collab::two_party_init_flags(f, "Design the cache"),
    );
    assert!(
        init.starts_with(&format!(
            "Initialized ACP schema v2 collaboration folder: {f}\nserver (proposal owner) first runs: python3 "
        )),
        "{init}"
    );
}

/// Reviewing: the reader waits for its turn, writes the heading `next` gives, then appends.
fn review_as_reader(p: &Package, f: &str) {
    let waited = p.ok("wait_for_turn", &["--folder", f, "--participant", "reader"]);
    assert!(
        waited.starts_with("ready: reader is listed in waitingFor\n"),
        "{waited}"
    );
    let seq = field(&waited, "next seq: ").to_owned();
    assert_eq!(seq, "4");
    p.edit("review.md", |t| {
        format!(
            "{t}\n## 2026-11-30T00:00:00Z - reader - seq {seq}\n\nReview Scope:\n- Primary \
             deliverable completeness\n\nPosition:\n- Fine.\n"
        )
    });
    p.follow("reader");
}

/// Readiness: tick the gates and the ready box, freeze, pass, conclude, complete.
fn pass_readiness_and_complete(p: &Package) {
    p.edit("readiness.md", |t| t.replace("- [ ] ", "- [x] "));
    p.edit("deliverables/design-spec.md", |t| finish_deliverable(&t));
    let freeze = p.follow("server");
    assert!(freeze.contains("--event deliverable_frozen"), "{freeze}");
    let pass = p.follow("server");
    assert!(pass.contains("--event readiness_passed"), "{pass}");
    p.edit("conclusion.md", |t| {
        t.replace(
            "- [blocked] The collaboration is not complete yet.",
            "- [proceed] Build it.",
        )
    });
    let complete = p.follow("server");
    assert!(complete.contains("--event completed"), "{complete}");
}

/// The completed collaboration validates, waits for nobody and logged every event.
fn assert_completed(p: &Package, f: &str) {
    let validated = p.ok("validate_collaboration", &["--folder", f]);
    assert_eq!(validated, "ACP validation passed\n");
    let done = p.ok("wait_for_turn", &["--folder", f, "--participant", "reader"]);
    assert!(done.starts_with("ready: phase is completed\n"), "{done}");
    let log = std::fs::read_to_string(p.folder.join("events.jsonl")).unwrap();
    let events: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(events, EXPECTED_EVENTS);
}

#[test]
fn a_two_participant_collaboration_runs_through_the_packaged_launchers() {
    let p = Package::extracted();
    let f = p.folder_str();
    init_collaboration(&p, &f);

    // Drafting: the owner's two commands (deliverable_drafted, proposal_submitted).
    p.follow("server");
    review_as_reader(&p, &f);
    // Revising (deliverable_revised, proposal_revised), then classification.
    p.follow("server");
    p.edit("readiness.md", |t| {
        t.replace("- [unresolved]", "- [resolved]")
    });
    p.follow("server");
    for who in ["reader", "server"] {
        p.follow(who);
    }
    pass_readiness_and_complete(&p);

    assert_completed(&p, &f);
}

#[test]
fn a_launcher_without_any_acp_collab_says_how_to_provide_one() {
    let tmp = tempfile::tempdir().unwrap();
    let scripts = tmp.path().join(ID).join("scripts");
    copy_dir(
        &repo_root()
            .join("registry")
            .join(ID)
            .join("skill")
            .join(ID)
            .join("scripts"),
        &scripts,
    );
    let python = python();
    let out = Command::new(&python)
        .arg(scripts.join("next_action.py"))
        .args(["--folder", "x", "--participant", "a"])
        .env("PATH", python.parent().unwrap())
        .env_remove("ACP_COLLAB")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("set ACP_COLLAB=/path/to/acp-collab"), "{err}");
    // ACP_COLLAB is honoured when nothing is bundled.
    let out = Command::new(&python)
        .arg(scripts.join("validate_collaboration.py"))
        .args(["--folder", &tmp.path().join("none").display().to_string()])
        .env("PATH", python.parent().unwrap())
        .env("ACP_COLLAB", crate::collab())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.starts_with("ACP validation failed\n"), "{text}");
    assert!(!Path::new(&scripts.join("__pycache__")).exists());
}

/// One name everywhere: the skill as stored in the registry, as packed into the archive and as
/// `acp-collab skill install` writes it sits in a folder named as the skill, so the Agent
/// Skills reference validator accepts all three.
#[cfg(unix)]
#[test]
fn the_stored_packed_and_installed_skill_pass_the_reference_validator() {
    let Some(agentskills) =
        acp_test_kit::agentskills::agentskills(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")))
    else {
        return;
    };
    let stored = repo_root().join("registry").join(ID).join("skill").join(ID);
    acp_test_kit::agentskills::assert_valid(&agentskills, &stored);

    let p = Package::extracted();
    acp_test_kit::agentskills::assert_valid(&agentskills, &p.pkg.join(ID));

    let project = p.root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let out = Command::new(crate::collab())
        .args(["skill", "install", "--agent", "claude-code", "--project"])
        .arg(&project)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = project.join(".claude/skills").join(ID);
    acp_test_kit::agentskills::assert_valid(&agentskills, &installed);
}

/// The skill rules accept nothing the reference validator refuses: every passing rule case of
/// a skill code (tests/rules/skill-*/pass*) is a skill `agentskills validate` accepts.
#[cfg(unix)]
#[test]
fn every_passing_skill_rule_case_passes_the_reference_validator() {
    let Some(agentskills) =
        acp_test_kit::agentskills::agentskills(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")))
    else {
        return;
    };
    let mut checked = 0;
    for case in std::fs::read_dir(repo_root().join("tests/rules")).unwrap() {
        let code = case.unwrap().path();
        if !code
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("skill-")
        {
            continue;
        }
        for pass in std::fs::read_dir(&code).unwrap() {
            let pass = pass.unwrap().path();
            if !pass
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("pass")
            {
                continue;
            }
            // skill-too-large pads its cases at test time; its committed skill is checked too.
            // An agent's skill and the stand-alone skills (`skills/<name>/`) alike.
            for skills in [pass.join("example-agent/skill"), pass.join("skills")] {
                let Ok(folders) = std::fs::read_dir(&skills) else {
                    continue;
                };
                for skill in folders {
                    acp_test_kit::agentskills::assert_valid(&agentskills, &skill.unwrap().path());
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 10, "only {checked} passing skill cases found");
}
