//! The schemas as editors use them: every property of `agent.schema.json` carries a
//! description (hover docs) and examples (completion), and every example is valid.

use crate::common;

use serde_json::{json, Value};

fn schema(name: &str) -> Value {
    let path = common::repo_root().join("schemas").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every property schema, anywhere under `properties` (also in definitions and items), by path.
fn properties(node: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    let Some(map) = node.as_object() else { return };
    for (key, child) in map
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let here = format!("{path}/{key}");
        out.push((here.clone(), child.clone()));
        properties(child, &here, out);
    }
    for (key, child) in map
        .get("definitions")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        properties(child, &format!("#{key}"), out);
    }
    if let Some(items) = map.get("items") {
        properties(items, &format!("{path}[]"), out);
    }
}

/// `icon` is ignored on input: an example would invite writing it.
const NO_EXAMPLE: [&str; 1] = ["/icon"];

#[test]
fn every_agent_schema_property_has_a_description_and_examples() {
    let mut all = Vec::new();
    properties(&schema("agent.schema.json"), "", &mut all);
    assert!(all.len() > 40, "{}", all.len());
    let missing: Vec<String> = all
        .iter()
        .filter(|(path, node)| {
            node.get("description")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
                || (!NO_EXAMPLE.contains(&path.as_str())
                    && node
                        .get("examples")
                        .and_then(Value::as_array)
                        .is_none_or(Vec::is_empty))
        })
        .map(|(path, _)| path.clone())
        .collect();
    assert_eq!(missing, Vec::<String>::new());
}

#[test]
fn every_agent_schema_example_is_valid_for_its_property() {
    let root = schema("agent.schema.json");
    let mut all = Vec::new();
    properties(&root, "", &mut all);
    for (path, node) in all {
        let mut alone = node.clone();
        alone["definitions"] = root["definitions"].clone();
        let validator = jsonschema::draft7::options()
            .should_validate_formats(true)
            .build(&alone)
            .unwrap();
        for example in node["examples"].as_array().into_iter().flatten() {
            assert!(validator.is_valid(example), "{path}: {example}");
        }
    }
    // The property schemas above are checked alone; a whole manifest made of examples too.
    let validator = jsonschema::draft7::new(&root).unwrap();
    let manifest = json!({
        "$schema": root["$id"], "id": "my-agent", "name": "My Agent", "version": "1.4.0",
        "description": "d", "distribution": root["properties"]["distribution"]["examples"][0],
    });
    assert!(validator.is_valid(&manifest));
}
