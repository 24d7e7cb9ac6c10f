//! The crate's only HTTP client (reqwest + tokio, rustls): polite, bounded and safe.
//!
//! - Politeness: a global in-flight limit and a per-host limit (semaphores held for one
//!   attempt, released while waiting to retry), per-request timeouts, retries with
//!   exponential backoff and jitter on timeouts, connection failures, 429 and 5xx, honouring
//!   `Retry-After` up to a cap. Each URL is fetched once per run per kind of request.
//! - Safety: https only; redirects followed by hand (at most [`NetConfig::max_redirects`]
//!   hops, each re-checked); non-public addresses refused by the resolver, for IP-literal
//!   hosts, and again on the address a response actually came from. A bearer token goes
//!   only to hops on the API's origin (scheme, host and port compared as parsed URLs). No
//!   proxy from the environment (it would bypass the resolver).
//! - Bounds: bodies are streamed under a size cap; documents are read into typed views that
//!   keep only the facts used ([`json`]), never a `Value` of the whole answer; a download has
//!   an overall deadline (every attempt and retry included) and a minimum rate averaged over
//!   a window, so a server trickling a byte every few seconds cannot hold it.
//! - [`NetConfig::allow_loopback`] is a test-only switch: it admits `127.0.0.0/8` and `::1`
//!   over plain http (an `https://` URL of a loopback IP literal is fetched over http, so
//!   test manifests keep the https URLs every rule requires) so tests and benchmarks can use
//!   local servers, nothing else.

mod guard;
mod headers;
pub(crate) mod json;
mod memo;
mod retry;

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::de::DeserializeOwned;
use tokio::time::Instant;

use reqwest::header::{HeaderMap, ACCEPT, ETAG, LAST_MODIFIED, LOCATION, RETRY_AFTER};
use reqwest::{Method, Response};
use sha2::{Digest as _, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use url::Url;

use guard::{check_url, permitted};
pub(crate) use headers::Headers;
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
    /// A download not complete within its overall deadline.
    #[error("not complete within the {0:?} download deadline")]
    Deadline(Duration),
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

/// One answer of [`Client::api_page`]: the body (at most the document cap) only when the
/// status is 200, for the caller to read into its own typed view.
#[derive(Debug, Clone)]
pub(crate) struct ApiPage {
    pub(crate) status: u16,
    pub(crate) headers: Headers,
    pub(crate) body: Option<Vec<u8>>,
}

/// A bearer token and the one origin (scheme, host, port) it may be sent to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bearer<'a> {
    pub(crate) origin: &'a url::Origin,
    pub(crate) token: &'a str,
}

/// What an API request adds: a bearer token for one origin.
struct ApiRequest<'a> {
    bearer: Option<Bearer<'a>>,
}

/// The minimum rate of a download body: at least `bytes_per_second` averaged over every
/// `window`.
#[derive(Debug, Clone, Copy)]
struct Pace {
    bytes_per_second: u64,
    window: Duration,
}

