//! npx and uvx packages, installed ahead of the first launch so that launching needs no
//! network and starts fast.
//!
//! npx: `npm install` of the pinned spec into the install folder (`npm/`, with npm's cache in
//! `<root>/packages/npm`), the package's install scripts allowed (agents with native parts
//! need them, and `npx` would run them too); the program is the package's `bin` file, run by
//! its `#!` line (`node <file>` on Windows), with no npm or npx at launch.
//! uvx: `uvx --from <spec> python -c pass` once with `UV_CACHE_DIR=<root>/packages/uv`, which
//! resolves, downloads and builds the tool's environment into that cache; the launch is
//! `uvx --offline <spec> <args>` with the same `UV_CACHE_DIR`, which reuses the cached
//! environment and never asks an index. (A virtual environment of its own cannot be built in
//! `tmp/` and renamed into place: its scripts name their interpreter by absolute path.)

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use super::error::{unusable, InstallError};
use super::options::{report, InstallOptions, Progress};
use crate::platform::Kind;
use crate::resolve::Resolution;
use crate::store::{Receipt, Store};

/// The largest `package.json` read.
const MAX_PACKAGE_JSON: u64 = 1024 * 1024;

/// Install the package of `resolution` (npx or uvx) into `staged`: the receipt (not written).
pub(super) async fn install(
    store: &Store,
    resolution: &Resolution,
    options: &InstallOptions,
    staged: &Path,
) -> Result<Receipt, InstallError> {
    let package = resolution
        .package
        .as_ref()
        .ok_or_else(|| unusable(resolution, "no package for its kind"))?;
    let spec = package.package.trim().to_string();
    report(options, &Progress::Installing);
    if resolution.kind == Kind::Uvx {
        let uv_cache = store.root().join("packages").join("uv");
        let mut env = resolution.env.clone();
        env.insert("UV_CACHE_DIR".into(), uv_cache.display().to_string());
        let args = ["--from", &spec, "python", "-c", "pass"];
        run("uvx", &args, &env, &spec, options).await?;
        let mut receipt = Receipt::new(resolution, "uvx".into(), None);
        receipt.args = ["--offline".to_string(), spec]
            .into_iter()
            .chain(resolution.args.iter().cloned())
            .collect();
        receipt.env = env;
        return Ok(receipt);
    }
    let prefix = staged.join("npm");
    std::fs::create_dir(&prefix).map_err(crate::store::io_at(&prefix))?;
    // A manifest of our own, so npm records the installed package's name under
    // `dependencies` whatever form the spec has (name@version, alias, tarball URL).
    let manifest = prefix.join("package.json");
    acp_registry_core::fs::atomic::write(
        &manifest,
        br#"{"name":"acp-registry-install","private":true}"#,
    )
    .map_err(crate::store::io_at(&manifest))?;
    let mut env = resolution.env.clone();
    let npm_cache = store.root().join("packages").join("npm");
    env.insert("npm_config_cache".into(), npm_cache.display().to_string());
    env.insert("npm_config_update_notifier".into(), "false".into());
    let prefix_arg = prefix.display().to_string();
    let args = [
        "install",
        "--prefix",
        &prefix_arg,
        "--no-audit",
        "--no-fund",
        "--save-exact",
        &spec,
    ];
    run("npm", &args, &env, &spec, options).await?;
    let program = npm_bin(&prefix, &spec)?;
    Ok(Receipt::new(resolution, format!("npm/{program}"), None))
}

