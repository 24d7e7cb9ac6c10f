//! `acp-registry fmt`: the canonical layout keeps every value and comment, is idempotent, and
//! the command writes only what changes, atomically, never through a link.

use crate::common;

use std::path::{Path, PathBuf};

use acp_registry::parse;
use acp_registry::Editor;
use common::{acp_registry, copy_dir, public_sample, repo_root};
use jsonc_parser::cst::{CstNode, CstRootNode};
use jsonc_parser::ParseOptions;

fn format(text: &str) -> String {
    let mut editor = Editor::parse(text).unwrap();
    editor.format().unwrap();
    editor.into_text()
}

/// Every comment of `text`, in order.
fn comments(text: &str) -> Vec<String> {
    fn walk(node: &CstNode, out: &mut Vec<String>) {
        if let Some(comment) = node.as_comment() {
            out.push(comment.raw_value().trim_end().to_string());
        }
        for child in node.children() {
            walk(&child, out);
        }
    }
    let root = CstRootNode::parse(text, &ParseOptions::default()).unwrap();
    let mut out = Vec::new();
    for child in root.children() {
        walk(&child, &mut out);
    }
    out
}

fn manifests(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path().join("agent.json"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found
}

fn all_manifests() -> Vec<PathBuf> {
    let mut all = manifests(&repo_root().join("registry"));
    all.extend(manifests(&public_sample()));
    assert!(all.len() > 20, "{all:?}");
    all
}

/// Check the promises of the layout on one text.
fn assert_canonical_keeps(text: &str, what: &str) -> String {
    let once = format(text);
    assert_eq!(format(&once), once, "{what}: formatting twice changes it");
    assert_eq!(
        parse(&once).unwrap().to_json(),
        parse(text).unwrap().to_json(),
        "{what}: values changed"
    );
    let (mut before, mut after) = (comments(text), comments(&once));
    before.sort();
    after.sort();
    assert_eq!(before, after, "{what}: comments lost or added:\n{once}");
    once
}

#[test]
fn formatting_every_bundled_and_public_manifest_is_idempotent_and_keeps_its_values() {
    for path in all_manifests() {
        let text = std::fs::read_to_string(&path).unwrap();
        assert_canonical_keeps(&text, &path.display().to_string());
    }
}

/// Put a comment above every member line and after every comma of `text`.
fn with_comments(text: &str) -> (String, Vec<(String, String)>) {
    let mut out = String::new();
    let mut above = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('"') {
            let key = trimmed.split(':').next().unwrap().to_string();
            let tag = format!("// above {n}");
            out.push_str(&format!("{}{tag}\n", &line[..line.len() - trimmed.len()]));
            above.push((tag, key));
        }
        out.push_str(line);
        if line.ends_with(',') {
            out.push_str(&format!(" /* after {n} */"));
        }
        out.push('\n');
    }
    (out, above)
}

#[test]
fn comments_in_every_place_of_every_bundled_manifest_stay_with_their_members() {
    for path in all_manifests() {
        let (text, above) = with_comments(&std::fs::read_to_string(&path).unwrap());
        let once = assert_canonical_keeps(&text, &path.display().to_string());
        let lines: Vec<&str> = once.lines().map(str::trim).collect();
        for (tag, key) in above {
            let at = lines.iter().position(|l| *l == tag).unwrap();
            // Only other comments of the same member (moved from between key and value) or
            // the member itself follow its heading.
            let next = lines[at + 1..]
                .iter()
                .find(|l| !l.starts_with("//"))
                .unwrap();
            assert!(
                next.starts_with(&key),
                "{}: {tag} is above {next}, not {key}:\n{once}",
                path.display()
            );
        }
    }
}

#[test]
fn keys_take_the_canonical_order_at_every_level_and_comments_travel_with_them() {
    let text = r#"// header

{ // open
  "version": "1.0.0", // about version
  "zeta": {"b": 1, "a": 2},
  "distribution": {"npx": {"env": {"Z": "1", "A": "2"}, "args": ["--acp", /* x */ "y",], "package": "p@1.0.0"}},

  // about id
  "id": /* inline */ "a",
  "auth": [{"vars": [], "type": "env_var"}],
  "name": "n" /* u */ , /* v */ "description": "d",
  // dangling
} // end
"#;
    let expected = r#"// header

{ // open
  // about id
  /* inline */
  "id": "a",
  "name": "n", /* u */
  "version": "1.0.0", // about version
  /* v */
  "description": "d",
  "auth": [
    {
      "type": "env_var",
      "vars": []
    }
  ],
  "distribution": {
    "npx": {
      "package": "p@1.0.0",
      "args": [
        "--acp",
        /* x */
        "y"
      ],
      "env": {
        "A": "2",
        "Z": "1"
      }
    }
  },
  "zeta": {
    "a": 2,
    "b": 1
  }
  // dangling
} // end
"#;
    // The blank line above `// about id` is dropped: nothing is above it any more.
    assert_eq!(assert_canonical_keeps(text, "crafted"), expected);
}

