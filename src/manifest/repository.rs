//! Source repositories named in the many ways package metadata writes them, read into one
//! comparable form: a manifest's `repository`, npm's `repository` (string, `{url}` object,
//! `github:owner/repo` or bare `owner/repo` shorthand, `git+https://…`, `git@host:…`),
//! `PyPI` project URLs, the repository an attestation names, and a GitHub release asset's
//! `owner/repo`.
//!
//! Two spellings name the same repository when their [`Repository`] values are equal: the
//! host is lower-cased without `www.` and without a default port; the path is lower-cased
//! (GitHub, GitLab and Bitbucket compare owner and project names ignoring case), without
//! `.git`, query, fragment or trailing `/`, and cut before the first route of a forge's web
//! pages (`/tree/…`, `/-/…`, `/issues`); on hosts whose repositories are always
//! `owner/repo`, only those two segments count.

use std::fmt;

use url::Url;

/// Hosts where a repository is exactly `owner/repo` (anything after is a web page of it).
const TWO_SEGMENT_HOSTS: [&str; 3] = ["github.com", "bitbucket.org", "codeberg.org"];

/// Path segments that start a forge's web pages about a repository, not the repository.
const ROUTES: [&str; 20] = [
    "-",
    "tree",
    "blob",
    "raw",
    "src",
    "commit",
    "commits",
    "releases",
    "tags",
    "archive",
    "issues",
    "pulls",
    "pull",
    "merge_requests",
    "wiki",
    "wikis",
    "actions",
    "discussions",
    "security",
    "packages",
];

/// A repository in comparable form: `host` (with a non-default port) and `path`
/// (`owner/repo`, or `group/subgroup/project` on GitLab), both lower-case.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Repository {
    host: String,
    path: String,
}

impl Repository {
    /// The host, with its port when it is not the scheme's default.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The repository's path on its host, e.g. `owner/repo`.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// `https://host/path`: a URL that [`normalise`] reads back to the same value.
impl fmt::Display for Repository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "https://{}/{}", self.host, self.path)
    }
}

/// The repository `text` names, or `None` when it names none this module understands (an
/// empty string, a website without an `owner/repo` path, a `gist:` or `file:` reference).
///
/// Accepted: `https://`, `http://`, `git://`, `ssh://` and `git+…` URLs;
/// `git@host:owner/repo.git`; `github:`, `gitlab:` and `bitbucket:` shorthands; and npm's
/// bare `owner/repo`, which means GitHub.
pub(crate) fn normalise(text: &str) -> Option<Repository> {
    let text = text.trim();
    if let Some((host, rest)) = shorthand(text) {
        return from_parts(host, rest);
    }
    if let Some((host, rest)) = scp_form(text) {
        return from_parts(&host.to_ascii_lowercase(), rest);
    }
    let text = text.strip_prefix("git+").unwrap_or(text);
    let url = Url::parse(text).ok()?;
    let ssh_like = match url.scheme() {
        "https" | "http" => false,
        "git" | "ssh" => true,
        _ => return None,
    };
    let mut host = url.host_str()?.to_ascii_lowercase();
    if let (Some(port), false) = (url.port(), ssh_like) {
        host = format!("{host}:{port}");
    }
    from_parts(&host, url.path())
}

/// A release download URL, `<origin>/<owner>/<repo>/releases/download/<tag>/<file>`, read from
/// its path with the tag and the file name percent-decoded. Which hosts serve GitHub releases
/// is for the caller to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReleaseAsset {
    /// The URL as parsed.
    pub url: Url,
    /// The repository's owner.
    pub owner: String,
    /// The repository's name.
    pub repo: String,
    /// The release's tag, decoded.
    pub tag: String,
    /// The asset's file name, decoded.
    pub file: String,
}

impl ReleaseAsset {
    /// `text` read as a release download; `None` for any other URL or path.
    pub(crate) fn parse(text: &str) -> Option<ReleaseAsset> {
        let url = Url::parse(text).ok()?;
        let segments: Vec<&str> = url.path_segments()?.collect();
        let [owner, repo, "releases", "download", tag, file] = segments.as_slice() else {
            return None;
        };
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .ok()
                .map(String::from)
        };
        Some(ReleaseAsset {
            owner: (*owner).to_string(),
            repo: (*repo).to_string(),
            tag: decode(tag)?,
            file: decode(file)?,
            url,
        })
    }
}

