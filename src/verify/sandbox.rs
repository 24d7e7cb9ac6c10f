//! One agent's sandbox: fresh HOME, XDG and temporary folders (0700), an environment built
//! from an allow-list, and a launch that confines what it starts; at the end every process
//! it started is terminated, then killed ([`reap`]).
//!
//! Linux ([`confine`]): the verifier is not dumpable while agents run, so an agent running as
//! its user cannot read `/proc/<verifier>/environ`; each agent runs under a keeper process of
//! ours, in a user and PID namespace of its own where the kernel allows (killing the
//! namespace's init kills all of it, and the init mounts the namespace's own `/proc`), else
//! with the keeper as its subreaper; keepers die with the verifier, however it ends;
//! descriptors above 2 are closed at exec; Landlock lets it write only to its sandbox and
//! the run's caches and read only those, its unpacked program and the allow-list of
//! [`reads`]. What applied is reported per agent ([`Isolation`]); a machine without some of
//! it runs the agent anyway. Other Unix systems: its own process group and descriptors above 2
//! closed, nothing else. Windows: none of it.
//!
//! The environment is an allow-list (PATH, locale, proxies, CA bundle, an npm mirror, Windows
//! essentials) plus the run's caches and the manifest's `env` minus `rules::reserved_env`; a token
//! variable marks the sandbox's processes (test only: `UV_DEFAULT_INDEX` from
//! `ACP_REGISTRY_TEST_UV_INDEX`). Isolation comes from what the machine offers unprivileged and is
//! never required: a pull request's agent runs as the verifier's user, Landlock is applied best
//! effort down to ABI 2 and not at all on ABI 1 (whose rename restriction breaks npm and uv), and
//! each layer the kernel lacks is reported in `isolation`, not turned into a finding. Making the
//! keeper dumpable to write its namespace's id maps would expose the verifier's memory, so an
//! unprivileged user's agents run with unmapped ids.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use tokio::process::{Child, Command};

#[cfg(target_os = "linux")]
mod confine;
mod marker;
#[cfg(target_os = "linux")]
mod reads;
mod reap;

pub(crate) use marker::MARKER;
pub(crate) use reap::{terminate, Containment, Registration};

/// Grace between SIGTERM and SIGKILL at the end of each agent.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

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

/// Folders shared by all agents of one run: package caches are downloaded once per run.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    pub(crate) npm_cache: PathBuf,
    pub(crate) npm_prefix: PathBuf,
    pub(crate) uv_cache: PathBuf,
    /// TEST ONLY ([`super::options::TEST_UV_INDEX_ENV`]): the loopback package index uv installs
    /// from instead of its default.
    pub(crate) uv_test_index: Option<String>,
    /// What every agent of the run may read besides its own folder (see `reads.rs`).
    readable: Vec<PathBuf>,
}

