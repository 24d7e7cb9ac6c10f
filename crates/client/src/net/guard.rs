//! Which URLs and addresses the client may reach: https only, public addresses only, except
//! for the hosts and ranges [`NetConfig::private_hosts`](super::NetConfig::private_hosts) lists
//! (see [`PrivateHost`]).
//!
//! Names are resolved by [`GuardedResolver`], which refuses a name as soon as one of its
//! addresses is not public, so the address checked is the address connected to (a second,
//! rebinding DNS answer is never consulted). IP literals in URLs never reach a resolver, so
//! [`check_url`] refuses non-public ones before any request.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use super::allow::{canonical, private_allowed, PrivateHost, PrivateHostError};
use super::error::{Blocked, NetError};

/// Whether the client may connect to `ip`. `allow_loopback` is the test-only switch.
pub(crate) fn permitted(ip: IpAddr, allow_loopback: bool) -> bool {
    is_public(ip) || (allow_loopback && canonical(ip).is_loopback())
}

/// What the client may reach, from its [`NetConfig`](super::NetConfig): the test-only loopback
/// switch and the hosts allowed non-public addresses ([`PrivateHost`]: names and ranges).
#[derive(Debug, Clone, Default)]
pub(crate) struct Reach {
    pub allow_loopback: bool,
    pub private_hosts: Arc<Vec<PrivateHost>>,
}

impl Reach {
    /// The reach of a configuration; an entry of `private_hosts` that is neither a host name,
    /// an IP address nor a CIDR range is refused, naming it.
    pub(crate) fn new(
        allow_loopback: bool,
        private_hosts: &BTreeSet<String>,
    ) -> Result<Reach, PrivateHostError> {
        let private_hosts = private_hosts
            .iter()
            .map(|h| h.parse::<PrivateHost>())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Reach {
            allow_loopback,
            private_hosts: Arc::new(private_hosts),
        })
    }

    /// Whether the client may connect to `ip` for `host` (a name, or an IP literal as the URL
    /// writes it): a permitted address, or a private one a listed entry admits.
    pub(crate) fn permits(&self, host: &str, ip: IpAddr) -> bool {
        permitted(ip, self.allow_loopback)
            || (private_allowed(ip) && self.private_hosts.iter().any(|h| h.admits(host, ip)))
    }
}

/// Globally routable unicast: not loopback, private, link-local, CGNAT, multicast,
/// unspecified, broadcast, documentation, benchmarking or reserved.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && (c == 0 || c == 2))
        || (a == 198 && (b == 18 || b == 19))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 224)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0];
    if nat64 {
        return is_public_v4(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        ));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || s[0..6] == [0, 0, 0, 0, 0, 0] // IPv4-compatible (deprecated)
        || (s[0] & 0xff00) == 0xff00 // multicast
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] == 0x2001 && s[1] == 0x0db8)) // documentation
}

