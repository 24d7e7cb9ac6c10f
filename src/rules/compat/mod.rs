//! Client compatibility: which known clients (Zed, acpr, `JetBrains` IDEs) can install an entry,
//! judged from facts about each client kept as data in `clients.jsonc`.
//!
//! The facts are data, not code, because they change when clients do and each one must carry
//! the public source that shows it (a test holds every fact to an https `source`); a fact
//! nobody could establish is `"unknown"` and is never a reason against an entry, so the verdicts
//! only claim what a source shows. docs/format.md ("Client compatibility") is the contract.
//!
//! The API is what a build has at hand:
//!
//! - [`client_list`]: the known clients as `(id, name)`, sorted by id (the lifecycle document's
//!   `clients`).
//! - [`compatibility`]`(view, listings)`: for one entry's typed view
//!   ([`AgentView`], the stable distribution and auth) and `listings` (each registry file the
//!   build writes, by file name, and whether it lists the entry: `published::listings` makes it
//!   from the configured outputs), one [`ClientCompat`] per client, sorted by client id:
//!   [`Installs`] (`as_str`: `yes`, `partly`, `no`) and `why`, plain sentences.
//! - [`check`]: the `client-incompatible` note of one entry, emitted by `registry::check`
//!   (which knows the configured outputs).
//!
//! The layer is `rules` so `publish` (the lifecycle document, the site) and `registry` (the
//! note) share one judgement; it imports only `manifest`.

mod data;
mod judge;

use std::collections::BTreeMap;

use super::entry::ManifestDoc;
use super::sink::Sink;
use crate::diagnostics::Code;
use crate::manifest::agent::AgentView;
use data::{clients, Client};
#[cfg(test)]
pub(crate) use data::{parse_clients, CLIENTS_FILE, FACT_KEYS};
pub(crate) use judge::{ClientCompat, Installs};

/// The known clients, `(id, name)`, sorted by id.
pub(crate) fn client_list() -> Vec<(&'static str, &'static str)> {
    clients()
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect()
}

/// Every known client's verdict on the entry `view`, sorted by client id. `listings`: each
/// registry file the build writes and whether it lists this entry (empty: nothing is known
/// about the outputs, so none is a reason).
pub(crate) fn compatibility(
    view: &AgentView,
    listings: &BTreeMap<String, bool>,
) -> Vec<ClientCompat> {
    compatibility_with(clients(), view, listings)
}

/// [`compatibility`] against other facts (the unit tests' clients).
fn compatibility_with(
    clients: &[Client],
    view: &AgentView,
    listings: &BTreeMap<String, bool>,
) -> Vec<ClientCompat> {
    clients
        .iter()
        .map(|c| judge::judge(c, view, listings))
        .collect()
}

/// `client-incompatible`: one note per entry naming the clients that install it only partly or
/// not at all, with every reason, at the manifest's `distribution` key.
pub(crate) fn check(doc: &ManifestDoc, listings: &BTreeMap<String, bool>, sink: &mut Sink) {
    if !sink.keeps(Code::ClientIncompatible) {
        return;
    }
    let view = AgentView::from_node(&doc.root);
    let names: BTreeMap<&str, &str> = client_list().into_iter().collect();
    let short: Vec<ClientCompat> = compatibility(&view, listings)
        .into_iter()
        .filter(|c| c.installs != Installs::Yes)
        .collect();
    if short.is_empty() {
        return;
    }
    let who: Vec<String> = short
        .iter()
        .map(|c| format!("{} ({})", names[c.client.as_str()], c.installs.as_str()))
        .collect();
    let why: Vec<String> = short.iter().flat_map(|c| c.why.clone()).collect();
    sink.push(
        doc.at_key(
            Code::ClientIncompatible,
            "/distribution",
            format!("not every known client installs this entry: {}", who.join(", ")),
        )
        .help(format!(
            "{}; offer a distribution those clients read if they matter to you (docs/format.md#client-compatibility)",
            why.join("; ")
        )),
    );
}

#[cfg(test)]
mod tests;
