//! A proxy the client tunnels its https requests through ([`ProxySettings`]), taken from the
//! environment only when a caller asks ([`ProxySettings::from_env`]).
//!
//! Through a proxy, each https request is an HTTP `CONNECT host:port` to the proxy and TLS to
//! the target inside the tunnel, so the certificate checked is still the target's. What the
//! address rules become: the proxy's own address is checked like any host's (a proxy on a
//! private address must be allowed like a mirror, a loopback one only under the test switch);
//! the target's name is resolved by the proxy, not here, so its address is not checked; IP
//! literal targets, https only, redirects (each hop re-checked and routed again) and every cap
//! and deadline stay. Plain http (only ever to test servers) never goes through a proxy.

use std::fmt;
use std::net::IpAddr;

use url::{Host, Url};

use super::allow::{host_key, PrivateHost};

/// The proxy of https requests and the hosts reached directly (`NO_PROXY`).
#[derive(Clone, PartialEq, Eq)]
pub struct ProxySettings {
    url: Url,
    direct: Vec<Direct>,
}

/// One `NO_PROXY` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Direct {
    /// `*`: every host.
    All,
    /// A name and its subdomains (`corp.example`, `.corp.example`, `*.corp.example`).
    Domain(String),
    /// An address or CIDR range, matched against IP-literal hosts.
    Range(PrivateHost),
}

/// Why a proxy setting was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("proxy `{value}` from {source_name}: {reason}")]
pub struct ProxyError {
    /// The value, credentials removed.
    pub value: String,
    /// Where it came from (`HTTPS_PROXY`, …).
    pub source_name: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Debug for ProxySettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxySettings")
            .field("url", &self.to_string())
            .field("direct", &self.direct)
            .finish()
    }
}

/// The proxy's URL without its credentials.
impl fmt::Display for ProxySettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redacted(&self.url))
    }
}

fn redacted(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string()
}

impl ProxySettings {
    /// The proxy the environment names for https (`https_proxy`, `HTTPS_PROXY`, then
    /// `all_proxy`, `ALL_PROXY`; the first set and not empty), with `no_proxy` or `NO_PROXY`;
    /// `Ok(None)` when none is set. `HTTP_PROXY` is not read: the client sends nothing over
    /// plain http but to test servers.
    ///
    /// # Errors
    /// A proxy URL that is not `http://` or `https://` (`socks5://` included), or not a URL.
    pub fn from_env() -> Result<Option<ProxySettings>, ProxyError> {
        ProxySettings::from_vars(|name| std::env::var(name).ok())
    }

    /// [`ProxySettings::from_env`] over the variables `var` gives.
    ///
    /// # Errors
    /// As [`ProxySettings::from_env`].
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ProxySettings>, ProxyError> {
        let first = |names: &[&'static str]| {
            names
                .iter()
                .find_map(|name| Some((*name, var(name).filter(|v| !v.trim().is_empty())?)))
        };
        let Some((name, value)) = first(&["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"])
        else {
            return Ok(None);
        };
        let no_proxy = first(&["no_proxy", "NO_PROXY"]).map(|(_, v)| v);
        ProxySettings::new(&value, no_proxy.as_deref().unwrap_or(""), name).map(Some)
    }

