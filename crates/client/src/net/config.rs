//! The client's limits, deadlines and safety switches, with the defaults a real run uses.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::time::Duration;

use super::proxy::ProxySettings;

/// The environment variable behind the test-only loopback switch (`=1` turns it on).
pub const TEST_ALLOW_LOOPBACK_ENV: &str = "ACP_REGISTRY_TEST_ALLOW_LOOPBACK";

/// The client's limits, deadlines and safety switches.
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// Requests in flight at once, over all hosts.
    pub max_in_flight: usize,
    /// Requests in flight at once to one host name.
    pub per_host: usize,
    /// Deadline of one metadata or probe request, body included.
    pub timeout: Duration,
    /// Deadline of one archive download as a whole: every attempt, retry wait and body
    /// included.
    pub download_deadline: Duration,
    /// The slowest an archive download may be, in bytes per second averaged over each
    /// [`NetConfig::rate_window`] of its body; a slower one fails (and is not retried).
    pub min_download_rate: u64,
    /// The window over which [`NetConfig::min_download_rate`] is measured.
    pub rate_window: Duration,
    /// Deadline of opening a connection.
    pub connect_timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// The first retry's wait; each further one doubles it (with jitter).
    pub backoff_base: Duration,
    /// Longest `Retry-After` honoured; longer requests wait this long.
    pub retry_after_cap: Duration,
    /// Redirects followed at most.
    pub max_redirects: usize,
    /// Size cap of a metadata document (npm, `PyPI`).
    pub document_cap: u64,
    /// Test-only: admit loopback addresses, over plain http too. Never set it in production.
    pub allow_loopback: bool,
    /// Names answered without DNS (tests use it to simulate what a name resolves to). Its
    /// addresses are checked like any other.
    pub hosts: BTreeMap<String, Vec<IpAddr>>,
    /// Hosts that may resolve to non-public addresses: a company's mirror of the registry, or
    /// package registries this machine reaches at a reserved address. Each entry is a host
    /// name (any case), an IP address or a CIDR range admitting any host whose address is in
    /// it (see [`PrivateHost`](super::PrivateHost)); a bad entry makes [`Client::new`](super::Client::new)
    /// fail naming it. Still https only; loopback, unspecified, link-local (cloud metadata),
    /// multicast and broadcast addresses stay refused for them (loopback is
    /// [`NetConfig::allow_loopback`]'s alone).
    pub private_hosts: BTreeSet<String>,
    /// The proxy https requests are tunnelled through (`CONNECT`), and the hosts reached
    /// directly; `None` (the default): no proxy, whatever the environment says. Callers opt in
    /// with [`ProxySettings::from_env`]. The proxy's own address is checked like a host's.
    pub proxy: Option<ProxySettings>,
    /// PEM bundles of certificate authorities trusted besides the built-in (Mozilla) roots: a
    /// company mirror's, or a TLS-inspecting proxy's. Empty by default; a bundle without a
    /// certificate makes [`Client::new`](super::Client::new) fail.
    pub extra_roots: Vec<Vec<u8>>,
}

impl Default for NetConfig {
    fn default() -> Self {
        Self {
            max_in_flight: 64,
            per_host: 4,
            timeout: Duration::from_secs(20),
            download_deadline: Duration::from_secs(600),
            min_download_rate: 32 * 1024,
            rate_window: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            retries: 3,
            backoff_base: Duration::from_millis(250),
            retry_after_cap: Duration::from_secs(30),
            max_redirects: 5,
            document_cap: 32 * 1024 * 1024,
            allow_loopback: false,
            hosts: BTreeMap::new(),
            private_hosts: BTreeSet::new(),
            proxy: None,
            extra_roots: Vec::new(),
        }
    }
}

#[cfg(test)]
impl NetConfig {
    /// What the crate's tests against a local server use: loopback allowed, no retries, 5 s
    /// per request, 10 s per download.
    pub(crate) fn for_local_tests() -> NetConfig {
        NetConfig {
            allow_loopback: true,
            retries: 0,
            timeout: Duration::from_secs(5),
            download_deadline: Duration::from_secs(10),
            ..NetConfig::default()
        }
    }
}
