//! `validate --online`: turning the `--online` family of flags and the configuration into
//! [`online::Options`], running the online rules and drawing their progress bar.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::CommandError;
use crate::net::NetConfig;
use crate::online::{self, EndpointOverrides, Endpoints, Progress};
use crate::registry::{Checked, Config};

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
        }
    }
}

/// The options of one run: flags over `acp-registry.jsonc` over the defaults.
pub fn options(flags: &Flags, config: &Config) -> online::Options {
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
    }
}

/// Add the online findings of the checked entries to `checked.report`; problems of the run
/// itself (the cache) are printed to stderr as warnings.
pub fn extend(
    checked: &mut Checked,
    only: Option<&BTreeSet<String>>,
    flags: &Flags,
) -> Result<(), CommandError> {
    let options = options(flags, &checked.config);
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
    checked.add_findings(outcome.diagnostics);
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
