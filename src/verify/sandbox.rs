//! One agent's sandbox: fresh HOME, XDG and temporary folders, an environment built from an
//! allow-list, its own process group, and at the end every process it started terminated,
//! then killed, including grandchildren that left the group or ignore SIGTERM.
//!
//! On Linux the verifier is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so processes that
//! escape with `setsid` and lose their parent are reparented to us instead of init; each
//! sandbox marks its processes with a token in their environment, and the clean-up finds
//! them by walking `/proc` (descendants of the agent, and orphans carrying the token).
//! Other systems: the process group is killed, best effort.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Variables passed through from the verifier's environment: what finding programs and
/// decoding text need (`PATH` to find node, npx and uvx; the locale), how this machine
/// reaches the network (proxies, the CA bundle it trusts and an npm mirror: an editor's
/// agents inherit them, and npx cannot install behind an intercepting proxy without them;
/// manifests may not set them, `env-reserved`), and on Windows what processes need to start
/// at all. Everything else (tokens, CI variables, the user's HOME and npm configuration)
/// stays out.
const ALLOWED: [&str; 25] = [
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "npm_config_registry",
    "npm_config_cafile",
    "npm_config_proxy",
    "npm_config_https_proxy",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    "PROGRAMDATA",
];

/// The variable marking every process of one sandbox (inherited across fork, exec, setsid).
pub(crate) const MARKER: &str = "ACP_REGISTRY_VERIFY_SANDBOX";

/// Folders shared by all agents of one run: package caches are downloaded once per run.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    pub(crate) npm_cache: PathBuf,
    pub(crate) npm_prefix: PathBuf,
    pub(crate) uv_cache: PathBuf,
}

impl Shared {
    pub(crate) fn create(run_dir: &Path) -> std::io::Result<Shared> {
        let shared = Shared {
            npm_cache: run_dir.join("npm-cache"),
            npm_prefix: run_dir.join("npm-prefix"),
            uv_cache: run_dir.join("uv-cache"),
        };
        for dir in [&shared.npm_cache, &shared.npm_prefix, &shared.uv_cache] {
            std::fs::create_dir_all(dir)?;
        }
        Ok(shared)
    }
}

#[derive(Debug)]
pub(crate) struct Sandbox {
    pub(crate) root: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) tmp: PathBuf,
    /// The agent's working directory (and `session/new`'s `cwd`).
    pub(crate) workspace: PathBuf,
    pub(crate) token: String,
}

impl Sandbox {
    /// Fresh folders under `root` (which must not exist).
    pub(crate) fn create(root: &Path) -> std::io::Result<Sandbox> {
        std::fs::create_dir(root)?;
        let sandbox = Sandbox {
            root: root.to_path_buf(),
            home: root.join("home"),
            tmp: root.join("tmp"),
            workspace: root.join("workspace"),
            token: format!("{}-{:016x}", std::process::id(), fastrand::u64(..)),
        };
        for dir in [
            "home",
            "tmp",
            "workspace",
            "xdg/config",
            "xdg/cache",
            "xdg/data",
            "xdg/state",
        ] {
            std::fs::create_dir_all(root.join(dir))?;
        }
        Ok(sandbox)
    }

    /// The whole environment of the agent: the allow-list, the sandbox's folders, the
    /// run's package caches, then the manifest's `env` without reserved names.
    pub(crate) fn environment(
        &self,
        shared: &Shared,
        manifest_env: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        let mut env: BTreeMap<String, String> = ALLOWED
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        let path = |p: &Path| p.display().to_string();
        let xdg = |d: &str| path(&self.root.join("xdg").join(d));
        let fixed = [
            ("HOME", path(&self.home)),
            ("USERPROFILE", path(&self.home)),
            ("XDG_CONFIG_HOME", xdg("config")),
            ("XDG_CACHE_HOME", xdg("cache")),
            ("XDG_DATA_HOME", xdg("data")),
            ("XDG_STATE_HOME", xdg("state")),
            ("TMPDIR", path(&self.tmp)),
            ("TEMP", path(&self.tmp)),
            ("TMP", path(&self.tmp)),
            ("npm_config_cache", path(&shared.npm_cache)),
            ("npm_config_prefix", path(&shared.npm_prefix)),
            ("npm_config_update_notifier", "false".into()),
            ("npm_config_fund", "false".into()),
            ("npm_config_audit", "false".into()),
            ("UV_CACHE_DIR", path(&shared.uv_cache)),
            ("UV_TOOL_DIR", path(&shared.uv_cache.join("tools"))),
            ("NO_COLOR", "1".into()),
            (MARKER, self.token.clone()),
        ];
        env.extend(fixed.into_iter().map(|(k, v)| (k.to_string(), v)));
        // npm reads neither variable; pointed at the bundle the machine names, it trusts
        // what node and the other tools trust here.
        if !env.contains_key("npm_config_cafile") {
            let bundle = env
                .get("NODE_EXTRA_CA_CERTS")
                .or_else(|| env.get("SSL_CERT_FILE"))
                .cloned();
            env.extend(bundle.map(|b| ("npm_config_cafile".to_string(), b)));
        }
        for (key, value) in manifest_env {
            if !crate::rules::reserved_env(key) && !env.contains_key(key) {
                env.insert(key.clone(), value.clone());
            }
        }
        env
    }
}