/// The installed package's `bin` file, relative to `prefix`: `bin` when it is a string,
/// else the entry named like the unscoped package, else the only entry.
fn npm_bin(prefix: &Path, spec: &str) -> Result<String, InstallError> {
    let fail = |reason: String| InstallError::Program {
        source_name: spec.to_string(),
        reason,
    };
    let read = |rel: &str| -> Result<serde_json::Value, InstallError> {
        let bytes = acp_registry_core::fs::read_capped(prefix, Path::new(rel), MAX_PACKAGE_JSON)
            .map_err(|e| fail(format!("{rel}: {e}")))?;
        serde_json::from_slice(&bytes).map_err(|e| fail(format!("{rel}: {e}")))
    };
    let ours = read("package.json")?;
    let deps = ours.get("dependencies").and_then(|d| d.as_object());
    let name = match deps.map(|d| d.keys().collect::<Vec<_>>()).as_deref() {
        Some([name]) => (*name).clone(),
        _ => return Err(fail("npm did not record the package it installed".into())),
    };
    let safe = name
        .split('/')
        .all(|part| !part.is_empty() && part != "." && part != "..");
    if !safe || name.matches('/').count() > 1 || name.contains('\\') {
        return Err(fail(format!("`{name}` is not a package name")));
    }
    let dir = format!("node_modules/{name}");
    let manifest = read(&format!("{dir}/package.json"))?;
    let unscoped = name.rsplit('/').next().unwrap_or(&name);
    let bin = match manifest.get("bin") {
        Some(serde_json::Value::String(bin)) => Some(bin.clone()),
        Some(serde_json::Value::Object(map)) => map
            .get(unscoped)
            .or_else(|| (map.len() == 1).then(|| map.values().next()).flatten())
            .and_then(|v| v.as_str())
            .map(str::to_string),
        _ => None,
    };
    let bin = bin.ok_or_else(|| {
        fail(format!(
            "`{name}` has no `bin` to run (a string, an entry named `{unscoped}`, or a single entry)"
        ))
    })?;
    let rel = bin.trim_start_matches("./");
    let program = format!("{dir}/{rel}");
    let path = crate::store::program_path(prefix, Kind::Npx, &program).ok_or_else(|| {
        fail(format!(
            "its `bin` `{bin}` is not a file inside the package"
        ))
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).map_or(0o644, |m| m.permissions().mode());
        std::fs::set_permissions(
            &path,
            std::fs::Permissions::from_mode((mode & 0o755) | 0o700),
        )
        .map_err(|e| fail(format!("cannot make `{bin}` executable: {e}")))?;
    }
    Ok(program)
}

/// Run `program args` with `env` over the inherited environment, no stdin, stopped (with
/// its whole process group) after the options' timeout; on failure the end of its stderr.
async fn run(
    program: &str,
    args: &[&str],
    env: &BTreeMap<String, String>,
    spec: &str,
    options: &InstallOptions,
) -> Result<(), InstallError> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|error| InstallError::Launcher {
        program: program.into(),
        spec: spec.into(),
        error,
    })?;
    let stderr = child.stderr.take();
    let finished = tokio::time::timeout(options.package_timeout, async {
        let (tail, status) = tokio::join!(read_tail(stderr), child.wait());
        status.map(|status| (status, tail))
    })
    .await;
    let Ok(finished) = finished else {
        kill_group(&mut child).await;
        return Err(InstallError::Timeout {
            spec: spec.into(),
            seconds: options.package_timeout.as_secs(),
        });
    };
    let (status, tail) = finished.map_err(|error| InstallError::Launcher {
        program: program.into(),
        spec: spec.into(),
        error,
    })?;
    if status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&tail);
    let mut lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let keep = lines.len().saturating_sub(5);
    lines.drain(..keep);
    Err(InstallError::Package {
        program: program.into(),
        spec: spec.into(),
        tail: if lines.is_empty() {
            format!("it exited with {status}")
        } else {
            lines.join(" | ")
        },
    })
}

/// Stop the installer and everything it started (its process group on Unix).
async fn kill_group(child: &mut tokio::process::Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
        // SAFETY: kill(2) with a negative pid signals the group we created for the child.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill().await;
}

/// The last 64 KiB of a child's pipe, read to its end (nothing without one): what an
/// installer's error message quotes. Also `verify`'s.
#[doc(hidden)]
pub async fn read_tail<R: tokio::io::AsyncRead + Unpin>(pipe: Option<R>) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    const KEPT: usize = 64 * 1024;
    let mut tail = Vec::new();
    let Some(mut pipe) = pipe else {
        return tail;
    };
    let mut buffer = vec![0u8; 16 * 1024];
    while let Ok(n @ 1..) = pipe.read(&mut buffer).await {
        tail.extend_from_slice(&buffer[..n]);
        let excess = tail.len().saturating_sub(KEPT);
        tail.drain(..excess);
    }
    tail
}
