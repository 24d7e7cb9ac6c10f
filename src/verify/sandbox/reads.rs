//! What an agent may read (and execute) besides its own run folder: the read allow-list
//! Landlock enforces, computed once per run in the verifier, before any fork.
//!
//! Allowed: the system folders that exist ([`SYSTEM`]), every child of `/etc` but the secrets
//! of [`ETC_DENIED`] (and the target of each `/etc` entry that is a symbolic link), each
//! absolute `PATH` folder, the install prefix of the launchers and interpreters agents need
//! ([`PREFIXED`]: the folder above the one holding the file found on `PATH`, links resolved,
//! e.g. `~/.nvm/versions/node/v20`), and the files and folders the CA-bundle variables passed
//! to agents name ([`CA_VARIABLES`]). Never allowed: anything that is, or contains, a protected
//! root: `/`, the verifier's HOME and the credential stores in it ([`HOME_SECRETS`]), its
//! current folder; nor anything at, above or inside a sealed root: the checkout around the
//! current folder and around the registry (the nearest folder above holding `.git`), the
//! registry, `$GITHUB_WORKSPACE`, `$RUNNER_TEMP` and the run folder (other agents' sandboxes).
//! Such a candidate is left out, not narrowed, but for a system folder holding such a root
//! (a checkout in `/usr/src/app`), which is replaced by its children down to the root's folder. A folder inside HOME (`~/.local/bin`,
//! `~/.nvm/versions/node/v20`) is allowed; HOME itself is not, nor `~/.local` (it holds
//! `~/.local/share`) or `~/.cargo` (it holds crates.io's token).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// System folders allowed when they exist (`/proc` is added by the agent itself, after its
/// private `/proc` is mounted).
const SYSTEM: [&str; 10] = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/nix/store",
    "/sys",
    "/dev",
];

/// Paths under `/etc` never allowed: password hashes, sudo rules, SSH host keys, private TLS
/// and VPN keys, Kerberos keytabs, Wi-Fi and network secrets, systemd credentials and
/// registry logins. A trailing `*` matches any name with that start.
const ETC_DENIED: [&str; 25] = [
    "shadow*",
    "gshadow*",
    "master.passwd",
    "sudoers*",
    "doas.conf",
    "ssh",
    "ssl/private",
    "pki/tls/private",
    "pki/CA/private",
    "security/opasswd",
    "krb5.keytab",
    "ipsec.secrets",
    "ipsec.d/private",
    "ppp/chap-secrets",
    "ppp/pap-secrets",
    "openvpn",
    "wireguard",
    "wpa_supplicant",
    "NetworkManager/system-connections",
    "letsencrypt",
    "credstore",
    "credstore.encrypted",
    "containers/auth.json",
    "docker/key.json",
    "cups/ssl",
];

/// Credential stores in the verifier's HOME: no allowed folder may hold one, so an install
/// prefix such as `~/.cargo` (for `~/.cargo/bin/uv`) or `~/.local` is left out while its
/// `bin` folder on `PATH` stays allowed.
const HOME_SECRETS: [&str; 18] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".docker",
    ".kube",
    ".config",
    ".local/share",
    ".local/state",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".gitconfig",
    ".password-store",
];

/// Launchers and interpreters whose install prefix agents read: npm's own modules, Python's
/// standard library, a version manager's shims and versions.
const PREFIXED: [&str; 6] = ["node", "npm", "npx", "python3", "uv", "uvx"];

/// Variables passed to agents that name CA bundles (files, or for `SSL_CERT_DIR` folders
/// separated like `PATH`).
const CA_VARIABLES: [&str; 5] = [
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "npm_config_cafile",
    "REQUESTS_CA_BUNDLE",
];

/// What the allow-list is computed from: the machine's folders and the verifier's
/// environment (a test passes its own).
#[derive(Debug, Clone, Default)]
pub(crate) struct Host {
    /// Candidate system folders (kept when they exist).
    pub(crate) system: Vec<PathBuf>,
    /// The folder whose children are allowed but for [`ETC_DENIED`].
    pub(crate) etc: PathBuf,
    /// `PATH`.
    pub(crate) path: Option<OsString>,
    /// The values of [`CA_VARIABLES`] that are set.
    pub(crate) ca: Vec<(String, OsString)>,
    /// Folders nothing allowed may be or contain.
    pub(crate) protected: Vec<PathBuf>,
    /// Folders nothing allowed may be, contain or lie inside.
    pub(crate) sealed: Vec<PathBuf>,
}

