//! The `feeds` section of the configuration: release feeds `update` reads for entries
//! published off GitHub, npm and `PyPI` (docs/format.md, "Release feeds").
//!
//! ```jsonc
//! "feeds": {
//!   "opencode": {
//!     "url": "https://opencode.ai/update/api/latest/cli/opencode",
//!     "format": "json",
//!     "version": "/version",
//!     "published": "/released_at",
//!     "assets": {
//!       "linux-x86_64": { "url": "/files/linux-x64/url", "sha256": "/files/linux-x64/sha256" }
//!     },
//!     "asset_hosts": ["downloads.opencode.ai"]
//!   }
//! }
//! ```
//!
//! Every key names an entry (checked against the registry like every id the file names), the
//! feed URL is https, each pointer is a JSON Pointer (RFC 6901), each target a platform of the
//! format and each allowed host a bare host name. What the feed says is read by `update`.

use std::collections::BTreeMap;

use crate::manifest::distribution::platform_suggestion;
use crate::manifest::fields::{Fields, Keys};
use crate::manifest::{Member, Node, PLATFORMS};
use acp_registry_core::source::Span;

/// The longest feed URL: it names the feed's member in `releases.json`, whose strings are at
/// most 1024 bytes.
pub(crate) const MAX_FEED_URL: usize = 1024;
/// The longest JSON Pointer a feed declaration may hold.
const MAX_POINTER: usize = 256;
/// The most hosts one feed's `asset_hosts` may list.
const MAX_ASSET_HOSTS: usize = 16;

/// How a feed lays out its releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FeedFormat {
    /// One JSON document describing one release (the latest).
    Json,
    /// JSON Lines: each non-blank line one release.
    Jsonl,
}

/// Where one target's archive is in a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AssetPointers {
    /// Pointer to the archive's absolute https URL.
    pub(crate) url: String,
    /// Pointer to its sha256 (64 hex digits, optionally `sha256:`-prefixed), when the feed
    /// publishes one.
    pub(crate) sha256: Option<String>,
}

/// One entry's release feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FeedConfig {
    /// The feed's https URL.
    pub(crate) url: String,
    pub(crate) format: FeedFormat,
    /// Pointer to the release's version, in the document or in each line.
    pub(crate) version: String,
    /// Pointer to its publish time (RFC 3339), when the feed gives one.
    pub(crate) published: Option<String>,
    /// By platform target (`linux-x86_64`, …).
    pub(crate) assets: BTreeMap<String, AssetPointers>,
    /// Hosts asset URLs may be on besides the feed's own and the entry's current archive's
    /// (lowercase).
    pub(crate) asset_hosts: Vec<String>,
}

const HELP: &str = "write `{\"<id>\": {\"url\": \"https://…\", \"format\": \"json\", \"version\": \
                    \"/version\", \"assets\": {\"linux-x86_64\": {\"url\": \"/files/linux/url\"}}}}`";

/// `"feeds": {"<id>": {…}}`: every readable feed; each id is recorded for the registry check.
pub(super) fn read_feeds(
    fields: &mut Fields,
    node: &Node,
    ids: &mut Vec<(String, Span)>,
) -> BTreeMap<String, FeedConfig> {
    let mut feeds = BTreeMap::new();
    let Some(members) = fields.object(node, "feeds must be an object of entry id to feed", HELP)
    else {
        return feeds;
    };
    for member in members {
        ids.push((member.key.clone(), member.key_span));
        if let Some(feed) = read_feed(fields, member) {
            feeds.insert(member.key.clone(), feed);
        }
    }
    feeds
}

/// One id's feed; `None` after any problem (a half-read feed is never used).
fn read_feed(fields: &mut Fields, member: &Member) -> Option<FeedConfig> {
    let id = &member.key;
    let members = fields.object(
        &member.value,
        format!("the feed of `{id}` must be an object"),
        HELP,
    )?;
    let before = fields.findings.len();
    let mut keys = Keys::new(members);
    let url = keys
        .get("url")
        .next()
        .and_then(|m| feed_url(fields, &m.value));
    let format = keys
        .get("format")
        .next()
        .and_then(|m| format(fields, &m.value));
    let version = keys
        .get("version")
        .next()
        .and_then(|m| pointer(fields, &m.value, "version"));
    let published = keys
        .get("published")
        .next()
        .and_then(|m| pointer(fields, &m.value, "published"));
    let assets = keys
        .get("assets")
        .next()
        .map(|m| read_assets(fields, &m.value));
    let asset_hosts = keys
        .get("asset_hosts")
        .next()
        .map(|m| read_hosts(fields, &m.value))
        .unwrap_or_default();
    keys.finish(fields);
    for (key, missing) in [
        ("url", url.is_none()),
        ("format", format.is_none()),
        ("version", version.is_none()),
    ] {
        if missing && !members.iter().any(|m| m.key == key) {
            let message = format!("the feed of `{id}` has no `{key}`");
            fields.problem(member.value.span, message, HELP);
        }
    }
    if fields.findings.len() != before {
        return None;
    }
    Some(FeedConfig {
        url: url?,
        format: format?,
        version: version?,
        published,
        assets: assets.unwrap_or_default(),
        asset_hosts,
    })
}