/// Check a URL (the first one or a redirect target) before it is requested: `https`, or
/// plain `http` to a loopback IP literal under the test-only switch; an IP-literal host must
/// be permitted ([`Reach::permits`]).
pub(crate) fn check_url(url: &Url, reach: &Reach) -> Result<(), NetError> {
    let allow_loopback = reach.allow_loopback;
    let literal = match url.host() {
        Some(Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Some(Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
        Some(Host::Domain(_)) => None,
        None => return Err(NetError::InvalidUrl(url.to_string())),
    };
    if let Some(ip) = literal {
        if !reach.permits(url.host_str().unwrap_or_default(), ip) {
            return Err(NetError::Refused {
                url: url.to_string(),
                addr: ip,
            });
        }
    }
    let loopback_literal = literal.is_some_and(|ip| canonical(ip).is_loopback());
    match url.scheme() {
        "https" => Ok(()),
        "http" if allow_loopback && loopback_literal => Ok(()),
        _ => Err(NetError::NotHttps(url.to_string())),
    }
}

/// The URL actually requested: under the test-only switch an `https` URL goes to a local
/// test server over plain http when the address it leads to is one the test serves from, a
/// non-public address the run admits: a loopback or listed private IP literal, or a name the
/// test's hosts override (`hosts`) answers with such addresses only. Every other URL, and every
/// URL without the switch, is unchanged.
pub(crate) fn wire_url(url: &Url, reach: &Reach, hosts: &BTreeMap<String, Vec<IpAddr>>) -> Url {
    let local = |host: &str, ip: IpAddr| !is_public(ip) && reach.permits(host, ip);
    let host = url.host_str().unwrap_or_default();
    let test_served = match url.host() {
        Some(Host::Ipv4(v4)) => local(host, IpAddr::V4(v4)),
        Some(Host::Ipv6(v6)) => local(host, IpAddr::V6(v6)),
        Some(Host::Domain(name)) => hosts
            .get(&name.to_ascii_lowercase())
            .is_some_and(|addrs| !addrs.is_empty() && addrs.iter().all(|ip| local(name, *ip))),
        None => false,
    };
    let mut wire = url.clone();
    if reach.allow_loopback && test_served && url.scheme() == "https" {
        // An explicit port stays; the default https port is kept as written.
        let port = url.port_or_known_default();
        if wire.set_scheme("http").is_ok() {
            let _ = wire.set_port(port);
        }
    }
    wire
}

/// The client's only resolver: a fixed hosts map first (tests inject one), then the system.
pub(crate) struct GuardedResolver {
    pub reach: Reach,
    pub hosts: Arc<BTreeMap<String, Vec<IpAddr>>>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let fixed = self.hosts.get(&host).cloned();
        let reach = self.reach.clone();
        Box::pin(async move {
            let addrs: Vec<IpAddr> = match fixed {
                Some(addrs) => addrs,
                None => tokio::net::lookup_host((host.as_str(), 0))
                    .await
                    .map_err(|e| Blocked::Unresolved {
                        host: host.clone(),
                        reason: e.to_string(),
                    })?
                    .map(|a| a.ip())
                    .collect(),
            };
            if addrs.is_empty() {
                return Err(Blocked::Unresolved {
                    host,
                    reason: "no addresses".into(),
                }
                .into());
            }
            if let Some(&addr) = addrs.iter().find(|a| !reach.permits(&host, **a)) {
                return Err(Blocked::Address { host, addr }.into());
            }
            let addrs: Addrs = Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for text in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "224.0.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "ff02::1",
            "::ffff:10.0.0.1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
            "2001:db8::1",
        ] {
            assert!(
                !is_public(text.parse().unwrap()),
                "{text} counted as public"
            );
        }
        for text in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
        ] {
            assert!(
                is_public(text.parse().unwrap()),
                "{text} counted as non-public"
            );
        }
    }

    #[test]
    fn the_test_switch_allows_loopback_only() {
        assert!(permitted("127.0.0.9".parse().unwrap(), true));
        assert!(permitted("::1".parse().unwrap(), true));
        assert!(!permitted("127.0.0.1".parse().unwrap(), false));
        assert!(!permitted("10.0.0.1".parse().unwrap(), true));
        assert!(!permitted("169.254.169.254".parse().unwrap(), true));
    }

    #[test]
    fn plain_http_needs_the_switch_and_a_loopback_literal() {
        let check = |u: &str, allow| {
            let reach = Reach {
                allow_loopback: allow,
                ..Reach::default()
            };
            check_url(&Url::parse(u).unwrap(), &reach)
        };
        assert!(check("https://example.com/a", false).is_ok());
        assert!(check("http://example.com/a", false).is_err());
        assert!(check("http://example.com/a", true).is_err());
        assert!(check("http://localhost:8080/a", true).is_err());
        assert!(check("http://127.0.0.1:8080/a", true).is_ok());
        assert!(check("http://127.0.0.1:8080/a", false).is_err());
        assert!(check("https://10.0.0.1/a", true).is_err());
        assert!(check("https://[::ffff:192.168.0.1]/a", true).is_err());
        assert!(check("ftp://example.com/a", true).is_err());
    }
}

#[cfg(test)]
mod private_tests {
    use super::*;
    use std::str::FromStr;

    fn reach(private: &[&str]) -> Reach {
        let hosts: BTreeSet<String> = private.iter().map(|h| (*h).to_string()).collect();
        Reach::new(false, &hosts).unwrap()
    }

    /// What the guarded resolver answers for `name` when the hosts map says it is `addr`
    /// (no DNS, no connection).
    fn resolve(reach: Reach, name: &str, addr: &str) -> Result<Vec<IpAddr>, String> {
        let hosts = BTreeMap::from([(name.to_string(), vec![addr.parse().unwrap()])]);
        let resolver = GuardedResolver {
            reach,
            hosts: Arc::new(hosts),
        };
        let name = Name::from_str(name).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime
            .block_on(resolver.resolve(name))
            .map(|addrs| addrs.map(|a| a.ip()).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_listed_host_may_resolve_to_a_private_or_reserved_address() {
        for addr in ["10.1.2.3", "192.168.0.7", "203.0.113.80", "fd12::1"] {
            let refused = resolve(reach(&[]), "mirror.example", addr).unwrap_err();
            assert!(refused.contains("non-public"), "{addr}: {refused}");
            let listed = resolve(reach(&["Mirror.Example."]), "mirror.example", addr);
            assert_eq!(listed, Ok(vec![addr.parse().unwrap()]), "{addr}");
            let other = resolve(reach(&["mirror.example"]), "other.example", addr);
            assert!(other.is_err(), "only the listed name: {addr}");
        }
    }

    #[test]
    fn a_listed_host_still_may_not_reach_loopback_link_local_or_unspecified() {
        for addr in [
            "127.0.0.1",
            "::1",
            "169.254.169.254",
            "fe80::1",
            "0.0.0.0",
            "224.0.0.1",
        ] {
            let listed = resolve(reach(&["mirror.example"]), "mirror.example", addr);
            assert!(listed.is_err(), "{addr} was admitted");
        }
    }

    #[test]
    fn the_answering_address_and_ip_literals_are_judged_by_the_same_list() {
        let listed = reach(&["mirror.example", "10.9.9.9"]);
        let ip: IpAddr = "10.1.2.3".parse().unwrap();
        assert!(listed.permits("mirror.example", ip));
        assert!(!reach(&[]).permits("mirror.example", ip));
        assert!(!listed.permits("elsewhere.example", ip));
        let literal = Url::parse("https://10.9.9.9/registry.json").unwrap();
        assert!(check_url(&literal, &listed).is_ok());
        assert!(check_url(&literal, &reach(&[])).is_err());
        let plain = Url::parse("http://mirror.example/registry.json").unwrap();
        assert!(check_url(&plain, &listed).is_err(), "still https only");
    }
}

#[cfg(test)]
mod wire_tests {
    use super::*;

    fn reach(allow_loopback: bool, private: &[&str]) -> Reach {
        let private = private.iter().map(|h| (*h).to_string()).collect();
        Reach::new(allow_loopback, &private).unwrap()
    }

    #[test]
    fn only_loopback_https_under_the_test_switch_goes_over_http() {
        let none = BTreeMap::new();
        let local = Url::parse("https://127.0.0.1:8443/a?b").unwrap();
        let wire = |url: &Url, allow| wire_url(url, &reach(allow, &[]), &none);
        assert_eq!(wire(&local, true).as_str(), "http://127.0.0.1:8443/a?b");
        assert_eq!(wire(&local, false), local);
        let public = Url::parse("https://example.com/a").unwrap();
        assert_eq!(wire(&public, true), public);
        let default_port = Url::parse("https://[::1]/x").unwrap();
        assert_eq!(wire(&default_port, true).as_str(), "http://[::1]:443/x");
    }

    #[test]
    fn under_the_switch_an_admitted_private_address_is_served_over_http_too() {
        let mirror = Url::parse("https://mirror.test:8443/npm").unwrap();
        let hosts = BTreeMap::from([(
            "mirror.test".to_string(),
            vec!["192.0.2.2".parse().unwrap()],
        )]);
        let listed = reach(true, &["mirror.test"]);
        assert_eq!(wire_url(&mirror, &listed, &hosts).scheme(), "http");
        assert_eq!(
            wire_url(&mirror, &reach(true, &[]), &hosts),
            mirror,
            "not admitted"
        );
        let strict = reach(false, &["mirror.test"]);
        assert_eq!(wire_url(&mirror, &strict, &hosts), mirror, "no switch");
        let literal = Url::parse("https://192.0.2.2:8443/npm").unwrap();
        let range = reach(true, &["192.0.2.0/24"]);
        assert_eq!(wire_url(&literal, &range, &hosts).scheme(), "http");
        assert_eq!(wire_url(&literal, &reach(true, &[]), &hosts), literal);
        assert_eq!(
            wire_url(&literal, &reach(false, &["192.0.2.0/24"]), &hosts),
            literal
        );
    }
}