/// The repository of a GitHub release asset URL,
/// `https://<host>/<owner>/<repo>/releases/download/<tag>/<file>` (or
/// `…/releases/latest/download/<file>`), when `host` is one of `github_hosts`.
pub(crate) fn release_asset_repository(url: &str, github_hosts: &[&str]) -> Option<Repository> {
    let parsed = Url::parse(url).ok()?;
    let host = match parsed.port() {
        Some(port) => format!("{}:{port}", parsed.host_str()?),
        None => parsed.host_str()?.to_string(),
    }
    .to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    if !github_hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return None;
    }
    let segments: Vec<&str> = parsed.path_segments()?.collect();
    match segments.as_slice() {
        [owner, repo, "releases", "download", _, _]
        | [owner, repo, "releases", "latest", "download", _] => Some(Repository {
            host: host.to_string(),
            path: format!("{owner}/{repo}").to_ascii_lowercase(),
        }),
        _ => None,
    }
}

/// `github:owner/repo` and the like, and npm's bare `owner/repo`.
fn shorthand(text: &str) -> Option<(&'static str, &str)> {
    for (prefix, host) in [
        ("github:", "github.com"),
        ("gitlab:", "gitlab.com"),
        ("bitbucket:", "bitbucket.org"),
    ] {
        if let Some(rest) = strip_prefix_ignore_case(text, prefix) {
            return Some((host, rest));
        }
    }
    let bare = text.split_once('/').is_some_and(|(owner, repo)| {
        [owner, repo].iter().all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
    });
    bare.then_some(("github.com", text))
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `user@host:path` (scp-like ssh syntax, no scheme).
fn scp_form(text: &str) -> Option<(&str, &str)> {
    if text.contains("://") {
        return None;
    }
    let (user_host, path) = text.split_once(':')?;
    let (user, host) = user_host.split_once('@')?;
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    (plain(user) && plain(host)).then_some((host, path))
}

/// The repository at `path` on `host`: segments up to the first route, a `@ref` suffix
/// (as in `git+https://host/o/r@refs/heads/main`) and `.git` dropped.
fn from_parts(host: &str, path: &str) -> Option<Repository> {
    let host = host.strip_prefix("www.").unwrap_or(host);
    let path = path.split(['?', '#', '@']).next().unwrap_or_default();
    let mut kept: Vec<String> = Vec::new();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        if kept.len() >= 2 && ROUTES.contains(&segment) {
            break;
        }
        kept.push(segment.to_ascii_lowercase());
    }
    let bare_host = host.split(':').next().unwrap_or(host);
    if TWO_SEGMENT_HOSTS.contains(&bare_host) {
        kept.truncate(2);
    }
    if let Some(last) = kept.last_mut() {
        while let Some(stem) = last.strip_suffix(".git") {
            *last = stem.to_string();
        }
    }
    if kept.len() < 2 || !kept.iter().all(|s| plain_segment(s)) {
        return None;
    }
    Some(Repository {
        host: host.to_string(),
        path: kept.join("/"),
    })
}

