//! A source's root, a local folder or a URL ([`Place`]), and reading one file below it: over
//! `net`, or through the core's readers (no link followed, a regular file, a size cap).

use std::path::{Path, PathBuf};

use url::Url;

use super::error::{refused, SkillFetchError};
use crate::net::{Client, NetError};
use acp_registry_core::fs::ReadError;

/// The root of a site or marketplace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// A local folder.
    Dir(PathBuf),
    /// A URL ending in `/`.
    Url(Url),
}

impl Place {
    /// `source` as a place: a `http(s)://` URL, else a folder.
    pub(crate) fn of(source: &str) -> Result<Place, SkillFetchError> {
        if source.starts_with("https://") || source.starts_with("http://") {
            let mut url = Url::parse(source).map_err(|e| refused(source, e))?;
            if !url.path().ends_with('/') {
                url.set_path(&format!("{}/", url.path()));
            }
            url.set_query(None);
            url.set_fragment(None);
            Ok(Place::Url(url))
        } else {
            Ok(Place::Dir(PathBuf::from(source)))
        }
    }

    /// `rel` below this place, as shown in messages and records (not yet escaped).
    pub(crate) fn show(&self, rel: &str) -> String {
        match self {
            Place::Dir(dir) => dir.join(rel).display().to_string(),
            Place::Url(url) => url
                .join(rel)
                .map_or_else(|_| format!("{url}{rel}"), String::from),
        }
    }

    /// Whether this is a local folder.
    pub(crate) fn is_local(&self) -> bool {
        matches!(self, Place::Dir(_))
    }

    /// The folder, when local.
    pub(crate) fn dir(&self) -> Option<&Path> {
        match self {
            Place::Dir(dir) => Some(dir),
            Place::Url(_) => None,
        }
    }

    /// The bytes of `rel` (a safe relative path, at most `cap` bytes); `None` when it does
    /// not exist.
    pub(crate) async fn get(
        &self,
        client: &Client,
        rel: &str,
        cap: u64,
    ) -> Result<Option<Vec<u8>>, SkillFetchError> {
        match self {
            Place::Url(url) => {
                let target = url.join(rel).map_err(|e| refused(&self.show(rel), e))?;
                client
                    .bytes(target.as_str(), cap)
                    .await
                    .map_err(|source| net_error(target.as_str(), source))
            }
            Place::Dir(dir) => match acp_registry_core::fs::read_capped(dir, Path::new(rel), cap) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(ReadError::NotFound) => Ok(None),
                Err(e) => Err(refused(&self.show(rel), e)),
            },
        }
    }
}

/// A failed request, its URL escaped.
pub(crate) fn net_error(url: &str, source: NetError) -> SkillFetchError {
    SkillFetchError::Net {
        what: acp_registry_core::escape::terminal(url).into_owned(),
        source,
    }
}

/// `reference` (a 0.2.0 `url`) resolved against the folder `base` (relative to the place,
/// ending in `/`): a path below the place, or, for a URL place, an absolute URL. A local index
/// naming an absolute URL, or a path that would leave the place, is refused.
pub(crate) fn resolve(place: &Place, base: &str, reference: &str) -> Result<Target, String> {
    let (root, prefix) = match place {
        Place::Url(url) => (url.clone(), url.path().to_owned()),
        Place::Dir(_) => (
            Url::parse("https://local.invalid/").map_err(|e| e.to_string())?,
            "/".to_owned(),
        ),
    };
    let from = root.join(base).map_err(|e| e.to_string())?;
    let joined = from.join(reference).map_err(|e| e.to_string())?;
    let below = joined.origin() == root.origin() && joined.path().starts_with(&prefix);
    if below && joined.query().is_none() {
        let rel = joined.path()[prefix.len()..].to_owned();
        let rel = percent_decoded(&rel).ok_or("it is not valid UTF-8 once decoded")?;
        if acp_registry_core::skill_install::is_safe_file_path(&rel) {
            return Ok(Target::Rel(rel));
        }
    }
    match place {
        Place::Url(_) => Ok(Target::Url(joined.to_string())),
        Place::Dir(_) => Err("a local index may only name files below its site folder".into()),
    }
}

/// Where a 0.2.0 `url` leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A path below the place.
    Rel(String),
    /// Another URL.
    Url(String),
}

fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_urls_resolve_below_the_site_or_are_refused_locally() {
        let dir = Place::Dir(PathBuf::from("/site"));
        let base = ".well-known/agent-skills/";
        assert_eq!(
            resolve(&dir, base, "pdf.tar.gz"),
            Ok(Target::Rel(".well-known/agent-skills/pdf.tar.gz".into()))
        );
        assert_eq!(
            resolve(&dir, base, "../../x%20y/SKILL.md"),
            Ok(Target::Rel("x y/SKILL.md".into()))
        );
        assert!(resolve(&dir, base, "../../../../etc/passwd")
            .is_ok_and(|t| t == Target::Rel("etc/passwd".into())));
        assert!(resolve(&dir, base, "https://elsewhere.example/x").is_err());
        let url = Place::of("https://example.com/reg").unwrap();
        assert_eq!(
            resolve(&url, base, "/other/x.zip"),
            Ok(Target::Url("https://example.com/other/x.zip".into()))
        );
        assert_eq!(
            resolve(&url, base, "a.zip"),
            Ok(Target::Rel(".well-known/agent-skills/a.zip".into()))
        );
    }
}
