//! The entries of [`NetConfig::private_hosts`](super::NetConfig::private_hosts): which hosts
//! may resolve to a private or reserved address ([`PrivateHost`]), read from text with an
//! error that names the value and the form expected.
//!
//! - A **host name** (any case, a final dot ignored) admits the non-public addresses that name
//!   resolves to, for that name only.
//! - An **IP literal** (`10.20.0.5`, `fd00::5`) is the range of that one address.
//! - A **range** in CIDR notation (`10.20.0.0/16`, `203.0.113.0/24`, `fd00:ab::/32`) admits any
//!   host, whatever its name, whose resolved address (or URL literal) lies in the range.
//!
//! Whatever an entry says, a non-public address is admitted only when it is not loopback,
//! unspecified, link-local (cloud metadata at `169.254.169.254`), multicast or broadcast
//! ([`private_allowed`]): loopback stays the test switch's alone. A range that lies wholly in
//! one of those blocks is refused when it is read, so the mistake is said rather than ignored.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// One entry of the private-host list: a host name, or a range of addresses.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrivateHost {
    /// A host name, lower case, without a final dot.
    Name(String),
    /// The addresses whose first `prefix` bits are `network`'s (an IP literal is the range of
    /// its own full length).
    Range {
        /// The first address of the range (host bits zero).
        network: IpAddr,
        /// How many leading bits are fixed: at most 32 for IPv4, 128 for IPv6.
        prefix: u8,
    },
}

/// Why an entry of the private-host list was refused; the message names the value and the
/// form expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a private host: {reason}; write a host name (`npm.corp.example`), an IP address (`10.20.0.5`) or a CIDR range (`10.20.0.0/16`, `fd00:ab::/32`)")]
pub struct PrivateHostError {
    /// The value as given (control characters escaped).
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

impl PrivateHost {
    /// Whether this entry admits the non-public address `ip` for `host` (the URL's host: a
    /// name, or an IP literal as the URL writes it). [`private_allowed`] still has the last
    /// word.
    pub(crate) fn admits(&self, host: &str, ip: IpAddr) -> bool {
        match self {
            PrivateHost::Name(name) => *name == host_key(host),
            PrivateHost::Range { network, prefix } => in_range(canonical(ip), *network, *prefix),
        }
    }
}

impl FromStr for PrivateHost {
    type Err = PrivateHostError;

    fn from_str(text: &str) -> Result<PrivateHost, PrivateHostError> {
        let refuse = |reason: &str| PrivateHostError {
            value: text.escape_debug().to_string(),
            reason: reason.to_string(),
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(refuse("it is empty"));
        }
        if trimmed.contains("://") {
            return Err(refuse("a host name has no port or scheme"));
        }
        if let Some((address, prefix)) = trimmed.split_once('/') {
            return range(address, prefix).map_err(|reason| refuse(&reason));
        }
        let bare = trimmed.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            let ip = canonical(ip);
            let prefix = if ip.is_ipv4() { 32 } else { 128 };
            return checked_range(ip, prefix).map_err(|reason| refuse(&reason));
        }
        name(trimmed).map_err(|reason| refuse(&reason))
    }
}

impl fmt::Display for PrivateHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrivateHost::Name(name) => f.write_str(name),
            PrivateHost::Range { network, prefix } => match (network, prefix) {
                (IpAddr::V4(_), 32) | (IpAddr::V6(_), 128) => write!(f, "{network}"),
                _ => write!(f, "{network}/{prefix}"),
            },
        }
    }
}

/// `ADDRESS/PREFIX`: the prefix in range, no host bits set, not wholly a forbidden block.
fn range(address: &str, prefix: &str) -> Result<PrivateHost, String> {
    let ip: IpAddr = address
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .map_err(|_| {
            format!(
                "`{}` before the `/` is not an IP address",
                address.escape_debug()
            )
        })?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let prefix: u8 = prefix.parse().ok().filter(|p| *p <= max).ok_or_else(|| {
        format!(
            "the prefix length `{}` is not a number from 0 to {max}",
            prefix.escape_debug()
        )
    })?;
    let network = mask(ip, prefix);
    if network != ip {
        return Err(format!(
            "{ip}/{prefix} has bits set past the prefix; the range is written {network}/{prefix}"
        ));
    }
    checked_range(ip, prefix)
}

