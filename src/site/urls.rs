//! Which links the site writes: absolute http(s) URLs re-serialised, or plain relative paths.

/// An absolute `http`/`https` URL with a host and no credentials, re-serialised (which
/// percent-encodes quotes, spaces and angle brackets); anything else is dropped.
pub fn safe_url(raw: &str) -> Option<String> {
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

/// A relative path such as `../registry.json` (no scheme, no `//` host, no backslash).
pub(crate) fn is_relative_path(raw: &str) -> bool {
    !raw.is_empty()
        && !raw.starts_with("//")
        && !raw.contains(['\\', '"', '\'', '<', '>', ' ', '\n', '\r', '\t'])
        && raw
            .split('/')
            .next()
            .is_some_and(|first| !first.contains(':'))
}
