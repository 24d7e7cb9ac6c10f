//! Choosing how to run an entry on a platform: the first kind of [`ResolveOptions::order`]
//! the entry offers and the platform can use, with the exact arguments and environment, and
//! why each other kind was passed over. The default order is binary, npx, uvx: a binary
//! needs no runtime on the machine and starts fastest; npx needs Node; uvx needs uv.
//! An unknown id gets the nearest known ids.

use std::collections::BTreeMap;

use crate::document::{BinaryTarget, Document, Entry, Package};
use crate::platform::{current_platform, Kind};

/// How to choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveOptions {
    /// The platform key (`linux-x86_64`, …); `None`: this machine's.
    pub platform: Option<String>,
    /// The kinds in order of preference; kinds left out are never chosen.
    pub order: Vec<Kind>,
}

impl Default for ResolveOptions {
    fn default() -> Self {
        Self {
            platform: None,
            order: Kind::ALL.to_vec(),
        }
    }
}

/// An entry resolved for one platform: what to install and how to start it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The entry as the registry publishes it.
    pub entry: Entry,
    /// The chosen kind.
    pub kind: Kind,
    /// The platform resolved for.
    pub platform: String,
    /// The binary target, for [`Kind::Binary`].
    pub target: Option<BinaryTarget>,
    /// The package, for [`Kind::Npx`] and [`Kind::Uvx`].
    pub package: Option<Package>,
    /// The arguments the registry gives (before the caller's).
    pub args: Vec<String>,
    /// The environment the registry sets.
    pub env: BTreeMap<String, String>,
    /// Each other kind and why it was not chosen, in the order's order.
    pub passed_over: Vec<(Kind, String)>,
}

/// Why no resolution exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// No entry has this id.
    #[error("no agent `{}` in the registry{}", .id.escape_debug(), nearest_hint(.nearest))]
    UnknownId {
        /// The id asked for.
        id: String,
        /// Known ids close to it, nearest first.
        nearest: Vec<String>,
    },
    /// The entry offers nothing usable here.
    #[error("agent `{id}` cannot run on {platform}: {}", reasons_text(.reasons))]
    NoUsableKind {
        /// The entry's id.
        id: String,
        /// The platform resolved for.
        platform: String,
        /// Each kind considered and why it was not usable.
        reasons: Vec<(Kind, String)>,
    },
    /// This machine is not one of the six platforms and none was given.
    #[error(
        "this machine ({}-{}) is not a platform the registry format knows; name one",
        std::env::consts::OS,
        std::env::consts::ARCH
    )]
    UnknownPlatform,
}

