//! An output's patches (`acp-registry.jsonc` `outputs[].patches`) applied to the published
//! agent, after the preview is resolved.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::order::canonical_agent;
use super::output::Patch;
use crate::manifest::distribution::{node_of, Distribution, Kind};

/// Apply a patch (after preview resolution).
pub(crate) fn apply_patch(agent: &mut Map<String, Value>, patch: &Patch) {
    if let Some(dist) = agent.get_mut("distribution") {
        append_args(dist, &patch.append_args);
    }
    for (key, value) in &patch.set {
        agent.insert(key.clone(), value.clone());
    }
    let canonical = canonical_agent(std::mem::take(agent));
    *agent = canonical;
}

/// Appends each kind's `args` to its targets: every binary target or the package, as the
/// one distribution model finds them (the published form has no legacy keys left).
fn append_args(dist: &mut Value, append: &BTreeMap<String, Vec<String>>) {
    let model = Distribution::from_node(&node_of(dist), "");
    for (kind, args) in append {
        let pointers: Vec<&str> = match kind.as_str() {
            "binary" => model.binary.iter().map(|t| t.pointer.as_str()).collect(),
            _ => Kind::ALL
                .into_iter()
                .filter(|k| k.as_str() == kind)
                .filter_map(|k| model.package(k))
                .map(|p| p.pointer.as_str())
                .collect(),
        };
        for pointer in pointers {
            if let Some(Value::Object(target)) = dist.pointer_mut(pointer) {
                let list = target
                    .entry("args")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = list {
                    list.extend(args.iter().cloned().map(Value::String));
                }
            }
        }
    }
}
