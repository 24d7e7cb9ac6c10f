//! What the client commands (`install`, `run`, `list`, `which`, `uninstall`, `cache gc`)
//! share: their flags ([`ClientFlags`], [`CacheFlags`]) and the library set up from them
//! ([`Session`]): the install cache, the registry, the registry's lifecycle document (a
//! disabled id refused with its replacement, a deprecated one warned about, `--min-age`
//! answered from its release history where it has one), the choice of a version (`--version`,
//! `--min-age`), installing with a progress bar. The network (a tokio runtime and the HTTP
//! client) is built once, on first use, and sends nothing while the cached registry is fresh
//! and the agent installed: `run` then reads the registry copy and the receipts, and execs.
//! (`Registry::load` takes a client even for a cached copy, so one is built; that costs well
//! under a millisecond.) Shared plumbing, not a command.

mod min_age;

use std::cell::OnceCell;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use acp_registry_client::archive::DEFAULT_UNPACK_CAP_MIB;
use acp_registry_client::install;
use acp_registry_client::lifecycle::{AgentLifecycle, Lifecycle, Status};
use acp_registry_client::platform::{Kind, PLATFORMS};
use acp_registry_client::registry::{
    Freshness, Origin, Registry, RegistryOptions, Source, DEFAULT_REGISTRY_URL,
};
use acp_registry_client::resolve::{Resolution, ResolveError, ResolveOptions};
use acp_registry_client::store::Store;

use super::client_text::{human_age, progress_bar, t, version_order};
use super::error::CommandError;
use crate::flags::{self, ByteSize, Loopback, NetworkFlags};
use crate::net::{Client, NetConfig};

pub use super::client_text::OutputFormat;
pub use acp_registry_client::store::Installed;

super::error::failed_from!(
    acp_registry_client::registry::RegistryError,
    acp_registry_client::store::StoreError,
    acp_registry_client::install::InstallError,
    acp_registry_client::age::AgeError,
    crate::net::NetError,
);

/// The environment variable `--registry` falls back to.
pub const REGISTRY_ENV: &str = "ACP_REGISTRY_URL";
/// The environment variable `--cache-dir` falls back to.
pub const CACHE_DIR_ENV: &str = "ACP_REGISTRY_CACHE_DIR";
/// Largest archive downloaded, in MiB, unless `--download-cap` says otherwise.
pub const DEFAULT_DOWNLOAD_CAP_MIB: u64 = 1024;

/// `--cache-dir`: the install cache, the one flag every client command has.
#[derive(Debug, Clone, Default, clap::Args)]
#[allow(clippy::doc_markdown)] // The field docs are `--help` text, written for users.
pub struct CacheFlags {
    /// The cache folder: registry copies, installed agents, npm and uv caches [default:
    /// $XDG_CACHE_HOME/acp-registry, else ~/.cache/acp-registry; ~/Library/Caches on macOS,
    /// %LOCALAPPDATA% on Windows].
    #[arg(long, value_name = "DIR", env = CACHE_DIR_ENV)]
    pub cache_dir: Option<PathBuf>,
}

impl CacheFlags {
    /// The cache `--cache-dir` names (created when missing).
    ///
    /// # Errors
    /// When no cache folder is known or it cannot be created.
    pub fn open(&self) -> Result<Store, CommandError> {
        let root = self
            .cache_dir
            .clone()
            .or_else(Store::default_root)
            .ok_or_else(|| {
                CommandError::Usage(format!(
                    "no cache folder: set --cache-dir or {CACHE_DIR_ENV} (HOME is not set)"
                ))
            })?;
        Ok(Store::open(root)?)
    }
}

