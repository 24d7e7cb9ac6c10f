//! One entry judged against one client's facts: on each platform the client runs on and the
//! entry offers something for, which kind the client would take and whether it can; then the
//! features the taken kinds need (`env`) and the auth types the entry declares.
//!
//! Unknown facts are never reasons: a client is only said not to install something when a
//! public source shows it cannot. Platforms the entry offers nothing for are `platform-coverage`'s
//! business, not a client's, so they are not counted.

use std::collections::BTreeMap;

use super::data::{format_name, Client, Known};
use crate::manifest::agent::AgentView;
use crate::manifest::distribution::{ArchiveFormat, Distribution, Kind};

/// Whether a client can install an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Installs {
    /// Everywhere it runs and the entry offers something, with every feature the entry uses.
    Yes,
    /// On some platforms or kinds only, or without a feature the entry uses.
    Partly,
    /// Nowhere.
    No,
}

impl Installs {
    /// `yes`, `partly` or `no`, as the lifecycle document writes it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Installs::Yes => "yes",
            Installs::Partly => "partly",
            Installs::No => "no",
        }
    }
}

/// One client's verdict on one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientCompat {
    /// The client's id.
    pub client: String,
    /// The verdict.
    pub installs: Installs,
    /// Plain sentences naming the client, the fact and the platform or kind; empty for `Yes`.
    pub why: Vec<String>,
}

/// Sentences in first-seen order, each with the platforms it applies to.
#[derive(Default)]
struct Reasons(Vec<(String, Vec<String>)>);

impl Reasons {
    fn add(&mut self, text: String, platform: Option<&str>) {
        let at = if let Some(at) = self.0.iter().position(|(t, _)| *t == text) {
            at
        } else {
            self.0.push((text, Vec::new()));
            self.0.len() - 1
        };
        if let Some(p) = platform {
            self.0[at].1.push(p.to_string());
        }
    }

    fn sentences(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(text, platforms)| match platforms.is_empty() {
                true => text,
                false => format!("{text} ({})", platforms.join(", ")),
            })
            .collect()
    }
}

/// The kinds the entry offers on `platform`, in output order.
fn offered(dist: &Distribution, platform: &str) -> Vec<Kind> {
    Kind::ALL
        .into_iter()
        .filter(|&k| match k {
            Kind::Binary => dist.target(platform).is_some(),
            _ => dist.has(k),
        })
        .collect()
}

/// Why `client` cannot use `kind` on `platform` (`None`: it can, or nobody knows).
fn refusal(
    client: &Client,
    dist: &Distribution,
    kind: Kind,
    platform: &str,
) -> Option<(String, bool)> {
    if client.kind(kind) == Known::No {
        let what = match kind {
            Kind::Binary => "binary archives".to_string(),
            _ => format!("{} packages", kind.as_str()),
        };
        return Some((format!("{} does not install {what}", client.name), false));
    }
    if kind != Kind::Binary {
        return None;
    }
    let format = ArchiveFormat::of(dist.target(platform)?.archive.as_deref()?);
    if client.archive(format) != Known::No {
        return None;
    }
    let text = match format {
        ArchiveFormat::Raw => format!("{} does not run a raw executable download", client.name),
        _ => format!("{} cannot unpack .{}", client.name, format_name(format)),
    };
    Some((text, true))
}

/// The kind the client takes on `platform`, or the reasons it takes none.
fn take(
    client: &Client,
    dist: &Distribution,
    platform: &str,
    kinds: &[Kind],
) -> Result<Kind, Vec<(String, bool)>> {
    let tried: Vec<Kind> = match client.order() {
        // It takes the first kind of its order the entry offers, and never falls back.
        Some(order) => order
            .into_iter()
            .filter(|k| kinds.contains(k))
            .take(1)
            .collect(),
        None => kinds.to_vec(),
    };
    let mut reasons = Vec::new();
    for kind in &tried {
        match refusal(client, dist, *kind, platform) {
            None => return Ok(*kind),
            Some(reason) => reasons.push(reason),
        }
    }
    Err(reasons)
}

