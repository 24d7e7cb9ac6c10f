//! Getting an agent ready to launch: a binary target's archive downloaded through
//! [`crate::net`] (size-capped, kept in a cache by its pinned sha256), checked and unpacked by
//! the client library's install steps (the code every client runs) and its `cmd` resolved; an npx or uvx package installed into the
//! run's private package cache first, so starting it afterwards measures the start alone.

use std::path::{Path, PathBuf};
use std::time::Instant;

use acp_registry_client::install::{self, InstallError};

use crate::fs::archive::{self, ArchiveError};
use crate::manifest::distribution::{BinaryTarget, Kind, Package};
use crate::net::{Client, NetError};

/// What went wrong before the agent could start; each maps to one finding.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    #[error("cannot download {url}: {error}")]
    Download { url: String, error: NetError },
    #[error("the archive's sha256 is {actual}, the manifest pins {expected}")]
    Sha256 { expected: String, actual: String },
    #[error("{0}")]
    Unsafe(ArchiveError),
    #[error("{0}")]
    Unpack(ArchiveError),
    #[error("{0}")]
    Cmd(String),
    #[error("{0}")]
    Install(String),
    #[error("{}", python_message(spec, need))]
    PythonVersion { spec: String, need: PythonNeed },
    #[error("{0}")]
    Io(String),
}

fn python_message(spec: &str, need: &PythonNeed) -> String {
    let found = need
        .found
        .as_deref()
        .map_or(String::new(), |f| format!(" found Python {f} and"));
    format!(
        "`{spec}` needs Python {}; uv{found} could not find or download an interpreter that satisfies it",
        need.requires
    )
}

/// A ready program, and how long getting it took.
#[derive(Debug)]
pub(crate) struct Ready {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) fetch_seconds: f64,
}

/// Download (at most `cap` bytes), check and unpack (at most `unpack_cap` bytes) a binary
/// target into `dest` (a fresh path), with the client library's own steps
/// ([`install::fetch_archive`], [`install::unpack`]), as every client installs it.
pub(crate) async fn binary(
    client: &Client,
    target: &BinaryTarget,
    cache: Option<&Path>,
    scratch: &Path,
    dest: &Path,
    (cap, unpack_cap): (u64, u64),
) -> Result<Ready, FetchError> {
    let started = Instant::now();
    let url = target.archive.clone().unwrap_or_default();
    let request = install::FetchRequest {
        url: &url,
        sha256: target.sha256.as_deref(),
        cap,
        cache,
        progress: None,
    };
    let fetched = install::fetch_archive(client, &request, scratch)
        .await
        .map_err(|e| match e {
            InstallError::Download { url, error } => FetchError::Download { url, error },
            InstallError::Sha256Mismatch {
                expected, actual, ..
            } => FetchError::Sha256 { expected, actual },
            other => FetchError::Io(other.to_string()),
        })?;
    install::unpack(&fetched.path, &url, dest, unpack_cap)
        .await
        .map_err(|e| match e {
            ArchiveError::Io { .. } | ArchiveError::Corrupt(_) => FetchError::Unpack(e),
            other => FetchError::Unsafe(other),
        })?;
    let cmd = target.cmd.clone().unwrap_or_default();
    let program = archive::resolve_cmd(dest, &cmd).map_err(FetchError::Cmd)?;
    Ok(Ready {
        program,
        args: target.args.clone(),
        fetch_seconds: started.elapsed().as_secs_f64(),
    })
}

/// A program on `PATH` (as the sandbox's environment gives it).
pub(crate) fn on_path(program: &str, path: Option<&str>) -> Option<PathBuf> {
    let exts: Vec<String> = if cfg!(windows) {
        vec![".exe".into(), ".cmd".into(), ".bat".into(), String::new()]
    } else {
        vec![String::new()]
    };
    std::env::split_paths(path?).find_map(|dir| {
        exts.iter()
            .map(|ext| dir.join(format!("{program}{ext}")))
            .find(|p| p.is_file())
    })
}

/// Install an npx or uvx package into the run's package cache, so the launch that follows
/// starts from a warm cache and measures the start alone: `npx --yes --package <spec> --
/// node --version`, or `uvx --from <spec> python -c pass` (the tool's environment, resolved
/// and installed, running its own interpreter). Confined like the agent, since installing
/// runs the package's scripts; a uvx install refused for the interpreter version is a
/// [`FetchError::PythonVersion`].
pub(crate) async fn package_install(
    launcher: &Path,
    package: &Package,
    env: &std::collections::BTreeMap<String, String>,
    cwd: &Path,
    confinement: &super::sandbox::Confinement,
    timeout: std::time::Duration,
) -> Result<f64, FetchError> {
    use std::process::Stdio;
    let started = Instant::now();
    let spec = package.spec.clone().unwrap_or_default();
    let kind = package.kind;
    let mut command = tokio::process::Command::new(launcher);
    match kind {
        Kind::Uvx => command.args(["--from", &spec, "python", "-c", "pass"]),
        _ => command.args(["--yes", "--package", &spec, "--", "node", "--version"]),
    };
    command
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let cannot_run = |e: std::io::Error| FetchError::Install(format!("cannot run {kind}: {e}"));
    let super::sandbox::Spawned {
        mut child,
        registration,
        ..
    } = super::sandbox::spawn(command, confinement).map_err(cannot_run)?;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let finished = tokio::time::timeout(timeout, async {
        let (_, stderr, status) = tokio::join!(
            install::read_tail(stdout),
            install::read_tail(stderr),
            child.wait()
        );
        status.map(|status| (status, stderr))
    })
    .await;
    let Ok(finished) = finished else {
        // What the install started ends before its keeper: nothing escapes.
        let token = env.get(super::sandbox::MARKER).map_or("", String::as_str);
        super::sandbox::terminate(child.id(), token, super::sandbox::GRACE).await;
        let _ = child.kill().await;
        return Err(FetchError::Install(format!(
            "installing `{spec}` took longer than {} s",
            timeout.as_secs()
        )));
    };
    let (status, stderr) = finished.map_err(cannot_run)?;
    drop(registration);
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr);
        if kind == Kind::Uvx {
            if let Some(need) = python_need(&stderr) {
                return Err(FetchError::PythonVersion { spec, need });
            }
        }
        let tail: String = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join(" | ");
        return Err(FetchError::Install(format!(
            "`{kind}` could not install `{spec}`: {tail}"
        )));
    }
    Ok(started.elapsed().as_secs_f64())
}