impl Shared {
    /// The caches of a run in `run_dir` of the registry at `registry`, and its read allow-list.
    pub(crate) fn create(run_dir: &Path, registry: &Path) -> std::io::Result<Shared> {
        #[cfg(target_os = "linux")]
        let readable = reads::Host::current(registry, run_dir).allowed();
        #[cfg(not(target_os = "linux"))]
        let readable = {
            let _ = registry;
            Vec::new()
        };
        let shared = Shared {
            npm_cache: run_dir.join("npm-cache"),
            npm_prefix: run_dir.join("npm-prefix"),
            uv_cache: run_dir.join("uv-cache"),
            uv_test_index: None,
            readable,
        };
        for dir in [&shared.npm_cache, &shared.npm_prefix, &shared.uv_cache] {
            private_dirs(dir)?;
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
        private_dir(root)?;
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
            private_dirs(&root.join(dir))?;
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
        if let Some(index) = &shared.uv_test_index {
            env.insert("UV_DEFAULT_INDEX".into(), index.clone());
        }
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

impl Sandbox {
    /// Where the agent may write: its sandbox and the run's package caches; what else it
    /// may read and execute: `program` (the folder its program was unpacked into) and the
    /// run's allow-list.
    pub(crate) fn confinement(&self, shared: &Shared, program: &Path) -> Confinement {
        let mut readable = shared.readable.clone();
        readable.push(program.to_path_buf());
        Confinement {
            writable: vec![
                self.root.clone(),
                shared.npm_cache.clone(),
                shared.npm_prefix.clone(),
                shared.uv_cache.clone(),
            ],
            readable,
        }
    }
}

/// A new folder only its owner can enter (`path` must not exist; its parent must).
pub(crate) fn private_dir(path: &Path) -> std::io::Result<()> {
    folder_builder(false).create(path)
}

/// A folder and whatever of its parents is missing, each created only its owner can enter.
pub(crate) fn private_dirs(path: &Path) -> std::io::Result<()> {
    folder_builder(true).create(path)
}

fn folder_builder(recursive: bool) -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(recursive);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// Where one agent may write, and what else it may read (Landlock, on Linux).
#[derive(Debug)]
pub(crate) struct Confinement {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    writable: Vec<PathBuf>,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    readable: Vec<PathBuf>,
}

/// What isolation an agent got: the `isolation` of `verify --format json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Isolation {
    /// Landlock's restriction of writes to the sandbox, signals and abstract sockets.
    pub(crate) landlock: Landlock,
    /// Whether Landlock confined its reads to the allow-list.
    pub(crate) reads: Reads,
    /// Which `/proc` it saw.
    pub(crate) proc: ProcView,
    /// A PID namespace of its own: everything it starts ends with it.
    pub(crate) pid_namespace: bool,
    /// A user namespace of its own: no capability over the verifier's processes.
    pub(crate) user_namespace: bool,
    /// Whether the verifier was dumpable (its `/proc` files readable by its user).
    pub(crate) verifier_dumpable: bool,
}

/// How much of the Landlock rules the kernel enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Landlock {
    /// Every right asked for (Landlock ABI 6 or later).
    Full,
    /// Writes restricted, not everything (ABI 2 to 5: no scopes, or no ioctl right).
    Partial,
    /// Not enforced: no Landlock, ABI 1, or the ruleset could not be applied.
    Unavailable,
}

/// Whether the agent's reads were confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Reads {
    /// Landlock let it read only the allow-list (docs/format.md).
    Landlock,
    /// It read whatever the verifier's user reads.
    Unrestricted,
}

/// The `/proc` the agent saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ProcView {
    /// A fresh one of its PID namespace: its own processes only.
    Private,
    /// The machine's: every process's command line (not their environment).
    Host,
}

#[cfg(not(target_os = "linux"))]
impl Isolation {
    const NONE: Isolation = Isolation {
        landlock: Landlock::Unavailable,
        reads: Reads::Unrestricted,
        proc: ProcView::Host,
        pid_namespace: false,
        user_namespace: false,
        verifier_dumpable: true,
    };
}

/// A started agent (or install): the process to wait on, what isolation applied, and the
/// registration that tells the clean-up the process is ours (drop it once waited for).
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) isolation: Isolation,
    pub(crate) registration: Registration,
}

/// Start `command` confined: in a process group of its own, and on Linux under a keeper in
/// namespaces where allowed, with Landlock and no inherited descriptor.
pub(crate) fn spawn(command: Command, confinement: &Confinement) -> std::io::Result<Spawned> {
    #[cfg(target_os = "linux")]
    return spawn_linux(command, confinement);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = confinement;
        let mut command = command;
        #[cfg(unix)]
        {
            command.process_group(0);
            // SAFETY: fcntl(2) on this process's descriptors only, between fork and exec.
            unsafe { command.pre_exec(close_on_exec_above_stdio) };
        }
        let (child, registration) = reap::spawn_registered(&mut command)?;
        Ok(Spawned {
            child,
            isolation: Isolation::NONE,
            registration,
        })
    }
}