/// `client`'s verdict on the entry `view`. `listings`: each registry file the build writes and
/// whether it lists the entry.
pub(crate) fn judge(
    client: &Client,
    view: &AgentView,
    listings: &BTreeMap<String, bool>,
) -> ClientCompat {
    let verdict = |installs, why| ClientCompat {
        client: client.id.clone(),
        installs,
        why,
    };
    if let Some(reason) = left_out(client, listings) {
        return verdict(Installs::No, vec![reason]);
    }
    let dist = &view.distribution;
    let mut reasons = Reasons::default();
    let (mut ok, mut failed) = (Vec::new(), 0usize);
    for platform in client.platforms() {
        let kinds = offered(dist, platform);
        if kinds.is_empty() {
            continue;
        }
        match take(client, dist, platform, &kinds) {
            Ok(kind) => ok.push((platform, kind)),
            Err(why) => {
                failed += 1;
                for (text, per_platform) in why {
                    reasons.add(text, per_platform.then_some(platform));
                }
            }
        }
    }
    if ok.is_empty() {
        let why = if failed == 0 {
            vec![format!("the entry offers nothing {} runs", client.name)]
        } else {
            let kinds_only = reasons.0.iter().all(|(_, platforms)| platforms.is_empty());
            nothing_else(reasons.sentences(), kinds_only, dist)
        };
        return verdict(Installs::No, why);
    }
    let features = missing_features(client, view, &ok);
    let installs = match failed == 0 && features.is_empty() {
        true => Installs::Yes,
        false => Installs::Partly,
    };
    let mut why = reasons.sentences();
    why.extend(features);
    verdict(installs, why)
}

/// When the entry offers one kind and the client refuses that kind outright, say that it is
/// the whole story (the reader would otherwise wonder about the other kinds).
fn nothing_else(mut why: Vec<String>, kinds_only: bool, dist: &Distribution) -> Vec<String> {
    if kinds_only && dist.kinds().len() == 1 && why.len() == 1 {
        why[0].push_str(", and the entry offers nothing else");
    }
    why
}

/// The reason the client never sees the entry: it reads files the build writes, none listing it.
fn left_out(client: &Client, listings: &BTreeMap<String, bool>) -> Option<String> {
    let reads = client.list("reads")?;
    let written: Vec<&str> = reads
        .into_iter()
        .filter(|f| listings.contains_key(*f))
        .collect();
    if written.is_empty() || written.iter().any(|f| listings[*f]) {
        return None;
    }
    Some(format!(
        "{} reads {}, which the configuration leaves the entry out of",
        client.name,
        written.join(" and ")
    ))
}

/// `env` the client drops on the kinds it takes, and auth types it does not offer.
fn missing_features(client: &Client, view: &AgentView, taken: &[(&str, Kind)]) -> Vec<String> {
    let mut reasons = Reasons::default();
    if client.known("env") == Known::No {
        for (platform, kind) in taken {
            let env_set = match kind {
                Kind::Binary => view
                    .distribution
                    .target(platform)
                    .is_some_and(|t| !t.env.is_empty()),
                _ => view
                    .distribution
                    .package(*kind)
                    .is_some_and(|p| !p.env.is_empty()),
            };
            if env_set {
                let text = match kind {
                    Kind::Binary => {
                        format!("{} does not apply `env` of binary targets", client.name)
                    }
                    _ => format!("{} does not apply `env` ({})", client.name, kind.as_str()),
                };
                reasons.add(text, (*kind == Kind::Binary).then_some(*platform));
            }
        }
    }
    for auth in view.auth_types() {
        if client.known(&format!("auth.{auth}")) == Known::No {
            reasons.add(
                format!("{} does not offer `{auth}` auth", client.name),
                None,
            );
        }
    }
    reasons.sentences()
}
