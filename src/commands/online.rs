//! `validate --online`: turning the `--online` family of flags and the configuration into
//! [`online::Options`], running the online rules and drawing their progress bar.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::CommandError;
use crate::diagnostics::escape;
use crate::net::NetConfig;
use crate::online::{self, EndpointOverrides, Endpoints, Progress};
use crate::registry::quarantine::{self, Quarantined};
use crate::registry::{git, Checked, Config};

/// The `--online` family of flags.
#[derive(Debug, Clone)]
pub struct Flags {
    /// `--verify-archives`.
    pub verify_archives: bool,
    /// `--archive-cap` in MiB.
    pub archive_cap_mib: u64,
    /// `--cache`: the cache folder instead of the user's.
    pub cache: Option<PathBuf>,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--cache-max-age`.
    pub cache_max_age: Duration,
    /// `--npm-registry`, `--pypi-url`, `--github-api` (over the configuration file).
    pub endpoints: EndpointOverrides,
    /// TEST ONLY (`ACP_REGISTRY_TEST_ALLOW_LOOPBACK=1`): admit loopback addresses, over
    /// plain http too, so tests and benchmarks can use local servers. Relaxes nothing else.
    pub allow_loopback_for_tests: bool,
    /// `--quarantine-retagged`: add each entry with an `archive-retagged` finding to
    /// `quarantine.json`.
    pub quarantine_retagged: bool,
}

impl Default for Flags {
    fn default() -> Self {
        Self {
            verify_archives: false,
            archive_cap_mib: online::DEFAULT_ARCHIVE_CAP_MIB,
            cache: None,
            no_cache: false,
            cache_max_age: Duration::from_secs(24 * 3600),
            endpoints: EndpointOverrides::default(),
            allow_loopback_for_tests: false,
            quarantine_retagged: false,
        }
    }
}

/// The options of one run: flags over `acp-registry.jsonc` over the defaults.
pub(crate) fn options(flags: &Flags, config: &Config) -> online::Options {
    online::Options {
        net: NetConfig {
            allow_loopback: flags.allow_loopback_for_tests,
            ..NetConfig::default()
        },
        endpoints: flags
            .endpoints
            .apply(config.online.apply(Endpoints::default())),
        verify_archives: flags.verify_archives,
        archive_cap: flags.archive_cap_mib.saturating_mul(1024 * 1024),
        cache_dir: match (&flags.cache, flags.no_cache) {
            (_, true) => None,
            (Some(dir), false) => Some(dir.clone()),
            (None, false) => online::cache::default_dir(),
        },
        max_age: flags.cache_max_age,
        provenance: config.provenance.clone(),
        github_token: github_token(),
        baseline: None,
    }
}

/// `GITHUB_TOKEN` when set and not empty: sent to the GitHub API's origin only.
pub(crate) fn github_token() -> Option<String> {
    std::env::var("GITHUB_TOKEN").ok().filter(|t| !t.is_empty())
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
    flags: &Flags,
) -> Result<(), CommandError> {
    let mut options = options(flags, &checked.config);
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
    let file = super::fmt::join_display(&super::display_root(root), quarantine::QUARANTINE_FILE);
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

/// done/total and the current host, on stderr when it is a terminal; nothing otherwise.
struct Bar {
    bar: ProgressBar,
}

impl Bar {
    fn new() -> Bar {
        let bar = if super::Stream::Stderr.is_terminal() {
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
