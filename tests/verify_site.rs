//! The site with `matrix` results (`build --matrix`): the agent page shows the verified date,
//! protocol version, the sign-in methods offered and the supported session methods, the
//! index offers a "verified" filter, and text from the agent's answer stays inert.

mod site_common;

use acp_registry::site::{self, Verification};
use site_common::{options, search_index, simple_agent, text};

fn verified(passed: bool) -> Verification {
    Verification {
        verified: "2026-05-01T10:00:00Z".into(),
        passed,
        protocol_version: Some(1),
        sign_in: vec![(
            "<img src=x onerror=alert(1)>Log in".into(),
            "terminal".into(),
        )],
        session_methods: vec!["session/list".into(), "session/resume".into()],
    }
}

#[test]
fn agent_pages_show_what_matrix_found_and_escape_the_agents_words() {
    let mut agent = simple_agent("alpha", "Alpha");
    agent.verification = Some(verified(true));
    let files = site::render(&[agent, simple_agent("beta", "Beta")], &options()).unwrap();
    let page = text(&files, "agents/alpha/index.html");
    assert!(
        page.contains(
            "<dt>Verified</dt><dd>2026-05-01: launched and answered ACP, protocol version 1</dd>"
        ),
        "{page}"
    );
    assert!(page.contains("<li><code>session/list</code></li><li><code>session/resume</code></li>"));
    assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;Log in</strong> (terminal)"));
    assert!(!page.contains("<img src=x"));
    assert!(!text(&files, "agents/beta/index.html").contains("<dt>Verified</dt>"));
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
fn without_results_the_index_has_no_verified_filter() {
    let files = site::render(&[simple_agent("alpha", "Alpha")], &options()).unwrap();
    assert!(!text(&files, "index.html").contains(r#"data-facet="verified""#));
    let mut failed = simple_agent("alpha", "Alpha");
    failed.verification = Some(verified(false));
    let files = site::render(&[failed], &options()).unwrap();
    assert!(!text(&files, "index.html").contains(r#"data-facet="verified""#));
    assert!(text(&files, "agents/alpha/index.html").contains("launched, with problems"));
}