/// A range, unless every address in it is one a listed host may never reach.
fn checked_range(network: IpAddr, prefix: u8) -> Result<PrivateHost, String> {
    // A range is wholly forbidden when its first and last addresses fall in the same
    // forbidden block (each block is itself a CIDR range).
    let last = last_address(network, prefix);
    if let Some(block) = forbidden_block(network).filter(|b| Some(*b) == forbidden_block(last)) {
        return Err(format!(
            "every address in it is {block}, which a private host may never reach{}",
            if block == "loopback" {
                " (loopback is only for tests: ACP_REGISTRY_TEST_ALLOW_LOOPBACK)"
            } else {
                ""
            }
        ));
    }
    Ok(PrivateHost::Range { network, prefix })
}

/// A host name: labels of letters, digits and `-`, separated by dots.
fn name(text: &str) -> Result<PrivateHost, String> {
    let key = host_key(text);
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if key.contains('*') {
        return Err(
            "wildcards are not supported (list each name, or the addresses as a CIDR range)".into(),
        );
    }
    if key.contains(':') {
        return Err("a host name has no port or scheme".into());
    }
    if key.len() > 253 || !key.split('.').all(label_ok) {
        return Err("it is not a host name (letters, digits, `-` and dots)".into());
    }
    Ok(PrivateHost::Name(key))
}

