//! The only HTTP client of the client library and of the `acp-registry` tool (reqwest + tokio,
//! rustls): polite, bounded and safe.
//!
//! - Politeness: a global in-flight limit and a per-host limit (semaphores held for one
//!   attempt, released while waiting to retry), per-request timeouts, retries with
//!   exponential backoff and jitter on timeouts, connection failures, 429 and 5xx, honouring
//!   `Retry-After` up to a cap. Each URL is fetched once per run per kind of request.
//! - Safety: https only; redirects followed by hand (at most [`NetConfig::max_redirects`]
//!   hops, each re-checked); non-public addresses refused by the resolver, for IP-literal
//!   hosts, and again on the address a response actually came from, except for the names
//!   and ranges [`NetConfig::private_hosts`] lists ([`PrivateHost`]). A bearer token goes
//!   only to hops on the API's origin (scheme, host and port compared as parsed URLs). No
//!   proxy from the environment unless the caller sets [`NetConfig::proxy`]
//!   ([`ProxySettings::from_env`]; see `proxy` for what the address rules become).
//! - Bounds: bodies are streamed under a size cap; documents are read into typed views that
//!   keep only the facts used ([`json`]), never a `Value` of the whole answer; a download has
//!   an overall deadline (every attempt and retry included) and a minimum rate averaged over
//!   a window, so a server trickling a byte every few seconds cannot hold it.
//! - [`NetConfig::allow_loopback`] is a test-only switch: it admits `127.0.0.0/8` and `::1`
//!   over plain http (an `https://` URL of a loopback IP literal is fetched over http, so
//!   test manifests keep the https URLs every rule requires) so tests and benchmarks can use
//!   local servers, nothing else.
//!
//! The defaults ([`NetConfig`]): 64 requests in flight, 4 per host, `Retry-After` honoured up to
//! 30 s, at most 5 redirects. `memo` makes a probe, a document or a download one request per
//! URL per run (API pages and `download_to`, whose caller owns the file, are not memoised); a
//! document is memoised as the typed view it was read into (keyed by URL and type, held as
//! `Arc<dyn Any>`), which is all a later caller reads. [`NetConfig::hosts`] lets tests say what
//! a name resolves to; the resolved addresses are still checked. The loopback switch is
//! `ACP_REGISTRY_TEST_ALLOW_LOOPBACK=1` or `--allow-loopback-for-tests`.
//!
//! A download's deadline covers all its attempts and retry waits (`within_deadline`); its rate is
//! measured by `read_body`'s meter at every chunk and at each window's end (`Response::chunk` is
//! cancel-safe); a too-slow download is not retried. `verify`, `--verify-archives` and
//! `update`'s hashing share this path (`get_hashed`: sha256 while streaming, never the archive
//! in memory). Callers see typed answers and [`Headers`], never reqwest's types; every command
//! that asks the network runs on the one runtime of `runtime`.

mod allow;
mod body;
mod client;
mod conditional;
mod config;
mod error;
mod guard;
mod headers;
mod hop;
pub mod json;
mod memo;
mod proxy;
#[cfg(test)]
mod reach_tests;
mod retry;
mod runtime;

pub use allow::{PrivateHost, PrivateHostError};
pub use body::read_json_with;
pub use client::Client;
pub use client::Probed;
pub use conditional::{Conditional, Validators};
pub use config::{NetConfig, TEST_ALLOW_LOOPBACK_ENV};
pub use error::NetError;
pub use headers::Headers;
pub use hop::Bearer;
pub use proxy::{ProxyError, ProxySettings};
pub use retry::retry_after;
pub use runtime::runtime;