    /// The proxy at `url` (`http://` or `https://`, a bare `host:port` read as `http://`),
    /// bypassed for the comma-separated `no_proxy` entries; `source_name` names where it was
    /// set, for errors.
    ///
    /// # Errors
    /// A URL that is not one, or of another scheme.
    pub fn new(url: &str, no_proxy: &str, source_name: &str) -> Result<ProxySettings, ProxyError> {
        let text = url.trim();
        let with_scheme = if text.contains("://") {
            text.to_string()
        } else {
            format!("http://{text}")
        };
        let refuse = |value: String, reason: &str| ProxyError {
            value,
            source_name: source_name.to_string(),
            reason: reason.to_string(),
        };
        let parsed = Url::parse(&with_scheme)
            .map_err(|_| refuse(text.escape_debug().to_string(), "not a URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            let reason =
                "only http:// and https:// proxies are supported (CONNECT tunnels); socks is not";
            return Err(refuse(redacted(&parsed), reason));
        }
        if parsed.host().is_none() || !matches!(parsed.path(), "" | "/") || parsed.query().is_some()
        {
            return Err(refuse(
                redacted(&parsed),
                "a proxy URL is a scheme, a host and a port",
            ));
        }
        let direct = no_proxy
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(direct_entry)
            .collect();
        Ok(ProxySettings {
            url: parsed,
            direct,
        })
    }

    /// The proxy's URL, credentials included (for the HTTP stack only).
    pub(crate) fn url(&self) -> &Url {
        &self.url
    }

    /// The proxy's host (a name, or an IP literal as the URL writes it).
    pub(crate) fn host(&self) -> &str {
        self.url.host_str().unwrap_or_default()
    }

    /// The proxy's address when its URL names it by IP literal.
    pub(crate) fn literal(&self) -> Option<IpAddr> {
        match self.url.host() {
            Some(Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
            _ => None,
        }
    }

    /// Whether the request for `wire` (the URL as sent) goes through the proxy: https, and its
    /// host not listed in `NO_PROXY`.
    pub(crate) fn routes(&self, wire: &Url) -> bool {
        if wire.scheme() != "https" {
            return false;
        }
        let host = host_key(wire.host_str().unwrap_or_default());
        let literal = match wire.host() {
            Some(Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
            _ => None,
        };
        !self.direct.iter().any(|entry| match entry {
            Direct::All => true,
            Direct::Domain(domain) => {
                literal.is_none() && (host == *domain || host.ends_with(&format!(".{domain}")))
            }
            Direct::Range(range) => literal.is_some_and(|ip| range.admits(&host, ip)),
        })
    }
}

/// A `NO_PROXY` entry: `*`, an address or range, else a domain (a port and a leading `*.` or
/// `.` ignored).
fn direct_entry(entry: &str) -> Direct {
    if entry == "*" {
        return Direct::All;
    }
    let bare = entry.trim_start_matches('[');
    let bare = match bare.split_once(']') {
        Some((inside, _)) => inside,
        None => bare,
    };
    // Also `10.0.0.1:8080`: an IPv4 address with a port.
    let unported = bare
        .rsplit_once(':')
        .filter(|(head, _)| !head.contains(':'))
        .map_or(bare, |(head, _)| head);
    for candidate in [bare, unported] {
        if let Some(range) = range_entry(candidate) {
            return Direct::Range(range);
        }
    }
    let domain = unported.trim_start_matches("*.").trim_start_matches('.');
    Direct::Domain(host_key(domain))
}

/// An address or CIDR range as [`PrivateHost`] reads them (no other check: a `NO_PROXY`
/// range only chooses direct connections, it admits nothing).
fn range_entry(text: &str) -> Option<PrivateHost> {
    let (address, prefix) = text.split_once('/').unwrap_or((text, ""));
    let ip: IpAddr = address.parse().ok()?;
    let width = if ip.is_ipv4() { 32 } else { 128 };
    let prefix: u8 = if prefix.is_empty() {
        width
    } else {
        prefix.parse().ok().filter(|p| *p <= width)?
    };
    Some(PrivateHost::Range {
        network: super::allow::mask_range(ip, prefix),
        prefix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(vars: &[(&str, &str)]) -> Result<Option<ProxySettings>, ProxyError> {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        ProxySettings::from_vars(|name| vars.get(name).cloned())
    }

    fn routes(proxy: &ProxySettings, url: &str) -> bool {
        proxy.routes(&Url::parse(url).unwrap())
    }

    #[test]
    fn the_https_proxy_comes_first_then_all_proxy_and_http_proxy_is_not_read() {
        assert_eq!(env(&[]), Ok(None));
        assert_eq!(env(&[("HTTP_PROXY", "http://p:1")]), Ok(None));
        let proxy = |vars| env(vars).unwrap().unwrap().to_string();
        assert_eq!(
            proxy(&[("ALL_PROXY", "http://all:1"), ("HTTPS_PROXY", "http://s:2")]),
            "http://s:2/"
        );
        assert_eq!(
            proxy(&[("all_proxy", "proxy.corp:3128")]),
            "http://proxy.corp:3128/"
        );
        assert_eq!(
            proxy(&[("https_proxy", "http://user:secret@p.corp:8080")]),
            "http://p.corp:8080/",
            "credentials are never shown"
        );
    }

    #[test]
    fn a_socks_or_broken_proxy_is_refused_naming_its_variable() {
        let error = env(&[("ALL_PROXY", "socks5://p:1080")]).unwrap_err();
        assert_eq!(error.source_name, "ALL_PROXY");
        assert!(error.to_string().contains("socks is not"), "{error}");
        let error = env(&[("HTTPS_PROXY", "http://u:pw@p:1/path")]).unwrap_err();
        assert!(!error.to_string().contains("pw"), "{error}");
    }

    #[test]
    fn no_proxy_sends_listed_domains_addresses_and_ranges_direct_and_plain_http_never_goes_through()
    {
        let proxy = ProxySettings::new(
            "http://proxy.corp:3128",
            "corp.example, .internal,*.lan, 10.0.0.0/8, 192.0.2.7:443, [fd00::1]",
            "test",
        )
        .unwrap();
        assert!(routes(&proxy, "https://registry.npmjs.org/x"));
        assert!(!routes(&proxy, "https://corp.example/x"));
        assert!(!routes(&proxy, "https://npm.Corp.Example./x"));
        assert!(routes(&proxy, "https://notcorp.example/x"));
        assert!(!routes(&proxy, "https://a.internal/x"));
        assert!(!routes(&proxy, "https://b.lan/x"));
        assert!(!routes(&proxy, "https://10.9.8.7/x"));
        assert!(routes(&proxy, "https://11.0.0.1/x"));
        assert!(!routes(&proxy, "https://192.0.2.7/x"));
        assert!(!routes(&proxy, "https://[fd00::1]/x"));
        assert!(
            !routes(&proxy, "http://127.0.0.1:8080/x"),
            "plain http is never proxied"
        );
        let all = ProxySettings::new("http://p:1", "*", "test").unwrap();
        assert!(!routes(&all, "https://registry.npmjs.org/x"));
    }
}
