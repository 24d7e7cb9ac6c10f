//! Where a checked file is ([`Place`]): a path below a local site root or a URL, how it is
//! shown in findings, and how an index's references resolve against it without leaving the
//! site.

use std::path::{Path, PathBuf};

use url::Url;

use acp_registry_client::skill_index::{is_safe_listed_path, INDEX_FILE, V2_DIR};

/// A file or folder of a checked site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// `rel` (`/`-separated, `""` for the root itself) below the local site root `base`.
    Local {
        /// The site root, as the user named it (or its parent folders).
        base: PathBuf,
        /// Below the root.
        rel: String,
    },
    /// A URL.
    Remote(Url),
}

/// The stand-in origin local references are resolved against, so local and remote sites
/// share one resolver (`Url::join`).
/// The root sits one folder down, so a reference that climbs above it lands outside
/// `/site/` (URL resolution stops climbing at `/` instead of failing).
const LOCAL_SITE: &str = "https://site.invalid/site/";

/// The result of a lookup: the bytes, absent (404, no file), or another failure.
pub(crate) enum Fetched {
    /// The bytes.
    Bytes(Vec<u8>),
    /// Nothing there.
    Absent(String),
    /// Something there that could not be read (a link, too large, a server error).
    Failed(String),
}

impl Place {
    /// `rel` below `base`.
    pub(crate) fn local(base: &Path, rel: &str) -> Place {
        Place::Local {
            base: base.to_path_buf(),
            rel: rel.trim_matches('/').to_string(),
        }
    }

    /// How findings name it: the path as the user named the root, or the URL.
    pub(crate) fn shown(&self) -> String {
        match self {
            Place::Local { base, rel } => {
                let base = base.to_string_lossy().replace('\\', "/");
                match (base.as_str(), rel.as_str()) {
                    ("" | ".", "") => ".".into(),
                    ("" | ".", rel) => rel.to_string(),
                    (base, "") => base.to_string(),
                    (base, rel) => format!("{}/{rel}", base.trim_end_matches('/')),
                }
            }
            Place::Remote(url) => url.to_string(),
        }
    }

    /// Whether it is read over the network.
    pub(crate) fn is_remote(&self) -> bool {
        matches!(self, Place::Remote(_))
    }

    /// `path` (a safe listed path, or one segment) inside this place taken as a folder.
    pub(crate) fn child(&self, path: &str) -> Option<Place> {
        if !is_safe_listed_path(path) {
            return None;
        }
        match self {
            Place::Local { base, rel } => Some(Place::local(
                base,
                &if rel.is_empty() {
                    path.to_string()
                } else {
                    format!("{rel}/{path}")
                },
            )),
            Place::Remote(url) => {
                let mut url = url.clone();
                {
                    let mut segments = url.path_segments_mut().ok()?;
                    segments.pop_if_empty();
                    segments.extend(path.split('/'));
                }
                Some(Place::Remote(url))
            }
        }
    }

    /// The folder a `./` path names inside this place taken as a folder (`./` alone: this
    /// place); `None` when it does not start with `./` or climbs out.
    pub(crate) fn dot_child(&self, path: &str) -> Option<Place> {
        match path.strip_prefix("./")?.trim_end_matches('/') {
            "" => Some(self.clone()),
            rest => self.child(rest),
        }
    }

    /// The folder this file is in.
    pub(crate) fn parent(&self) -> Place {
        match self {
            Place::Local { base, rel } => {
                Place::local(base, rel.rsplit_once('/').map_or("", |(dir, _)| dir))
            }
            Place::Remote(url) => Place::Remote(url.join("./").unwrap_or_else(|_| url.clone())),
        }
    }

    /// The URL this place stands for: the real one, or the stand-in of a local file.
    fn as_url(&self) -> Option<Url> {
        match self {
            Place::Local { rel, .. } => Url::parse(LOCAL_SITE).ok()?.join(rel).ok(),
            Place::Remote(url) => Some(url.clone()),
        }
    }