fn nearest_hint(nearest: &[String]) -> String {
    if nearest.is_empty() {
        String::new()
    } else {
        format!(
            "; did you mean {}?",
            nearest
                .iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

fn reasons_text(reasons: &[(Kind, String)]) -> String {
    reasons
        .iter()
        .map(|(kind, reason)| format!("{kind}: {reason}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Resolve `id` in `document` (see the module doc).
///
/// # Errors
/// [`ResolveError`] when the id is unknown or nothing the order allows is usable.
pub fn resolve(
    document: &Document,
    id: &str,
    options: &ResolveOptions,
) -> Result<Resolution, ResolveError> {
    let entry = document.get(id).ok_or_else(|| ResolveError::UnknownId {
        id: id.to_string(),
        nearest: nearest_ids(document, id),
    })?;
    let platform = match &options.platform {
        Some(platform) => platform.clone(),
        None => current_platform()
            .ok_or(ResolveError::UnknownPlatform)?
            .to_string(),
    };
    let mut passed_over = Vec::new();
    let mut chosen = None;
    for &kind in &options.order {
        if chosen.is_some() {
            if usable(entry, kind, &platform).is_ok() {
                passed_over.push((kind, "a kind earlier in the order was chosen".to_string()));
            }
            continue;
        }
        match usable(entry, kind, &platform) {
            Ok(()) => chosen = Some(kind),
            Err(reason) => passed_over.push((kind, reason)),
        }
    }
    for kind in Kind::ALL {
        if !options.order.contains(&kind) && entry.distribution.kinds().contains(&kind) {
            passed_over.push((kind, "not in the order asked for".to_string()));
        }
    }
    let Some(kind) = chosen else {
        return Err(ResolveError::NoUsableKind {
            id: entry.id.clone(),
            platform,
            reasons: passed_over,
        });
    };
    Ok(resolution(entry, kind, platform, passed_over))
}

fn resolution(
    entry: &Entry,
    kind: Kind,
    platform: String,
    passed_over: Vec<(Kind, String)>,
) -> Resolution {
    let target = (kind == Kind::Binary)
        .then(|| entry.distribution.binary.get(&platform).cloned())
        .flatten();
    let package = entry.distribution.package(kind).cloned();
    let (args, env) = match (&target, &package) {
        (Some(target), _) => (target.args.clone(), target.env.clone()),
        (None, Some(package)) => (package.args.clone(), package.env.clone()),
        (None, None) => (Vec::new(), BTreeMap::new()),
    };
    Resolution {
        entry: entry.clone(),
        kind,
        platform,
        target,
        package,
        args,
        env,
        passed_over,
    }
}

/// `Ok` when `entry` offers `kind` in a form this client can use on `platform`.
fn usable(entry: &Entry, kind: Kind, platform: &str) -> Result<(), String> {
    let distribution = &entry.distribution;
    match kind {
        Kind::Binary if distribution.binary.is_empty() => Err("the entry offers none".into()),
        Kind::Binary => match distribution.binary.get(platform) {
            Some(target) if target.cmd.trim().is_empty() => Err("its `cmd` is empty".into()),
            Some(_) => Ok(()),
            None => Err(format!(
                "no build for {platform} (it has {})",
                distribution
                    .binary
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        },
        Kind::Npx | Kind::Uvx => match distribution.package(kind) {
            Some(package) if package.package.trim().is_empty() => {
                Err("its `package` is empty".into())
            }
            Some(_) => Ok(()),
            None => Err("the entry offers none".into()),
        },
    }
}

/// Up to three known ids nearest `id` (Jaro-Winkler similarity at least 0.7, or `id` a part
/// of them), nearest first, ties by id.
fn nearest_ids(document: &Document, id: &str) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = document
        .agents
        .iter()
        .map(|entry| {
            let similarity = strsim::jaro_winkler(id, &entry.id);
            let contains = !id.is_empty() && entry.id.contains(id);
            (
                if contains {
                    similarity.max(0.85)
                } else {
                    similarity
                },
                entry.id.as_str(),
            )
        })
        .filter(|(score, _)| *score >= 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, id)| id.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> Document {
        let text = r#"{"agents":[
          {"id":"claude-acp","version":"1.0.0","distribution":{"npx":{"package":"@z/claude@1.0.0","args":["--acp"]}}},
          {"id":"codex-acp","version":"2.0.0","distribution":{
             "binary":{"linux-x86_64":{"archive":"https://x/c.tgz","cmd":"./codex","args":["a"],"env":{"K":"V"},"sha256":"00"}},
             "npx":{"package":"codex@2.0.0"}}},
          {"id":"py","version":"3.0.0","distribution":{"uvx":{"package":"py==3.0.0","env":{"E":"1"}}}}
        ]}"#;
        Document::parse(text.as_bytes(), "r").unwrap()
    }

    fn on(platform: &str, order: &[Kind]) -> ResolveOptions {
        ResolveOptions {
            platform: Some(platform.into()),
            order: order.to_vec(),
        }
    }

    #[test]
    fn a_binary_for_the_platform_comes_first_with_its_args_and_env() {
        let found = resolve(&document(), "codex-acp", &on("linux-x86_64", &Kind::ALL)).unwrap();
        assert_eq!(found.kind, Kind::Binary);
        assert_eq!(found.args, vec!["a"]);
        assert_eq!(found.env.get("K").map(String::as_str), Some("V"));
        assert_eq!(found.target.unwrap().cmd, "./codex");
        assert_eq!(
            found.passed_over,
            vec![(Kind::Npx, "a kind earlier in the order was chosen".into())]
        );
    }

    #[test]
    fn without_a_build_for_the_platform_the_next_kind_is_chosen_and_the_reason_kept() {
        let found = resolve(&document(), "codex-acp", &on("darwin-aarch64", &Kind::ALL)).unwrap();
        assert_eq!(found.kind, Kind::Npx);
        assert_eq!(found.package.unwrap().package, "codex@2.0.0");
        assert!(found.passed_over[0]
            .1
            .contains("no build for darwin-aarch64"));
    }

    #[test]
    fn the_callers_order_decides_and_kinds_left_out_are_never_chosen() {
        let found = resolve(
            &document(),
            "codex-acp",
            &on("linux-x86_64", &[Kind::Npx, Kind::Binary]),
        )
        .unwrap();
        assert_eq!(found.kind, Kind::Npx);
        let error = resolve(
            &document(),
            "py",
            &on("linux-x86_64", &[Kind::Binary, Kind::Npx]),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "agent `py` cannot run on linux-x86_64: binary: the entry offers none; npx: the entry offers none; uvx: not in the order asked for"
        );
    }

    #[test]
    fn an_unknown_id_names_the_nearest_ids() {
        let error = resolve(&document(), "claude", &ResolveOptions::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no agent `claude` in the registry; did you mean `claude-acp`?"
        );
        let error = resolve(&document(), "zzzzzz", &ResolveOptions::default()).unwrap_err();
        assert_eq!(error.to_string(), "no agent `zzzzzz` in the registry");
    }
}