/// The flags of the client commands that read the registry (flattened into each); the field
/// docs are their `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Registry and cache")]
#[allow(clippy::doc_markdown)] // The field docs are `--help` text, written for users.
pub struct ClientFlags {
    /// The registry.json to use: an https URL or a file.
    #[arg(long, value_name = "URL|FILE", env = REGISTRY_ENV, default_value = DEFAULT_REGISTRY_URL)]
    pub registry: String,
    /// `--cache-dir`.
    #[command(flatten)]
    pub cache: CacheFlags,
    /// Ask no server: use the cached registry (or --snapshot) however old, and only agents
    /// already installed.
    #[arg(long, conflicts_with = "refresh")]
    pub offline: bool,
    /// Ask the registry's server for a newer copy even when the cached one is fresh.
    #[arg(long)]
    pub refresh: bool,
    /// A registry.json shipped with the caller, used when neither the network nor the cache
    /// has one.
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// How long a cached registry is used without asking the server: hours (`6`) or a
    /// duration (`90s`, `30m`, `6h`, `2d`).
    #[arg(long, value_name = "AGE", value_parser = max_age, default_value = "1h")]
    pub max_age: Duration,
    /// The version to use: the registry's current one or one already installed [default:
    /// the registry's].
    #[arg(long, value_name = "V")]
    pub version: Option<String>,
    /// Skip releases published less than DAYS days ago (where the publish time is known:
    /// the registry's lifecycle.json, npm, PyPI): an older npx or uvx release its history
    /// allows is installed instead, else the newest installed version old enough, else the
    /// command refuses and says when the release becomes eligible.
    #[arg(long, value_name = "DAYS")]
    pub min_age: Option<u32>,
    /// Refuse binaries the registry pins no sha256 for (default: install them with a
    /// warning).
    #[arg(long)]
    pub require_sha256: bool,
    /// The distribution kinds to consider, in order of preference.
    #[arg(
        long = "type",
        value_parser = flags::kind_parser(),
        value_name = "KIND,...",
        value_delimiter = ',',
        default_value = "binary,npx,uvx"
    )]
    pub kinds: Vec<Kind>,
    /// The platform to resolve for [default: this machine's].
    #[arg(long, value_name = "KEY", value_parser = clap::builder::PossibleValuesParser::new(PLATFORMS))]
    pub platform: Option<String>,
    /// Mirrors on private addresses, a proxy, extra certificate authorities.
    #[command(flatten)]
    pub network: NetworkFlags,
    /// Largest archive downloaded, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = ByteSize::mib(DEFAULT_DOWNLOAD_CAP_MIB))]
    pub download_cap: ByteSize,
    /// Most an archive may unpack to, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = ByteSize::mib(DEFAULT_UNPACK_CAP_MIB))]
    pub unpack_cap: ByteSize,
    /// The loopback switch (tests only).
    #[command(flatten)]
    pub loopback: Loopback,
}

impl Default for ClientFlags {
    fn default() -> Self {
        flags::defaults()
    }
}

/// Reads `--max-age`: whole hours (`6`) or a number with a unit `s`, `m`, `h` or `d`.
pub fn max_age(text: &str) -> Result<Duration, String> {
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "h"),
    };
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => 0,
    };
    match number.parse::<u64>() {
        Ok(n) if seconds > 0 => Ok(Duration::from_secs(n.saturating_mul(seconds))),
        _ => Err(format!(
            "`{text}` is not an age: write hours (6) or a duration (90s, 30m, 6h, 2d)"
        )),
    }
}

/// One command's use of the library: the cache, the flags, and the network once asked for.
pub struct Session<'a> {
    /// The flags given.
    pub flags: &'a ClientFlags,
    /// The install cache.
    pub store: Store,
    net: OnceCell<(tokio::runtime::Runtime, Client)>,
    /// The lifecycle document, loaded on first use (`None` inside: the registry has none).
    lifecycle: OnceCell<Option<Lifecycle>>,
}

/// What a command will use for an agent: the registry's resolution and, when installed, the
/// install chosen (another version than the registry's for `--version` or `--min-age`).
pub struct Choice {
    /// The entry resolved in the registry.
    pub resolution: Resolution,
    /// The install to use, when one exists.
    pub installed: Option<Installed>,
}

