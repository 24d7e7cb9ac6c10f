//! Reading a response: its validator, its body streamed under a size cap and a minimum rate,
//! and a JSON document read into a typed view.

use std::time::Duration;

use reqwest::header::{HeaderMap, ETAG, LAST_MODIFIED};
use reqwest::Response;
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use super::error::{innermost, NetError};

/// `ETag`, else `Last-Modified`: what identifies this version of a resource.
pub(super) fn validator(headers: &HeaderMap) -> Option<String> {
    headers
        .get(ETAG)
        .or_else(|| headers.get(LAST_MODIFIED))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// What identifies the bytes a URL serves, as far as its server says: its strong `ETag`, its
/// `Last-Modified`, the body's length (`length`: the `Content-Length` of a probe, the bytes
/// read of a download) and the URL that answered after redirects, its query left out (signed
/// download URLs change at every request; the path names the asset). `None` without a strong
/// `ETag` or a length: a weak `ETag` (`W/"…"`) promises equivalent content, not the same
/// bytes, and a date alone is one second fine, so nothing short of the bytes identifies them.
pub(super) fn identity(
    headers: &HeaderMap,
    answered: &url::Url,
    length: Option<u64>,
) -> Option<String> {
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
    };
    let etag = text(ETAG).filter(|e| e.starts_with('"'))?;
    let length = length?;
    let modified = text(LAST_MODIFIED).unwrap_or("-");
    let mut place = answered.clone();
    place.set_query(None);
    place.set_fragment(None);
    Some(format!("{etag} | {modified} | {length} | {place}"))
}

/// The minimum rate of a download body: at least `bytes_per_second` averaged over every
/// `window`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pace {
    pub(super) bytes_per_second: u64,
    pub(super) window: Duration,
}

/// Stream a body into `sink`, refusing more than `cap` bytes (a declared length over the
/// cap is refused before reading) and, with a `pace`, a body slower than its minimum rate.
/// Returns the number of bytes read.
pub(super) async fn read_body(
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
pub(super) fn read_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, NetError> {
    read_json_with(body, std::marker::PhantomData::<T>)
}

/// `read_json` through a seed (a view that hands each item to its caller as it is read),
/// for an `ApiPage`'s body.
pub fn read_json_with<'de, S: serde::de::DeserializeSeed<'de>>(
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

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn the_validator_is_the_etag_else_last_modified() {
        let mut headers = HeaderMap::new();
        assert_eq!(validator(&headers), None);
        let date = "Wed, 21 Oct 2015 07:28:00 GMT";
        headers.insert(LAST_MODIFIED, HeaderValue::from_static(date));
        assert_eq!(validator(&headers).as_deref(), Some(date));
        headers.insert(ETAG, HeaderValue::from_static("\"v1\""));
        assert_eq!(validator(&headers).as_deref(), Some("\"v1\""));
    }

    #[test]
    fn a_body_that_is_not_json_is_cut_and_json_of_another_shape_is_unexpected() {
        assert_eq!(read_json::<Vec<u32>>(b"[1, 2]"), Ok(vec![1, 2]));
        for cut in [&b"[1, "[..], b"<html>", b"[1] trailing"] {
            let error = read_json::<Vec<u32>>(cut).unwrap_err();
            assert!(matches!(error, NetError::Body(_)), "{error:?}");
        }
        let error = read_json::<Vec<u32>>(b"{\"a\": 1}").unwrap_err();
        assert!(matches!(error, NetError::Unexpected(_)), "{error:?}");
    }

    fn meter(bytes_per_second: u64, window: Duration) -> Meter {
        Meter::new(Pace {
            bytes_per_second,
            window,
        })
    }

    #[test]
    fn a_slow_body_is_judged_only_at_the_end_of_a_window() {
        let mut meter = meter(u64::MAX / 4, Duration::from_secs(3600));
        assert_eq!(meter.check(0), Ok(()));
    }

    #[test]
    fn a_window_below_the_minimum_rate_fails_and_one_above_it_starts_the_next() {
        let mut slow = meter(1_000_000, Duration::ZERO);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            slow.check(1),
            Err(NetError::TooSlow {
                bytes_per_second: 1_000_000,
                window: Duration::ZERO,
            })
        );
        let mut fast = meter(1, Duration::ZERO);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(fast.check(1_000), Ok(()));
        assert_eq!(fast.bytes, 0, "the next window starts empty");
    }

    #[test]
    fn only_a_strong_etag_with_a_length_identifies_bytes_and_every_part_counts() {
        use reqwest::header::HeaderValue;
        let headers = |etag: &str, modified: Option<&str>| {
            let mut map = HeaderMap::new();
            map.insert(ETAG, HeaderValue::from_str(etag).unwrap());
            if let Some(date) = modified {
                map.insert(LAST_MODIFIED, HeaderValue::from_str(date).unwrap());
            }
            map
        };
        let url = |u: &str| url::Url::parse(u).unwrap();
        let at = url("https://cdn.example/a.tar.gz?sig=1");
        let strong = identity(&headers("\"v1\"", Some("d1")), &at, Some(4));
        assert!(strong.is_some());
        assert_eq!(
            identity(&headers("W/\"v1\"", Some("d1")), &at, Some(4)),
            None
        );
        assert_eq!(identity(&headers("\"v1\"", Some("d1")), &at, None), None);
        let resigned = url("https://cdn.example/a.tar.gz?sig=2");
        assert_eq!(
            identity(&headers("\"v1\"", Some("d1")), &resigned, Some(4)),
            strong
        );
        for other in [
            identity(&headers("\"v1\"", Some("d2")), &at, Some(4)),
            identity(&headers("\"v1\"", None), &at, Some(4)),
            identity(&headers("\"v1\"", Some("d1")), &at, Some(5)),
            identity(
                &headers("\"v1\"", Some("d1")),
                &url("https://cdn.example/b.tar.gz"),
                Some(4),
            ),
        ] {
            assert_ne!(other, strong);
        }
    }
}
