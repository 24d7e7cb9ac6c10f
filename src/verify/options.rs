//! Planning a run: [`Options`], which are both `verify`'s command-line flags (and `matrix`'s,
//! flattened) and what [`run`](super::run) takes, and [`prepare`], which checks the registry
//! and resolves what the flags leave to the run (changed folders, cache folder, policy).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use super::checks::DEFAULT_AUTH_TYPES;
use super::error::VerifyError;
use super::matrix::Row;
use super::shard::Shard;
use crate::diagnostics::ReportFormat;
use crate::flags::{self, ByteSize, Loopback, NetworkFlags, Registry};
use crate::manifest::distribution::Kind;
use crate::net::NetConfig;
use crate::registry::{check_registry, git, Checked};
use crate::rules::EntryReport;

/// TEST ONLY: the variable naming a package index on a loopback address that the uvx
/// installs and launches of `verify` and `matrix` use instead of uv's default index (the
/// sandbox's `UV_DEFAULT_INDEX`), so tests serve their own wheels. Nothing else changes.
pub(crate) const TEST_UV_INDEX_ENV: &str = "ACP_REGISTRY_TEST_UV_INDEX";

/// What `verify` checks and how: its flags (the rustdoc of each is its `--help`), then what
/// [`prepare`] resolves from them and a library caller may set.
#[derive(Debug, Clone, clap::Args)]
// No argument group of its own: `matrix`'s `Options` flattens it, and group ids are unique.
#[group(skip)]
#[command(mut_arg("allow_loopback_for_tests", |arg| arg.help(
    "TEST ONLY: allow loopback addresses, over plain http too, so tests can serve archives \
locally. Never use it on untrusted input"
)))]
#[allow(clippy::doc_markdown)] // The field docs are `--help` text, written for users.
pub struct Options {
    /// `--registry`.
    #[command(flatten)]
    pub registry: Registry,
    /// Only these agent ids (comma-separated); quarantined ids named here are run.
    #[arg(long, value_name = "ID,...", value_delimiter = ',', add = crate::flags::entry_ids())]
    pub agent: Option<Vec<String>>,
    /// Only these distribution kinds (comma-separated).
    #[arg(
        long = "type",
        value_parser = crate::flags::kind_parser(),
        value_name = "KIND,...",
        value_delimiter = ','
    )]
    pub kind: Option<Vec<Kind>>,
    /// Only entries whose files changed since this git revision.
    #[arg(long, value_name = "REV")]
    pub changed_since: Option<String>,
    /// Only shard K of N of the selected entries (e.g. 2/4): each entry is in exactly one
    /// shard, by a hash of its id, and shards differ by at most one entry.
    #[arg(long, value_name = "K/N", conflicts_with = "list_shards")]
    pub shard: Option<Shard>,
    /// Launch nothing: print the shards of the selected entries, one per --shard-size entries
    /// and at most MAX, as a GitHub Actions strategy.matrix with --format json.
    #[arg(long, value_name = "MAX")]
    pub list_shards: Option<usize>,
    /// With --list-shards: entries per shard before another shard is added.
    #[arg(
        long,
        value_name = "SIZE",
        default_value_t = 1,
        requires = "list_shards"
    )]
    pub shard_size: usize,
    /// Agents run at once (the report order does not depend on it).
    #[arg(short = 'j', long, value_name = "N", default_value_t = 1)]
    pub jobs: usize,
    /// Seconds to wait for each ACP answer.
    #[arg(long, value_name = "SECONDS", value_parser = flags::seconds, default_value = "60")]
    pub timeout: Duration,
    /// Fail when a distribution cannot be tested on this machine.
    #[arg(long)]
    pub require_tested: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: ReportFormat,
    /// Cache folder for downloaded archives [default: the user's cache folder].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Neither read nor write the archive cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// Largest archive downloaded, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = ByteSize::mib(crate::online::DEFAULT_ARCHIVE_CAP_MIB))]
    pub archive_cap: ByteSize,
    /// Most bytes one archive may unpack to, in MiB (per agent; hard links count as copies).
    #[arg(long, value_name = "MIB", default_value_t = ByteSize::mib(crate::fs::archive::DEFAULT_UNPACK_CAP_MIB))]
    pub unpack_cap: ByteSize,
    /// `--allow-private-host` and `--proxy-from-env`, for the archive downloads.
    #[command(flatten)]
    pub network: NetworkFlags,
    /// The test-only loopback switch.
    #[command(flatten)]
    pub loopback: Loopback,
    /// Colour in the human findings (set by the binary for a terminal).
    #[arg(skip)]
    pub color: bool,
    /// `--changed-since` resolved: only these entry folders.
    #[arg(skip)]
    pub(crate) changed: Option<BTreeSet<String>>,
    /// Deadline of an npx or uvx install.
    #[arg(skip = Duration::from_secs(600))]
    pub(crate) install_timeout: Duration,
    #[arg(skip)]
    pub(crate) net: NetConfig,
    /// Where downloaded archives are kept by digest; `None`: inside the run only
    /// (`--cache` and `--no-cache` resolved).
    #[arg(skip)]
    pub(crate) cache_dir: Option<PathBuf>,
    /// Auth types the policy accepts (empty: any).
    #[arg(skip = DEFAULT_AUTH_TYPES.iter().map(ToString::to_string).collect::<BTreeSet<_>>())]
    pub(crate) auth_types: BTreeSet<String>,
    /// Also open a session and probe the session methods (`matrix`).
    #[arg(skip)]
    pub(crate) probe: bool,
    /// `matrix --changed-only`: rows to reuse when version and distribution are unchanged.
    #[arg(skip)]
    pub(crate) reuse: Vec<Row>,
    /// TEST ONLY ([`TEST_UV_INDEX_ENV`]): a loopback package index for uv.
    #[arg(skip)]
    pub(crate) uv_test_index: Option<String>,
    /// Nothing else in this process starts children during the run (the command line):
    /// every process reparented to it is an agent's and is killed. A library caller keeps
    /// false: only processes provably an agent's are.
    #[arg(skip)]
    pub(crate) sole_parent: bool,
}