fn feed_url(fields: &mut Fields, node: &Node) -> Option<String> {
    let help = "write the feed's https URL, e.g. `https://example.com/releases/latest.json`";
    let text = fields.string(node, "a feed's `url` must be a string", help)?;
    let parsed = url::Url::parse(text).ok();
    let plain = parsed.as_ref().is_some_and(|u| {
        u.scheme() == "https"
            && u.host_str().is_some()
            && u.username().is_empty()
            && u.password().is_none()
            && u.fragment().is_none()
    });
    if !plain {
        let message = format!("feed URL `{}` is not an https URL", text.escape_debug());
        fields.problem(node.span, message, help);
        return None;
    }
    if text.len() > MAX_FEED_URL {
        let message = format!("a feed URL longer than {MAX_FEED_URL} bytes");
        fields.problem(node.span, message, "use a shorter URL");
        return None;
    }
    Some(text.to_string())
}

fn format(fields: &mut Fields, node: &Node) -> Option<FeedFormat> {
    let help = "write `\"json\"` (one release per document) or `\"jsonl\"` (one release a line)";
    match fields.string(node, "a feed's `format` must be a string", help)? {
        "json" => Some(FeedFormat::Json),
        "jsonl" => Some(FeedFormat::Jsonl),
        other => {
            let message = format!("unknown feed format `{}`", other.escape_debug());
            fields.problem(node.span, message, help);
            None
        }
    }
}

/// A JSON Pointer (RFC 6901): empty, or `/`-separated tokens where `~` is only `~0` or `~1`.
pub(crate) fn is_pointer(text: &str) -> bool {
    let escapes_ok = |token: &str| {
        let mut chars = token.chars();
        while let Some(c) = chars.next() {
            if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
                return false;
            }
        }
        true
    };
    text.is_empty() || (text.starts_with('/') && text.split('/').all(escapes_ok))
}

fn pointer(fields: &mut Fields, node: &Node, key: &str) -> Option<String> {
    let help = "write a JSON Pointer into the release, e.g. `\"/version\"` or \
                `\"/files/linux-x64/url\"` (`~1` for a `/` inside a key, `~0` for `~`)";
    let text = fields.string(node, format!("`{key}` must be a JSON Pointer string"), help)?;
    if text.len() > MAX_POINTER || !is_pointer(text) {
        let message = format!("`{}` is not a JSON Pointer", text.escape_debug());
        fields.problem(node.span, message, help);
        return None;
    }
    Some(text.to_string())
}

/// `"assets": {"<platform>": {"url": POINTER, "sha256": POINTER?}}`.
fn read_assets(fields: &mut Fields, node: &Node) -> BTreeMap<String, AssetPointers> {
    let help = "write `{\"linux-x86_64\": {\"url\": \"/files/linux-x64/url\", \"sha256\": \
                \"/files/linux-x64/sha256\"}}`";
    let mut out = BTreeMap::new();
    let Some(members) = fields.object(node, "a feed's `assets` must be an object", help) else {
        return out;
    };
    for member in members {
        if !PLATFORMS.contains(&member.key.as_str()) {
            let help = platform_suggestion(&member.key).map_or_else(
                || format!("targets are {}", PLATFORMS.join(", ")),
                |p| format!("did you mean `{p}`?"),
            );
            let message = format!("`{}` is not a platform target", member.key.escape_debug());
            fields.problem(member.key_span, message, help);
            continue;
        }
        let Some(pointers) = fields.object(&member.value, "an asset must be an object", help)
        else {
            continue;
        };
        let mut keys = Keys::new(pointers);
        let url = keys
            .get("url")
            .next()
            .map(|m| pointer(fields, &m.value, "url"));
        let sha256 = keys
            .get("sha256")
            .next()
            .map(|m| pointer(fields, &m.value, "sha256"));
        keys.finish(fields);
        match (url, sha256) {
            (Some(Some(url)), Some(Some(sha256))) => {
                let sha256 = Some(sha256);
                out.insert(member.key.clone(), AssetPointers { url, sha256 });
            }
            (Some(Some(url)), None) => {
                out.insert(member.key.clone(), AssetPointers { url, sha256: None });
            }
            (None, _) => {
                let message = format!("the asset of `{}` has no `url`", member.key);
                fields.problem(member.value.span, message, help);
            }
            _ => {}
        }
    }
    out
}