/// A path segment that reads back unchanged from the URL [`Repository`] displays: printable
/// ASCII a URL path keeps as it is, and no `.`/`..` in any spelling.
fn plain_segment(segment: &str) -> bool {
    let dots = segment.replace("%2e", ".");
    !segment.is_empty()
        && dots != "."
        && dots != ".."
        && segment.chars().all(|c| {
            c.is_ascii_graphic()
                && !matches!(
                    c,
                    '\\' | '/'
                        | '?'
                        | '#'
                        | '['
                        | ']'
                        | '^'
                        | '`'
                        | '{'
                        | '|'
                        | '}'
                        | '<'
                        | '>'
                        | '"'
                )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn repo(text: &str) -> String {
        normalise(text).map_or_else(|| "-".into(), |r| r.to_string())
    }

    #[test]
    fn every_spelling_of_one_github_repository_is_equal() {
        let want = "https://github.com/example/agent";
        for text in [
            "https://github.com/example/agent",
            "https://github.com/Example/Agent/",
            "https://www.github.com/example/agent",
            "http://github.com/example/agent",
            "git+https://github.com/example/agent.git",
            "git://github.com/example/agent.git",
            "git+ssh://git@github.com/example/agent.git",
            "ssh://git@github.com:22/example/agent",
            "git@github.com:example/agent.git",
            "github:example/agent",
            "GitHub:example/agent",
            "example/agent",
            " https://github.com/example/agent#readme ",
            "https://github.com/example/agent?tab=readme",
            "https://github.com/example/agent/tree/main/packages/cli",
            "https://github.com/example/agent/blob/main/README.md",
            "git+https://github.com/example/agent@refs/heads/main",
        ] {
            assert_eq!(repo(text), want, "{text}");
        }
    }

    #[test]
    fn other_forges_keep_their_groups_and_drop_their_pages() {
        assert_eq!(
            repo("https://gitlab.com/Group/Sub/Project/-/tree/main"),
            "https://gitlab.com/group/sub/project"
        );
        assert_eq!(
            repo("gitlab:group/project"),
            "https://gitlab.com/group/project"
        );
        assert_eq!(
            repo("https://codeberg.org/o/r/src/branch/main"),
            "https://codeberg.org/o/r"
        );
        assert_eq!(
            repo("https://git.example.com:8443/o/r.git"),
            "https://git.example.com:8443/o/r"
        );
        assert_eq!(
            repo("https://git.example.com:443/o/r"),
            "https://git.example.com/o/r",
            "a default port is no part of the host"
        );
    }

    #[test]
    fn what_names_no_repository_is_none() {
        for text in [
            "",
            "https://example.com",
            "https://github.com/example",
            "gist:11081aaa281",
            "file:../agent",
            "ftp://github.com/o/r",
            "https://github.com/../r",
            "not a url at all",
        ] {
            assert_eq!(repo(text), "-", "{text}");
        }
    }

    #[test]
    fn different_repositories_stay_different() {
        assert_ne!(normalise("example/agent"), normalise("example/agent-2"));
        assert_ne!(
            normalise("https://github.com/example/agent"),
            normalise("https://gitlab.com/example/agent")
        );
    }

    #[test]
    fn release_assets_name_their_repository_on_github_hosts_only() {
        let hosts = ["github.com", "127.0.0.1:8080"];
        let of = |url: &str| release_asset_repository(url, &hosts).map(|r| r.to_string());
        assert_eq!(
            of("https://github.com/Acme/Agent-Releases/releases/download/v1.0.0/a.tar.gz")
                .as_deref(),
            Some("https://github.com/acme/agent-releases")
        );
        assert_eq!(
            of("https://github.com/acme/agent/releases/latest/download/a.zip").as_deref(),
            Some("https://github.com/acme/agent")
        );
        assert_eq!(
            of("https://127.0.0.1:8080/acme/agent/releases/download/v1/a.zip").as_deref(),
            Some("https://127.0.0.1:8080/acme/agent")
        );
        assert_eq!(
            of("https://cdn.example.com/acme/agent/releases/download/v1/a.zip"),
            None
        );
        assert_eq!(of("https://github.com/acme/agent/archive/v1.tar.gz"), None);
    }

    fn name() -> impl Strategy<Value = String> {
        "[A-Za-z0-9][A-Za-z0-9_-]{0,20}"
    }

    proptest! {
        #[test]
        fn spellings_agree_and_display_reads_back(owner in name(), repo in name(), upper in any::<bool>()) {
            let (o, r) = if upper {
                (owner.to_ascii_uppercase(), repo.to_ascii_uppercase())
            } else {
                (owner.clone(), repo.clone())
            };
            let want = normalise(&format!("https://github.com/{owner}/{repo}")).unwrap();
            for text in [
                format!("git+https://github.com/{o}/{r}.git"),
                format!("github:{o}/{r}"),
                format!("{o}/{r}"),
                format!("git@github.com:{o}/{r}.git"),
                format!("https://github.com/{o}/{r}/tree/main"),
            ] {
                prop_assert_eq!(normalise(&text), Some(want.clone()), "{}", text);
            }
            prop_assert_eq!(normalise(&want.to_string()), Some(want));
        }

        #[test]
        fn never_panics_and_is_idempotent(text in "\\PC{0,80}") {
            if let Some(repository) = normalise(&text) {
                prop_assert_eq!(normalise(&repository.to_string()), Some(repository));
            }
        }
    }
}