#[cfg(target_os = "linux")]
fn spawn_linux(mut command: Command, confinement: &Confinement) -> std::io::Result<Spawned> {
    use std::io::Read;
    let (reader, writer) = std::io::pipe()?;
    let ruleset = confine::ruleset(&confinement.writable, &confinement.readable);
    let mut plan = confine::Plan::new(ruleset, &writer);
    command.process_group(0);
    // SAFETY: Plan::run_in_child is async-signal-safe (see confine.rs).
    unsafe { command.pre_exec(move || plan.run_in_child()) };
    let spawned = reap::spawn_registered(&mut command);
    drop(command);
    drop(writer);
    // Every copy of the writer is closed now (by exec or exit): read to the end and keep
    // the last report (a retried "text file busy" reports once per attempt).
    let mut reports = Vec::new();
    let _ = (&reader).take(64).read_to_end(&mut reports);
    let (child, registration) = spawned?;
    let flags = confine::read_report(reports.last().copied()).unwrap_or(0);
    let landlock = if flags & confine::LANDLOCK_FULL != 0 {
        Landlock::Full
    } else if flags & confine::LANDLOCK_PARTIAL != 0 {
        Landlock::Partial
    } else {
        Landlock::Unavailable
    };
    let isolation = Isolation {
        landlock,
        reads: if landlock == Landlock::Unavailable {
            Reads::Unrestricted
        } else {
            Reads::Landlock
        },
        proc: if flags & confine::PRIVATE_PROC == 0 {
            ProcView::Host
        } else {
            ProcView::Private
        },
        pid_namespace: flags & confine::PID_NAMESPACE != 0,
        user_namespace: flags & confine::USER_NAMESPACE != 0,
        verifier_dumpable: reap::dumpable(),
    };
    Ok(Spawned {
        child,
        isolation,
        registration,
    })
}

/// Descriptors above 2 closed at exec, where no `/proc` lists them: every number below
/// the limit (at most 65,536).
#[cfg(all(unix, not(target_os = "linux")))]
fn close_on_exec_above_stdio() -> std::io::Result<()> {
    // SAFETY: sysconf and fcntl(2) on this process's descriptors.
    unsafe {
        let top = libc::sysconf(libc::_SC_OPEN_MAX).clamp(3, 65_536) as i32;
        for fd in 3..top {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_the_allow_list_the_sandbox_and_the_manifest_minus_reserved() {
        let dir = tempfile::tempdir().unwrap();
        let shared = Shared::create(dir.path(), dir.path()).unwrap();
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

    /// The keeper's parent-death signal is sent when the *thread* that forked it ends: an
    /// agent started from a thread that ends at once must still run to its end.
    #[test]
    #[cfg(target_os = "linux")]
    fn an_agent_outlives_the_thread_of_the_verifier_that_started_it() {
        let dir = tempfile::tempdir().unwrap();
        let shared = Shared::create(dir.path(), dir.path()).unwrap();
        let sandbox = Sandbox::create(&dir.path().join("a")).unwrap();
        let confinement = sandbox.confinement(&shared, dir.path());
        let runtime = crate::net::runtime().unwrap();
        let handle = runtime.handle().clone();
        let Spawned {
            child,
            registration,
            ..
        } = std::thread::spawn(move || {
            let _entered = handle.enter();
            let mut command = Command::new("/bin/sh");
            command
                .args(["-c", "sleep 1; echo done"])
                .stdout(std::process::Stdio::piped());
            spawn(command, &confinement).unwrap()
        })
        .join()
        .unwrap();
        let output = runtime.block_on(child.wait_with_output()).unwrap();
        drop(registration);
        assert!(output.status.success(), "{:?}", output.status);
        assert_eq!(output.stdout, b"done\n");
    }
}
