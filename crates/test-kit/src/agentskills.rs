//! The Agent Skills reference validator, `agentskills validate` from the `skills-ref` package
//! on the Python package registry, pinned. `.ci/run` installs it where [`agentskills`] looks; a local run installs it
//! there on first use, and skips (saying so) only when it cannot be installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The pinned reference validator (also in `.ci/run`).
pub const SKILLS_REF: &str = "skills-ref==0.1.1";

/// Where `.ci/run` and the tests keep its virtual environment: below `target/tmp`, the
/// `CARGO_TARGET_TMPDIR` the test binaries are given.
fn venv(target_tmp: &Path) -> PathBuf {
    target_tmp.join("skills-ref-0.1.1")
}

fn executable(venv: &Path) -> PathBuf {
    venv.join("bin/agentskills")
}

fn install(target_tmp: &Path) -> Result<PathBuf, String> {
    let venv = venv(target_tmp);
    if executable(&venv).is_file() {
        return Ok(executable(&venv));
    }
    // A half-made venv has no `agentskills` yet: made again from scratch.
    let _ = std::fs::remove_dir_all(&venv);
    let run = |cmd: &mut Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| e.to_string())?;
        out.status.success().then_some(()).ok_or_else(|| {
            let err = String::from_utf8_lossy(&out.stderr);
            err.lines().last().unwrap_or("").to_owned()
        })
    };
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    let pip = venv.join("bin/pip");
    run(Command::new(pip).args(["install", "-q", "--disable-pip-version-check", SKILLS_REF]))?;
    Ok(executable(&venv))
}

/// The `agentskills` executable (`target_tmp`: `env!("CARGO_TARGET_TMPDIR")`); `None` (after saying why) when it cannot be installed here.
/// Under CI it must be there.
pub fn agentskills(target_tmp: &Path) -> Option<PathBuf> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match FOUND.get_or_init(|| install(target_tmp)) {
        Ok(path) => Some(path.clone()),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("{SKILLS_REF} is not installed (.ci/run installs it): {why}")
        }
        Err(why) => {
            eprintln!("skipped: {SKILLS_REF} cannot be installed here ({why})");
            None
        }
    }
}

/// Asserts that `agentskills validate` accepts the skill folder `dir`.
pub fn assert_valid(agentskills: &Path, dir: &Path) {
    let out = Command::new(agentskills)
        .arg("validate")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "agentskills validate {}:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
