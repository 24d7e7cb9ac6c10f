//! The private-host list and the proxy against real local servers: a mirror name that resolves
//! (through the hosts override) to a private address of this machine, admitted by name or by
//! range and refused without; a recording CONNECT proxy. Nothing leaves the machine.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::time::Duration;

use acp_test_kit::proxy::RecordingProxy;
use acp_test_kit::server::{local_private_address, routes, Reply, Server};

use super::{Client, NetConfig, NetError, ProxySettings};

fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    super::runtime::runtime().unwrap().block_on(future)
}

/// A client under the test switch (so the local server is spoken to over plain http) where
/// `mirror.test` resolves to `ip`, allowing `private`.
fn client(ip: IpAddr, private: &[&str]) -> Result<Client, NetError> {
    Client::new(NetConfig {
        retries: 0,
        timeout: Duration::from_secs(5),
        hosts: BTreeMap::from([("mirror.test".to_string(), vec![ip])]),
        private_hosts: private.iter().map(|h| (*h).to_string()).collect(),
        ..NetConfig::for_local_tests()
    })
}

/// A server on this machine's private address; `None` (the test says so and stops) on a
/// machine without one.
fn private_server() -> Option<(IpAddr, Server)> {
    let Some(ip) = local_private_address() else {
        eprintln!("this machine has no private address to serve from; nothing to check");
        return None;
    };
    let server = Server::start_on(
        ip,
        routes(vec![(
            "GET /npm/agent",
            vec![Reply::body(200, "{\"v\": 1}")],
        )]),
    );
    Some((ip, server))
}

#[test]
fn a_mirror_name_on_a_private_address_is_reached_when_listed_by_name_or_range() {
    let Some((ip, server)) = private_server() else {
        return;
    };
    let url = format!("https://mirror.test:{}/npm/agent", server.addr.port());
    let range = match ip {
        IpAddr::V4(v4) => format!(
            "{}/24",
            IpAddr::from([v4.octets()[0], v4.octets()[1], v4.octets()[2], 0])
        ),
        IpAddr::V6(_) => unreachable!("an IPv4 address"),
    };
    for allowed in [&["Mirror.Test"][..], &[range.as_str()], &[&ip.to_string()]] {
        let body = run(client(ip, allowed).unwrap().bytes(&url, 1024));
        assert_eq!(body, Ok(Some(b"{\"v\": 1}".to_vec())), "{allowed:?}");
    }
    for refused in [&[][..], &["other.test"], &["10.255.0.0/16"]] {
        let error = run(client(ip, refused).unwrap().bytes(&url, 1024)).unwrap_err();
        assert!(
            matches!(&error, NetError::Refused { addr, .. } if *addr == ip),
            "{refused:?}: {error:?}"
        );
    }
    assert_eq!(
        server.requests().len(),
        3,
        "only the allowed runs connected"
    );
}

#[test]
fn no_entry_admits_loopback_link_local_or_unspecified_for_a_name() {
    for addr in [
        "127.0.0.1",
        "169.254.169.254",
        "0.0.0.0",
        "fe80::1",
        "224.0.0.1",
    ] {
        let ip: IpAddr = addr.parse().unwrap();
        let client = Client::new(NetConfig {
            retries: 0,
            hosts: BTreeMap::from([("mirror.test".to_string(), vec![ip])]),
            private_hosts: BTreeSet::from([
                "mirror.test".to_string(),
                "0.0.0.0/0".to_string(),
                "::/0".to_string(),
            ]),
            ..NetConfig::default()
        })
        .unwrap();
        let error = run(client.bytes("https://mirror.test/x", 10)).unwrap_err();
        assert!(error.is_refused(), "{addr}: {error:?}");
    }
}

#[test]
fn a_bad_private_host_fails_the_client_naming_it() {
    let error = Client::new(NetConfig {
        private_hosts: BTreeSet::from(["10.0.0.0/40".to_string()]),
        ..NetConfig::default()
    })
    .err()
    .unwrap();
    assert!(
        error
            .to_string()
            .starts_with("`10.0.0.0/40` is not a private host"),
        "{error}"
    );
}

/// A client where `direct.test` resolves to `10.9.9.9` and https goes through `proxy`.
fn proxied(
    proxy: &RecordingProxy,
    no_proxy: &str,
    allow_loopback: bool,
) -> Result<Client, NetError> {
    let settings = ProxySettings::new(&proxy.url(), no_proxy, "test").unwrap();
    Client::new(NetConfig {
        retries: 0,
        allow_loopback,
        timeout: Duration::from_secs(5),
        hosts: BTreeMap::from([("direct.test".to_string(), vec!["10.9.9.9".parse().unwrap()])]),
        proxy: Some(settings),
        ..NetConfig::default()
    })
}

#[test]
fn https_goes_through_the_proxy_as_a_connect_tunnel_and_no_proxy_hosts_go_direct() {
    let proxy = RecordingProxy::start();
    let client = proxied(&proxy, "direct.test", true).unwrap();
    let error = run(client.bytes("https://registry.example:8443/pkg", 10)).unwrap_err();
    assert!(matches!(error, NetError::Connect(_)), "{error:?}");
    assert_eq!(proxy.seen(), ["CONNECT registry.example:8443 HTTP/1.1"]);
    // NO_PROXY: resolved here, so the guard refuses the private address before connecting.
    let error = run(client.bytes("https://direct.test/pkg", 10)).unwrap_err();
    assert!(matches!(error, NetError::Refused { .. }), "{error:?}");
    // An IP-literal target is still checked here, proxy or not.
    let error = run(client.bytes("https://10.1.2.3/pkg", 10)).unwrap_err();
    assert!(error.is_refused(), "{error:?}");
    assert_eq!(proxy.seen().len(), 1);
}

#[test]
fn a_loopback_proxy_needs_the_test_switch_and_a_private_one_the_list() {
    let proxy = RecordingProxy::start();
    let error = proxied(&proxy, "", false).err().unwrap();
    assert!(
        matches!(&error, NetError::ProxyRefused { addr, .. } if addr.is_loopback()),
        "{error:?}"
    );
    let private = ProxySettings::new("http://10.0.0.8:3128", "", "test").unwrap();
    let config = |hosts: &[&str]| NetConfig {
        proxy: Some(private.clone()),
        private_hosts: hosts.iter().map(|h| (*h).to_string()).collect(),
        ..NetConfig::default()
    };
    assert!(matches!(
        Client::new(config(&[])),
        Err(NetError::ProxyRefused { .. })
    ));
    assert!(Client::new(config(&["10.0.0.0/8"])).is_ok());
    // A named proxy is resolved by the guarded resolver like any host.
    let named = ProxySettings::new("http://proxy.test:3128", "", "test").unwrap();
    let client = Client::new(NetConfig {
        retries: 0,
        hosts: BTreeMap::from([("proxy.test".to_string(), vec!["10.0.0.8".parse().unwrap()])]),
        proxy: Some(named),
        ..NetConfig::default()
    })
    .unwrap();
    let error = run(client.bytes("https://registry.example/pkg", 10)).unwrap_err();
    assert!(error.is_refused(), "{error:?}");
}
