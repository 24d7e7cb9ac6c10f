//! The map cannot lie: ARCHITECTURE.md's "Allowed imports" tables list, for each crate, which
//! top-level modules each module may name through `crate::…`. This test reads every such edge
//! in the crates' sources and fails on one the table does not allow, on a module without a
//! row, and on a row naming a module that does not exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAP: &str = "ARCHITECTURE.md";
const OPEN: &str = "<!-- layering: ";
const CLOSE: &str = "<!-- /layering -->";

fn workspace_root() -> PathBuf {
    // The root package's manifest dir is the workspace root.
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One table: the crate's source folder and each module's allowed imports.
struct Table {
    src: String,
    allowed: BTreeMap<String, BTreeSet<String>>,
}

fn tables(map: &str) -> Vec<Table> {
    let mut out = Vec::new();
    let mut rest = map;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let (src, body) = after.split_once("-->").expect("layering marker closed");
        let end = body
            .find(CLOSE)
            .expect("every layering table ends with <!-- /layering -->");
        out.push(Table {
            src: src.trim().to_string(),
            allowed: rows(&body[..end]),
        });
        rest = &body[end..];
    }
    out
}

/// `| `module` | `a`, `b` |` rows; the header and rule rows carry no backticked module.
fn rows(body: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut allowed = BTreeMap::new();
    for line in body.lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        let [module, imports, ..] = cells.as_slice() else {
            continue;
        };
        let Some(module) = backticked(module).into_iter().next() else {
            continue;
        };
        let previous = allowed.insert(module.clone(), backticked(imports).into_iter().collect());
        assert!(previous.is_none(), "{MAP}: module `{module}` has two rows");
    }
    allowed
}

fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Top-level modules of a crate: `src/x.rs` and `src/x/…`, not the crate root or bins.
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(src)
        .expect("crate source folder")
        .flatten()
    {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() && name != "bin" {
            out.insert(name, rust_files(&path));
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if !matches!(stem, "lib" | "main") {
                out.insert(stem.to_string(), vec![path]);
            }
        }
    }
    out
}

/// How deep below the crate root the module of `file` is: `src/x.rs` and `src/x/mod.rs` are 1,
/// `src/x/y.rs` is 2.
fn module_depth(src: &Path, file: &Path) -> usize {
    let rel = file.strip_prefix(src).expect("a file of the crate");
    let parts = rel.components().count();
    if rel.file_name().is_some_and(|n| n == "mod.rs") {
        parts - 1
    } else {
        parts
    }
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("readable source folder")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The code of a Rust file with comments and string literals blanked (newlines kept), so a
/// `crate::x` in a doc comment or a string is not an import.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let skip = match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                text[i..].find('\n').unwrap_or(text.len() - i)
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                text[i + 2..].find("*/").map_or(text.len() - i, |e| e + 4)
            }
            b'r' if raw_string_start(&bytes[i..]).is_some() => raw_string_len(&text[i..]),
            b'"' => quoted_len(&bytes[i..]),
            b'\'' => char_literal_len(&bytes[i..]),
            _ => 0,
        };
        if skip == 0 {
            out.push(bytes[i] as char);
            i += 1;
        } else {
            out.extend(
                text[i..i + skip]
                    .chars()
                    .map(|c| if c == '\n' { '\n' } else { ' ' }),
            );
            i += skip;
        }
    }
    out
}

fn raw_string_start(bytes: &[u8]) -> Option<usize> {
    let hashes = bytes[1..].iter().take_while(|b| **b == b'#').count();
    (bytes.get(1 + hashes) == Some(&b'"')).then_some(hashes)
}

fn raw_string_len(text: &str) -> usize {
    let hashes = raw_string_start(text.as_bytes()).unwrap_or(0);
    let close = format!("\"{}", "#".repeat(hashes));
    let body = 2 + hashes;
    text[body..]
        .find(&close)
        .map_or(text.len(), |e| body + e + close.len())
}