    /// The site root above an index or marketplace: above `.well-known/agent-skills/` (or
    /// `.well-known/skills/`, `.claude-plugin/`) when the file is there, else its folder.
    fn site_root(&self) -> Option<Url> {
        let url = self.as_url()?;
        let path = url.path().to_string();
        for tail in [
            format!("/{V2_DIR}/{INDEX_FILE}"),
            format!("/{}/{INDEX_FILE}", acp_registry_client::skill_index::V1_DIR),
        ] {
            if let Some(root) = path.strip_suffix(&tail) {
                let mut site = url.clone();
                site.set_path(&format!("{root}/"));
                site.set_query(None);
                return Some(site);
            }
        }
        url.join("./").ok()
    }

    /// `reference` (an index's `url`) resolved against this index: `Ok` with the place and
    /// whether it is on another origin (remote only), `Err` with why it cannot be used
    /// (another origin from a local site, a path climbing out of the site root, not a URL).
    pub(crate) fn resolve(&self, reference: &str) -> Result<(Place, bool), String> {
        let here = self
            .as_url()
            .ok_or("the index has no URL to resolve against")?;
        let site = self.site_root().ok_or("the index has no site root")?;
        let target = here
            .join(reference)
            .map_err(|e| format!("`{reference}` is not a URL: {e}"))?;
        let same_origin = target.origin() == site.origin();
        match self {
            Place::Local { base, .. } => {
                if !same_origin {
                    return Err(format!(
                        "`{reference}` leaves the local site: it is on another host, not checked"
                    ));
                }
                let rel = below(&site, &target)
                    .ok_or_else(|| format!("`{reference}` leads out of the site root"))?;
                Ok((Place::local(base, &rel), false))
            }
            Place::Remote(_) => {
                if target.scheme() != "https" && target.scheme() != "http" {
                    return Err(format!("`{reference}` is not an http(s) URL"));
                }
                if same_origin && below(&site, &target).is_none() {
                    return Err(format!("`{reference}` leads out of the site root"));
                }
                Ok((Place::Remote(target), !same_origin))
            }
        }
    }
}

/// The decoded path of `target` below `site`, when it is below it and names a file.
fn below(site: &Url, target: &Url) -> Option<String> {
    let rel = target.path().strip_prefix(site.path())?;
    let decoded = percent_encoding::percent_decode_str(rel)
        .decode_utf8()
        .ok()?;
    (is_safe_listed_path(&decoded)).then(|| decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(base: &str) -> Place {
        Place::local(Path::new(base), ".well-known/agent-skills/index.json")
    }

    #[test]
    fn local_references_resolve_inside_the_site_and_never_climb_out() {
        let (place, _) = index("site").resolve("pdf/SKILL.md").unwrap();
        assert_eq!(place.shown(), "site/.well-known/agent-skills/pdf/SKILL.md");
        let (place, _) = index("site").resolve("../../skills/a%20b.md").unwrap();
        assert_eq!(place.shown(), "site/skills/a b.md");
        let (place, _) = index("site").resolve("%2e%2e/x").unwrap();
        assert_eq!(place.shown(), "site/.well-known/x");
        for bad in [
            "../../../etc/passwd",
            "../../..",
            "https://elsewhere.example/x",
            "/",
            "a/..%2f..%2fb",
            "//elsewhere.example/x",
        ] {
            assert!(index("site").resolve(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn remote_references_may_leave_the_origin_but_not_climb_the_site() {
        let site = Place::Remote(
            Url::parse("https://h.example/docs/.well-known/agent-skills/index.json").unwrap(),
        );
        let (place, other) = site.resolve("pdf.tar.gz").unwrap();
        assert_eq!(
            place.shown(),
            "https://h.example/docs/.well-known/agent-skills/pdf.tar.gz"
        );
        assert!(!other);
        let (_, other) = site.resolve("https://cdn.example/pdf.zip").unwrap();
        assert!(other);
        assert!(site.resolve("/other/x").is_err());
        assert!(site.resolve("file:///etc/passwd").is_err());
    }
}
