//! `validate --online`: the `--online` family of flags and the endpoint overrides `update`
//! shares ([`OnlineFlags`], [`EndpointFlags`]), turning them and the configuration into
//! [`online::Options`], running the online rules and drawing their progress bar. Shared
//! plumbing of the commands, not a command.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::display::{display_root, join_display};
use super::error::CommandError;
use super::stream::Stream;
use crate::diagnostics::escape;
use crate::flags::{self, ByteSize, Loopback, NetworkFlags};
use crate::net::NetConfig;
use crate::online::{self, EndpointOverrides, Endpoints, GitHubToken, Progress};
use crate::registry::quarantine::{self, Quarantined};
use crate::registry::{git, Checked, Config};

/// The `--online` family of flags (`validate`'s "Online checks"); the field docs are their
/// `--help`.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Online checks")]
#[allow(clippy::doc_markdown)] // The docs are `--help` text, written for users.
pub struct OnlineFlags {
    /// Also check over the network: archive URLs answer, npm and PyPI pins exist.
    #[arg(long)]
    pub online: bool,
    /// Download every archive and compare its sha256 with the pin (implies --online); a pin
    /// that no longer matches at an unchanged version is `archive-retagged`.
    #[arg(long)]
    pub verify_archives: bool,
    /// Add every entry with an `archive-retagged` finding to quarantine.json (comments kept;
    /// created when absent).
    #[arg(long, requires = "verify_archives")]
    pub quarantine_retagged: bool,
    /// Largest archive --verify-archives downloads, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = ByteSize::mib(online::DEFAULT_ARCHIVE_CAP_MIB))]
    pub archive_cap: ByteSize,
    /// Cache folder for online successes [default: the user's cache folder].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Neither read nor write the cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// Age in seconds after which a cached success is checked again.
    #[arg(long, value_name = "SECONDS", value_parser = flags::seconds, default_value = "86400")]
    pub cache_max_age: Duration,
    /// The endpoint overrides and the loopback switch.
    #[command(flatten)]
    pub endpoints: EndpointFlags,
}

impl Default for OnlineFlags {
    fn default() -> Self {
        flags::defaults()
    }
}

impl OnlineFlags {
    /// Whether the online rules run: `--online`, or `--verify-archives` (which implies it).
    pub fn enabled(&self) -> bool {
        self.online || self.verify_archives
    }
}

/// The endpoint overrides, the network flags and the loopback switch of `validate --online`
/// and `update`.
#[derive(Debug, Clone, Default, clap::Args)]
#[allow(clippy::doc_markdown)] // The field docs are `--help` text, written for users.
pub struct EndpointFlags {
    /// npm registry base URL (overrides `online.npm_registry`).
    #[arg(long, value_name = "URL")]
    pub npm_registry: Option<String>,
    /// PyPI base URL (overrides `online.pypi`).
    #[arg(long, value_name = "URL")]
    pub pypi_url: Option<String>,
    /// GitHub API base URL (overrides `online.github_api`).
    #[arg(long, value_name = "URL")]
    pub github_api: Option<String>,
    /// `--allow-private-host` and `--proxy-from-env`.
    #[command(flatten)]
    pub network: NetworkFlags,
    /// The test-only loopback switch.
    #[command(flatten)]
    pub loopback: Loopback,
}

impl EndpointFlags {
    /// The network settings of a run: the loopback switch, the private hosts of these flags
    /// and of the configuration's `network` section, and the proxy when either asks for it.
    pub(crate) fn net(&self, config: &Config) -> Result<NetConfig, CommandError> {
        let mut net = NetConfig {
            allow_loopback: self.loopback.allow_loopback_for_tests,
            ..NetConfig::default()
        };
        let network = &config.network;
        self.network
            .apply(&mut net, &network.private_hosts, network.proxy_from_env)
            .map_err(CommandError::Usage)?;
        Ok(net)
    }

    /// The endpoints these flags override (over the configuration's).
    pub fn overrides(&self) -> EndpointOverrides {
        EndpointOverrides {
            npm: self.npm_registry.clone(),
            pypi: self.pypi_url.clone(),
            github_api: self.github_api.clone(),
        }
    }
}