/// Make this process the subreaper of everything it starts (Linux); elsewhere a no-op.
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Every process of the sandbox: the agent's process group, its descendants, and orphans
/// reparented to us that carry the sandbox's token.
#[cfg(target_os = "linux")]
fn members(agent: u32, token: &str) -> Vec<i32> {
    let table = proc_table();
    let me = std::process::id() as i32;
    let mut found: Vec<i32> = vec![agent as i32];
    add_descendants(&mut found, &table, 0);
    let marker = format!("{MARKER}={token}");
    for (pid, ppid) in &table {
        if (*ppid == me || *ppid == 1) && !found.contains(pid) && environ_has(*pid, &marker) {
            found.push(*pid);
        }
    }
    // Grandchildren of orphans found through the token.
    add_descendants(&mut found, &table, 1);
    found
}

/// Appends to `found` every descendant in `table` (pid, parent pid) of `found[from..]`,
/// including those of the processes it appends.
#[cfg(target_os = "linux")]
fn add_descendants(found: &mut Vec<i32>, table: &[(i32, i32)], from: usize) {
    let mut i = from;
    while i < found.len() {
        let parent = found[i];
        for (pid, ppid) in table {
            if *ppid == parent && !found.contains(pid) {
                found.push(*pid);
            }
        }
        i += 1;
    }
}

#[cfg(target_os = "linux")]
fn proc_table() -> Vec<(i32, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect()
}

#[cfg(target_os = "linux")]
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn environ_has(pid: i32, marker: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == marker.as_bytes()))
}

#[cfg(all(unix, not(target_os = "linux")))]
fn members(agent: u32, _token: &str) -> Vec<i32> {
    vec![agent as i32]
}

/// Terminate every process of the sandbox: SIGTERM to the group and each member, up to
/// `grace` for them to exit, then SIGKILL to whatever is left; orphans reparented to us
/// are reaped so no zombie stays.
#[cfg(unix)]
pub(crate) async fn terminate(agent: Option<u32>, token: &str, grace: Duration) {
    let Some(agent) = agent else { return };
    let signal_all = |pids: &[i32], signal: i32| {
        // SAFETY: kill(2) with a pid and a signal number.
        unsafe {
            libc::kill(-(agent as i32), signal);
            for pid in pids {
                libc::kill(*pid, signal);
            }
        }
    };
    let pids = members(agent, token);
    signal_all(&pids, libc::SIGTERM);
    let deadline = std::time::Instant::now() + grace;
    loop {
        reap(&pids, agent);
        let left = alive(&members(agent, token));
        if left.is_empty() {
            return;
        }
        if std::time::Instant::now() >= deadline {
            // Members may have forked since: take the list again.
            signal_all(&left, libc::SIGKILL);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for _ in 0..100 {
        reap(&pids, agent);
        if alive(&members(agent, token)).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(unix)]
fn alive(pids: &[i32]) -> Vec<i32> {
    pids.iter()
        .copied()
        .filter(|pid| {
            // A zombie still answers kill(0); read its state where we can.
            #[cfg(target_os = "linux")]
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                let state = stat
                    .rfind(')')
                    .and_then(|i| stat[i + 1..].split_whitespace().next());
                return state != Some("Z") && state != Some("X");
            }
            // SAFETY: signal 0 only checks existence.
            unsafe { libc::kill(*pid, 0) == 0 }
        })
        .collect()
}

/// Reap exited members reparented to us (never the agent itself: tokio waits for it).
#[cfg(unix)]
fn reap(pids: &[i32], agent: u32) {
    for pid in pids.iter().filter(|p| **p != agent as i32) {
        let mut status = 0;
        // SAFETY: non-blocking wait for one specific pid; ECHILD when it is not our child.
        unsafe {
            libc::waitpid(*pid, &mut status, libc::WNOHANG);
        }
    }
}

#[cfg(not(unix))]
pub(crate) async fn terminate(_agent: Option<u32>, _token: &str, _grace: Duration) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_the_allow_list_the_sandbox_and_the_manifest_minus_reserved() {
        let dir = tempfile::tempdir().unwrap();
        let shared = Shared::create(dir.path()).unwrap();
        let sandbox = Sandbox::create(&dir.path().join("a")).unwrap();
        let manifest = BTreeMap::from([
            ("AGENT_MODE".to_string(), "acp".to_string()),
            ("LD_PRELOAD".to_string(), "/x.so".to_string()),
            ("HOME".to_string(), "/root".to_string()),
        ]);
        let env = sandbox.environment(&shared, &manifest);
        assert_eq!(env["HOME"], sandbox.home.display().to_string());
        assert_eq!(env["AGENT_MODE"], "acp");
        assert!(!env.contains_key("LD_PRELOAD"));
        assert!(!env.contains_key("GITHUB_TOKEN"));
        assert_eq!(env[MARKER], sandbox.token);
        assert!(env["npm_config_cache"].ends_with("npm-cache"));
    }
}