impl<'a> Session<'a> {
    /// Opens the cache `flags` name; nothing is asked yet.
    ///
    /// # Errors
    /// When the cache cannot be opened.
    pub fn open(flags: &'a ClientFlags) -> Result<Session<'a>, CommandError> {
        Ok(Session {
            flags,
            store: flags.cache.open()?,
            net: OnceCell::new(),
            lifecycle: OnceCell::new(),
        })
    }

    /// The network settings the flags give.
    fn net_config(&self) -> Result<NetConfig, CommandError> {
        let mut net = NetConfig {
            allow_loopback: self.flags.loopback.allow_loopback_for_tests,
            ..NetConfig::default()
        };
        self.flags
            .network
            .apply(&mut net, &[], false)
            .map_err(CommandError::Usage)?;
        Ok(net)
    }

    /// The runtime and HTTP client, built on first use.
    fn net(&self) -> Result<(&tokio::runtime::Runtime, &Client), CommandError> {
        if self.net.get().is_none() {
            let runtime = crate::net::runtime()?;
            let client = Client::new(self.net_config()?)?;
            let _ = self.net.set((runtime, client));
        }
        let (runtime, client) = self.net.get().expect("set above");
        Ok((runtime, client))
    }

    /// The registry options the flags give.
    fn registry_options(&self) -> RegistryOptions {
        let flags = self.flags;
        RegistryOptions {
            source: Source::parse(&flags.registry),
            cache_root: self.store.root().to_path_buf(),
            max_age: flags.max_age,
            freshness: if flags.offline {
                Freshness::Offline
            } else if flags.refresh {
                Freshness::Refresh
            } else {
                Freshness::Normal
            },
            snapshot: flags.snapshot.clone(),
        }
    }

    /// Loads the registry (from the cache when fresh: no request), passing the loader's
    /// warnings (a fallback and how old the copy is) to `err`, and saying how old the copy is
    /// when `--offline` used a fresh one.
    ///
    /// # Errors
    /// When no copy can be had.
    pub fn registry(&self, err: &mut dyn Write) -> Result<Registry, CommandError> {
        let options = self.registry_options();
        let (runtime, client) = self.net()?;
        let registry = runtime.block_on(Registry::load(client, &options))?;
        for warning in &registry.warnings {
            writeln!(err, "warning: {}", t(warning))?;
        }
        if self.flags.offline && registry.origin == Origin::FreshCache {
            let age = registry.age.map_or_else(
                || "of unknown age".to_string(),
                |a| format!("{} old", human_age(a)),
            );
            writeln!(
                err,
                "note: offline: using the cached copy of {}, {age}",
                t(&self.flags.registry)
            )?;
        }
        Ok(registry)
    }

    /// The kind order and platform the flags give.
    pub fn resolve_options(&self) -> ResolveOptions {
        ResolveOptions {
            platform: self.flags.platform.clone(),
            order: self.flags.kinds.clone(),
        }
    }

    /// Chooses what to use for `id` (see [`Choice`]): the registry's version, or the one
    /// `--version` names (installed), or under `--min-age` the newest installed version old
    /// enough.
    ///
    /// # Errors
    /// An unknown id (with the nearest ids), a version neither the registry nor the cache
    /// has (naming those that exist), a release too young with nothing installed to fall
    /// back on (saying when it becomes eligible).
    pub fn choose(
        &self,
        registry: &Registry,
        id: &str,
        err: &mut dyn Write,
    ) -> Result<Choice, CommandError> {
        let resolution = self.resolve(registry, id, err)?;
        let agent = self.lifecycle(registry, err)?.and_then(|l| l.get(id));
        if let Some(agent) = agent {
            check_status(agent, err)?;
        }
        let installed = self.installed_versions(&resolution)?;
        if let Some(version) = &self.flags.version {
            if *version != resolution.entry.version {
                let found = installed.into_iter().find(|i| i.version == *version);
                return match found {
                    Some(found) => Ok(Choice {
                        resolution,
                        installed: Some(found),
                    }),
                    None => Err(no_such_version(
                        &resolution,
                        version,
                        &self.installed_list(id)?,
                    )),
                };
            }
        }
        if let Some(days) = self.flags.min_age {
            let history = agent.and_then(|a| a.distributions.get(&resolution.kind));
            if let Some(choice) = self.min_age(&resolution, installed, days, history, err)? {
                return Ok(choice);
            }
        }
        let installed = self.store.find(&resolution);
        Ok(Choice {
            resolution,
            installed,
        })
    }

    /// `id` resolved in the registry; an unknown id the lifecycle document lists as disabled
    /// is refused with its reason and replacement rather than with the nearest ids.
    ///
    /// # Errors
    /// An unknown or disabled id, or an entry with nothing usable here.
    pub fn resolve(
        &self,
        registry: &Registry,
        id: &str,
        err: &mut dyn Write,
    ) -> Result<Resolution, CommandError> {
        let error = match registry.resolve(id, &self.resolve_options()) {
            Ok(resolution) => return Ok(resolution),
            Err(error) => error,
        };
        if matches!(error, ResolveError::UnknownId { .. }) {
            if let Some(agent) = self.lifecycle(registry, err)?.and_then(|l| l.get(id)) {
                check_status(agent, err)?;
            }
        }
        Err(CommandError::Usage(format!(
            "{error} (registry: {})",
            t(&self.flags.registry)
        )))
    }

    /// The registry's lifecycle document, loaded (and its warnings written to `err`) on the
    /// first call only, so commands that never ask for it send no request for it.
    ///
    /// # Errors
    /// When the network cannot be set up.
    pub fn lifecycle(
        &self,
        registry: &Registry,
        err: &mut dyn Write,
    ) -> Result<Option<&Lifecycle>, CommandError> {
        if self.lifecycle.get().is_none() {
            let (runtime, client) = self.net()?;
            let options = self.registry_options();
            let (lifecycle, warnings) = runtime.block_on(registry.lifecycle(client, &options));
            for warning in &warnings {
                writeln!(err, "warning: {}", t(warning))?;
            }
            let _ = self.lifecycle.set(lifecycle);
        }
        Ok(self.lifecycle.get().and_then(Option::as_ref))
    }

    /// The complete installs of the resolved agent for its platform and kind, newest
    /// version first.
    fn installed_versions(&self, resolution: &Resolution) -> Result<Vec<Installed>, CommandError> {
        let mut found: Vec<Installed> = self
            .store
            .installed()?
            .into_iter()
            .filter(|i| {
                i.id == resolution.entry.id
                    && i.platform == resolution.platform
                    && i.kind == resolution.kind
            })
            .collect();
        found.sort_by(|a, b| version_order(&b.version, &a.version));
        Ok(found)
    }

    /// Every installed version of `id`, for messages.
    fn installed_list(&self, id: &str) -> Result<Vec<String>, CommandError> {
        let mut versions: Vec<String> = self
            .store
            .installed()?
            .into_iter()
            .filter(|i| i.id == id)
            .map(|i| i.version)
            .collect();
        versions.sort_by(|a, b| version_order(a, b));
        versions.dedup();
        Ok(versions)
    }

    /// The agent `id` resolved in the registry and installed unless the cache holds it
    /// (with whether it was installed now): `install`'s and `run`'s path.
    ///
    /// # Errors
    /// What loading, choosing or installing refuses.
    pub fn installed(
        &self,
        id: &str,
        err: &mut dyn Write,
    ) -> Result<(Installed, bool), CommandError> {
        let registry = self.registry(err)?;
        let choice = self.choose(&registry, id, err)?;
        self.ensure_installed(choice, err)
    }

    /// The install of `choice`, installing it first when it is not installed (progress on
    /// a terminal's stderr, the install's warnings, such as an unpinned binary, on `err`);
    /// `true` when it was installed now.
    ///
    /// # Errors
    /// A refused or failed install (nothing of it is left in the cache), or `--offline`
    /// with the agent not installed.
    pub fn ensure_installed(
        &self,
        choice: Choice,
        err: &mut dyn Write,
    ) -> Result<(Installed, bool), CommandError> {
        if let Some(installed) = choice.installed {
            return Ok((installed, false));
        }
        let resolution = &choice.resolution;
        let entry = &resolution.entry;
        if self.flags.offline {
            return Err(CommandError::Usage(format!(
                "{} {} is not installed and --offline asks no server: run without --offline once",
                t(&entry.id),
                t(&entry.version)
            )));
        }
        let options = install::InstallOptions {
            pin_policy: if self.flags.require_sha256 {
                install::PinPolicy::Refuse
            } else {
                install::PinPolicy::Warn
            },
            download_cap: self.flags.download_cap.bytes(),
            unpack_cap: self.flags.unpack_cap.bytes(),
            progress: progress_bar(),
            ..install::InstallOptions::default()
        };
        let (runtime, client) = self.net()?;
        let installed =
            runtime.block_on(install::install(&self.store, client, resolution, &options))?;
        for warning in &installed.warnings {
            writeln!(err, "warning: {}", t(warning))?;
        }
        Ok((installed, true))
    }
}

/// A deprecated entry is a warning; a disabled one a refusal naming its reason and
/// replacement.
fn check_status(agent: &AgentLifecycle, err: &mut dyn Write) -> Result<(), CommandError> {
    let notice = agent.notice();
    let notice = if notice.is_empty() {
        String::new()
    } else {
        format!(" {notice}")
    };
    match agent.status {
        Status::Active => Ok(()),
        Status::Deprecated => {
            writeln!(err, "warning: {} is deprecated{}", t(&agent.id), t(&notice))?;
            Ok(())
        }
        Status::Disabled => Err(CommandError::Usage(format!(
            "{} is disabled{}",
            t(&agent.id),
            t(&notice)
        ))),
    }
}

/// The error for a `--version` nobody has.
fn no_such_version(resolution: &Resolution, version: &str, installed: &[String]) -> CommandError {
    let installed = if installed.is_empty() {
        "none".to_string()
    } else {
        installed
            .iter()
            .map(|v| t(v))
            .collect::<Vec<_>>()
            .join(", ")
    };
    CommandError::Usage(format!(
        "{} has no version {}: the registry offers {}; installed: {installed}",
        t(&resolution.entry.id),
        t(version),
        t(&resolution.entry.version)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_age_takes_hours_or_a_duration() {
        assert_eq!(max_age("6"), Ok(Duration::from_secs(6 * 3600)));
        assert_eq!(max_age("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(max_age("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(max_age("2d"), Ok(Duration::from_secs(2 * 86_400)));
        assert_eq!(max_age("0s"), Ok(Duration::ZERO));
        assert!(max_age("1w").is_err());
        assert!(max_age("h").is_err());
        assert!(max_age("").is_err());
    }

    #[test]
    fn the_client_flags_parse_with_their_defaults() {
        let flags: ClientFlags = flags::defaults();
        assert_eq!(flags.registry, DEFAULT_REGISTRY_URL);
        assert_eq!(flags.kinds, Kind::ALL.to_vec());
        assert_eq!(flags.max_age, Duration::from_secs(3600));
        let flags: ClientFlags =
            flags::parse(&["--type", "npx,binary", "--platform", "linux-x86_64"]).unwrap();
        assert_eq!(flags.kinds, vec![Kind::Npx, Kind::Binary]);
        assert!(flags::parse::<ClientFlags>(&["--platform", "plan9"]).is_err());
        assert!(flags::parse::<ClientFlags>(&["--offline", "--refresh"]).is_err());
    }
}