/// What Python a uvx package needs, read from uv's refusal to install it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PythonNeed {
    /// The version specifier the package (or a dependency) declares, such as `>=3.12`.
    pub(crate) requires: String,
    /// The interpreter uv had, when it says (`3.11.7`).
    pub(crate) found: Option<String>,
}

/// The interpreter-version cause in uv's stderr, if that is why it failed. uv 0.13 says one
/// of: "the current Python version (3.11.7) does not satisfy Python>=3.12 and …" (the index
/// declared the package's `Requires-Python`, and no interpreter uv has or could download
/// satisfies it), "acp-x==1.0.0 requires Python >=3.99 and …" (the same, learnt from the
/// wheel's metadata), or "No interpreter found for Python 3.99 in managed installations or
/// search path" (a requested version it cannot find or download).
pub(crate) fn python_need(stderr: &str) -> Option<PythonNeed> {
    const CURRENT: &str = "the current Python version (";
    let flat = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    let clause = |rest: &str| -> String {
        let end = [" and ", ", we ", ". ", " in "]
            .iter()
            .filter_map(|stop| rest.find(stop))
            .min()
            .unwrap_or(rest.len());
        rest[..end].trim_end_matches([',', '.']).trim().to_string()
    };
    if let Some(at) = flat.find(CURRENT) {
        let (found, rest) = flat[at + CURRENT.len()..].split_once(") does not satisfy ")?;
        let requires = clause(rest);
        return Some(PythonNeed {
            requires: requires
                .strip_prefix("Python")
                .unwrap_or(&requires)
                .trim()
                .to_string(),
            found: Some(found.to_string()),
        });
    }
    let at = ["requires Python ", "No interpreter found for Python "]
        .iter()
        .find_map(|marker| flat.find(marker).map(|at| at + marker.len()))?;
    Some(PythonNeed {
        requires: clause(&flat[at..]),
        found: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// uv 0.13.9's own words, as it said them on this project's CI machine (Python 3.11.7).
    const RESOLVER: &str = "Installed 1 package in 3ms\nerror: No solution found when resolving tool dependencies\n  cause: Because the current Python version (3.11.7) does not satisfy Python>=3.12,<3.15 and fast-agent-acp==0.9.20 depends on Python>=3.12,<3.15, we can conclude that fast-agent-acp==0.9.20 cannot be used.\n         And because you require fast-agent-acp==0.9.20, we can conclude that your requirements are unsatisfiable.\n";
    const NOT_FOUND: &str = "error: No interpreter found for Python 3.99 in managed installations or search path\n\nhint: uv embeds available Python downloads and may require an update to install new versions. Consider retrying on a newer version of uv.\n";
    const METADATA: &str = "error: No solution found when resolving tool dependencies\n  cause: Because acp-future-agent==1.0.0 requires Python >=3.99 and you require acp-future-agent==1.0.0, we can conclude that your requirements are unsatisfiable.\n";
    const OTHER: &str = "error: No solution found when resolving tool dependencies\n  cause: Because acp-nope was not found in the package registry and you require acp-nope==1.0.0, we can conclude that your requirements are unsatisfiable.\n";

    #[test]
    fn uv_s_interpreter_refusals_name_the_python_the_package_needs() {
        assert_eq!(
            python_need(RESOLVER),
            Some(PythonNeed {
                requires: ">=3.12,<3.15".into(),
                found: Some("3.11.7".into()),
            })
        );
        assert_eq!(
            python_need(METADATA),
            Some(PythonNeed {
                requires: ">=3.99".into(),
                found: None,
            })
        );
        assert_eq!(
            python_need(NOT_FOUND),
            Some(PythonNeed {
                requires: "3.99".into(),
                found: None,
            })
        );
    }

    #[test]
    fn other_install_failures_are_not_about_the_interpreter() {
        assert_eq!(python_need(OTHER), None);
        assert_eq!(python_need(""), None);
    }

    #[test]
    fn the_python_version_message_names_the_spec_the_need_and_what_uv_found() {
        let error = FetchError::PythonVersion {
            spec: "fast-agent-acp==0.9.20".into(),
            need: python_need(RESOLVER).unwrap(),
        };
        assert_eq!(
            error.to_string(),
            "`fast-agent-acp==0.9.20` needs Python >=3.12,<3.15; uv found Python 3.11.7 and could not find or download an interpreter that satisfies it"
        );
    }
}