impl Host {
    /// This machine, for a run in `run_dir` of the registry at `registry`.
    pub(crate) fn current(registry: &Path, run_dir: &Path) -> Host {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let cwd = std::env::current_dir().ok();
        let mut protected = vec![PathBuf::from("/")];
        protected.extend(cwd.clone());
        if let Some(home) = var("HOME") {
            protected.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
            protected.push(home);
        }
        let mut sealed = vec![run_dir.to_path_buf(), registry.to_path_buf()];
        sealed.extend(
            cwd.iter()
                .chain([&registry.to_path_buf()])
                .filter_map(|s| checkout_of(s)),
        );
        sealed.extend(
            ["GITHUB_WORKSPACE", "RUNNER_TEMP"]
                .into_iter()
                .filter_map(var),
        );
        Host {
            system: SYSTEM.iter().map(PathBuf::from).collect(),
            etc: PathBuf::from("/etc"),
            path: std::env::var_os("PATH"),
            ca: CA_VARIABLES
                .iter()
                .filter_map(|k| std::env::var_os(k).map(|v| (k.to_string(), v)))
                .collect(),
            protected,
            sealed,
        }
    }

    /// The read allow-list: every path that exists and is neither nor contains a protected
    /// root, deduplicated, links resolved.
    pub(crate) fn allowed(&self) -> Vec<PathBuf> {
        let both = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths
                .iter()
                .flat_map(|p| [p.clone(), canonical(p).unwrap_or_else(|| p.clone())])
                .collect()
        };
        let (protected, sealed) = (both(&self.protected), both(&self.sealed));
        let roots: Vec<&Path> = protected
            .iter()
            .chain(&sealed)
            .map(PathBuf::as_path)
            .collect();
        let mut candidates = Vec::new();
        for system in self.system.iter().filter_map(|s| canonical(s)) {
            narrowed(&system, &roots, SYSTEM_DEPTH, &mut candidates);
        }
        etc_children(&self.etc, Path::new(""), &mut candidates);
        let path_dirs: Vec<PathBuf> = self
            .path
            .iter()
            .flat_map(std::env::split_paths)
            .filter(|d| d.is_absolute())
            .collect();
        candidates.extend(path_dirs.iter().cloned());
        for program in PREFIXED {
            let found = path_dirs
                .iter()
                .map(|d| d.join(program))
                .find(|p| p.is_file());
            candidates.extend(found.as_deref().and_then(prefix_of));
        }
        for (name, value) in &self.ca {
            if name == "SSL_CERT_DIR" {
                candidates.extend(std::env::split_paths(value));
            } else {
                candidates.push(PathBuf::from(value));
            }
        }
        let mut seen = BTreeSet::new();
        candidates
            .into_iter()
            .filter_map(|c| canonical(&c))
            .filter(|c| !protected.iter().any(|p| p.starts_with(c)))
            .filter(|c| !sealed.iter().any(|s| s.starts_with(c) || c.starts_with(s)))
            .filter(|c| seen.insert(c.clone()))
            .collect()
    }
}

/// How deep a system folder is narrowed around a protected root inside it.
const SYSTEM_DEPTH: usize = 12;

