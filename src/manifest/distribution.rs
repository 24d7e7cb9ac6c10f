//! The typed launch model of a `distribution`: per-platform binary targets (what to fetch,
//! which `cmd` to run), `npx` and `uvx` packages, each with its `args` and `env`.
//!
//! Built once from the span-carrying [`Node`] tree (or from published JSON, through the same
//! code), so `verify`, the site's install snippets and the online checks read the manifest
//! the same way instead of each looking JSON maps up by key. It records what is there; the
//! rules judge it.

use std::collections::BTreeMap;

use super::jsonc::{escape_pointer, Member, Node, NodeValue};
use super::{DISTRIBUTION_KINDS, PLATFORMS};
pub(crate) use acp_registry_client::platform::ArchiveFormat;
pub use acp_registry_client::platform::Kind;
pub(crate) use acp_registry_client::platform::{archive_file_name, current_platform};
use acp_registry_core::source::Span;

/// What identifies one kind of a manifest's `distribution` (`binary` as a whole, `npx`,
/// `uvx`): [`Distribution::fingerprint`] of the model of `distribution` (none: every kind
/// has the fingerprint of an absent part).
pub(crate) fn fingerprint(distribution: Option<&Node>, kind: Kind) -> String {
    distribution
        .map(|d| Distribution::from_node(d, "/distribution"))
        .unwrap_or_default()
        .fingerprint(kind)
}

/// Whether `key`, written directly under `distribution`, is a platform target in the RFD's
/// early form: a known platform key or a common misspelling of one. The one test of legacy
/// keys: the rules, the launch model and the normalised output all ask it, so no reader
/// treats as a target a key the rules do not (`distribution.foo` is never probed).
pub(crate) fn is_legacy_platform_key(key: &str) -> bool {
    !DISTRIBUTION_KINDS.contains(&key)
        && (PLATFORMS.contains(&key) || platform_suggestion(key).is_some())
}

/// The right key for a common misspelling of a platform.
pub(crate) fn platform_suggestion(key: &str) -> Option<&'static str> {
    let lower = key.to_lowercase().replace('_', "-");
    let (os, arch) = lower.split_once('-')?;
    let os = match os {
        "darwin" | "macos" | "mac" | "osx" | "apple" => "darwin",
        "linux" => "linux",
        "windows" | "win32" | "win" | "win64" => "windows",
        _ => return None,
    };
    let arch = match arch {
        "aarch64" | "arm64" => "aarch64",
        "x86-64" | "x64" | "amd64" | "x86_64" => "x86_64",
        _ => return None,
    };
    PLATFORMS
        .iter()
        .copied()
        .find(|p| *p == format!("{os}-{arch}"))
}

/// One platform slot of a distribution as written, whatever its value: a member of
/// `binary`, or a legacy platform key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot<'a> {
    /// The platform key as written (known or not).
    pub platform: &'a str,
    /// Written directly under `distribution`.
    pub legacy: bool,
    /// The value (a target when it is an object).
    pub node: &'a Node,
}

/// The nodes of one distribution object, read once: the rules judge every slot, and
/// [`Distribution`] is built from the slots that are objects.
#[derive(Debug, Clone)]
pub(crate) struct Written<'a> {
    /// JSON pointer of the distribution object.
    pub base: String,
    /// `binary` members in the order written, then legacy platform keys.
    pub binary: Vec<Slot<'a>>,
    /// The `npx` value.
    pub npx: Option<&'a Node>,
    /// The `uvx` value.
    pub uvx: Option<&'a Node>,
}

