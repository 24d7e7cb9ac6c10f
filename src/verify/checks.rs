//! Judging an `initialize` answer: the protocol version, the auth policy, and what the
//! manifest claims (`protocol_version`, `capabilities`, `auth`) against what the agent said.
//!
//! `initialize` is read with the schema crate's tolerant `InitializeResponse` (unknown fields
//! ignored); auth methods are also read from the raw answer, so types the crate does not know
//! still count.

use std::collections::BTreeSet;

use crate::diagnostics::Diagnostic;
use crate::manifest::agent::{AgentView, PROTOCOL_VERSION_POINTER};
use crate::rules::{Code, ManifestDoc};
use acp_registry_core::acp::methods::{advertisement, InitializeAnswer, PROTOCOL_VERSION};

/// Auth types an agent must offer one of, by default.
pub(crate) const DEFAULT_AUTH_TYPES: [&str; 2] = ["agent", "terminal"];

/// Every finding about one answer; `pointer` is the distribution that was launched.
pub(crate) fn check(
    doc: &ManifestDoc,
    pointer: &str,
    answer: &InitializeAnswer,
    auth_types: &BTreeSet<String>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if answer.protocol_version != Some(u64::from(PROTOCOL_VERSION)) {
        let got = answer
            .raw
            .get("protocolVersion")
            .map(ToString::to_string)
            .unwrap_or_default();
        out.push(
            doc.at(
                Code::AgentProtocolVersion,
                pointer,
                format!(
                    "asked for ACP protocol version {PROTOCOL_VERSION}, the agent answered {got}"
                ),
            )
            .help(format!(
                "answer `\"protocolVersion\": {PROTOCOL_VERSION}` when the client asks for it"
            )),
        );
    }
    if let Some(d) = auth_policy(doc, pointer, answer, auth_types) {
        out.push(d);
    }
    out.extend(manifest_claims(doc, answer));
    out
}

fn auth_policy(
    doc: &ManifestDoc,
    pointer: &str,
    answer: &InitializeAnswer,
    auth_types: &BTreeSet<String>,
) -> Option<Diagnostic> {
    if auth_types.is_empty()
        || answer
            .auth
            .iter()
            .any(|a| !a.counts_as().is_disjoint(auth_types))
    {
        return None;
    }
    let wanted = auth_types
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(" or ");
    let offered = if answer.auth.is_empty() {
        "none".to_string()
    } else {
        answer
            .auth
            .iter()
            .map(|a| format!("`{}` ({})", a.id, a.kind))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(
        doc.at(
            Code::AgentAuth,
            pointer,
            format!("the agent offers no sign-in method of type {wanted} (authMethods: {offered})"),
        )
        .help("offer an `agent` or `terminal` auth method, or set `verify.auth_types` / an exemption in acp-registry.jsonc"),
    )
}

fn manifest_claims(doc: &ManifestDoc, answer: &InitializeAnswer) -> Vec<Diagnostic> {
    let view = AgentView::from_node(&doc.root);
    let mut out = Vec::new();
    let declared = view.protocol_major();
    if declared.is_some() && declared != answer.protocol_version {
        out.push(mismatch(
            doc,
            PROTOCOL_VERSION_POINTER,
            format!(
                "the manifest declares protocol_version {}, the agent answered {}",
                declared.unwrap_or_default(),
                answer
                    .protocol_version
                    .map_or("no integer".into(), |v| v.to_string())
            ),
        ));
    }
    for capability in &view.capabilities {
        let method = capability.name.as_str();
        let Some(field) = advertisement(method) else {
            continue;
        };
        if !answer.advertised.contains(method) {
            out.push(mismatch(doc, &capability.pointer, format!(
                "the manifest declares `{method}`, the agent's initialize answer does not advertise it ({field})"
            )));
        }
    }
    out.extend(auth_claims(doc, &view, answer));
    out
}

fn auth_claims(doc: &ManifestDoc, view: &AgentView, answer: &InitializeAnswer) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for method in &view.auth {
        let kind = method.kind();
        let (Some(id), true) = (method.id.as_deref(), matches!(kind, "agent" | "terminal")) else {
            continue;
        };
        let pointer = &method.pointer;
        match answer.auth.iter().find(|a| a.id == id) {
            None => out.push(mismatch(
                doc,
                pointer,
                format!("the manifest lists auth method `{id}`, the agent does not offer it"),
            )),
            Some(offered) if !offered.counts_as().contains(kind) => out.push(mismatch(
                doc,
                pointer,
                format!(
                "the manifest lists auth method `{id}` as `{kind}`, the agent offers it as `{}`",
                offered.kind
            ),
            )),
            Some(_) => {}
        }
    }
    out
}

fn mismatch(doc: &ManifestDoc, pointer: &str, message: String) -> Diagnostic {
    doc.at(Code::AgentManifestMismatch, pointer, message)
        .help("make the manifest say what the agent answers, or fix the agent")
}