/// `"asset_hosts": ["downloads.example.com"]`: bare host names, lowercase.
fn read_hosts(fields: &mut Fields, node: &Node) -> Vec<String> {
    let help = "write host names asset URLs may be on, e.g. `[\"downloads.example.com\"]`";
    let Some(items) = fields.array(node, "`asset_hosts` must be a list of host names", help) else {
        return Vec::new();
    };
    if items.len() > MAX_ASSET_HOSTS {
        let message = format!("more than {MAX_ASSET_HOSTS} asset hosts");
        fields.problem(
            node.span,
            message,
            "list the hosts the feed's archives are on",
        );
        return Vec::new();
    }
    let mut hosts = Vec::new();
    for (text, span) in fields.strings(items, "a host must be a string", help) {
        let host = url::Host::parse(text).ok().filter(|_| {
            !text.is_empty() && !text.contains(['/', ':', '@', '*']) && text.len() <= 253
        });
        if host.is_some() {
            hosts.push(text.to_ascii_lowercase());
        } else {
            let message = format!("`{}` is not a host name", text.escape_debug());
            fields.problem(span, message, help);
        }
    }
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Code;
    use crate::manifest::jsonc;
    use acp_registry_core::source::SourceFile;

    type Found = Vec<(String, usize, usize)>;

    /// The feeds of `{"feeds": …}` in `text`, the ids named, and each finding with its line
    /// and column.
    fn parse(text: &str) -> (BTreeMap<String, FeedConfig>, Vec<String>, Found) {
        let source = SourceFile::new("acp-registry.jsonc", text.to_string());
        let root = jsonc::parse(text).unwrap();
        let mut fields = Fields::new(&source, Code::ConfigInvalid);
        let mut ids = Vec::new();
        let feeds = read_feeds(&mut fields, root.get("feeds").unwrap(), &mut ids);
        let found = fields
            .findings
            .iter()
            .map(|d| (d.message.clone(), d.line(), d.column()))
            .collect();
        (feeds, ids.into_iter().map(|(id, _)| id).collect(), found)
    }

    #[test]
    fn a_json_and_a_jsonl_feed_are_read_with_their_pointers_targets_and_hosts() {
        let (feeds, ids, diags) = parse(
            r#"{"feeds": {
                "opencode": {"url": "https://opencode.ai/update/api/latest/cli/opencode",
                  "format": "json", "version": "/version", "published": "/released_at",
                  "assets": {"linux-x86_64": {"url": "/files/linux-x64/url",
                                              "sha256": "/files/linux-x64/sha256"}}},
                "junie": {"url": "https://example.com/junie.jsonl", "format": "jsonl",
                  "version": "/v", "assets": {"darwin-aarch64": {"url": "/a~1b/url"}},
                  "asset_hosts": ["CDN.example.com"]}
            }}"#,
        );
        assert!(diags.is_empty(), "{diags:?}");
        let opencode = &feeds["opencode"];
        assert_eq!(opencode.format, FeedFormat::Json);
        assert_eq!(opencode.published.as_deref(), Some("/released_at"));
        assert_eq!(
            opencode.assets["linux-x86_64"].sha256.as_deref(),
            Some("/files/linux-x64/sha256")
        );
        let junie = &feeds["junie"];
        assert_eq!(
            (junie.format, junie.published.as_ref()),
            (FeedFormat::Jsonl, None)
        );
        assert_eq!(junie.assets["darwin-aarch64"].sha256, None);
        assert_eq!(junie.asset_hosts, ["cdn.example.com"]);
        assert_eq!(ids, ["opencode", "junie"]);
    }

    #[test]
    fn each_bad_declaration_is_a_finding_at_its_value_and_the_feed_is_not_used() {
        let (feeds, _, diags) = parse(
            "{\"feeds\": {\"x\": {\n  \"url\": \"http://example.com/f.json\",\n  \"format\": \"xml\",\n  \
             \"version\": \"version\",\n  \"published\": \"/a~2\",\n  \"assets\": {\"linux-x64\": {\"url\": \"/u\"},\n  \
             \"darwin-aarch64\": {\"sha256\": \"/s\"}},\n  \"asset_hosts\": [\"https://cdn.example.com/\"],\n  \"extra\": 1}}}",
        );
        let messages: Vec<(&str, usize)> = diags.iter().map(|(m, l, _)| (m.as_str(), *l)).collect();
        assert_eq!(
            messages,
            [
                (
                    "feed URL `http://example.com/f.json` is not an https URL",
                    2
                ),
                ("unknown feed format `xml`", 3),
                ("`version` is not a JSON Pointer", 4),
                ("`/a~2` is not a JSON Pointer", 5),
                ("`linux-x64` is not a platform target", 6),
                ("the asset of `darwin-aarch64` has no `url`", 7),
                ("`https://cdn.example.com/` is not a host name", 8),
                ("unknown key `extra`", 9),
            ]
        );
        assert!(feeds.is_empty());
        let (_, _, diags) = parse(r#"{"feeds": {"x": {"format": "json"}}}"#);
        let messages: Vec<&str> = diags.iter().map(|(m, _, _)| m.as_str()).collect();
        assert_eq!(
            messages,
            [
                "the feed of `x` has no `url`",
                "the feed of `x` has no `version`"
            ]
        );
    }

    #[test]
    fn pointers_follow_rfc_6901() {
        for good in ["", "/", "/a", "/a/0/b", "/a~0b~1c", "/~1"] {
            assert!(is_pointer(good), "{good}");
        }
        for bad in ["a", "/a~", "/a~2", "~1/a", "#/a"] {
            assert!(!is_pointer(bad), "{bad}");
        }
    }
}