/// A shared memo slot of one document: the typed view, as `Any` so one table serves every
/// type (the key names the type).
type SharedDocument = Option<Arc<dyn Any + Send + Sync>>;

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
    documents: Memo<SharedDocument>,
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

    /// A JSON document read as `T`, a typed view that keeps only the facts its caller uses
    /// (see [`json`]); `Ok(None)` when the server says it does not exist (404 or 410). One
    /// request per URL and type per run: the memo keeps the view, never the document.
    pub async fn document<T>(&self, url: &str) -> Result<Option<Arc<T>>, NetError>
    where
        T: DeserializeOwned + Send + Sync + 'static,
    {
        let key = format!("{:?} {url}", TypeId::of::<T>());
        let fetch = async {
            let view = self.document_uncached::<T>(url).await?;
            Ok(view.map(|view| Arc::new(view) as Arc<dyn Any + Send + Sync>))
        };
        let shared = self.documents.once(&key, fetch).await?;
        Ok(shared.and_then(|view| view.downcast::<T>().ok()))
    }

    async fn document_uncached<T: DeserializeOwned>(
        &self,
        url: &str,
    ) -> Result<Option<T>, NetError> {
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
        let body = self.read_document(held.response).await?;
        read_json(&body).map(Some)
    }

    /// One page of a JSON API (GitHub's) with its status and headers, never memoised (a
    /// rate-limited page is asked again). The bearer token goes only to hops on its origin
    /// (a redirect elsewhere is followed without it). A 429 is returned at once, not retried:
    /// the caller reads the API's own rate-limit headers. The body is read only on 200.
    pub(crate) async fn api_page(
        &self,
        url: &Url,
        accept: &str,
        bearer: Option<Bearer<'_>>,
    ) -> Result<ApiPage, NetError> {
        let auth = ApiRequest { bearer };
        let (held, _) = self
            .send_with(
                Method::GET,
                url.clone(),
                Some(accept),
                self.config.timeout,
                Some(auth),
            )
            .await?;
        let status = held.response.status().as_u16();
        let headers = Headers::of(held.response.headers());
        let mut body = None;
        if status == 200 {
            body = Some(self.read_document(held.response).await?);
        }
        Ok(ApiPage {
            status,
            headers,
            body,
        })
    }

    /// A JSON API document (GitHub's) read as `T` like [`Client::document`], asked with
    /// `accept` and the bearer token (only to hops on its origin); `Ok(None)` on 404 or 410.
    /// One request per URL and type per run. Any other status, a rate limit included, is
    /// [`NetError::Status`]: callers of a single document fall back rather than wait.
    pub(crate) async fn api_document<T>(
        &self,
        url: &Url,
        accept: &str,
        bearer: Option<Bearer<'_>>,
    ) -> Result<Option<Arc<T>>, NetError>
    where
        T: DeserializeOwned + Send + Sync + 'static,
    {
        let key = format!("{:?} api {url}", TypeId::of::<T>());
        let fetch = async {
            let page = self.api_page(url, accept, bearer).await?;
            match (page.status, page.body) {
                (200, Some(body)) => {
                    let view: T = read_json(&body)?;
                    Ok(Some(Arc::new(view) as Arc<dyn Any + Send + Sync>))
                }
                (404 | 410, _) => Ok(None),
                (status, _) => Err(NetError::Status(status)),
            }
        };
        let shared = self.documents.once(&key, fetch).await?;
        Ok(shared.and_then(|view| view.downcast::<T>().ok()))
    }

    /// A document's bytes, under the document cap.
    async fn read_document(&self, response: Response) -> Result<Vec<u8>, NetError> {
        let cap = self.config.document_cap;
        let declared = response.content_length().unwrap_or(0).min(cap);
        let mut body = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
        read_body(response, cap, None, |chunk| body.extend_from_slice(chunk)).await?;
        Ok(body)
    }

    /// Download `url` (at most `cap` bytes), hashing it as it streams.
    pub async fn download(&self, url: &str, cap: u64) -> Result<Download, NetError> {
        self.downloads
            .once(url, self.download_uncached(url, cap))
            .await
    }

    async fn download_uncached(&self, url: &str, cap: u64) -> Result<Download, NetError> {
        let url = parse(url)?;
        self.within_deadline(self.retrying(|| self.get_hashed(url.clone(), cap, |_| {})))
            .await
    }

    /// `download` under the overall download deadline.
    async fn within_deadline<T>(
        &self,
        download: impl std::future::Future<Output = Result<T, NetError>>,
    ) -> Result<T, NetError> {
        let deadline = self.config.download_deadline;
        tokio::time::timeout(deadline, download)
            .await
            .unwrap_or(Err(NetError::Deadline(deadline)))
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

    /// One GET of `url` that must answer 200: the body (at most `cap` bytes, at least the
    /// minimum rate) is hashed and handed to `on_chunk` as it streams.
    async fn get_hashed(
        &self,
        url: Url,
        cap: u64,
        mut on_chunk: impl FnMut(&[u8]),
    ) -> Result<Download, NetError> {
        // The overall deadline (`within_deadline`) ends the attempt; this is only reqwest's.
        let timeout = self.config.download_deadline;
        let (held, _) = self.send(Method::GET, url, None, timeout).await?;
        let status = held.response.status().as_u16();
        if status != 200 {
            return Err(NetError::Status(status));
        }
        let validator = validator(held.response.headers());
        let pace = Pace {
            bytes_per_second: self.config.min_download_rate,
            window: self.config.rate_window,
        };
        let mut hasher = Sha256::new();
        let size = read_body(held.response, cap, Some(pace), |chunk| {
            hasher.update(chunk);
            on_chunk(chunk);
        })
        .await?;
        Ok(Download {
            sha256: crate::fs::digest::hex(&hasher.finalize()),
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
        self.within_deadline(self.retrying(|| self.download_file_once(url.clone(), cap, dest)))
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
            // Compared as parsed origins: a URL that only starts with the API's text
            // (`https://api.example@elsewhere/`, `https://api.example.evil/`) is elsewhere.
            let bearer = api
                .as_ref()
                .and_then(|a| a.bearer)
                .filter(|b| current.origin() == *b.origin)
                .map(|b| b.token);
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
/// cap is refused before reading) and, with a `pace`, a body slower than its minimum rate.
/// Returns the number of bytes read.
async fn read_body(
    mut response: Response,
    cap: u64,
    pace: Option<Pace>,
    mut sink: impl FnMut(&[u8]),
) -> Result<u64, NetError> {
    if response.content_length().is_some_and(|len| len > cap) {
        return Err(NetError::TooLarge { cap });
    }
    let mut meter = pace.map(Meter::new);
    let mut size = 0u64;
    loop {
        let next = match &mut meter {
            None => response.chunk().await,
            // `chunk` is cancel-safe: a window ending while it waits loses nothing.
            Some(meter) => {
                let waited = tokio::time::timeout_at(meter.window_end(), response.chunk()).await;
                let Ok(next) = waited else {
                    meter.check(0)?;
                    continue;
                };
                next
            }
        };
        let Some(chunk) = next.map_err(|e| NetError::Body(innermost(&e)))? else {
            return Ok(size);
        };
        size += chunk.len() as u64;
        if size > cap {
            return Err(NetError::TooLarge { cap });
        }
        if let Some(meter) = &mut meter {
            meter.check(chunk.len() as u64)?;
        }
        sink(&chunk);
    }
}

/// Bytes received in the current window of a paced body.
struct Meter {
    pace: Pace,
    start: Instant,
    bytes: u64,
}

impl Meter {
    fn new(pace: Pace) -> Meter {
        Meter {
            pace,
            start: Instant::now(),
            bytes: 0,
        }
    }

    fn window_end(&self) -> Instant {
        self.start + self.pace.window
    }

    /// Count `bytes`; at the end of a window, fail when it carried less than the minimum
    /// rate, else start the next window.
    fn check(&mut self, bytes: u64) -> Result<(), NetError> {
        self.bytes += bytes;
        let now = Instant::now();
        if now < self.window_end() {
            return Ok(());
        }
        let wanted = self.pace.bytes_per_second as f64 * (now - self.start).as_secs_f64();
        if (self.bytes as f64) < wanted {
            return Err(NetError::TooSlow {
                bytes_per_second: self.pace.bytes_per_second,
                window: self.pace.window,
            });
        }
        self.start = now;
        self.bytes = 0;
        Ok(())
    }
}

/// A document's bytes as `T`: not JSON is a cut or malformed body, JSON of another shape (or
/// over a cap of the view) is [`NetError::Unexpected`].
fn read_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, NetError> {
    read_json_with(body, std::marker::PhantomData::<T>)
}

/// [`read_json`] through a seed (a view that hands each item to its caller as it is read),
/// for an [`ApiPage`]'s body.
pub(crate) fn read_json_with<'de, S: serde::de::DeserializeSeed<'de>>(
    body: &'de [u8],
    seed: S,
) -> Result<S::Value, NetError> {
    let mut reader = serde_json::Deserializer::from_slice(body);
    let value = seed.deserialize(&mut reader).map_err(|e| json_error(&e))?;
    reader.end().map_err(|e| json_error(&e))?;
    Ok(value)
}

fn json_error(e: &serde_json::Error) -> NetError {
    match e.classify() {
        serde_json::error::Category::Data => NetError::Unexpected(e.to_string()),
        _ => NetError::Body(format!("not JSON: {e}")),
    }
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
