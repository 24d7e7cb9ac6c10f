//! Which links the site writes to other places: absolute http(s) URLs, re-serialised.

/// An absolute `http`/`https` URL with a host and no credentials, re-serialised (which
/// percent-encodes quotes, spaces and angle brackets); anything else is dropped.
pub(crate) fn safe_url(raw: &str) -> Option<String> {
    let url = url::Url::parse(raw.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    if url.host_str().is_none_or(str::is_empty) {
        return None;
    }
    if !url.username().is_empty() || url.password().is_some() {
        return None;
    }
    Some(url.into())
}