impl<'a> Written<'a> {
    /// The slots of the distribution object `dist` at pointer `base`; duplicate keys resolve
    /// last-wins, as in clients.
    pub(crate) fn of(dist: &'a Node, base: &str) -> Written<'a> {
        let mut binary = Vec::new();
        if let Some(members) = dist.get("binary") {
            binary.extend(members.unique_members().into_iter().map(|m| Slot {
                platform: &m.key,
                legacy: false,
                node: &m.value,
            }));
        }
        binary.extend(
            dist.unique_members()
                .into_iter()
                .filter(|m| is_legacy_platform_key(&m.key))
                .map(|m| Slot {
                    platform: &m.key,
                    legacy: true,
                    node: &m.value,
                }),
        );
        Written {
            base: base.to_string(),
            binary,
            npx: dist.get("npx"),
            uvx: dist.get("uvx"),
        }
    }

    /// The JSON pointer of `slot`.
    pub(crate) fn pointer(&self, slot: &Slot) -> String {
        let key = escape_pointer(slot.platform);
        if slot.legacy {
            format!("{}/{key}", self.base)
        } else {
            format!("{}/binary/{key}", self.base)
        }
    }
}

/// One platform's binary build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BinaryTarget {
    /// The platform key as written (known or not).
    pub platform: String,
    /// JSON pointer of the target object.
    pub pointer: String,
    /// Written directly under `distribution` (the RFD's early form).
    pub legacy: bool,
    /// `archive` URL, when a string.
    pub archive: Option<String>,
    /// `cmd` to run inside the archive, when a string.
    pub cmd: Option<String>,
    /// `args` (string items only).
    pub args: Vec<String>,
    /// `env` (string values, last duplicate wins).
    pub env: BTreeMap<String, String>,
    /// The pinned `sha256`, when a string.
    pub sha256: Option<String>,
}

/// An `npx` or `uvx` package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Package {
    /// `npx` or `uvx`.
    pub kind: Kind,
    /// JSON pointer of the package object.
    pub pointer: String,
    /// `package` as written (`name@1.2.3`, `name==1.2.3`).
    pub spec: Option<String>,
    /// `args` (string items only).
    pub args: Vec<String>,
    /// `env` (string values, last duplicate wins).
    pub env: BTreeMap<String, String>,
}

/// What to run: a program, its arguments and the variables to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launch {
    /// The program to start.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to the environment.
    pub env: BTreeMap<String, String>,
}