fn quoted_len(bytes: &[u8]) -> usize {
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// `'x'`, `'\n'`, `'\u{1F600}'`; a lifetime (`'a`) is left as code.
fn char_literal_len(bytes: &[u8]) -> usize {
    match bytes.get(1) {
        Some(b'\\') => bytes[2..]
            .iter()
            .position(|b| *b == b'\'')
            .map_or(0, |e| e + 3),
        Some(_) => {
            let width = std::str::from_utf8(&bytes[1..bytes.len().min(5)])
                .ok()
                .or_else(|| std::str::from_utf8(&bytes[1..2]).ok())
                .and_then(|s| s.chars().next())
                .map_or(1, char::len_utf8);
            if bytes.get(1 + width) == Some(&b'\'') {
                width + 2
            } else {
                0
            }
        }
        None => 0,
    }
}

/// Each top-level module the code names, with its 1-based line: `crate::x`, `use
/// crate::{a, b::c}` (naming `a` and `b`), and `super::x` where the `super`s climb from the
/// file's module (`depth` below the crate root, plus the inline `mod m { … }` around the
/// path) to the crate root.
fn crate_edges(code: &str, depth: usize) -> Vec<(usize, String)> {
    let inline = inline_module_depths(code);
    let mut out = Vec::new();
    for (at, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        {
            continue; // `my_crate::`, or a `super::` after another one
        }
        let Some(rest) = path_below_root(&code[at..], depth + inline[at]) else {
            continue;
        };
        let line = code[..at].matches('\n').count() + 1;
        if let Some(group) = rest.strip_prefix('{') {
            out.extend(top_level_items(group).into_iter().map(|m| (line, m)));
        } else if let Some(name) = leading_ident(rest) {
            out.push((line, name));
        }
    }
    out.sort();
    out
}

/// What follows the crate root in `path` (`crate::…`, or exactly `depth` `super::`s).
fn path_below_root(path: &str, depth: usize) -> Option<&str> {
    if let Some(rest) = path.strip_prefix("crate::") {
        return Some(rest);
    }
    let mut rest = path;
    for _ in 0..depth {
        rest = rest.strip_prefix("super::")?;
    }
    (!rest.starts_with("super::")).then_some(rest)
}

/// For each byte of the code, how many inline `mod name { … }` blocks enclose it.
fn inline_module_depths(code: &str) -> Vec<usize> {
    let bytes = code.as_bytes();
    let (mut depths, mut braces, mut open_mods) = (vec![0; bytes.len() + 1], 0usize, Vec::new());
    let mut pending_mod = false;
    for (i, &b) in bytes.iter().enumerate() {
        if code[i..].starts_with("mod ")
            && !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            let after = code[i + 4..].trim_start();
            let name_end = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            pending_mod = after[name_end..].trim_start().starts_with('{');
        }
        match b {
            b'{' => {
                if std::mem::take(&mut pending_mod) {
                    open_mods.push(braces);
                }
                braces += 1;
            }
            b'}' => {
                braces = braces.saturating_sub(1);
                if open_mods.last() == Some(&braces) {
                    open_mods.pop();
                }
            }
            b';' => pending_mod = false,
            _ => {}
        }
        depths[i + 1] = open_mods.len();
    }
    depths
}

