//! The crate's only HTTP client (reqwest + tokio, rustls): polite, bounded and safe.
//!
//! - Politeness: a global in-flight limit and a per-host limit (semaphores held for one
//!   attempt, released while waiting to retry), per-request timeouts, retries with
//!   exponential backoff and jitter on timeouts, connection failures, 429 and 5xx, honouring
//!   `Retry-After` up to a cap. Each URL is fetched once per run per kind of request.
//! - Safety: https only; redirects followed by hand (at most [`NetConfig::max_redirects`]
//!   hops, each re-checked); non-public addresses refused by the resolver, for IP-literal
//!   hosts, and again on the address a response actually came from. Bodies are streamed
//!   under a size cap. No proxy from the environment (it would bypass the resolver).
//! - [`NetConfig::allow_loopback`] is a test-only switch: it admits `127.0.0.0/8` and `::1`
//!   over plain http (an `https://` URL of a loopback IP literal is fetched over http, so
//!   test manifests keep the https URLs every rule requires) so tests and benchmarks can use
//!   local servers, nothing else.

mod guard;
mod memo;
mod retry;

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, ACCEPT, ETAG, LAST_MODIFIED, LOCATION, RETRY_AFTER};
use reqwest::{Method, Response};
use sha2::{Digest as _, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use url::Url;

use guard::{check_url, permitted};
use retry::backoff;
pub(crate) use retry::retry_after;

use guard::{Blocked, GuardedResolver};
use memo::Memo;

/// npm's abbreviated metadata (versions with their `deprecated`, a fraction of the full
/// document's size) when the server has it, JSON otherwise (`PyPI` ignores the npm type).
const DOCUMENT_ACCEPT: &str = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8";

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
    /// Deadline of one archive download, body included.
    pub download_timeout: Duration,
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
}

impl Default for NetConfig {
    fn default() -> Self {
        Self {
            max_in_flight: 64,
            per_host: 4,
            timeout: Duration::from_secs(20),
            download_timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
            retries: 3,
            backoff_base: Duration::from_millis(250),
            retry_after_cap: Duration::from_secs(30),
            max_redirects: 5,
            document_cap: 32 * 1024 * 1024,
            allow_loopback: false,
            hosts: BTreeMap::new(),
        }
    }
}

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
}

impl NetError {
    /// Whether the failure says the URL or a redirect leads somewhere refused.
    pub fn is_refused(&self) -> bool {
        matches!(self, NetError::NotHttps(_) | NetError::Refused { .. })
    }

    fn retryable(&self) -> bool {
        matches!(
            self,
            NetError::Timeout(_) | NetError::Connect(_) | NetError::Body(_)
        )
    }
}

/// A URL that answered 200 (after redirects), with its cache validators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    /// The URL that answered, after redirects.
    pub final_url: String,
    /// `ETag`, else `Last-Modified`: what identifies this version of the resource.
    pub validator: Option<String>,
}

/// A downloaded archive: its sha256 (lowercase hex), size and validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// Lowercase hex of the body's sha256.
    pub sha256: String,
    /// Bytes read.
    pub size: u64,
    /// `ETag`, else `Last-Modified`.
    pub validator: Option<String>,
}

/// One answer of [`Client::api_page`]: the body only when the status is 200.
#[derive(Debug, Clone)]
pub(crate) struct ApiPage {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Option<serde_json::Value>,
}

/// What an API request adds: a bearer token for one host (host, token).
struct ApiRequest<'a> {
    bearer: Option<(String, &'a str)>,
}

/// The headers of one hop and whether a 429 is retried here.
#[derive(Clone, Copy)]
struct Hop<'a> {
    accept: Option<&'a str>,
    bearer: Option<&'a str>,
    retry_429: bool,
}

/// A response holding the permits of the attempt that produced it.
struct Held {
    response: Response,
    _permits: (OwnedSemaphorePermit, OwnedSemaphorePermit),
}

/// The one HTTP client: https only, public addresses only, limits per host and overall,
/// retries, and identical requests of a run answered once.
pub struct Client {
    http: reqwest::Client,
    config: NetConfig,
    global: Arc<Semaphore>,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
    probes: Memo<Probed>,
    documents: Memo<Option<Arc<serde_json::Value>>>,
    downloads: Memo<Download>,
}

