//! [`Client`]: the one HTTP client, its kinds of request (probe, document, API page,
//! download) and the hop loop that follows redirects by hand under the guards, the limits and
//! the retries.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, LOCATION, RETRY_AFTER};
use reqwest::{Method, Response};
use serde::de::DeserializeOwned;
use sha2::{Digest as _, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use url::Url;

use super::body::{identity, read_body, read_json, validator, Pace};
use super::config::NetConfig;
use super::error::{classify, innermost, NetError};
use super::guard::{self, check_url, GuardedResolver, Reach};
use super::headers::Headers;
use super::hop::{self, Bearer};
use super::memo::Memo;
use super::proxy::ProxySettings;
use super::retry::{self, backoff, retry_after};

/// npm's abbreviated metadata (versions with their `deprecated`, a fraction of the full
/// document's size) when the server has it, JSON otherwise (`PyPI` ignores the npm type).
const DOCUMENT_ACCEPT: &str = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8";

/// A URL that answered 200 (after redirects), with its cache validators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    /// The URL that answered, after redirects.
    pub final_url: String,
    /// `ETag`, else `Last-Modified`: what identifies this version of the resource.
    pub validator: Option<String>,
    /// What identifies the bytes served, when the server says enough to (a strong `ETag`
    /// and a `Content-Length`): the `ETag`, `Last-Modified`, length and the URL that answered
    /// (query left out). Equal to a download's identity only for the same answer.
    pub identity: Option<String>,
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
    /// As [`Probed::identity`], with the bytes read as the length.
    pub identity: Option<String>,
}

/// One answer of [`Client::api_page`]: the body (at most the document cap) only when the
/// status is 200, for the caller to read into its own typed view.
#[derive(Debug, Clone)]
pub struct ApiPage {
    pub status: u16,
    pub headers: Headers,
    pub body: Option<Vec<u8>>,
}

/// What an API request adds: a bearer token for one origin.
pub(super) struct ApiRequest<'a> {
    bearer: Option<Bearer<'a>>,
}

/// A shared memo slot of one document: the typed view, as `Any` so one table serves every
/// type (the key names the type).
type SharedDocument = Option<Arc<dyn Any + Send + Sync>>;

/// The headers of one hop and whether a 429 is retried here.
#[derive(Clone, Copy)]
struct Hop<'a> {
    accept: Option<&'a str>,
    bearer: Option<&'a str>,
    extra: &'a [(HeaderName, HeaderValue)],
    retry_429: bool,
}

/// A response holding the permits of the attempt that produced it.
pub(super) struct Held {
    pub(super) response: Response,
    _permits: (OwnedSemaphorePermit, OwnedSemaphorePermit),
}

/// The one HTTP client: https only, public addresses only, limits per host and overall,
/// retries, and identical requests of a run answered once.
pub struct Client {
    http: reqwest::Client,
    config: NetConfig,
    reach: Reach,
    global: Arc<Semaphore>,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
    probes: Memo<Probed>,
    documents: Memo<SharedDocument>,
    downloads: Memo<Download>,
}