impl Options {
    /// The defaults with these network settings and this deadline per ACP request: what a
    /// library caller (or a test against a local server) needs to set.
    #[must_use]
    pub fn with_network(net: NetConfig, timeout: Duration) -> Self {
        Self {
            net,
            timeout,
            ..Self::default()
        }
    }
}

impl Default for Options {
    /// The flags' defaults; no cache folder, no loopback.
    fn default() -> Self {
        flags::defaults()
    }
}

/// The checked registry a command-line run works on, and `options` with what the flags leave
/// to the run resolved: the folders changed since `--changed-since`, the cache folder, the
/// loopback switch, the network settings (flags and configuration), the policy's auth types and
/// the test-only uv index.
pub(crate) fn prepare(options: &Options) -> Result<(Checked, Options), VerifyError> {
    let registry = &options.registry.root;
    let changed = match &options.changed_since {
        Some(rev) => Some(git::changed_folders(registry, rev)?),
        None => None,
    };
    let checked = check_registry(registry, None)?;
    if let Some(agents) = &options.agent {
        let known: BTreeSet<&str> = checked.entries.iter().map(EntryReport::id).collect();
        if let Some(unknown) = agents.iter().find(|a| !known.contains(a.as_str())) {
            return Err(VerifyError::Usage(format!(
                "--agent {unknown}: no entry of {} has this id",
                registry.display()
            )));
        }
    }
    let mut run = options.clone();
    run.changed = changed;
    run.jobs = options.jobs.max(1);
    run.net.allow_loopback = options.loopback.allow_loopback_for_tests;
    let network = &checked.config.network;
    options
        .network
        .apply(&mut run.net, &network.private_hosts, network.proxy_from_env)
        .map_err(VerifyError::Usage)?;
    run.cache_dir = match (&options.cache, options.no_cache) {
        (_, true) => None,
        (Some(dir), false) => Some(dir.clone()),
        (None, false) => crate::online::cache::default_dir(),
    };
    run.sole_parent = true;
    // Set but empty counts as unset, as for the loopback switch.
    if let Some(value) = std::env::var_os(TEST_UV_INDEX_ENV).filter(|v| !v.is_empty()) {
        let value = value.to_string_lossy();
        run.uv_test_index = Some(test_uv_index(&value).map_err(VerifyError::Usage)?);
    }
    if let Some(types) = &checked.config.verify_auth_types {
        run.auth_types = types.iter().cloned().collect();
    }
    Ok((checked, run))
}

/// The value of [`TEST_UV_INDEX_ENV`] when it is an `http` or `https` URL of a loopback
/// address (`127.0.0.0/8`, `[::1]`, `localhost`); otherwise why it is refused.
pub(crate) fn test_uv_index(value: &str) -> Result<String, String> {
    let refused = |why: &str| {
        format!(
            "{TEST_UV_INDEX_ENV}={}: {why}; it is for tests only and names a package index on this machine, such as http://127.0.0.1:8080/simple",
            crate::diagnostics::escape::visible(value)
        )
    };
    let url = url::Url::parse(value).map_err(|e| refused(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refused("not an http or https URL"));
    }
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if !loopback || !url.username().is_empty() || url.password().is_some() {
        return Err(refused("not a loopback address without credentials"));
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_flags_defaults_with_no_cache_and_no_loopback() {
        let options = Options::default();
        assert_eq!(options.jobs, 1);
        assert_eq!(options.timeout, Duration::from_secs(60));
        assert_eq!(options.install_timeout, Duration::from_secs(600));
        assert_eq!(options.archive_cap.bytes(), 512 * 1024 * 1024);
        assert_eq!(options.unpack_cap.bytes(), 2048 * 1024 * 1024);
        assert_eq!(options.auth_types.len(), DEFAULT_AUTH_TYPES.len());
        assert!(options.cache_dir.is_none() && !options.net.allow_loopback);
        assert!(!options.sole_parent && !options.probe);
        let parsed: Options = flags::parse(&["--type", "npx,uvx", "--timeout", "5"]).unwrap();
        assert_eq!(parsed.kind, Some(vec![Kind::Npx, Kind::Uvx]));
        assert_eq!(parsed.timeout, Duration::from_secs(5));
    }
}