impl Client {
    /// A client with these limits (no request is sent yet).
    pub fn new(config: NetConfig) -> Result<Client, NetError> {
        let resolver = GuardedResolver {
            allow_loopback: config.allow_loopback,
            hosts: Arc::new(config.hosts.clone()),
        };
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(resolver))
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.timeout)
            .pool_max_idle_per_host(config.per_host)
            .user_agent(concat!("acp-registry/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| NetError::Connect(innermost(&e)))?;
        Ok(Client {
            global: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
            http,
            config,
            hosts: Mutex::new(HashMap::new()),
            probes: Memo::default(),
            documents: Memo::default(),
            downloads: Memo::default(),
        })
    }

    /// Whether `url` answers 200: HEAD, then GET when HEAD is refused with 403 or 405.
    pub async fn probe(&self, url: &str) -> Result<Probed, NetError> {
        self.probes.once(url, self.probe_uncached(url)).await
    }

    async fn probe_uncached(&self, url: &str) -> Result<Probed, NetError> {
        let url = parse(url)?;
        let timeout = self.config.timeout;
        let (mut held, mut last) = self.send(Method::HEAD, url.clone(), None, timeout).await?;
        if matches!(held.response.status().as_u16(), 403 | 405) {
            (held, last) = self.send(Method::GET, url, None, timeout).await?;
        }
        match held.response.status().as_u16() {
            200 => Ok(Probed {
                final_url: last.to_string(),
                validator: validator(held.response.headers()),
            }),
            status => Err(NetError::Status(status)),
        }
    }

    /// A JSON document; `Ok(None)` when the server says it does not exist (404 or 410).
    pub async fn document(&self, url: &str) -> Result<Option<Arc<serde_json::Value>>, NetError> {
        self.documents.once(url, self.document_uncached(url)).await
    }

    async fn document_uncached(
        &self,
        url: &str,
    ) -> Result<Option<Arc<serde_json::Value>>, NetError> {
        let (held, _) = self
            .send(
                Method::GET,
                parse(url)?,
                Some(DOCUMENT_ACCEPT),
                self.config.timeout,
            )
            .await?;
        match held.response.status().as_u16() {
            200 => {}
            404 | 410 => return Ok(None),
            status => return Err(NetError::Status(status)),
        }
        let mut body = Vec::new();
        read_body(held.response, self.config.document_cap, |chunk| {
            body.extend_from_slice(chunk);
        })
        .await?;
        let value =
            serde_json::from_slice(&body).map_err(|e| NetError::Body(format!("not JSON: {e}")))?;
        Ok(Some(Arc::new(value)))
    }

    /// One page of a JSON API (GitHub's) with its status and headers, never memoised (a
    /// rate-limited page is asked again). `bearer` goes only to the first URL's host, never
    /// across a redirect to another one. A 429 is returned at once, not retried: the caller
    /// reads the API's own rate-limit headers. The body is read only on 200.
    pub(crate) async fn api_page(
        &self,
        url: &str,
        accept: &str,
        bearer: Option<&str>,
    ) -> Result<ApiPage, NetError> {
        let url = parse(url)?;
        let auth = ApiRequest {
            bearer: bearer.map(|token| (url.host_str().unwrap_or_default().to_string(), token)),
        };
        let (held, _) = self
            .send_with(
                Method::GET,
                url,
                Some(accept),
                self.config.timeout,
                Some(auth),
            )
            .await?;
        let status = held.response.status().as_u16();
        let headers = held.response.headers().clone();
        let mut body = None;
        if status == 200 {
            let mut bytes = Vec::new();
            read_body(held.response, self.config.document_cap, |chunk| {
                bytes.extend_from_slice(chunk);
            })
            .await?;
            body = Some(
                serde_json::from_slice(&bytes)
                    .map_err(|e| NetError::Body(format!("not JSON: {e}")))?,
            );
        }
        Ok(ApiPage {
            status,
            headers,
            body,
        })
    }

    /// Download `url` (at most `cap` bytes), hashing it as it streams.
    pub async fn download(&self, url: &str, cap: u64) -> Result<Download, NetError> {
        self.downloads
            .once(url, self.download_uncached(url, cap))
            .await
    }

    async fn download_uncached(&self, url: &str, cap: u64) -> Result<Download, NetError> {
        let url = parse(url)?;
        self.retrying(|| self.download_once(url.clone(), cap)).await
    }

    /// Runs `attempt` again after a backoff while it fails with a retryable error, up to
    /// `retries` more times.
    async fn retrying<T, F, Fut>(&self, mut attempt: F) -> Result<T, NetError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, NetError>>,
    {
        let mut retried = 0;
        loop {
            match attempt().await {
                Err(e) if e.retryable() && retried < self.config.retries => {
                    tokio::time::sleep(backoff(self.config.backoff_base, retried)).await;
                    retried += 1;
                }
                result => return result,
            }
        }
    }

    async fn download_once(&self, url: Url, cap: u64) -> Result<Download, NetError> {
        self.get_hashed(url, cap, |_| {}).await
    }

    /// One GET of `url` that must answer 200: the body (at most `cap` bytes) is hashed and
    /// handed to `on_chunk` as it streams.
    async fn get_hashed(
        &self,
        url: Url,
        cap: u64,
        mut on_chunk: impl FnMut(&[u8]),
    ) -> Result<Download, NetError> {
        let timeout = self.config.download_timeout;
        let (held, _) = self.send(Method::GET, url, None, timeout).await?;
        let status = held.response.status().as_u16();
        if status != 200 {
            return Err(NetError::Status(status));
        }
        let validator = validator(held.response.headers());
        let mut hasher = Sha256::new();
        let size = read_body(held.response, cap, |chunk| {
            hasher.update(chunk);
            on_chunk(chunk);
        })
        .await?;
        Ok(Download {
            sha256: hex(&hasher.finalize()),
            size,
            validator,
        })
    }

    /// Download `url` into the new file `dest` (at most `cap` bytes), hashing it as it
    /// streams; one attempt per retry, each written beside `dest` and renamed over it only
    /// when complete (`fs::atomic`). Not memoised: the caller owns `dest`.
    pub(crate) async fn download_to(
        &self,
        url: &str,
        cap: u64,
        dest: &Path,
    ) -> Result<Download, NetError> {
        let url = parse(url)?;
        self.retrying(|| self.download_file_once(url.clone(), cap, dest))
            .await
    }

    async fn download_file_once(
        &self,
        url: Url,
        cap: u64,
        dest: &Path,
    ) -> Result<Download, NetError> {
        use std::io::Write;
        let file_error =
            |e: std::io::Error| NetError::Body(format!("cannot write {}: {e}", dest.display()));
        // Written beside `dest` and renamed over it only when complete; a failed attempt
        // leaves nothing at `dest` (the uncommitted file removes itself).
        let mut file = crate::fs::atomic::AtomicFile::create(dest).map_err(file_error)?;
        let mut failed = None;
        let download = self
            .get_hashed(url, cap, |chunk| {
                if failed.is_none() {
                    failed = file.write_all(chunk).err();
                }
            })
            .await?;
        if let Some(e) = failed {
            return Err(file_error(e));
        }
        file.commit().map_err(file_error)?;
        Ok(download)
    }

    /// Send one request, following redirects by hand; returns the final response and URL.
    async fn send(
        &self,
        method: Method,
        url: Url,
        accept: Option<&str>,
        timeout: Duration,
    ) -> Result<(Held, Url), NetError> {
        self.send_with(method, url, accept, timeout, None).await
    }

    /// [`Client::send`], for an API request when `api` is given.
    async fn send_with(
        &self,
        method: Method,
        url: Url,
        accept: Option<&str>,
        timeout: Duration,
        api: Option<ApiRequest<'_>>,
    ) -> Result<(Held, Url), NetError> {
        let mut method = method;
        let mut current = url;
        let mut seen = vec![current.clone()];
        for _ in 0..=self.config.max_redirects {
            check_url(&current, self.config.allow_loopback)?;
            let wire = guard::wire_url(&current, self.config.allow_loopback);
            let bearer = api
                .as_ref()
                .and_then(|a| a.bearer.as_ref())
                .filter(|(host, _)| current.host_str() == Some(host.as_str()))
                .map(|(_, token)| *token);
            let hop = Hop {
                accept,
                bearer,
                retry_429: api.is_none(),
            };
            let held = self.attempts(&method, &wire, hop, timeout).await?;
            let status = held.response.status().as_u16();
            if !matches!(status, 301 | 302 | 303 | 307 | 308) {
                return Ok((held, current));
            }
            let next = held
                .response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| current.join(v).ok())
                .ok_or(NetError::BadRedirect)?;
            if seen.contains(&next) {
                return Err(NetError::RedirectLoop(next.to_string()));
            }
            if status == 303 && method != Method::HEAD {
                method = Method::GET;
            }
            seen.push(next.clone());
            current = next;
        }
        Err(NetError::TooManyRedirects(self.config.max_redirects))
    }

    /// One hop with retries. A 429 or 5xx still present after the last retry is returned
    /// as a response for the caller to judge.
    async fn attempts(
        &self,
        method: &Method,
        url: &Url,
        hop: Hop<'_>,
        timeout: Duration,
    ) -> Result<Held, NetError> {
        let mut attempt = 0;
        loop {
            let permits = self.permits(url).await;
            let mut request = self
                .http
                .request(method.clone(), url.clone())
                .timeout(timeout);
            if let Some(accept) = hop.accept {
                request = request.header(ACCEPT, accept);
            }
            if let Some(token) = hop.bearer {
                request = request.bearer_auth(token);
            }
            let last = attempt >= self.config.retries;
            let delay = match request.send().await {
                Ok(response) => {
                    self.check_peer(url, &response)?;
                    let status = response.status().as_u16();
                    let retry = retry::retryable_status(status) && (hop.retry_429 || status != 429);
                    if last || !retry {
                        return Ok(Held {
                            response,
                            _permits: permits,
                        });
                    }
                    self.retry_delay(attempt, response.headers())
                }
                Err(e) => match classify(&e, timeout) {
                    error if last || !error.retryable() => return Err(error),
                    _ => backoff(self.config.backoff_base, attempt),
                },
            };
            drop(permits);
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    fn retry_delay(&self, attempt: u32, headers: &HeaderMap) -> Duration {
        headers
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, SystemTime::now()))
            .map_or_else(
                || backoff(self.config.backoff_base, attempt),
                |d| d.min(self.config.retry_after_cap),
            )
    }

    /// The address the response came from must be permitted too (belt and braces: the
    /// resolver and the literal check already ran).
    fn check_peer(&self, url: &Url, response: &Response) -> Result<(), NetError> {
        match response.remote_addr() {
            Some(addr) if !permitted(addr.ip(), self.config.allow_loopback) => {
                Err(NetError::Refused {
                    url: url.to_string(),
                    addr: addr.ip(),
                })
            }
            _ => Ok(()),
        }
    }

    /// A per-host permit, then a global one (in that order, so a request waiting for a busy
    /// host holds no global slot).
    async fn permits(&self, url: &Url) -> (OwnedSemaphorePermit, OwnedSemaphorePermit) {
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let semaphore = self
            .hosts
            .lock()
            .expect("host table")
            .entry(host)
            .or_insert_with(|| Arc::new(Semaphore::new(self.config.per_host.max(1))))
            .clone();
        let host = semaphore.acquire_owned().await.expect("never closed");
        let global = self
            .global
            .clone()
            .acquire_owned()
            .await
            .expect("never closed");
        (host, global)
    }
}

fn parse(url: &str) -> Result<Url, NetError> {
    Url::parse(url).map_err(|_| NetError::InvalidUrl(url.to_string()))
}

fn validator(headers: &HeaderMap) -> Option<String> {
    headers
        .get(ETAG)
        .or_else(|| headers.get(LAST_MODIFIED))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Stream a body into `sink`, refusing more than `cap` bytes (a declared length over the
/// cap is refused before reading). Returns the number of bytes read.
async fn read_body(
    mut response: Response,
    cap: u64,
    mut sink: impl FnMut(&[u8]),
) -> Result<u64, NetError> {
    if response.content_length().is_some_and(|len| len > cap) {
        return Err(NetError::TooLarge { cap });
    }
    let mut size = 0u64;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| NetError::Body(innermost(&e)))?
    {
        size += chunk.len() as u64;
        if size > cap {
            return Err(NetError::TooLarge { cap });
        }
        sink(&chunk);
    }
    Ok(size)
}

/// Map reqwest's error to ours, recognising the resolver's refusals in its source chain.
fn classify(error: &reqwest::Error, timeout: Duration) -> NetError {
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
fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// Lowercase hex, as sha256 pins and digests are written.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}
