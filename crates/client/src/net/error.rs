//! Why a request failed ([`NetError`]), and reqwest's errors mapped onto it.

use std::net::IpAddr;
use std::time::Duration;

use url::Url;

/// Why a request failed. Cloneable so one failure can answer every duplicate request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// The URL (or a redirect's target) is not https.
    #[error("`{0}` is not an https URL")]
    NotHttps(String),
    /// The host resolves to an address that is not public.
    #[error("`{url}` leads to the non-public address {addr}")]
    Refused {
        /// The URL asked.
        url: String,
        /// The refused address.
        addr: IpAddr,
    },
    /// The text is not a URL.
    #[error("`{0}` is not a valid URL")]
    InvalidUrl(String),
    /// The host name does not resolve.
    #[error("cannot resolve {host}: {reason}")]
    Dns {
        /// The host name.
        host: String,
        /// The resolver's message.
        reason: String,
    },
    /// No complete answer within the deadline, in seconds.
    #[error("no answer within {0} s")]
    Timeout(u64),
    /// The connection could not be opened or broke.
    #[error("connection failed: {0}")]
    Connect(String),
    /// The final answer's status was not 200.
    #[error("HTTP status {0}")]
    Status(u16),
    /// More redirects than `max_redirects`.
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
    /// A redirect led back to a URL already visited.
    #[error("redirect loop back to `{0}`")]
    RedirectLoop(String),
    /// A redirect status without a usable `Location`.
    #[error("a redirect without a valid Location header")]
    BadRedirect,
    /// The body is larger than the cap, in bytes.
    #[error("larger than the {cap}-byte cap")]
    TooLarge {
        /// The cap in bytes.
        cap: u64,
    },
    /// The body was cut short or is not what was expected.
    #[error("the response was cut or malformed: {0}")]
    Body(String),
    /// The body is JSON but not in the expected shape, or over a limit of what is kept.
    #[error("the answer is not what was expected: {0}")]
    Unexpected(String),
    /// A download slower than the minimum rate over one window.
    #[error("slower than {bytes_per_second} bytes/s over {window:?}, the minimum download rate")]
    TooSlow {
        /// The minimum rate, in bytes per second.
        bytes_per_second: u64,
        /// The window it is averaged over.
        window: Duration,
    },
    /// An entry of [`NetConfig::private_hosts`](super::NetConfig::private_hosts) that is
    /// neither a host name, an IP address nor a CIDR range.
    #[error("{0}")]
    PrivateHost(#[from] super::allow::PrivateHostError),
    /// The proxy is at an address the client may not reach: a private one not listed in
    /// [`NetConfig::private_hosts`](super::NetConfig::private_hosts), or loopback without the
    /// test switch.
    #[error("the proxy `{proxy}` is at the non-public address {addr}; allow it like a mirror (--allow-private-host {addr})")]
    ProxyRefused {
        /// The proxy's URL, without credentials.
        proxy: String,
        /// Its address.
        addr: IpAddr,
    },
    /// A download not complete within its overall deadline.
    #[error("not complete within the {0:?} download deadline")]
    Deadline(Duration),
}

impl NetError {
    /// Whether the failure says the URL or a redirect leads somewhere refused.
    pub fn is_refused(&self) -> bool {
        matches!(self, NetError::NotHttps(_) | NetError::Refused { .. })
    }

    /// Whether another attempt may succeed: a timeout, a broken connection or a cut body.
    pub(super) fn retryable(&self) -> bool {
        matches!(
            self,
            NetError::Timeout(_) | NetError::Connect(_) | NetError::Body(_)
        )
    }
}

/// Why the resolver refused a name; found again in reqwest's error chain by `classify`.
#[derive(Debug, thiserror::Error)]
pub(super) enum Blocked {
    #[error("{host} resolves to the non-public address {addr}")]
    Address { host: String, addr: IpAddr },
    #[error("cannot resolve {host}: {reason}")]
    Unresolved { host: String, reason: String },
}

/// Map reqwest's error to ours, recognising the resolver's refusals in its source chain.
pub(super) fn classify(error: &reqwest::Error, timeout: Duration) -> NetError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(blocked) = e.downcast_ref::<Blocked>() {
            return match blocked {
                Blocked::Address { host, addr } => NetError::Refused {
                    url: error.url().map_or_else(|| host.clone(), Url::to_string),
                    addr: *addr,
                },
                Blocked::Unresolved { host, reason } => NetError::Dns {
                    host: host.clone(),
                    reason: reason.clone(),
                },
            };
        }
        source = e.source();
    }
    if error.is_timeout() {
        NetError::Timeout(timeout.as_secs().max(1))
    } else {
        NetError::Connect(innermost(error))
    }
}

/// The most specific message of an error chain ("Connection refused (os error 111)").
pub(super) fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_timeouts_broken_connections_and_cut_bodies_are_tried_again() {
        for error in [
            NetError::Timeout(20),
            NetError::Connect("reset".into()),
            NetError::Body("cut".into()),
        ] {
            assert!(error.retryable(), "{error}");
        }
        for error in [
            NetError::Status(500),
            NetError::TooLarge { cap: 1 },
            NetError::Unexpected("shape".into()),
            NetError::BadRedirect,
            NetError::NotHttps("http://a.example/".into()),
            NetError::Deadline(Duration::from_secs(1)),
            NetError::TooSlow {
                bytes_per_second: 1,
                window: Duration::from_secs(1),
            },
        ] {
            assert!(!error.retryable(), "{error}");
        }
    }

    #[test]
    fn refused_means_not_https_or_a_non_public_address() {
        assert!(NetError::NotHttps("http://a.example/".into()).is_refused());
        let refused = NetError::Refused {
            url: "https://a.example/".into(),
            addr: IpAddr::from([10, 0, 0, 1]),
        };
        assert!(refused.is_refused());
        assert!(!NetError::InvalidUrl("x".into()).is_refused());
        assert!(!NetError::Status(403).is_refused());
    }

    #[derive(Debug)]
    struct Chain(&'static str, Option<Box<Chain>>);

    impl std::fmt::Display for Chain {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Chain {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn the_message_of_an_error_chain_is_its_deepest_cause() {
        let inner = Chain("Connection refused (os error 111)", None);
        let chain = Chain("error sending request", Some(Box::new(inner)));
        assert_eq!(innermost(&chain), "Connection refused (os error 111)");
        assert_eq!(innermost(&Chain("alone", None)), "alone");
    }
}