/// Host names compare in any case, with or without the final dot of a fully qualified name.
pub(crate) fn host_key(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
pub(crate) fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn bits(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

fn from_bits(value: u128, like: IpAddr) -> IpAddr {
    match like {
        // Only the low 32 bits are ever set for an IPv4 value.
        IpAddr::V4(_) => IpAddr::V4(u32::try_from(value).unwrap_or(u32::MAX).into()),
        IpAddr::V6(_) => IpAddr::V6(value.into()),
    }
}

/// The mask of the host bits of a `prefix`-bit range in a `width`-bit address.
fn host_mask(prefix: u8, width: u8) -> u128 {
    let host_bits = u32::from(width - prefix.min(width));
    if host_bits == 0 {
        0
    } else {
        u128::MAX >> (128 - host_bits)
    }
}

/// `ip` with the bits past `prefix` cleared: the first address of its range.
pub(crate) fn mask_range(ip: IpAddr, prefix: u8) -> IpAddr {
    mask(canonical(ip), prefix)
}

fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    let (value, width) = bits(ip);
    from_bits(value & !host_mask(prefix, width), ip)
}

fn last_address(network: IpAddr, prefix: u8) -> IpAddr {
    let (value, width) = bits(network);
    from_bits(value | host_mask(prefix, width), network)
}

fn in_range(ip: IpAddr, network: IpAddr, prefix: u8) -> bool {
    ip.is_ipv4() == network.is_ipv4() && mask(ip, prefix) == network
}

/// What a listed private host may resolve to: private and reserved ranges, but never the
/// blocks [`forbidden_block`] names.
pub(crate) fn private_allowed(ip: IpAddr) -> bool {
    forbidden_block(ip).is_none()
}

/// The block `ip` is in when no listed host may reach it: loopback (the test switch's alone),
/// unspecified (`0.0.0.0/8` reaches this machine), link-local (cloud metadata services live
/// there), multicast, broadcast (and the rest of `240.0.0.0/4`), IPv4-compatible IPv6.
fn forbidden_block(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => match v4.octets() {
            [0, ..] => Some("unspecified (0.0.0.0/8)"),
            [127, ..] => Some("loopback"),
            [169, 254, ..] => Some("link-local (169.254.0.0/16, cloud metadata)"),
            [224..=239, ..] => Some("multicast"),
            [240..=255, ..] => Some("broadcast or reserved (240.0.0.0/4)"),
            _ => None,
        },
        IpAddr::V6(v6) => {
            let s = v6.segments();
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() || s[0..6] == [0, 0, 0, 0, 0, 0] {
                Some("unspecified or IPv4-compatible (::/96)")
            } else if (s[0] & 0xff00) == 0xff00 {
                Some("multicast")
            } else if (s[0] & 0xffc0) == 0xfe80 {
                Some("link-local (fe80::/10)")
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<String, String> {
        text.parse::<PrivateHost>()
            .map(|h| h.to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn names_addresses_and_ranges_are_read_and_written_back() {
        assert_eq!(parse("Npm.Corp.Example."), Ok("npm.corp.example".into()));
        assert_eq!(parse("10.20.0.5"), Ok("10.20.0.5".into()));
        assert_eq!(parse("[fd00::5]"), Ok("fd00::5".into()));
        assert_eq!(parse("10.20.0.0/16"), Ok("10.20.0.0/16".into()));
        assert_eq!(parse("203.0.113.0/24"), Ok("203.0.113.0/24".into()));
        assert_eq!(parse("fd00:ab::/32"), Ok("fd00:ab::/32".into()));
        assert_eq!(parse("::ffff:10.1.2.3"), Ok("10.1.2.3".into()));
        assert_eq!(parse("0.0.0.0/0"), Ok("0.0.0.0/0".into()));
    }

    #[test]
    fn a_bad_entry_names_the_value_and_the_form_expected() {
        for (text, reason) in [
            (
                "10.0.0.0/33",
                "the prefix length `33` is not a number from 0 to 32",
            ),
            ("10.0.0.0/x", "the prefix length `x`"),
            (
                "10.0.0.300/8",
                "`10.0.0.300` before the `/` is not an IP address",
            ),
            ("10.1.0.0/8", "the range is written 10.0.0.0/8"),
            ("127.0.0.0/8", "loopback is only for tests"),
            ("127.0.0.1", "loopback"),
            ("::1", "loopback"),
            ("169.254.169.254", "link-local"),
            ("169.254.0.0/16", "link-local"),
            ("fe80::/10", "link-local"),
            ("224.0.0.0/4", "multicast"),
            ("0.0.0.0", "unspecified"),
            ("255.255.255.255", "broadcast"),
            ("*.corp.example", "wildcards"),
            ("npm.corp.example:8443", "no port"),
            ("https://npm.corp.example", "no port or scheme"),
            ("bad_name.example", "not a host name"),
            ("", "empty"),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(reason), "{text}: {error}");
            assert!(
                error.contains("CIDR range (`10.20.0.0/16`"),
                "{text}: {error}"
            );
        }
    }

    #[test]
    fn a_range_admits_its_addresses_for_any_name_and_a_name_only_itself() {
        let range: PrivateHost = "10.20.0.0/16".parse().unwrap();
        let ip = |t: &str| t.parse::<IpAddr>().unwrap();
        assert!(range.admits("anything.example", ip("10.20.9.9")));
        assert!(range.admits("anything.example", ip("::ffff:10.20.0.1")));
        assert!(!range.admits("anything.example", ip("10.21.0.1")));
        assert!(!range.admits("anything.example", ip("fd00::1")));
        let v6: PrivateHost = "fd00:ab::/32".parse().unwrap();
        assert!(v6.admits("x", ip("fd00:ab:1::7")));
        assert!(!v6.admits("x", ip("fd00:ac::7")));
        let name: PrivateHost = "Mirror.Example".parse().unwrap();
        assert!(name.admits("mirror.example.", ip("10.0.0.1")));
        assert!(!name.admits("other.example", ip("10.0.0.1")));
        let all: PrivateHost = "0.0.0.0/0".parse().unwrap();
        assert!(all.admits("x", ip("127.0.0.1")), "the range matches...");
        assert!(
            !private_allowed(ip("127.0.0.1")),
            "...but loopback is never allowed"
        );
    }
}