/// The options of one run: flags over `acp-registry.jsonc` over the defaults.
pub(crate) fn options(
    flags: &OnlineFlags,
    config: &Config,
) -> Result<online::Options, CommandError> {
    let endpoints = flags
        .endpoints
        .overrides()
        .apply(config.online.apply(Endpoints::default()));
    Ok(online::Options {
        net: flags.endpoints.net(config)?,
        github_token: github_token(flags.endpoints.github_api.as_deref(), &endpoints.github_api),
        endpoints,
        verify_archives: flags.verify_archives,
        archive_cap: flags.archive_cap.bytes(),
        cache_dir: match (&flags.cache, flags.no_cache) {
            (_, true) => None,
            (Some(dir), false) => Some(dir.clone()),
            (None, false) => online::cache::default_dir(),
        },
        max_age: flags.cache_max_age,
        provenance: config.provenance.clone(),
        baseline: None,
    })
}

/// `GITHUB_TOKEN` (when set and not empty) and the APIs trusted with it besides the default:
/// `--github-api` (`flag`) and `GITHUB_API_URL`, never the configuration. When the run's API
/// (`api`) is not trusted, says so once on stderr: its requests go without the token.
pub(crate) fn github_token(flag: Option<&str>, api: &str) -> GitHubToken {
    let from_env = std::env::var("GITHUB_API_URL")
        .ok()
        .filter(|u| !u.is_empty());
    let trusted = flag
        .map(str::to_owned)
        .into_iter()
        .chain(from_env)
        .collect();
    let token = GitHubToken::new(std::env::var("GITHUB_TOKEN").ok(), trusted);
    if let Some(warning) = token.withheld(api) {
        eprintln!("warning: {}", escape::terminal(&warning));
    }
    token
}

/// Add the online findings of the checked entries to `checked.report`; problems of the run
/// itself (the cache) are printed to stderr as warnings. Pins are compared with the
/// manifests at `changed_since`, else at git's `HEAD` (`archive-retagged`); with
/// `--quarantine-retagged` the retagged entries are added to `quarantine.json`.
pub(crate) fn extend(
    checked: &mut Checked,
    root: &Path,
    only: Option<&BTreeSet<String>>,
    changed_since: Option<&str>,
    flags: &OnlineFlags,
) -> Result<(), CommandError> {
    let mut options = options(flags, &checked.config)?;
    if flags.verify_archives {
        let baseline = git::Baseline::at(root, changed_since.unwrap_or("HEAD"));
        options.baseline = baseline.map(|b| Arc::new(b) as Arc<dyn online::Baseline>);
    }
    let progress = Arc::new(Bar::new());
    let outcome = online::check(
        &checked.entries,
        only,
        &checked.config.policy,
        &options,
        progress.clone(),
    )?;
    progress.bar.finish_and_clear();
    for warning in &outcome.warnings {
        eprintln!("warning: {warning}");
    }
    if flags.quarantine_retagged && !outcome.retagged.is_empty() {
        quarantine_retagged(root, &outcome.retagged)?;
    }
    checked.add_findings(outcome.diagnostics);
    Ok(())
}

/// Add the retagged ids to `quarantine.json` and say on stderr what was done.
fn quarantine_retagged(
    root: &Path,
    retagged: &std::collections::BTreeMap<String, String>,
) -> Result<(), CommandError> {
    let outcome = quarantine::add(root, retagged)?;
    let file = join_display(&display_root(root), quarantine::QUARANTINE_FILE);
    let mut err = std::io::stderr();
    for (id, result) in outcome {
        let line = match result {
            Quarantined::Added(reason) => format!("quarantined `{id}` in {file}: {reason}"),
            Quarantined::Already(reason) => {
                format!("`{id}` is already quarantined in {file} ({reason}); left as it is")
            }
        };
        // Ids and reasons come from the registry.
        let _ = writeln!(err, "{}", escape::terminal(&line));
    }
    Ok(())
}

/// done/total and the current host, on stderr when it is a terminal (and no `--quiet`).
struct Bar {
    bar: ProgressBar,
}

impl Bar {
    fn new() -> Bar {
        let bar = if Stream::Stderr.shows_progress() {
            ProgressBar::new(0)
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} {wide_msg}")
                .expect("valid template"),
        );
        Bar { bar }
    }
}

impl Progress for Bar {
    fn start(&self, total: usize) {
        self.bar.set_length(total as u64);
    }

    fn working(&self, host: &str) {
        self.bar.set_message(host.to_string());
    }

    fn done(&self) {
        self.bar.inc(1);
    }
}
