//! `init --name NAME --base-url URL`: the registry's name and the URL its files are served
//! under, checked as the configuration checks them, asked for on a terminal when not given,
//! and written into `acp-registry.jsonc` (JSON-quoted); without them, a marked placeholder.

use std::io::{BufRead, Write};

use crate::registry::config::{base_url_problem, is_public_url, name_problem, MAX_NAME_CHARS};

/// How many answers a question takes before `init` gives up.
const ATTEMPTS: usize = 3;

/// Why `--name NAME` cannot name a registry, as `init` says it.
pub(super) fn check_name(name: &str) -> Result<String, String> {
    match name_problem(name) {
        None => Ok(name.trim().to_string()),
        Some(problem) => Err(format!(
            "the name {problem}; give one line of 1 to {MAX_NAME_CHARS} characters, e.g. --name \"Acme Agent Registry\""
        )),
    }
}

/// Why `--base-url URL` cannot be where the registry is served, as `init` says it.
pub(super) fn check_base_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    if let Some(problem) = base_url_problem(url) {
        return Err(format!(
            "the base URL {problem}; give the https URL (without user name or password) the registry's files are served under, e.g. --base-url https://agents.example.com/registry/v1/latest"
        ));
    }
    if is_public_url(url) {
        return Err(format!(
            "`{url}` is the public ACP registry's URL, where this registry's files are never published; give the URL of your own bucket or host, e.g. --base-url https://agents.example.com/registry/v1/latest"
        ));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// Ask `question` on `prompt` until `check` accepts an answer read from `input` (at most
/// [`ATTEMPTS`] times; an empty answer or the end of input gives up: `None`).
pub(super) fn ask(
    question: &str,
    check: fn(&str) -> Result<String, String>,
    input: &mut dyn BufRead,
    prompt: &mut dyn Write,
) -> std::io::Result<Option<String>> {
    for _ in 0..ATTEMPTS {
        write!(prompt, "{question}: ")?;
        prompt.flush()?;
        let mut line = String::new();
        let mut limited = std::io::Read::take(&mut *input, 4096);
        if limited.read_line(&mut line)? == 0 || line.trim().is_empty() {
            writeln!(prompt)?;
            return Ok(None);
        }
        match check(line.trim_end_matches(['\n', '\r'])) {
            Ok(value) => return Ok(Some(value)),
            Err(problem) => writeln!(prompt, "{}", crate::diagnostics::escape::terminal(&problem))?,
        }
    }
    Ok(None)
}

/// The `"registry"` member of the configuration, with its comment.
pub(super) fn registry_member(name: Option<&str>) -> String {
    let comment = "\
// Who runs this registry: \"name\" is the site's title, header and <h1>; also \"description\"
// (the site's lead paragraph and meta description), \"home\" (an https link to your
// organisation), \"logo\" (an SVG file in this folder, e.g. \"logo.svg\", shown like the
// agents' icons) and \"footer\" (one line of text; https URLs in it become links).";
    match name {
        Some(name) => format!("{comment}\n\"registry\": {{ \"name\": {} }},", quote(name)),
        None => format!(
            "{comment}\n// TODO: set your registry's name (or run `acp-registry init --name NAME` in a new\n// folder); until then the site is titled \"ACP Agent Registry\".\n\"registry\": {{ /* \"name\": \"<your registry's name>\" */ }},"
        ),
    }
}

/// The `"base_url"` member of the configuration (its comment is the template's).
pub(super) fn base_url_member(url: Option<&str>) -> String {
    match url {
        Some(url) => format!("\"base_url\": {},", quote(url)),
        None => "\
// TODO: set yours. Until then the public ACP registry's URL is used, which this registry's
// files are never published under, and `acp-registry validate` warns (base-url-public).
// \"base_url\": \"https://<your host>/registry/v1/latest\","
            .to_string(),
    }
}

/// A JSON string literal of `text` (`serde_json` quoting; control characters cannot occur).
fn quote(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_urls_are_checked_with_what_to_give_instead() {
        assert_eq!(check_name(" Acme Agents ").unwrap(), "Acme Agents");
        assert!(check_name("").unwrap_err().contains("is empty"));
        assert!(check_name("a\u{1b}[31m")
            .unwrap_err()
            .contains("control character"));
        assert_eq!(
            check_base_url("https://agents.acme.example/v1/latest/").unwrap(),
            "https://agents.acme.example/v1/latest"
        );
        assert!(check_base_url("http://agents.acme.example")
            .unwrap_err()
            .contains("only https"));
        assert!(check_base_url("https://u:p@agents.acme.example")
            .unwrap_err()
            .contains("credentials"));
        assert!(
            check_base_url("https://CDN.agentclientprotocol.com/registry/v1/latest")
                .unwrap_err()
                .contains("public ACP registry")
        );
    }

    #[test]
    fn a_question_is_asked_again_after_a_bad_answer_and_empty_input_gives_up() {
        let mut prompt = Vec::new();
        let mut input = &b"http://x.example\nhttps://agents.acme.example\n"[..];
        let url = ask("Base URL", check_base_url, &mut input, &mut prompt).unwrap();
        assert_eq!(url.as_deref(), Some("https://agents.acme.example"));
        let shown = String::from_utf8(prompt).unwrap();
        assert_eq!(shown.matches("Base URL: ").count(), 2, "{shown}");
        assert!(shown.contains("only https"), "{shown}");
        let mut prompt = Vec::new();
        assert_eq!(
            ask("Name", check_name, &mut &b""[..], &mut prompt).unwrap(),
            None
        );
    }

    #[test]
    fn values_are_json_quoted_and_the_placeholders_are_comments() {
        assert!(
            registry_member(Some("A \"quoted\" name")).contains(r#""name": "A \"quoted\" name""#)
        );
        assert!(base_url_member(None).lines().all(|l| l.starts_with("//")));
        assert!(registry_member(None).contains("TODO"));
    }
}
