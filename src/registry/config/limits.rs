//! What the configuration may make `build` write: every URL it holds is short, it names few
//! outputs, and the bytes it adds to each published agent (the `base_url` of its icon URLs
//! and the output's patches, in every output) are capped. Without these a configuration of a
//! few hundred KiB (a long `base_url` times thousands of outputs) made `build` write hundreds
//! of MiB and hold them in memory, for a single agent. A limit passed is a `config-invalid`
//! finding naming the key, and what it would multiply is not kept, so the check that follows
//! stays small.

use std::collections::BTreeMap;

use crate::manifest::fields::Fields;
use crate::manifest::{escape_pointer, Member, Node, NodeValue, PLATFORMS};
use crate::published::{Output, Patch};

/// The longest URL the configuration may hold (any string starting with `http://` or
/// `https://`, at any key).
pub(crate) const MAX_URL_BYTES: usize = 2048;
/// The most outputs (registry files) one build writes.
pub(crate) const MAX_OUTPUTS: usize = 16;
/// The most bytes the configuration may add to one agent over all outputs: the icon URLs
/// under `base_url` (three per agent) and the patches naming it (arguments appended to a
/// binary count once per platform).
pub(crate) const MAX_ADDED_PER_AGENT: u64 = 64 * 1024;

/// Report every URL of the configuration over [`MAX_URL_BYTES`], by its key's pointer.
/// `base_url` is its reader's (which also does not keep it).
pub(super) fn check_urls(fields: &mut Fields, node: &Node, pointer: &str) {
    match &node.value {
        NodeValue::String(text)
            if is_url(text) && text.len() > MAX_URL_BYTES && pointer != "/base_url" =>
        {
            fields.problem(
                node.span,
                format!("`{pointer}` {}", url_too_long(text)),
                "use a shorter URL",
            );
        }
        NodeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_urls(fields, item, &format!("{pointer}/{i}"));
            }
        }
        NodeValue::Object(members) => {
            for member in members {
                let pointer = format!("{pointer}/{}", escape_pointer(&member.key));
                check_urls(fields, &member.value, &pointer);
            }
        }
        _ => {}
    }
}

fn is_url(text: &str) -> bool {
    let head = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    head.starts_with("http://") || head.starts_with("https://")
}

/// The problem of a URL over [`MAX_URL_BYTES`], or `None`.
pub(crate) fn url_length_problem(url: &str) -> Option<String> {
    (url.len() > MAX_URL_BYTES).then(|| url_too_long(url))
}

fn url_too_long(url: &str) -> String {
    format!(
        "is a URL of {} bytes, over the {MAX_URL_BYTES}-byte limit",
        url.len()
    )
}

/// The bytes the configuration adds to the agent that gains most, over all `outputs`.
pub(crate) fn added_per_agent(base_url: &str, outputs: &[Output]) -> u64 {
    outputs
        .iter()
        .map(|output| {
            let icons = 3 * (base_url.len() as u64 + "/.svg".len() as u64);
            let mut by_id: BTreeMap<&str, u64> = BTreeMap::new();
            for patch in &output.patches {
                *by_id.entry(patch.id.as_str()).or_default() += patch_bytes(patch);
            }
            icons + by_id.values().max().copied().unwrap_or(0)
        })
        .sum()
}

/// What one patch can add to its agent: the JSON of the fields it sets, and each appended
/// argument (once per platform for `binary`).
fn patch_bytes(patch: &Patch) -> u64 {
    let set: u64 = patch
        .set
        .iter()
        .map(|(key, value)| key.len() as u64 + value.to_string().len() as u64 + 4)
        .sum();
    let args: u64 = patch
        .append_args
        .iter()
        .map(|(kind, args)| {
            let bytes: u64 = args.iter().map(|a| a.len() as u64 + 4).sum();
            if kind == "binary" {
                bytes * PLATFORMS.len() as u64
            } else {
                bytes
            }
        })
        .sum();
    set + args
}

/// Refuse `outputs` (reported at its key, defaults kept) when, with `base_url`, it adds more
/// than [`MAX_ADDED_PER_AGENT`] bytes to one agent.
pub(super) fn check_added(
    fields: &mut Fields,
    member: &Member,
    base_url: &str,
    outputs: &mut Vec<Output>,
) {
    let added = added_per_agent(base_url, outputs);
    if added <= MAX_ADDED_PER_AGENT {
        return;
    }
    fields.problem(
        member.key_span,
        format!(
            "outputs add up to {added} bytes to one agent (its icon URLs under base_url and its patches, in every output), over the {MAX_ADDED_PER_AGENT}-byte limit"
        ),
        "use fewer outputs, a shorter base_url or smaller patches",
    );
    *outputs = Output::default_outputs();
}