impl Client {
    /// A client with these limits (no request is sent yet).
    pub fn new(config: NetConfig) -> Result<Client, NetError> {
        let reach = Reach::new(config.allow_loopback, &config.private_hosts)
            .map_err(NetError::PrivateHost)?;
        let resolver = GuardedResolver {
            reach: reach.clone(),
            hosts: Arc::new(config.hosts.clone()),
        };
        let builder = reqwest::Client::builder().no_proxy();
        let mut builder = match &config.proxy {
            None => builder,
            Some(proxy) => builder.proxy(routed(proxy, &reach)?),
        };
        for bundle in &config.extra_roots {
            let roots = reqwest::Certificate::from_pem_bundle(bundle)
                .ok()
                .filter(|roots| !roots.is_empty())
                .ok_or_else(|| NetError::Connect("a CA file holds no PEM certificate".into()))?;
            for root in roots {
                builder = builder.add_root_certificate(root);
            }
        }
        let http = builder
            .redirect(reqwest::redirect::Policy::none())
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
            reach,
            hosts: Mutex::new(HashMap::new()),
            probes: Memo::default(),
            documents: Memo::default(),
            downloads: Memo::default(),
        })
    }

    /// The limits this client was made with.
    pub(super) fn config(&self) -> &NetConfig {
        &self.config
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
                // The header, not `content_length()`: a HEAD answer's body is empty.
                identity: identity(
                    held.response.headers(),
                    &last,
                    held.response
                        .headers()
                        .get(reqwest::header::CONTENT_LENGTH)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse().ok()),
                ),
            }),
            status => Err(NetError::Status(status)),
        }
    }

    /// A JSON document read as `T`, a typed view that keeps only the facts its caller uses
    /// (see [`json`](super::json)); `Ok(None)` when the server says it does not exist (404 or 410). One
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
    pub async fn api_page(
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
                &[],
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
    pub async fn api_document<T>(
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
        self.within_deadline(self.retrying(|| self.get_hashed(url.clone(), cap, |_, _| {})))
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
    /// minimum rate) is hashed and handed to `on_chunk` as it streams, with the length the
    /// server declared (`Content-Length`), if any.
    async fn get_hashed(
        &self,
        url: Url,
        cap: u64,
        mut on_chunk: impl FnMut(&[u8], Option<u64>),
    ) -> Result<Download, NetError> {
        // The overall deadline (`within_deadline`) ends the attempt; this is only reqwest's.
        let timeout = self.config.download_deadline;
        let (held, answered) = self.send(Method::GET, url, None, timeout).await?;
        let status = held.response.status().as_u16();
        if status != 200 {
            return Err(NetError::Status(status));
        }
        let validator = validator(held.response.headers());
        let headers = held.response.headers().clone();
        let total = held.response.content_length();
        let pace = Pace {
            bytes_per_second: self.config.min_download_rate,
            window: self.config.rate_window,
        };
        let mut hasher = Sha256::new();
        let size = read_body(held.response, cap, Some(pace), |chunk| {
            hasher.update(chunk);
            on_chunk(chunk, total);
        })
        .await?;
        Ok(Download {
            sha256: acp_registry_core::fs::digest::hex(&hasher.finalize()),
            size,
            validator,
            identity: identity(&headers, &answered, Some(size)),
        })
    }

    /// The body of `url` (at most `cap` bytes) when it answers 200, `Ok(None)` when the
    /// server says it does not exist (404 or 410); retried and under the download deadline
    /// like [`Client::download`], never memoised. For the small files a caller checks itself
    /// (a skill's files against their digests).
    pub async fn bytes(&self, url: &str, cap: u64) -> Result<Option<Vec<u8>>, NetError> {
        let url = parse(url)?;
        self.within_deadline(self.retrying(|| self.bytes_once(url.clone(), cap)))
            .await
    }

    async fn bytes_once(&self, url: Url, cap: u64) -> Result<Option<Vec<u8>>, NetError> {
        let timeout = self.config.download_deadline;
        let (held, _) = self.send(Method::GET, url, None, timeout).await?;
        match held.response.status().as_u16() {
            200 => {}
            404 | 410 => return Ok(None),
            status => return Err(NetError::Status(status)),
        }
        let mut body = Vec::new();
        read_body(held.response, cap, None, |chunk| {
            body.extend_from_slice(chunk);
        })
        .await?;
        Ok(Some(body))
    }

    /// Download `url` into the new file `dest` (at most `cap` bytes), hashing it as it
    /// streams; one attempt per retry, each written beside `dest` and renamed over it only
    /// when complete (`fs::atomic`). Not memoised: the caller owns `dest`.
    pub async fn download_to(
        &self,
        url: &str,
        cap: u64,
        dest: &Path,
    ) -> Result<Download, NetError> {
        self.download_to_with_progress(url, cap, dest, &|_, _| {})
            .await
    }

    /// [`Client::download_to`], calling `progress(done, total)` after each chunk written:
    /// the bytes of this attempt so far and the length the server declared, if any (a retry
    /// starts again from 0).
    pub async fn download_to_with_progress(
        &self,
        url: &str,
        cap: u64,
        dest: &Path,
        progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
    ) -> Result<Download, NetError> {
        let url = parse(url)?;
        self.within_deadline(
            self.retrying(|| self.download_file_once(url.clone(), cap, dest, progress)),
        )
        .await
    }

    async fn download_file_once(
        &self,
        url: Url,
        cap: u64,
        dest: &Path,
        progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
    ) -> Result<Download, NetError> {
        use std::io::Write;
        let file_error =
            |e: std::io::Error| NetError::Body(format!("cannot write {}: {e}", dest.display()));
        // Written beside `dest` and renamed over it only when complete; a failed attempt
        // leaves nothing at `dest` (the uncommitted file removes itself).
        let mut file =
            acp_registry_core::fs::atomic::AtomicFile::create(dest).map_err(file_error)?;
        let mut failed = None;
        let mut done = 0u64;
        let download = self
            .get_hashed(url, cap, |chunk, total| {
                if failed.is_none() {
                    failed = file.write_all(chunk).err();
                }
                done += chunk.len() as u64;
                progress(done, total);
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
        self.send_with(method, url, accept, timeout, None, &[])
            .await
    }

    /// [`Client::send`], for an API request when `api` is given, with the `extra` headers on
    /// every hop (a conditional request's).
    pub(super) async fn send_with(
        &self,
        method: Method,
        url: Url,
        accept: Option<&str>,
        timeout: Duration,
        api: Option<ApiRequest<'_>>,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Result<(Held, Url), NetError> {
        let mut method = method;
        let mut current = url;
        let mut seen = vec![current.clone()];
        for _ in 0..=self.config.max_redirects {
            check_url(&current, &self.reach)?;
            let wire = guard::wire_url(&current, &self.reach, &self.config.hosts);
            let hop = Hop {
                accept,
                bearer: api
                    .as_ref()
                    .and_then(|a| hop::bearer_for(&current, a.bearer)),
                extra,
                retry_429: api.is_none(),
            };
            let held = self.attempts(&method, &wire, hop, timeout).await?;
            let status = held.response.status().as_u16();
            let location = held.response.headers().get(LOCATION);
            let location = location.and_then(|v| v.to_str().ok());
            let Some(next) = hop::redirect(&current, status, location, &seen)? else {
                return Ok((held, current));
            };
            method = hop::method_after(status, method);
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
            for (name, value) in hop.extra {
                request = request.header(name.clone(), value.clone());
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
    /// resolver and the literal check already ran): the target's, or through a proxy the
    /// proxy's, judged as the proxy's host.
    fn check_peer(&self, url: &Url, response: &Response) -> Result<(), NetError> {
        let host = match &self.config.proxy {
            Some(proxy) if proxy.routes(url) => proxy.host(),
            _ => url.host_str().unwrap_or_default(),
        };
        match response.remote_addr() {
            Some(addr) if !self.reach.permits(host, addr.ip()) => Err(NetError::Refused {
                url: url.to_string(),
                addr: addr.ip(),
            }),
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

/// reqwest's proxy for `proxy`: the https URLs [`ProxySettings::routes`] sends through it. An
/// IP-literal proxy must be a permitted address (a named one is checked by the resolver).
fn routed(proxy: &ProxySettings, reach: &Reach) -> Result<reqwest::Proxy, NetError> {
    if let Some(addr) = proxy.literal() {
        if !reach.permits(proxy.host(), addr) {
            return Err(NetError::ProxyRefused {
                proxy: proxy.to_string(),
                addr,
            });
        }
    }
    let (chooser, url) = (proxy.clone(), proxy.url().clone());
    Ok(reqwest::Proxy::custom(move |target| {
        chooser.routes(target).then(|| url.clone())
    }))
}

fn parse(url: &str) -> Result<Url, NetError> {
    Url::parse(url).map_err(|_| NetError::InvalidUrl(url.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_test_kit::server::{routes, Reply, Server};

    /// Loopback allowed (the test server), no retries, short deadlines.
    fn local() -> Client {
        Client::new(NetConfig {
            download_deadline: Duration::from_secs(5),
            ..NetConfig::for_local_tests()
        })
        .unwrap()
    }

    fn run<T>(future: impl std::future::Future<Output = T>) -> T {
        crate::net::runtime::runtime().unwrap().block_on(future)
    }

    #[test]
    fn a_body_over_the_cap_is_refused_whether_its_length_is_declared_or_not() {
        let declared = Reply::body(200, vec![b'x'; 10]);
        let undeclared = Reply {
            no_length: true,
            ..Reply::body(200, vec![b'x'; 10])
        };
        let server = Server::start(routes(vec![
            ("GET /declared", vec![declared]),
            ("GET /undeclared", vec![undeclared]),
            ("GET /fits", vec![Reply::body(200, "abcd")]),
        ]));
        let client = local();
        for path in ["/declared", "/undeclared"] {
            let error = run(client.download(&server.url(path), 4)).unwrap_err();
            assert_eq!(error, NetError::TooLarge { cap: 4 }, "{path}");
        }
        let fits = run(client.download(&server.url("/fits"), 4)).unwrap();
        assert_eq!(fits.size, 4);
        assert_eq!(
            fits.sha256,
            acp_registry_core::fs::digest::sha256_hex(b"abcd")
        );
    }

    #[test]
    fn a_file_download_reports_its_bytes_and_the_declared_length() {
        let undeclared = Reply {
            no_length: true,
            ..Reply::body(200, "abcdef")
        };
        let server = Server::start(routes(vec![
            ("GET /declared", vec![Reply::body(200, "abcdef")]),
            ("GET /undeclared", vec![undeclared]),
        ]));
        let dir = tempfile::tempdir().unwrap();
        for (path, total) in [("/declared", Some(6)), ("/undeclared", None)] {
            let seen = Mutex::new(Vec::new());
            let dest = dir.path().join(&path[1..]);
            let report = |done, total| seen.lock().unwrap().push((done, total));
            let download =
                run(local().download_to_with_progress(&server.url(path), 100, &dest, &report))
                    .unwrap();
            assert_eq!(download.size, 6);
            assert_eq!(seen.lock().unwrap().last(), Some(&(6, total)), "{path}");
            assert_eq!(std::fs::read(&dest).unwrap(), b"abcdef");
        }
    }

    #[test]
    fn redirects_stop_at_the_limit_and_at_a_loop() {
        let server = Server::start(routes(vec![
            ("GET /r0", vec![Reply::redirect(302, "/r1")]),
            ("GET /r1", vec![Reply::redirect(301, "/r2")]),
            ("GET /r2", vec![Reply::redirect(307, "/r3")]),
            ("GET /r3", vec![Reply::body(200, "end")]),
            ("GET /a", vec![Reply::redirect(302, "/b")]),
            ("GET /b", vec![Reply::redirect(302, "/a")]),
        ]));
        let limited = Client::new(NetConfig {
            allow_loopback: true,
            retries: 0,
            max_redirects: 2,
            ..NetConfig::default()
        })
        .unwrap();
        let error = run(limited.download(&server.url("/r0"), 100)).unwrap_err();
        assert_eq!(error, NetError::TooManyRedirects(2));
        let client = local();
        let end = run(client.download(&server.url("/r0"), 100)).unwrap();
        assert_eq!(end.size, 3, "three hops are within the default limit");
        let error = run(client.download(&server.url("/a"), 100)).unwrap_err();
        assert_eq!(error, NetError::RedirectLoop(server.url("/a")));
    }

    #[test]
    fn a_download_ends_at_its_overall_deadline() {
        let late = Reply::body(200, "late").after(Duration::from_secs(3));
        let server = Server::start(routes(vec![("GET /late", vec![late])]));
        let deadline = Duration::from_millis(200);
        let client = Client::new(NetConfig {
            allow_loopback: true,
            download_deadline: deadline,
            ..NetConfig::default()
        })
        .unwrap();
        let error = run(client.download(&server.url("/late"), 100)).unwrap_err();
        assert_eq!(error, NetError::Deadline(deadline));
    }

    #[test]
    fn a_document_that_does_not_exist_is_none_and_another_status_an_error() {
        let server = Server::start(routes(vec![
            ("GET /doc", vec![Reply::json(&serde_json::json!([1, 2]))]),
            ("GET /gone", vec![Reply::status(410)]),
            ("GET /denied", vec![Reply::status(403)]),
        ]));
        let client = local();
        let doc = run(client.document::<Vec<u32>>(&server.url("/doc"))).unwrap();
        assert_eq!(doc.as_deref(), Some(&vec![1, 2]));
        assert_eq!(
            run(client.document::<Vec<u32>>(&server.url("/missing"))),
            Ok(None)
        );
        assert_eq!(
            run(client.document::<Vec<u32>>(&server.url("/gone"))),
            Ok(None)
        );
        let denied = run(client.document::<Vec<u32>>(&server.url("/denied")));
        assert_eq!(denied, Err(NetError::Status(403)));
    }
}
