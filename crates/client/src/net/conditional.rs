//! A conditional document request: the bytes of a document a caller caches itself (the
//! client library's `registry.json`), asked with the validators of the copy it holds
//! (`If-None-Match`, `If-Modified-Since`) so an unchanged document costs a 304 and no body.
//! Not memoised: the caller's cache is the memory.

use reqwest::header::{
    HeaderMap, HeaderName, HeaderValue, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED,
};
use reqwest::Method;

use super::body::read_body;
use super::client::Client;
use super::error::NetError;

/// The longest validator kept or sent; a longer one is dropped (real ones are tens of bytes).
const MAX_VALIDATOR_LEN: usize = 1024;

/// A cached copy's validators, as the server sent them with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// The `ETag` header, sent back as `If-None-Match`.
    pub etag: Option<String>,
    /// The `Last-Modified` header, sent back as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

impl Validators {
    /// Whether there is anything to send.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }

    fn of(headers: &HeaderMap) -> Validators {
        let text = |name| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .filter(|v| v.len() <= MAX_VALIDATOR_LEN)
                .map(str::to_string)
        };
        Validators {
            etag: text(ETAG),
            last_modified: text(LAST_MODIFIED),
        }
    }
}

/// The answer to a conditional request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conditional {
    /// 200: the document's bytes and its new validators.
    Modified {
        /// The body, at most the cap asked for.
        body: Vec<u8>,
        /// The validators it came with.
        validators: Validators,
    },
    /// 304: the copy whose validators were sent is current; no body was read.
    NotModified,
}

/// The conditional headers of `validators` (a value that is not a valid header is left out: a
/// corrupt cache then costs a full answer, never a failure).
fn conditional_headers(validators: &Validators) -> Vec<(HeaderName, HeaderValue)> {
    let valid = |v: &Option<String>| {
        v.as_deref()
            .filter(|v| v.len() <= MAX_VALIDATOR_LEN)
            .and_then(|v| HeaderValue::from_str(v).ok())
    };
    let mut headers = Vec::new();
    if let Some(etag) = valid(&validators.etag) {
        headers.push((IF_NONE_MATCH, etag));
    }
    if let Some(date) = valid(&validators.last_modified) {
        headers.push((IF_MODIFIED_SINCE, date));
    }
    headers
}

impl Client {
    /// GET a document the caller caches, conditional on `known` (the validators of its copy;
    /// empty: an ordinary GET). 200 gives the body (at most `cap` bytes) and its validators,
    /// 304 [`Conditional::NotModified`] (only when validators were sent); any other final
    /// status is [`NetError::Status`] (404: the document is not there). Retries, redirects and
    /// the address checks are those of every request; never memoised.
    ///
    /// # Errors
    /// [`NetError`] when the request fails, the status is not 200 or 304, or the body is over
    /// `cap`.
    pub async fn document_if_changed(
        &self,
        url: &str,
        known: &Validators,
        cap: u64,
    ) -> Result<Conditional, NetError> {
        let url = url::Url::parse(url).map_err(|_| NetError::InvalidUrl(url.to_string()))?;
        let headers = conditional_headers(known);
        let timeout = self.config().timeout;
        let (held, _) = self
            .send_with(
                Method::GET,
                url,
                Some("application/json"),
                timeout,
                None,
                &headers,
            )
            .await?;
        match held.response.status().as_u16() {
            200 => {}
            304 if !headers.is_empty() => return Ok(Conditional::NotModified),
            status => return Err(NetError::Status(status)),
        }
        let validators = Validators::of(held.response.headers());
        let declared = held.response.content_length().unwrap_or(0).min(cap);
        let mut body = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
        read_body(held.response, cap, None, |chunk| {
            body.extend_from_slice(chunk);
        })
        .await?;
        Ok(Conditional::Modified { body, validators })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use acp_test_kit::server::{Reply, Request, Server};

    use super::*;
    use crate::net::config::NetConfig;

    fn local() -> Client {
        Client::new(NetConfig::for_local_tests()).unwrap()
    }

    fn run<T>(future: impl std::future::Future<Output = T>) -> T {
        crate::net::runtime::runtime().unwrap().block_on(future)
    }

    /// A server answering 304 to `If-None-Match: "v1"`, else 200 with a body and validators;
    /// the conditional headers of every request are recorded.
    /// The `If-None-Match` and `If-Modified-Since` of each request.
    type Seen = Arc<Mutex<Vec<(Option<String>, Option<String>)>>>;

    fn server(seen: Seen) -> Server {
        Server::start(move |request: &Request, _| {
            let header = |name: &str| request.header(name).map(str::to_string);
            let sent = (header("if-none-match"), header("if-modified-since"));
            seen.lock().unwrap().push(sent.clone());
            match (request.path.as_str(), sent.0.as_deref()) {
                ("/doc", Some("\"v1\"")) | ("/no-validators", _) => Reply::status(304),
                ("/doc", _) => Reply::body(200, "{\"agents\": []}")
                    .header("etag", "\"v1\"")
                    .header("last-modified", "Wed, 21 Oct 2026 07:28:00 GMT"),
                ("/big", _) => Reply::body(200, vec![b' '; 64]),
                _ => Reply::status(404),
            }
        })
    }

    #[test]
    fn validators_are_sent_and_a_304_reads_no_body() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let server = server(seen.clone());
        let client = local();
        let first =
            run(client.document_if_changed(&server.url("/doc"), &Validators::default(), 1024));
        let Ok(Conditional::Modified { body, validators }) = first else {
            panic!("{first:?}");
        };
        assert_eq!(body, b"{\"agents\": []}");
        assert_eq!(validators.etag.as_deref(), Some("\"v1\""));
        let again = run(client.document_if_changed(&server.url("/doc"), &validators, 1024));
        assert_eq!(again, Ok(Conditional::NotModified));
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen[0], (None, None), "a first request is not conditional");
        assert_eq!(
            seen[1],
            (
                Some("\"v1\"".to_string()),
                Some("Wed, 21 Oct 2026 07:28:00 GMT".to_string())
            )
        );
    }

    #[test]
    fn a_missing_document_an_unasked_304_and_a_body_over_the_cap_are_errors() {
        let server = server(Arc::default());
        let client = local();
        let none = Validators::default();
        let missing = run(client.document_if_changed(&server.url("/missing"), &none, 1024));
        assert_eq!(missing, Err(NetError::Status(404)));
        let unasked = run(client.document_if_changed(&server.url("/no-validators"), &none, 1024));
        assert_eq!(unasked, Err(NetError::Status(304)));
        let big = run(client.document_if_changed(&server.url("/big"), &none, 10));
        assert_eq!(big, Err(NetError::TooLarge { cap: 10 }));
    }

    #[test]
    fn a_host_resolving_to_a_private_address_is_refused_unless_listed() {
        // Refused by the resolver: no connection is ever opened.
        let client = Client::new(NetConfig {
            retries: 0,
            hosts: [(
                "mirror.example".to_string(),
                vec!["10.1.2.3".parse().unwrap()],
            )]
            .into(),
            ..NetConfig::default()
        })
        .unwrap();
        let url = "https://mirror.example/registry.json";
        let refused = run(client.document_if_changed(url, &Validators::default(), 1024));
        assert!(
            matches!(&refused, Err(NetError::Refused { addr, .. }) if addr.to_string() == "10.1.2.3"),
            "{refused:?}"
        );
    }
}