#[test]
fn binary_targets_and_legacy_platforms_get_the_target_order_and_empty_containers_stay_short() {
    let text = r#"{"distribution": {"linux-x86_64": {"sha256": "s", "cmd": "c", "archive": "a"},
        "binary": {"windows-x86_64": {"env": {}, "cmd": "c", "archive": "a"}, "darwin-aarch64": {"args": [], "archive": "a"}}}}"#;
    let once = assert_canonical_keeps(text, "targets");
    let keys: Vec<&str> = once
        .lines()
        .filter_map(|l| {
            l.trim()
                .split_once("\":")
                .map(|(k, _)| k.trim_start_matches('"'))
        })
        .collect();
    assert_eq!(
        keys,
        [
            "distribution",
            "binary",
            "darwin-aarch64",
            "archive",
            "args",
            "windows-x86_64",
            "archive",
            "cmd",
            "env",
            "linux-x86_64",
            "archive",
            "cmd",
            "sha256"
        ]
    );
    assert!(
        once.contains("\"args\": []\n") && once.contains("\"env\": {}\n"),
        "{once}"
    );
}

#[test]
fn crlf_and_tabs_become_lf_and_two_spaces_and_escapes_are_kept_as_written() {
    let text = "{\r\n\t\"name\": \"caf\\u00e9\", // c\r\n\t\"id\": \"x\"\r\n}";
    assert_eq!(
        assert_canonical_keeps(text, "crlf"),
        "{\n  \"id\": \"x\",\n  \"name\": \"caf\\u00e9\" // c\n}\n"
    );
}

fn temp_registry() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_root().join("registry"), dir.path());
    dir
}

#[test]
fn check_lists_the_manifests_that_would_change_exits_1_and_writes_nothing() {
    let dir = temp_registry();
    let path = dir.path().join("goose/agent.json");
    let messy = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\n  ", "\n\t");
    std::fs::write(&path, &messy).unwrap();
    let run = acp_registry(&["fmt", "--check", "--registry", "."], dir.path());
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "would reformat goose/agent.json\n1 of 13 manifests would be reformatted\n"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), messy);

    let clean = acp_registry(
        &["fmt", "--check", "--registry", "."],
        &repo_root().join("registry"),
    );
    assert_eq!(
        (clean.code, clean.stdout.as_str()),
        (0, "0 of 13 manifests would be reformatted\n")
    );
}

#[cfg(unix)]
fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().ino()
}

#[cfg(unix)]
#[test]
fn fmt_rewrites_only_the_manifests_that_change() {
    let dir = temp_registry();
    let messy = dir.path().join("goose/agent.json");
    let text = std::fs::read_to_string(&messy).unwrap();
    std::fs::write(&messy, text.replace("\n  ", "\n    ")).unwrap();
    let untouched = dir.path().join("gemini/agent.json");
    let (messy_before, untouched_before) = (inode(&messy), inode(&untouched));
    let run = acp_registry(&["fmt", "--registry", "."], dir.path());
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "formatted goose/agent.json\n1 of 13 manifests reformatted\n"
    );
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), text);
    // Replaced by rename (a new file), while the unchanged one was not even rewritten.
    assert_ne!(inode(&messy), messy_before);
    assert_eq!(inode(&untouched), untouched_before);
    let names: Vec<_> = std::fs::read_dir(dir.path().join("goose"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !names.iter().any(|n| n.to_string_lossy().ends_with(".tmp")),
        "{names:?}"
    );
}

#[test]
fn paths_may_be_entry_folders_or_manifest_files_and_only_those_are_formatted() {
    let dir = temp_registry();
    for entry in ["goose", "gemini", "cline"] {
        let path = dir.path().join(entry).join("agent.json");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\n  ", "\n   ")).unwrap();
    }
    let run = acp_registry(
        &["fmt", "--check", "goose", "./gemini/agent.json"],
        dir.path(),
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout,
        "would reformat goose/agent.json\nwould reformat gemini/agent.json\n2 of 2 manifests would be reformatted\n"
    );
}

#[cfg(unix)]
#[test]
fn a_linked_manifest_is_refused_and_what_it_points_to_is_left_alone() {
    let dir = temp_registry();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("elsewhere.json");
    std::fs::write(&target, "{\"id\":  \"x\"}").unwrap();
    let link = dir.path().join("goose/agent.json");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let run = acp_registry(&["fmt", "goose"], dir.path());
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("cannot read goose/agent.json") && run.stderr.contains("symbolic link"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "{\"id\":  \"x\"}"
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_manifest_that_does_not_parse_is_named_with_its_position_and_left_alone() {
    let dir = temp_registry();
    let path = dir.path().join("goose/agent.json");
    std::fs::write(&path, "{\n  \"id\": 'goose'\n}\n").unwrap();
    let run = acp_registry(&["fmt", "--registry", "."], dir.path());
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .starts_with("error: goose/agent.json:2:9: not valid JSONC"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\n  \"id\": 'goose'\n}\n"
    );
}
