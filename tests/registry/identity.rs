//! Issue 33: a registry of its own looks like its own. A registry with its own name, base
//! URL, description, home link, logo and footer is built, and the site and every published
//! file carry them, with nothing pointing at the public registry or naming it; the
//! `base-url-public` warning fires for a registry left at the public URL and is silenced by
//! setting `base_url`.

use std::path::Path;

use crate::common::{build_registry, copy_dir, findings, public_sample, tree};

const NAME: &str = "Acme <Agent> Registry";
const BASE: &str = "https://agents.acme.example/registry/v1/latest";

fn own_registry(dir: &Path) -> std::path::PathBuf {
    let registry = dir.join("registry");
    copy_dir(&public_sample(), &registry);
    std::fs::write(
        registry.join("acp-registry.jsonc"),
        format!(
            r#"{{
  "base_url": "{BASE}",
  "registry": {{
    "name": "{}",
    "description": "Agents approved for use at Acme & friends.",
    "home": "https://acme.example/agents",
    "logo": "brand/logo.svg",
    "footer": "Run by Acme IT, see https://acme.example/help."
  }},
  "skills": {{ "marketplace": {{ "name": "acme-skills" }} }}
}}
"#,
            NAME.replace('"', "\\\"")
        ),
    )
    .unwrap();
    std::fs::create_dir_all(registry.join("brand")).unwrap();
    std::fs::write(
        registry.join("brand/logo.svg"),
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="12" fill="#c00"/></svg>"##,
    )
    .unwrap();
    registry
}

#[test]
fn a_registry_of_its_own_publishes_its_name_and_urls_and_never_the_public_registrys() {
    let temp = tempfile::tempdir().unwrap();
    let registry = own_registry(temp.path());
    let (_, found) = findings(&registry);
    assert!(
        found
            .iter()
            .all(|(_, code, _)| code != "base-url-public" && !code.starts_with("config-")),
        "{found:?}"
    );
    let out = temp.path().join("dist");
    let run = build_registry(&registry, &out, &[], &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let files = tree(&out);
    assert!(files.len() > 20, "{files:?}");
    for (path, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        for public in ["cdn.agentclientprotocol.com", "ACP Agent Registry"] {
            assert!(!text.contains(public), "{path} names {public}");
        }
    }
    let text = |path: &str| {
        String::from_utf8(
            files
                .get(path)
                .unwrap_or_else(|| panic!("no {path}"))
                .clone(),
        )
        .unwrap()
    };
    let escaped = "Acme &lt;Agent&gt; Registry";
    let index = text("site/index.html");
    assert!(
        index.contains(&format!("<title>{escaped}</title>")),
        "{index}"
    );
    assert!(index.contains(&format!("<h1>{escaped}</h1>")), "{index}");
    assert!(
        index.contains(&format!(
            "<span class=\"icon site-logo\" aria-hidden=\"true\"></span>{escaped}</a>"
        )),
        "{index}"
    );
    assert!(
        index.contains("<meta name=\"description\" content=\"Agents approved for use at Acme &amp; friends.\">"),
        "{index}"
    );
    assert!(index.contains("<p class=\"lead\">Agents approved for use at Acme &amp; friends.</p>"));
    assert!(index.contains(
        "<a href=\"https://acme.example/agents\" rel=\"noopener noreferrer\">acme.example</a>"
    ));
    assert!(
        index.contains(&format!("<a href=\"{BASE}/registry.json\"")),
        "{index}"
    );
    assert!(
        index.contains("<p>Run by Acme IT, see <a href=\"https://acme.example/help\" rel=\"noopener noreferrer\">https://acme.example/help</a>.</p>"),
        "{index}"
    );
    // Every page: the agent pages carry the name, the logo and the footer too.
    let agent = text("site/agents/claude-acp/index.html");
    assert!(agent.contains(&format!("– {escaped}</title>")), "{agent}");
    assert!(agent.contains("href=\"../../assets/logo.css\""), "{agent}");
    assert!(agent.contains("https://acme.example/help"), "{agent}");
    // The logo: re-serialised like an icon, a mask painted with the text colour.
    let logo = text("site/assets/logo.css");
    assert!(
        logo.contains(".site-logo{--icon:url(\"data:image/svg+xml;base64,"),
        "{logo}"
    );
    // The outputs: icon URLs and schema ids under the registry's own base URL.
    let registry_json: serde_json::Value = serde_json::from_str(&text("registry.json")).unwrap();
    let icon = registry_json["agents"][0]["icon"].as_str().unwrap();
    assert!(icon.starts_with(&format!("{BASE}/")), "{icon}");
    let schema: serde_json::Value = serde_json::from_str(&text("registry.schema.json")).unwrap();
    assert_eq!(schema["$id"], format!("{BASE}/registry.schema.json"));
    // The skills marketplace is owned by the registry, by name.
    if let Some(marketplace) = files.get("site/.claude-plugin/marketplace.json") {
        let marketplace: serde_json::Value = serde_json::from_slice(marketplace).unwrap();
        assert_eq!(marketplace["owner"]["name"], NAME);
    }
}

#[test]
fn a_registry_without_identity_keeps_the_public_registrys_site() {
    let temp = tempfile::tempdir().unwrap();
    let registry = temp.path().join("registry");
    copy_dir(&public_sample(), &registry);
    let out = temp.path().join("dist");
    let run = build_registry(&registry, &out, &[], &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let index = std::fs::read_to_string(out.join("site/index.html")).unwrap();
    assert!(index.contains("<title>ACP Agent Registry</title>"));
    assert!(!index.contains("name=\"description\"") && !index.contains("site-logo"));
    assert!(!out.join("site/assets/logo.css").exists());
}

#[test]
fn base_url_public_fires_for_the_public_default_and_setting_base_url_silences_it() {
    let temp = tempfile::tempdir().unwrap();
    let registry = own_registry(temp.path());
    let config = registry.join("acp-registry.jsonc");
    let own = std::fs::read_to_string(&config).unwrap();
    let public_codes = |registry: &Path| -> Vec<(String, String)> {
        findings(registry)
            .1
            .into_iter()
            .filter(|(_, code, _)| code == "base-url-public")
            .map(|(severity, _, at)| (severity, at))
            .collect()
    };
    // base_url removed: the public default, reported at the file's start.
    let without = own.replace(&format!("  \"base_url\": \"{BASE}\",\n"), "");
    assert_ne!(without, own);
    std::fs::write(&config, &without).unwrap();
    assert_eq!(
        public_codes(&registry),
        [("warning".into(), "acp-registry.jsonc:1:1".into())]
    );
    // The public URL, in another case: reported at the value.
    let public = own.replace(
        BASE,
        "https://CDN.agentclientprotocol.com/registry/v1/latest/",
    );
    std::fs::write(&config, &public).unwrap();
    assert_eq!(
        public_codes(&registry),
        [("warning".into(), "acp-registry.jsonc:2:15".into())]
    );
    // A build of it reports it too, and still builds (a warning).
    let dist = temp.path().join("dist");
    let run = build_registry(&registry, &dist, &["--no-site", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("\"base-url-public\""), "{}", run.stdout);
    // Setting base_url silences it.
    std::fs::write(&config, &own).unwrap();
    assert!(public_codes(&registry).is_empty());
}
