//! The site with `matrix` results (`build --matrix`): the agent page shows the verification
//! state, date, protocol version, the sign-in methods offered and the supported session
//! methods, the cards carry the state's badge, the index offers the states as a filter, and
//! text from the agent's answer stays inert.

use crate::common as site_common;

use acp_registry::site::{self, Verification};
use site_common::{options, search_index, simple_agent, text};

fn verified(passed: bool) -> Verification {
    in_state(if passed { "verified" } else { "failed" })
}

fn in_state(state: &str) -> Verification {
    Verification {
        state: state.into(),
        distribution: "npx".into(),
        version: "1.0.0".into(),
        verified: "2026-05-01T10:00:00Z".into(),
        expires: "2026-05-31T10:00:00Z".into(),
        max_age_days: 30,
        changed: if state == "stale" {
            vec!["distribution".into()]
        } else {
            Vec::new()
        },
        passed: state != "failed",
        protocol_version: Some(1),
        sign_in: vec![(
            "<img src=x onerror=alert(1)>Log in".into(),
            "terminal".into(),
        )],
        session_methods: vec!["session/list".into(), "session/resume".into()],
        unstable_methods: vec!["session/fork".into()],
    }
}

#[test]
fn agent_pages_show_what_matrix_found_and_escape_the_agents_words() {
    let mut agent = simple_agent("alpha", "Alpha");
    agent.verification = Some(verified(true));
    let files = site::render(&[agent, simple_agent("beta", "Beta")], &[], &options()).unwrap();
    let page = text(&files, "agents/alpha/index.html");
    assert!(
        page.contains(
            "<dt>Verification</dt><dd>2026-05-01 (npx): launched and answered ACP, protocol version 1; expires 2026-05-31.</dd>"
        ),
        "{page}"
    );
    assert!(page.contains("<li><code>session/list</code></li><li><code>session/resume</code></li>"));
    assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;Log in</strong> (terminal)"));
    assert!(!page.contains("<img src=x"));
    assert!(page.contains(r#"<p class="badge badge-verified">Verified</p>"#));
    assert!(page.contains("<dt>Unstable methods advertised</dt>"));
    assert!(!text(&files, "agents/beta/index.html").contains("<dt>Verification</dt>"));
    let index = text(&files, "index.html");
    assert!(
        index.contains(r#"name="verified" value="verified""#),
        "{index}"
    );
    let cards = search_index(&files);
    let list = cards["agents"].as_array().unwrap();
    let alpha = list.iter().find(|c| c["id"] == "alpha").unwrap();
    let beta = list.iter().find(|c| c["id"] == "beta").unwrap();
    assert_eq!(alpha["verified"], serde_json::json!(["verified"]));
    assert!(beta.get("verified").is_none());
}

#[test]
fn without_results_the_index_has_no_verification_filter_and_each_state_is_its_value() {
    let files = site::render(&[simple_agent("alpha", "Alpha")], &[], &options()).unwrap();
    assert!(!text(&files, "index.html").contains(r#"data-facet="verified""#));
    let states = ["verified", "failed", "expired", "stale"];
    let agents: Vec<_> = states
        .iter()
        .map(|state| {
            let mut agent = simple_agent(state, state);
            agent.verification = Some(in_state(state));
            agent
        })
        .collect();
    let files = site::render(&agents, &[], &options()).unwrap();
    let index = text(&files, "index.html");
    for (state, label) in [
        ("verified", "Verified"),
        ("failed", "Launch failed"),
        ("expired", "Verification expired"),
        ("stale", "Verified an earlier release"),
    ] {
        assert!(
            index.contains(&format!(r#"name="verified" value="{state}""#)),
            "{index}"
        );
        assert!(
            index.contains(&format!(r#"<p class="badge badge-{state}">{label}</p>"#)),
            "{index}"
        );
    }
    assert!(text(&files, "agents/failed/index.html").contains("launched, with problems"));
    let expired = text(&files, "agents/expired/index.html");
    assert!(
        expired.contains("Expired: 1.0.0 (npx) was launched on 2026-05-01, more than 30 days"),
        "{expired}"
    );
    let stale = text(&files, "agents/stale/index.html");
    assert!(
        stale.contains("the published distribution changed since"),
        "{stale}"
    );
}

#[test]
fn a_state_the_site_does_not_know_gives_no_badge_class_or_filter_value() {
    let mut agent = simple_agent("alpha", "Alpha");
    agent.verification = Some(in_state(r#"x" onclick="alert(1)"#));
    let files = site::render(&[agent], &[], &options()).unwrap();
    let index = text(&files, "index.html");
    assert!(!index.contains("onclick"), "{index}");
    assert!(!index.contains(r#"data-facet="verified""#));
    let cards = search_index(&files);
    assert!(cards["agents"][0].get("verified").is_none());
}
