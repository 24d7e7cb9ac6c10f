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

use std::cell::OnceCell;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use acp_registry_client::archive::DEFAULT_UNPACK_CAP_MIB;
use acp_registry_client::lifecycle::{self, AgentLifecycle, Cooldown, Lifecycle, Status};
use acp_registry_client::platform::{Kind, PLATFORMS};
use acp_registry_client::registry::{
    Freshness, Origin, Registry, RegistryOptions, Source, DEFAULT_REGISTRY_URL,
};
use acp_registry_client::resolve::{Resolution, ResolveError, ResolveOptions};
use acp_registry_client::store::Store;
use acp_registry_client::{age, install};

use super::client_text::{human_age, progress_bar, t, version_order};
use super::error::CommandError;
use crate::flags::{self, ByteSize, Loopback};
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
    /// A host name allowed to resolve to a private address (a mirror on the company
    /// network); repeat for more.
    #[arg(long, value_name = "HOST")]
    pub allow_private_host: Vec<String>,
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
    fn net_config(&self) -> NetConfig {
        NetConfig {
            allow_loopback: self.flags.loopback.allow_loopback_for_tests,
            private_hosts: self.flags.allow_private_host.iter().cloned().collect(),
            ..NetConfig::default()
        }
    }

    /// The runtime and HTTP client, built on first use.
    fn net(&self) -> Result<(&tokio::runtime::Runtime, &Client), CommandError> {
        if self.net.get().is_none() {
            let runtime = crate::net::runtime()?;
            let client = Client::new(self.net_config())?;
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

    /// `--min-age`: `None` when the registry's release may be used (old enough, or of
    /// unknown age, with a note), else what to use instead: from the lifecycle document's
    /// `history` when it knows when the pin was published, else from npm's or `PyPI`'s time
    /// and the installed versions.
    fn min_age(
        &self,
        resolution: &Resolution,
        installed: Vec<Installed>,
        days: u32,
        history: Option<&lifecycle::Distribution>,
        err: &mut dyn Write,
    ) -> Result<Option<Choice>, CommandError> {
        let window = i64::from(days) * 86_400;
        let pin = lifecycle::pinned_version(resolution);
        if let (Some(history), Some(pin)) = (history, pin) {
            if let Some(cooldown) = history.cooldown(&pin, window, now()) {
                let cooled = Cooled {
                    resolution,
                    history,
                    pin: &pin,
                    days,
                };
                return self.cooled(&cooled, cooldown, installed, err);
            }
        }
        let older = self.min_age_by_index(resolution, installed, days, err)?;
        Ok(older.map(|older| Choice {
            resolution: resolution.clone(),
            installed: Some(older),
        }))
    }

    /// `--min-age` decided by the lifecycle document's history: the pin, an older npx or
    /// uvx release (installed now unless it is), an older install, or a refusal.
    fn cooled(
        &self,
        cooled: &Cooled<'_>,
        cooldown: Cooldown,
        installed: Vec<Installed>,
        err: &mut dyn Write,
    ) -> Result<Option<Choice>, CommandError> {
        let (eligible_at, candidate) = match cooldown {
            Cooldown::Pin => return Ok(None),
            Cooldown::Older {
                version,
                published,
                eligible_at,
            } => (eligible_at, Some((version, published))),
            Cooldown::NoneEligible { eligible_at } => (eligible_at, None),
        };
        if let Some((version, published)) = &candidate {
            if let Some(older) = lifecycle::at_version(cooled.resolution, version) {
                writeln!(
                    err,
                    "note: {}",
                    cooled.older_text(eligible_at, version, *published)
                )?;
                let installed = self.store.find(&older);
                return Ok(Some(Choice {
                    resolution: older,
                    installed,
                }));
            }
        }
        let window = i64::from(cooled.days) * 86_400;
        let now = now();
        let old_enough = |i: &Installed| {
            cooled
                .history
                .allows(&i.version, window, now)
                .unwrap_or_else(|| installed_long_ago(i, window, now))
        };
        let entry = &cooled.resolution.entry;
        match fallback(installed, &entry.version, old_enough) {
            Some(older) => {
                writeln!(
                    err,
                    "note: {} {} was published less than {} days ago (eligible {}); using the installed {}",
                    t(&entry.id),
                    t(cooled.pin),
                    cooled.days,
                    when(eligible_at),
                    t(&older.version)
                )?;
                Ok(Some(Choice {
                    resolution: cooled.resolution.clone(),
                    installed: Some(older),
                }))
            }
            None => Err(cooled.refusal(eligible_at, candidate.as_ref())),
        }
    }

    /// `--min-age` decided by npm's or `PyPI`'s publish time of the pin and the installed
    /// versions (the lifecycle document does not say when the pin was published).
    fn min_age_by_index(
        &self,
        resolution: &Resolution,
        installed: Vec<Installed>,
        days: u32,
        err: &mut dyn Write,
    ) -> Result<Option<Installed>, CommandError> {
        let entry = &resolution.entry;
        let root = self.store.root().to_path_buf();
        let published = if self.flags.offline {
            None
        } else {
            let (runtime, client) = self.net()?;
            runtime.block_on(age::publish_time(client, &root, resolution))?
        };
        let Some(published) = published else {
            writeln!(
                err,
                "note: the publish time of {} {} is unknown; --min-age {days} allows it",
                t(&entry.id),
                t(&entry.version)
            )?;
            return Ok(None);
        };
        match min_age_decision(published, days, now(), installed, &entry.version) {
            MinAge::Allowed => Ok(None),
            MinAge::Fallback { older, eligible_at } => {
                writeln!(
                    err,
                    "note: {} {} was published less than {days} days ago (eligible {}); using the installed {}",
                    t(&entry.id),
                    t(&entry.version),
                    when(eligible_at),
                    t(&older.version)
                )?;
                Ok(Some(*older))
            }
            MinAge::Refused { eligible_at } => Err(CommandError::Usage(format!(
                "{} {} was published less than {days} days ago: --min-age {days} allows it from {}, and no older installed version has been in the cache {days} days; wait, or lower --min-age",
                t(&entry.id),
                t(&entry.version),
                when(eligible_at)
            ))),
        }
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

/// What `--min-age` decides for a release published at `published` (seconds since the
/// epoch), measured at `now`.
#[derive(Debug, PartialEq, Eq)]
enum MinAge {
    /// Old enough.
    Allowed,
    /// Too young; this older install is used instead.
    Fallback {
        /// The newest older install known to be old enough.
        older: Box<Installed>,
        /// When the release becomes eligible.
        eligible_at: i64,
    },
    /// Too young, and no older install is known to be old enough.
    Refused {
        /// When the release becomes eligible.
        eligible_at: i64,
    },
}

/// `--min-age DAYS` for the release `version` published at `published`: allowed once
/// `DAYS` days old, else the newest of `installed` (newest first) older than `version` that
/// has been installed at least `DAYS` days (so published at least that long ago).
fn min_age_decision(
    published: i64,
    days: u32,
    now: i64,
    installed: Vec<Installed>,
    version: &str,
) -> MinAge {
    let window = i64::from(days) * 86_400;
    let eligible_at = published.saturating_add(window);
    if eligible_at <= now {
        return MinAge::Allowed;
    }
    match fallback(installed, version, |i| installed_long_ago(i, window, now)) {
        Some(older) => MinAge::Fallback {
            older: Box::new(older),
            eligible_at,
        },
        None => MinAge::Refused { eligible_at },
    }
}

/// The newest of `installed` (newest first) older than `version` that is `old_enough`.
fn fallback(
    installed: Vec<Installed>,
    version: &str,
    old_enough: impl Fn(&Installed) -> bool,
) -> Option<Installed> {
    installed
        .into_iter()
        .filter(|i| version_order(&i.version, version).is_lt())
        .find(|i| old_enough(i))
}

/// Whether `install` has been in the cache `window` seconds at `now` (so its release was
/// published at least that long ago).
fn installed_long_ago(install: &Installed, window: i64, now: i64) -> bool {
    acp_registry_core::time::parse_iso_utc_seconds(&install.installed_at)
        .is_some_and(|at| at.saturating_add(window) <= now)
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

/// A pin too young under `--min-age`, and the lifecycle history that decides instead.
struct Cooled<'r> {
    resolution: &'r Resolution,
    history: &'r lifecycle::Distribution,
    pin: &'r str,
    days: u32,
}

impl Cooled<'_> {
    /// The note for installing the older `version` instead of the pin.
    fn older_text(&self, eligible_at: i64, version: &str, published: i64) -> String {
        format!(
            "{} {} was published {}, less than --min-age {} days ago (eligible {}); using {} (published {}), the newest older release at least that old that is not yanked, deprecated or a preview",
            t(&self.resolution.entry.id),
            t(self.pin),
            self.published_text(),
            self.days,
            when(eligible_at),
            t(version),
            when(published)
        )
    }

    fn published_text(&self) -> String {
        self.history
            .published_of(self.pin)
            .map_or_else(|| "recently".to_string(), when)
    }

    /// Why nothing can be used: the eligible release (a binary's, which cannot be installed
    /// at another version) or none.
    fn refusal(&self, eligible_at: i64, candidate: Option<&(String, i64)>) -> CommandError {
        let entry = &self.resolution.entry;
        let days = self.days;
        let head = format!(
            "{} {} was published {}, less than --min-age {days} days ago (eligible {})",
            t(&entry.id),
            t(self.pin),
            self.published_text(),
            when(eligible_at)
        );
        CommandError::Usage(match candidate {
            Some((version, published)) => format!(
                "{head}; {} (published {}) is old enough, but a {} is installed only at the registry's version (its archives are pinned for {} alone) and {} is not installed; wait, or lower --min-age",
                t(version),
                when(*published),
                self.resolution.kind,
                t(&entry.version),
                t(version)
            ),
            None => format!(
                "{head}; no older release in the registry's history is old enough and not yanked or deprecated, and no older installed version is; wait, or lower --min-age"
            ),
        })
    }
}

/// A UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
fn when(at: i64) -> String {
    acp_registry_core::time::format_utc(at)
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

/// The clock in seconds since the Unix epoch.
fn now() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
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

    fn install(version: &str, installed_at: &str) -> Installed {
        Installed {
            id: "a".into(),
            version: version.into(),
            platform: "linux-x86_64".into(),
            kind: Kind::Npx,
            dir: PathBuf::from("/c"),
            program: PathBuf::from("/c/p"),
            args: Vec::new(),
            env: std::collections::BTreeMap::new(),
            sha256: None,
            installed_at: installed_at.into(),
            source: "a@1".into(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn min_age_allows_an_old_release_and_falls_back_to_an_older_install_old_enough() {
        let day = 86_400;
        let now = 100 * day;
        // Installed on day 80 and day 98 (newest first, as `installed_versions` gives them).
        let installs = || {
            vec![
                install("1.2.0", "1970-04-09T00:00:00Z"),
                install("1.1.0", "1970-03-22T00:00:00Z"),
            ]
        };
        assert_eq!(
            min_age_decision(90 * day, 7, now, installs(), "2.0.0"),
            MinAge::Allowed
        );
        assert_eq!(
            min_age_decision(99 * day, 7, now, installs(), "2.0.0"),
            MinAge::Fallback {
                older: Box::new(installs()[1].clone()),
                eligible_at: 106 * day
            }
        );
        assert_eq!(
            min_age_decision(99 * day, 30, now, installs(), "2.0.0"),
            MinAge::Refused {
                eligible_at: 129 * day
            }
        );
        // The release itself installed long ago is no fallback for itself.
        let same = vec![install("2.0.0", "1970-01-02T00:00:00Z")];
        assert_eq!(
            min_age_decision(99 * day, 7, now, same, "2.0.0"),
            MinAge::Refused {
                eligible_at: 106 * day
            }
        );
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
