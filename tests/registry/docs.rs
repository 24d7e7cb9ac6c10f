//! Generated documentation stays in sync with the code, and the repository stands alone.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn rules_md_is_generated_from_the_catalogue() {
    let path = root().join("docs/rules.md");
    let expected = acp_registry::rules_markdown();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/rules.md is stale: run `cargo run -- explain --markdown > docs/rules.md` (or UPDATE_DOCS=1 cargo test --test registry docs::)"
    );
}

/// Every file of the work tree that git tracks or would track (untracked but not ignored), with
/// its text, sorted by path; the test data under `tests/fixtures/` is left out.
fn repository_files() -> Vec<(String, String)> {
    let listed = std::process::Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root())
        .output()
        .expect("git must be installed to list the repository's files");
    assert!(
        listed.status.success(),
        "git ls-files failed: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let mut files: Vec<(String, String)> = String::from_utf8_lossy(&listed.stdout)
        .split('\0')
        .filter(|path| !path.is_empty() && !path.starts_with("tests/fixtures/"))
        // A file listed by git but deleted in the work tree has nothing to say.
        .filter_map(|path| {
            let bytes = std::fs::read(root().join(path)).ok()?;
            Some((
                path.to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ))
        })
        .collect();
    files.sort();
    files
}

/// The repository stands alone: nothing outside `tests/fixtures/` may point at a `shared`
/// folder beside the clone or cite numbered sections of documents a contributor does not
/// have; the contracts are `docs/format.md` and `docs/collab-protocol.md`.
#[test]
fn no_file_points_outside_the_repository_or_cites_foreign_sections() {
    // Built at run time so that this file does not contain what it looks for.
    let needles = [
        ["..", "shared"].join("/"),
        ["..", "shared"].join("\\"),
        '\u{a7}'.to_string(),
    ];
    let offenders: Vec<String> = repository_files()
        .into_iter()
        .filter_map(|(path, text)| {
            let found: Vec<&str> = needles
                .iter()
                .map(String::as_str)
                .filter(|needle| text.contains(needle))
                .collect();
            (!found.is_empty()).then(|| format!("{path}: {found:?}"))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "these files refer to documents outside the repository; point them at sections of \
         docs/format.md or docs/collab-protocol.md, or at tests/fixtures/, instead:\n{}",
        offenders.join("\n")
    );
}

/// The anchors GitHub derives from the headings of a Markdown document.
fn anchors(markdown: &str) -> std::collections::BTreeSet<String> {
    let mut anchors = std::collections::BTreeSet::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let Some(title) = line.trim_start_matches('#').strip_prefix(' ') else {
            continue;
        };
        if in_code || !line.starts_with('#') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        assert!(
            anchors.insert(slug.clone()),
            "two headings give the anchor #{slug}"
        );
    }
    anchors
}

/// Comments, README, ARCHITECTURE.md and the contract documents point at sections of the
/// contracts by anchor; every such anchor must name a heading that exists.
#[test]
fn references_to_the_contract_documents_name_sections_that_exist() {
    let contracts = ["docs/format.md", "docs/collab-protocol.md"];
    let known: Vec<(&str, std::collections::BTreeSet<String>)> = contracts
        .iter()
        .map(|doc| {
            let text = std::fs::read_to_string(root().join(doc))
                .unwrap_or_else(|e| panic!("{doc} must exist: {e}"));
            (*doc, anchors(&text))
        })
        .collect();
    let reference =
        regex::Regex::new(r"(?:^|[^A-Za-z0-9_-])((?:format|collab-protocol)\.md)?#([a-z0-9_-]+)\b")
            .unwrap();
    let mut broken = Vec::new();
    for (path, text) in repository_files() {
        let own = known.iter().find(|(doc, _)| *doc == path);
        for caps in reference.captures_iter(&text) {
            let target = match caps.get(1) {
                Some(file) => known.iter().find(|(doc, _)| doc.ends_with(file.as_str())),
                // A bare `#anchor` is a link only inside a Markdown link of a contract.
                None if own.is_some() && caps.get(0).unwrap().as_str().starts_with('(') => own,
                None => continue,
            };
            let (doc, anchors) = target.unwrap();
            if !anchors.contains(&caps[2]) {
                broken.push(format!("{path}: {doc}#{} has no such heading", &caps[2]));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