impl Package {
    /// `npx --yes <package> <args>` or `uvx <package> <args>` (`--yes`: never prompt, since
    /// an editor launches with no terminal to answer).
    pub(crate) fn launch(&self) -> Launch {
        let mut args = Vec::new();
        if self.kind == Kind::Npx {
            args.push("--yes".to_string());
        }
        args.extend(self.spec.clone());
        args.extend(self.args.iter().cloned());
        Launch {
            program: self.kind.as_str().to_string(),
            args,
            env: self.env.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
/// The typed launch model of one `distribution` object.
pub(crate) struct Distribution {
    /// `binary` targets in the order written, then legacy platform keys.
    pub binary: Vec<BinaryTarget>,
    /// The `npx` package, when there is one.
    pub npx: Option<Package>,
    /// The `uvx` package, when there is one.
    pub uvx: Option<Package>,
    /// The JSON text of each kind's part as written, for [`Distribution::fingerprint`].
    parts: BTreeMap<Kind, String>,
}

impl Distribution {
    /// The model of the `distribution` object at `base` (a JSON pointer, for findings):
    /// the [`Written`] slots whose value is an object. Duplicate keys resolve last-wins.
    pub(crate) fn from_node(dist: &Node, base: &str) -> Distribution {
        let written = Written::of(dist, base);
        let parts = Kind::ALL
            .into_iter()
            .filter_map(|kind| Some((kind, dist.get(kind.as_str())?.to_json().to_string())))
            .collect();
        Distribution {
            binary: written
                .binary
                .iter()
                .filter_map(|slot| target(slot, written.pointer(slot)))
                .collect(),
            npx: written.npx.and_then(|n| package(n, Kind::Npx, base)),
            uvx: written.uvx.and_then(|n| package(n, Kind::Uvx, base)),
            parts,
        }
    }

    /// What identifies one kind (`binary` as a whole, `npx`, `uvx`): 16 hex digits of the
    /// SHA-256 of its JSON, keys as written (`null` when absent). `matrix` records it with
    /// each launch; `matrix --changed-only` and `build --matrix` compare it with the
    /// manifest's now (any edit of that part, even of its key order, counts as a change).
    pub(crate) fn fingerprint(&self, kind: Kind) -> String {
        use sha2::{Digest, Sha256};
        let part = self.parts.get(&kind).map_or("null", String::as_str);
        let digest = Sha256::digest(part.as_bytes());
        acp_registry_core::fs::digest::hex(&digest[..8])
    }

    /// The same model from published JSON (the site's input).
    pub(crate) fn from_json(dist: &serde_json::Value) -> Distribution {
        Distribution::from_node(&node_of(dist), "/distribution")
    }

    /// The kinds present, in output order.
    pub(crate) fn kinds(&self) -> Vec<Kind> {
        let present = [
            !self.binary.is_empty(),
            self.npx.is_some(),
            self.uvx.is_some(),
        ];
        Kind::ALL
            .into_iter()
            .zip(present)
            .filter_map(|(k, p)| p.then_some(k))
            .collect()
    }

    /// The target of `platform`: under `binary` first, else a legacy key.
    pub(crate) fn target(&self, platform: &str) -> Option<&BinaryTarget> {
        let of = |legacy: bool| {
            self.binary
                .iter()
                .find(|t| t.platform == platform && t.legacy == legacy)
        };
        of(false).or_else(|| of(true))
    }

    /// Whether the manifest has a distribution of `kind` (a binary target, or the package).
    pub(crate) fn has(&self, kind: Kind) -> bool {
        match kind {
            Kind::Binary => !self.binary.is_empty(),
            kind => self.package(kind).is_some(),
        }
    }

    /// The package of `kind` (`None` for `binary`).
    pub(crate) fn package(&self, kind: Kind) -> Option<&Package> {
        match kind {
            Kind::Npx => self.npx.as_ref(),
            Kind::Uvx => self.uvx.as_ref(),
            Kind::Binary => None,
        }
    }
}

fn target(slot: &Slot, pointer: String) -> Option<BinaryTarget> {
    let node = slot.node;
    node.as_object()?;
    Some(BinaryTarget {
        platform: slot.platform.to_string(),
        pointer,
        legacy: slot.legacy,
        archive: node.get_str("archive").map(str::to_string),
        cmd: node.get_str("cmd").map(str::to_string),
        args: words(node),
        env: env(node),
        sha256: node.get_str("sha256").map(str::to_string),
    })
}

fn package(node: &Node, kind: Kind, base: &str) -> Option<Package> {
    node.as_object()?;
    Some(Package {
        kind,
        pointer: format!("{base}/{kind}"),
        spec: node.get_str("package").map(str::to_string),
        args: words(node),
        env: env(node),
    })
}

/// A value as text: strings as they are, anything else as its JSON.
fn text(node: &Node) -> String {
    match node.as_str() {
        Some(s) => s.to_string(),
        None => node.to_json().to_string(),
    }
}

fn words(node: &Node) -> Vec<String> {
    node.get("args")
        .and_then(Node::as_array)
        .map(|items| items.iter().map(text).collect())
        .unwrap_or_default()
}

fn env(node: &Node) -> BTreeMap<String, String> {
    node.get("env")
        .filter(|e| e.as_object().is_some())
        .map(|e| {
            e.unique_members()
                .into_iter()
                .map(|m| (m.key.clone(), text(&m.value)))
                .collect()
        })
        .unwrap_or_default()
}

/// A span-less tree of a JSON value (published agents are read through the same views).
pub(crate) fn node_of(value: &serde_json::Value) -> Node {
    use serde_json::Value;
    let value = match value {
        Value::Null => NodeValue::Null,
        Value::Bool(b) => NodeValue::Bool(*b),
        Value::Number(n) => NodeValue::Number(n.to_string()),
        Value::String(s) => NodeValue::String(s.clone()),
        Value::Array(items) => NodeValue::Array(items.iter().map(node_of).collect()),
        Value::Object(map) => NodeValue::Object(
            map.iter()
                .map(|(k, v)| Member {
                    key: k.clone(),
                    key_span: Span::default(),
                    value: node_of(v),
                })
                .collect(),
        ),
    };
    Node {
        span: Span::default(),
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn binary_npx_and_uvx_are_read_with_pointers_args_and_env() {
        let text = r#"{
          "binary": {"linux-x86_64": {"archive": "https://x/a.tgz", "cmd": "./a", "args": ["acp"], "env": {"B": "2", "A": "1"}, "sha256": "ab"}},
          "darwin-aarch64": {"archive": "https://x/b.zip", "cmd": "b"},
          "npx": {"package": "@s/p@1.0.0", "args": ["--acp"]},
          "uvx": {"package": "p==1.0.0", "env": {"K": "v"}}
        }"#;
        let dist = Distribution::from_node(&crate::manifest::parse(text).unwrap(), "/distribution");
        assert_eq!(dist.kinds(), [Kind::Binary, Kind::Npx, Kind::Uvx]);
        let linux = dist.target("linux-x86_64").unwrap();
        assert_eq!(linux.pointer, "/distribution/binary/linux-x86_64");
        assert_eq!(linux.args, ["acp"]);
        assert_eq!(linux.env.keys().collect::<Vec<_>>(), ["A", "B"]);
        let legacy = dist.target("darwin-aarch64").unwrap();
        assert!(legacy.legacy);
        assert_eq!(legacy.pointer, "/distribution/darwin-aarch64");
        let npx = dist.npx.as_ref().unwrap().launch();
        assert_eq!(
            (npx.program.as_str(), npx.args),
            (
                "npx",
                vec!["--yes".to_string(), "@s/p@1.0.0".into(), "--acp".into()]
            )
        );
        let uvx = dist.uvx.as_ref().unwrap().launch();
        assert_eq!(uvx.args, ["p==1.0.0"]);
        assert_eq!(uvx.env["K"], "v");
    }

    #[test]
    fn published_json_gives_the_same_model_as_the_source() {
        let value = json!({"binary": {"windows-x86_64": {"archive": "https://x/a.zip", "cmd": "a.exe"}}, "npx": {"package": "a@1.0.0"}});
        let from_text = Distribution::from_node(
            &crate::manifest::parse(&value.to_string()).unwrap(),
            "/distribution",
        );
        assert_eq!(Distribution::from_json(&value), from_text);
    }

    #[test]
    fn platform_suggestions_cover_common_spellings() {
        assert_eq!(platform_suggestion("linux-x64"), Some("linux-x86_64"));
        assert_eq!(platform_suggestion("darwin-arm64"), Some("darwin-aarch64"));
        assert_eq!(platform_suggestion("macos-x64"), Some("darwin-x86_64"));
        assert_eq!(platform_suggestion("win32-x64"), Some("windows-x86_64"));
        assert_eq!(platform_suggestion("solaris-sparc"), None);
    }

    #[test]
    fn legacy_keys_are_platforms_or_their_misspellings_never_kinds_or_other_keys() {
        assert!(is_legacy_platform_key("linux-x86_64"));
        assert!(is_legacy_platform_key("darwin-arm64"));
        assert!(!is_legacy_platform_key("foo"));
        assert!(!is_legacy_platform_key("binary"));
        assert!(!is_legacy_platform_key("npx"));
    }

    #[test]
    fn the_current_platform_is_a_known_key_or_none() {
        if let Some(p) = current_platform() {
            assert!(PLATFORMS.contains(&p));
        }
    }
}

#[cfg(test)]
mod archive_format_tests {
    use super::ArchiveFormat;

    /// The catalogue sits below `manifest` and cannot read the list, so its prose is pinned.
    #[test]
    fn the_archive_format_explanation_lists_exactly_the_supported_extensions() {
        let listed: Vec<String> = ArchiveFormat::extensions()
            .map(|extension| format!("`{extension}`"))
            .collect();
        let explanation = crate::diagnostics::Code::ArchiveFormat.explanation();
        assert!(
            explanation.starts_with(&format!(
                "Clients extract archives themselves: {}, or a raw executable.",
                listed.join(", ")
            )),
            "{explanation}"
        );
    }

    #[test]
    fn archive_format_is_told_by_the_extension_whatever_the_case_query_or_fragment() {
        let of = ArchiveFormat::of;
        assert_eq!(of("https://x/a.ZIP?sig=1"), ArchiveFormat::Zip);
        assert_eq!(of("a.tgz#frag"), ArchiveFormat::TarGz);
        assert_eq!(of("a.tar.gz"), ArchiveFormat::TarGz);
        assert_eq!(of("a.TBZ2"), ArchiveFormat::TarBz2);
        assert_eq!(of("a.tar.xz"), ArchiveFormat::TarXz);
        assert_eq!(of("agent"), ArchiveFormat::Raw);
        assert_eq!(of("a.tar.zst"), ArchiveFormat::Raw);
        // Only `of` drops a query: a bare file name keeps every character.
        assert_eq!(ArchiveFormat::of_file_name("a.zip?x"), ArchiveFormat::Raw);
    }
}