fn top_level_items(group: &str) -> Vec<String> {
    let (mut depth, mut items, mut start) = (0usize, Vec::new(), 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.extend(leading_ident(group[start..i].trim_start()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.extend(leading_ident(group[start..i].trim_start()));
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

fn leading_ident(text: &str) -> Option<String> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    (end > 0).then(|| text[..end].to_string())
}

fn violations(root: &Path, table: &Table) -> Vec<String> {
    let src = root.join(&table.src);
    let modules = modules(&src);
    // Names that are not module files but that rows allow: the core's modules re-exported
    // at the crate root. Other names after `crate::` are items of the root (types, functions).
    let listed: BTreeSet<String> = table.allowed.values().flatten().cloned().collect();
    let mut problems = Vec::new();
    for name in table.allowed.keys().filter(|m| !modules.contains_key(*m)) {
        problems.push(format!(
            "{MAP} ({}): row `{name}` names no module of {}",
            table.src, table.src
        ));
    }
    for (module, files) in &modules {
        let Some(allowed) = table.allowed.get(module) else {
            problems.push(format!(
                "{}/{module}: no row in {MAP}'s table for {}",
                table.src, table.src
            ));
            continue;
        };
        for file in files {
            let text = std::fs::read_to_string(file).expect("readable source file");
            for (line, target) in crate_edges(&code_only(&text), module_depth(&src, file)) {
                let named = modules.contains_key(&target) || listed.contains(&target);
                if named && target != *module && !allowed.contains(&target) {
                    let shown = file
                        .strip_prefix(root)
                        .unwrap_or(file)
                        .display()
                        .to_string();
                    problems.push(format!(
                        "{shown}:{line}: `{module}` imports `crate::{target}`, which {MAP} does \
                         not allow; import through an allowed module, or change the table if the \
                         layering is meant to change"
                    ));
                }
            }
        }
    }
    problems
}

/// Layers, data flowing one way: the table itself must allow no cycle.
fn cycle(table: &Table) -> Option<String> {
    fn visit<'a>(
        module: &'a str,
        table: &'a Table,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<String> {
        if let Some(at) = path.iter().position(|m| *m == module) {
            let mut ring = path[at..].to_vec();
            ring.push(module);
            return Some(format!(
                "{MAP} ({}): the table allows a cycle: {}",
                table.src,
                ring.join(" → ")
            ));
        }
        if !done.insert(module) {
            return None;
        }
        path.push(module);
        let imports = table.allowed.get(module).into_iter().flatten();
        let found = imports
            .filter_map(|next| visit(next, table, path, done))
            .next();
        path.pop();
        found
    }
    let mut done = BTreeSet::new();
    table
        .allowed
        .keys()
        .find_map(|m| visit(m, table, &mut Vec::new(), &mut done))
}

#[test]
fn every_crate_import_between_top_level_modules_is_one_the_architecture_map_allows() {
    let root = workspace_root();
    let map = std::fs::read_to_string(root.join(MAP)).expect("ARCHITECTURE.md");
    let tables = tables(&map);
    assert!(!tables.is_empty(), "{MAP} has no `{OPEN}<src> -->` table");
    let mut problems: Vec<String> = tables.iter().flat_map(|t| violations(&root, t)).collect();
    problems.extend(tables.iter().filter_map(cycle));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_edge_reader_sees_grouped_paths_and_ignores_comments_strings_and_other_crates() {
    let code = code_only(
        "use crate::{fs::{self, read}, source::Span};\n// crate::net\nlet s = \"crate::site\";\n\
         let r = r#\"crate::verify\"#;\nfn f<'a>(x: &'a str) { my_crate::pack(); crate::time::now() }\n",
    );
    let edges: Vec<String> = crate_edges(&code, 2).into_iter().map(|(_, m)| m).collect();
    assert_eq!(edges, ["fs", "source", "time"]);
    // In a top-level module's file, `super::x` is the crate's `x`; inside its inline `mod
    // tests`, `super::` is the module itself and only `super::super::x` climbs to the root.
    let code = code_only(
        "use super::spec;\nuse super::super::nothing;\nmod tests {\n    use super::*;\n    \
         use super::helper;\n    use super::super::paths;\n}\nfn f() { super::state::x() }\n",
    );
    let edges: Vec<String> = crate_edges(&code, 1).into_iter().map(|(_, m)| m).collect();
    assert_eq!(edges, ["spec", "paths", "state"]);
}

#[test]
fn the_map_table_reader_takes_each_backticked_module_and_its_imports() {
    let map = format!(
        "{OPEN}src -->\n| module | may import |\n|---|---|\n| `site` | `diagnostics`, `manifest` |\n\
         | `source` | — |\n{CLOSE}\n"
    );
    let tables = tables(&map);
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0].src, "src");
    assert_eq!(
        tables[0].allowed["site"],
        BTreeSet::from(["diagnostics".into(), "manifest".into()])
    );
    assert!(tables[0].allowed["source"].is_empty());
}

#[test]
fn a_table_that_allows_a_cycle_is_refused() {
    let map = format!(
        "{OPEN}src -->\n| `a` | `b` |\n| `b` | `c` |\n| `c` | `a` |\n| `d` | `a` |\n{CLOSE}\n"
    );
    let found = cycle(&tables(&map)[0]).expect("a cycle");
    assert!(found.ends_with("a → b → c → a"), "{found}");
}