/// Pushes `folder` onto `out`, or, when a protected or sealed root lies strictly inside it (a
/// checkout in `/usr/src/app`, as container images often have), its children instead,
/// narrowed the same way down to the root's own folder, which is left out: a system folder
/// holding the checkout still lends the agent its libraries.
fn narrowed(folder: &Path, roots: &[&Path], depth: usize, out: &mut Vec<PathBuf>) {
    let inside = |r: &&Path| r.starts_with(folder) && *r != folder;
    if !roots.iter().any(inside) {
        out.push(folder.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    if depth == 0 || roots.contains(&folder) {
        return;
    }
    let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    children.sort();
    for child in children {
        narrowed(&child, roots, depth - 1, out);
    }
}

/// The nearest folder at or above `start` holding `.git`: the checkout it is in.
fn checkout_of(start: &Path) -> Option<PathBuf> {
    let start = canonical(start)?;
    start
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .map(Path::to_path_buf)
}

/// The install prefix of the program at `file`: the folder above the one holding it once
/// links are resolved (`/usr/bin/node` → `/usr`, a pyenv shim → `~/.pyenv`).
fn prefix_of(file: &Path) -> Option<PathBuf> {
    Some(canonical(file)?.parent()?.parent()?.to_path_buf())
}

/// Pushes the children of `etc` joined with `relative` minus [`ETC_DENIED`] onto `out`,
/// descending into the folders that hold a denied path.
fn etc_children(etc: &Path, relative: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(etc.join(relative)) else {
        return;
    };
    let mut names: Vec<OsString> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        let child = relative.join(&name);
        match etc_rule(&child) {
            EtcRule::Denied => {}
            EtcRule::Descend => etc_children(etc, &child, out),
            EtcRule::Allowed => out.push(etc.join(&child)),
        }
    }
}

enum EtcRule {
    Allowed,
    Denied,
    /// A folder holding a denied path: its other children are allowed.
    Descend,
}

fn etc_rule(relative: &Path) -> EtcRule {
    let text = relative.to_string_lossy();
    let mut rule = EtcRule::Allowed;
    for denied in ETC_DENIED {
        let matched = match denied.strip_suffix('*') {
            Some(start) => text.starts_with(start) && !text[start.len()..].contains('/'),
            None => text == denied,
        };
        if matched {
            return EtcRule::Denied;
        }
        if Path::new(denied).starts_with(relative) {
            rule = EtcRule::Descend;
        }
    }
    rule
}

/// `path` with every link resolved, when it exists.
fn canonical(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree(root: &Path, files: &[&str]) {
        for file in files {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
    }

    fn relative(root: &Path, allowed: &[PathBuf]) -> Vec<String> {
        let root = root.canonicalize().unwrap();
        allowed
            .iter()
            .filter_map(|p| p.strip_prefix(&root).ok())
            .map(|p| p.display().to_string())
            .collect()
    }

    #[test]
    fn etc_is_allowed_child_by_child_without_its_secrets_and_with_link_targets() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(
            root,
            &[
                "etc/hosts",
                "etc/shadow",
                "etc/shadow-",
                "etc/gshadow",
                "etc/sudoers.d/x",
                "etc/ssh/ssh_host_ed25519_key",
                "etc/ssl/certs/ca.pem",
                "etc/ssl/private/key.pem",
                "etc/security/opasswd",
                "etc/security/limits.conf",
                "run/resolve/stub.conf",
            ],
        );
        symlink(
            root.join("run/resolve/stub.conf"),
            root.join("etc/resolv.conf"),
        )
        .unwrap();
        let host = Host {
            etc: root.join("etc"),
            ..Host::default()
        };
        let allowed = relative(root, &host.allowed());
        assert_eq!(
            allowed,
            [
                "etc/hosts",
                "run/resolve/stub.conf",
                "etc/security/limits.conf",
                "etc/ssl/certs",
            ]
        );
    }

    #[test]
    fn path_folders_prefixes_and_ca_files_are_allowed_but_never_a_protected_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let home = root.join("home");
        tree(
            root,
            &[
                "home/.local/bin/tool",
                "home/.git-credentials",
                "tools/node/v20/bin/node",
                "tools/node/v20/lib/node_modules/npm/bin/npx-cli.js",
                "home/bin/python3",
                "checkout/.git/config",
                "checkout/bin/x",
                "home/.cargo/bin/uv",
                "home/.cargo/credentials.toml",
                "certs/ca.pem",
            ],
        );
        std::fs::create_dir_all(root.join("usr")).unwrap();
        symlink(
            root.join("tools/node/v20/lib/node_modules/npm/bin/npx-cli.js"),
            root.join("tools/node/v20/bin/npx"),
        )
        .unwrap();
        let path = std::env::join_paths([
            home.join(".local/bin"),
            home.clone(),
            home.join("bin"),
            home.join(".cargo/bin"),
            root.join("tools/node/v20/bin"),
            root.join("checkout"),
            root.join("checkout/bin"),
            PathBuf::from("relative/bin"),
        ])
        .unwrap();
        let host = Host {
            system: vec![root.join("usr"), root.join("missing")],
            etc: root.join("no-etc"),
            path: Some(path),
            ca: vec![("SSL_CERT_FILE".into(), root.join("certs/ca.pem").into())],
            protected: vec![home.clone(), home.join(".cargo/credentials.toml")],
            sealed: vec![root.join("checkout")],
        };
        let allowed = relative(root, &host.allowed());
        assert_eq!(
            allowed,
            [
                "usr",
                "home/.local/bin",
                "home/bin",
                "home/.cargo/bin",
                "tools/node/v20/bin",
                "tools/node/v20",
                "tools/node/v20/lib/node_modules/npm",
                "certs/ca.pem",
            ],
            "HOME (PATH entry, and the prefix of home/bin/python3), ~/.cargo (uv's prefix, holding \
             a token) and the checkout with what is inside it are left out"
        );
    }

    #[test]
    fn the_checkout_is_the_nearest_folder_above_holding_git() {
        let dir = tempfile::tempdir().unwrap();
        tree(
            dir.path(),
            &["repo/.git/config", "repo/registry/a/agent.json"],
        );
        let found = checkout_of(&dir.path().join("repo/registry/a")).unwrap();
        assert_eq!(found, dir.path().join("repo").canonicalize().unwrap());
    }

    #[test]
    fn a_system_folder_holding_the_checkout_is_narrowed_around_it_not_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(
            root,
            &[
                "usr/bin/node",
                "usr/lib/libc.so",
                "usr/src/other/x",
                "usr/src/app/.git/config",
                "usr/src/app/registry/a/agent.json",
            ],
        );
        let host = Host {
            system: vec![root.join("usr")],
            etc: root.join("no-etc"),
            sealed: vec![root.join("usr/src/app")],
            ..Host::default()
        };
        let allowed = relative(root, &host.allowed());
        assert_eq!(allowed, ["usr/bin", "usr/lib", "usr/src/other"]);
    }

    #[test]
    fn the_root_is_never_allowed() {
        let host = Host {
            system: vec![PathBuf::from("/")],
            etc: PathBuf::from("/nonexistent-etc"),
            protected: vec![PathBuf::from("/")],
            ..Host::default()
        };
        assert!(host.allowed().is_empty());
    }
}
