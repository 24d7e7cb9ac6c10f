//! The `network` section of the configuration: the hosts allowed to resolve to private
//! addresses (a company's npm or `PyPI` mirror) and whether the proxy variables of the
//! environment are honoured. Flags (`--allow-private-host`, `--proxy-from-env`) add to it.

use crate::manifest::fields::{Fields, Keys};
use crate::manifest::Node;
use crate::online::PrivateHost;

/// `"network": {"private_hosts": ["npm.corp.example", "10.20.0.0/16"], "proxy_from_env": true}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NetworkConfig {
    /// Host names, IP addresses and CIDR ranges that may resolve to private addresses, each
    /// checked and written canonically.
    pub(crate) private_hosts: Vec<String>,
    /// Whether `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` are honoured.
    pub(crate) proxy_from_env: bool,
}

const HELP: &str = "write `{\"private_hosts\": [\"npm.corp.example\", \"10.20.0.0/16\"], \"proxy_from_env\": false}`";

/// Read `network`; each bad value is a finding at its place, the good ones are kept.
pub(super) fn read_network(fields: &mut Fields, node: &Node) -> NetworkConfig {
    let mut out = NetworkConfig::default();
    let Some(members) = fields.object(node, "network must be an object", HELP) else {
        return out;
    };
    let mut keys = Keys::new(members);
    for member in keys.get("private_hosts") {
        let message = "network.private_hosts must be a list of host names or CIDR ranges";
        let Some(items) = fields.array(&member.value, message, HELP) else {
            continue;
        };
        let help = "write a host name (`npm.corp.example`), an IP address (`10.20.0.5`) or a CIDR range (`10.20.0.0/16`)";
        for (text, span) in fields.strings(items, "a private host must be a string", help) {
            match text.parse::<PrivateHost>() {
                Ok(host) => out.private_hosts.push(host.to_string()),
                Err(error) => fields.problem(span, format!("network.private_hosts: {error}"), help),
            }
        }
    }
    for member in keys.get("proxy_from_env") {
        let message = "network.proxy_from_env must be true or false";
        if let Some(value) = fields.bool(&member.value, message, "write `true` or `false`") {
            out.proxy_from_env = value;
        }
    }
    keys.finish(fields);
    out
}

#[cfg(test)]
mod tests {
    use super::{read_network, NetworkConfig};
    use crate::manifest::fields::Fields;
    use crate::manifest::jsonc;
    use crate::rules::Code;
    use acp_registry_core::source::SourceFile;

    /// `read_network` of the `network` member of `text`, with each finding's line, column
    /// and message.
    fn parse(text: &str) -> (NetworkConfig, Vec<(usize, usize, String)>) {
        let source = SourceFile::new("acp-registry.jsonc", text.to_string());
        let root = jsonc::parse(text).unwrap();
        let members = root.as_object().unwrap();
        let network = &members.iter().find(|m| m.key == "network").unwrap().value;
        let mut fields = Fields::new(&source, Code::ConfigInvalid);
        let config = read_network(&mut fields, network);
        let findings = fields
            .findings
            .iter()
            .map(|d| (d.line(), d.column(), d.message.clone()))
            .collect();
        (config, findings)
    }

    #[test]
    fn private_hosts_and_the_proxy_switch_are_read_canonically() {
        let (config, findings) = parse(
            "{\"network\": {\"private_hosts\": [\"NPM.Corp.Example.\", \"10.20.0.0/16\", \"fd00::5\"], \"proxy_from_env\": true}}",
        );
        assert_eq!(findings, []);
        assert_eq!(
            config.private_hosts,
            ["npm.corp.example", "10.20.0.0/16", "fd00::5"]
        );
        assert!(config.proxy_from_env);
        assert_eq!(parse("{\"network\": {}}").0, NetworkConfig::default());
    }

    #[test]
    fn a_bad_value_is_a_finding_at_its_line_and_column_and_the_good_ones_stay() {
        let text = "{\n  \"network\": {\n    \"private_hosts\": [\n      \"npm.corp.example\",\n      \"10.0.0.0/33\",\n      \"127.0.0.0/8\"\n    ],\n    \"proxy\": 1\n  }\n}\n";
        let (config, findings) = parse(text);
        assert_eq!(config.private_hosts, ["npm.corp.example"]);
        assert_eq!(findings.len(), 3, "{findings:?}");
        assert_eq!((findings[0].0, findings[0].1), (5, 7));
        assert!(
            findings[0].2.contains("`10.0.0.0/33` is not a private host: the prefix length `33` is not a number from 0 to 32"),
            "{}",
            findings[0].2
        );
        assert_eq!((findings[1].0, findings[1].1), (6, 7));
        assert!(findings[1].2.contains("loopback"), "{}", findings[1].2);
        assert_eq!(findings[2].0, 8, "the unknown key: {}", findings[2].2);
        let (_, findings) = parse("{\"network\": {\"private_hosts\": \"npm.corp.example\"}}");
        assert!(findings[0].2.contains("must be a list"), "{findings:?}");
    }
}
