//! The map cannot lie: ARCHITECTURE.md's "Allowed imports" tables list, for each crate, which
//! top-level modules each module may name through `crate::…`. This test reads every such edge
//! in the crates' sources and fails on one the table does not allow, on a module without a
//! row, and on a row naming a module that does not exist. Below the tables, it reads which
//! files of a crate each file names and fails on any cycle between files (see "File-level
//! cycles" further down).

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

// File-level cycles. The tables above order the top-level modules, but a cycle can hide
// inside one module (`online/cache.rs` ↔ `online/checks.rs`) or through the crate root
// (`lib.rs` re-exports a module that imports an item back from `lib.rs`). So the test also
// reads, for every file of each crate's `src` (binaries aside: each is its own crate and
// names the library by its name), which other files of the same crate its paths name, and
// refuses any cycle in that graph.
//
// A path names the deepest file that exists along it: `crate::a::b::C` is `a/b.rs` or
// `a/b/mod.rs` if there is one, else `a.rs` or `a/mod.rs`, else the crate root. Paths are
// read in `use` trees (`crate::a::{b, c::d}` names `a/b` and `a/c/d`) and in code, from
// `crate::` (or `$crate::`), `super::` (climbing from the module at that point, inline
// `mod m { … }` blocks included), `self::`, and a child module's own name (`use
// child::Item;` in the parent). A `mod child;` declaration is not an import: a parent owns its
// children, it does not depend on them until it names one of their items.
//
// Edges from inline `#[cfg(test)] mod tests` blocks are counted like the rest of their file:
// they are part of the file a reader opens, and a test that needs a module which needs this
// one back is as tangled as production code.

/// Every `.rs` file of a crate's source folder by its path below it (`validate/log.rs`), with
/// comments and strings blanked; `bin/` is left out (each binary is its own crate).
fn source_files(src: &Path) -> BTreeMap<String, String> {
    rust_files(src)
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(src).expect("below src");
            let rel = rel.to_string_lossy().replace('\\', "/");
            if rel.starts_with("bin/") {
                return None;
            }
            let text = std::fs::read_to_string(&path).expect("readable source file");
            Some((rel, code_only(&text)))
        })
        .collect()
}

/// The module a file holds: `validate/log.rs` is `validate::log`, `validate/mod.rs` is
/// `validate`, `lib.rs` is the crate root (no segment).
fn module_of_file(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    let root = parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main");
    if root || parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The file that holds exactly `module`, if one does.
fn file_of_module<T>(files: &BTreeMap<String, T>, module: &[String]) -> Option<String> {
    let candidates = if module.is_empty() {
        vec!["lib.rs".to_string(), "main.rs".to_string()]
    } else {
        let base = module.join("/");
        vec![format!("{base}.rs"), format!("{base}/mod.rs")]
    };
    candidates.into_iter().find(|c| files.contains_key(c))
}

/// The deepest file along a path from the crate root (the root itself at worst).
fn deepest_file<T>(files: &BTreeMap<String, T>, path: &[String]) -> Option<String> {
    (0..=path.len())
        .rev()
        .find_map(|len| file_of_module(files, &path[..len]))
}

/// The `(name, body start, body end)` of every inline `mod name { … }` block.
fn inline_modules(code: &str) -> Vec<(String, usize, usize)> {
    let bytes = code.as_bytes();
    let mut out: Vec<(String, usize, usize)> = Vec::new();
    // The open blocks: index in `out`, and the brace depth outside the block.
    let mut open: Vec<(usize, usize)> = Vec::new();
    let (mut braces, mut pending): (usize, Option<String>) = (0, None);
    for (i, &b) in bytes.iter().enumerate() {
        if code[i..].starts_with("mod ") && !code[..i].ends_with(is_ident_char) {
            let after = code[i + 4..].trim_start();
            let name = leading_ident(after).unwrap_or_default();
            let declared = after[name.len()..].trim_start().starts_with('{');
            pending = declared.then_some(name);
        }
        match b {
            b'{' => {
                if let Some(name) = pending.take() {
                    out.push((name, i + 1, code.len()));
                    open.push((out.len() - 1, braces));
                }
                braces += 1;
            }
            b'}' => {
                braces = braces.saturating_sub(1);
                if open.last().is_some_and(|(_, at)| *at == braces) {
                    let (index, _) = open.pop().expect("an open module");
                    out[index].2 = i;
                }
            }
            b';' => pending = None,
            _ => {}
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits a `use` tree into tokens: identifiers (`$crate` too), `::`, `{`, `}`, `,`, `*`.
fn use_tokens(tree: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = tree.trim_start();
    while let Some(c) = rest.chars().next() {
        let len = if rest.starts_with("::") {
            2
        } else if is_ident_char(c) || c == '$' {
            rest.find(|c: char| !(is_ident_char(c) || c == '$'))
                .unwrap_or(rest.len())
        } else {
            c.len_utf8()
        };
        out.push(&rest[..len]);
        rest = rest[len..].trim_start();
    }
    out
}

/// The full paths of a `use` tree: `crate::{a, b::{self, c}}` is `crate::a`, `crate::b`
/// and `crate::b::c`; a glob is its prefix; renames are dropped.
fn use_paths(tokens: &[&str], at: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    while let Some(&token) = tokens.get(*at) {
        *at += 1;
        match token {
            "{" => {
                while tokens.get(*at).is_some_and(|t| *t != "}") {
                    let before = *at;
                    use_paths(tokens, at, path.clone(), out);
                    if tokens.get(*at) == Some(&",") || *at == before {
                        *at += 1; // the separator, or a token no path starts with
                    }
                }
                *at += 1;
                return;
            }
            "*" => break,
            "::" | "," | "}" => {
                *at -= 1;
                return;
            }
            ident => {
                // `self` in a group is the path so far.
                if ident != "self" || path.is_empty() {
                    path.push(ident.to_string());
                }
                if tokens.get(*at) == Some(&"::") {
                    *at += 1;
                    continue;
                }
                if tokens.get(*at) == Some(&"as") {
                    *at += 2;
                }
                break;
            }
        }
    }
    out.push(path);
}

/// A path as written at a point of module `here`, from the crate root; `None` for a path of
/// another crate or one that does not start at a module of this crate.
fn from_root<T>(
    files: &BTreeMap<String, T>,
    here: &[String],
    path: &[String],
) -> Option<Vec<String>> {
    let first = path.first()?.as_str();
    let tail = |base: &[String], from: usize| [base, &path[from..]].concat();
    match first {
        "crate" | "$crate" => Some(path[1..].to_vec()),
        "self" => Some(tail(here, 1)),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            (ups <= here.len()).then(|| tail(&here[..here.len() - ups], ups))
        }
        child => {
            let mut module = here.to_vec();
            module.push(child.to_string());
            file_of_module(files, &module).map(|_| tail(here, 0))
        }
    }
}

/// Each other file of the crate that `file` names, with the first line naming it.
fn file_imports(files: &BTreeMap<String, String>, file: &str) -> BTreeMap<String, usize> {
    let code = &files[file];
    let module = module_of_file(file);
    let inline = inline_modules(code);
    let here = |at: usize| -> Vec<String> {
        let mut m = module.clone();
        m.extend(
            inline
                .iter()
                .filter(|(_, start, end)| (*start..*end).contains(&at))
                .map(|(name, _, _)| name.clone()),
        );
        m
    };
    let mut named = Vec::new();
    let mut uses = Vec::new();
    for (at, _) in code.match_indices("use ") {
        if code[..at].ends_with(is_ident_char) {
            continue;
        }
        let end = code[at..].find(';').map_or(code.len(), |e| at + e);
        let mut paths = Vec::new();
        use_paths(
            &use_tokens(&code[at + 4..end]),
            &mut 0,
            Vec::new(),
            &mut paths,
        );
        named.extend(paths.into_iter().map(|p| (at, p)));
        uses.push(at..end);
    }
    named.extend(code_paths(code).filter(|(at, _)| !uses.iter().any(|u| u.contains(at))));
    let mut out = BTreeMap::new();
    for (at, path) in named {
        let Some(target) = from_root(files, &here(at), &path).and_then(|p| deepest_file(files, &p))
        else {
            continue;
        };
        if target != file {
            let line = code[..at].matches('\n').count() + 1;
            let first = out.entry(target).or_insert(line);
            *first = (*first).min(line);
        }
    }
    out
}

/// The paths written in code (outside `use`): an identifier that starts a `a::b::c` chain
/// (not one after `::`), with its offset.
fn code_paths(code: &str) -> impl Iterator<Item = (usize, Vec<String>)> + '_ {
    code.match_indices("::").filter_map(move |(sep, _)| {
        let start = code[..sep]
            .char_indices()
            .rfind(|(_, c)| !(is_ident_char(*c) || *c == '$'))
            .map_or(0, |(p, c)| p + c.len_utf8());
        let before = code[..start].trim_end();
        if start == sep || before.ends_with("::") || code[..start].ends_with('\'') {
            return None;
        }
        let mut path = vec![code[start..sep].to_string()];
        let mut rest = &code[sep..];
        while let Some(next) = rest.strip_prefix("::") {
            let Some(ident) = leading_ident(next) else {
                break;
            };
            rest = &next[ident.len()..];
            path.push(ident);
        }
        Some((start, path))
    })
}

/// The import graph of a crate's files: each file, the files it names and where.
fn file_graph(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeMap<String, usize>> {
    files
        .keys()
        .map(|file| (file.clone(), file_imports(files, file)))
        .collect()
}

/// The strongly connected sets of the graph with more than one file (Tarjan's algorithm):
/// every file of such a set reaches every other, so each lies on a cycle.
fn tangles(graph: &BTreeMap<String, BTreeMap<String, usize>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeMap<String, usize>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(walk: &mut Walk<'a>, file: &'a str) {
        let n = walk.index.len();
        walk.index.insert(file, (n, n));
        walk.stack.push(file);
        let graph = walk.graph;
        for next in graph[file].keys() {
            let low = match walk.index.get(next.as_str()) {
                None => {
                    visit(walk, next);
                    walk.index[next.as_str()].1
                }
                Some(&(order, _)) if walk.stack.contains(&next.as_str()) => order,
                Some(_) => continue,
            };
            let entry = walk.index.get_mut(file).expect("visited");
            entry.1 = entry.1.min(low);
        }
        let (order, low) = walk.index[file];
        if order == low {
            let at = walk
                .stack
                .iter()
                .rposition(|f| *f == file)
                .expect("on the stack");
            let set: Vec<String> = walk.stack.drain(at..).map(str::to_string).collect();
            if set.len() > 1 {
                walk.out.push(set);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for file in graph.keys() {
        if !walk.index.contains_key(file.as_str()) {
            visit(&mut walk, file);
        }
    }
    walk.out
}

/// The shortest cycle through `from` inside `set`, as the files in order (`from` first).
fn shortest_cycle(
    graph: &BTreeMap<String, BTreeMap<String, usize>>,
    set: &BTreeSet<&str>,
    from: &str,
) -> Vec<String> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(file) = queue.pop_front() {
        for next in graph[file].keys().map(String::as_str) {
            if !set.contains(next) || came_from.contains_key(next) {
                continue;
            }
            came_from.insert(next, file);
            if next == from {
                let mut ring = vec![from.to_string()];
                let mut at = file;
                while at != from {
                    ring.push(at.to_string());
                    at = came_from[at];
                }
                ring[1..].reverse();
                return ring;
            }
            queue.push_back(next);
        }
    }
    unreachable!("every file of a strongly connected set is on a cycle")
}

/// Every file-level cycle, one line each: for each tangle, the shortest cycle through each of
/// its files (duplicates dropped), as `a.rs:3 → b.rs:7 → a.rs` (`a.rs` line 3 names `b.rs`).
fn file_cycles(src: &str, graph: &BTreeMap<String, BTreeMap<String, usize>>) -> Vec<String> {
    let mut out = Vec::new();
    for tangle in tangles(graph) {
        let set: BTreeSet<&str> = tangle.iter().map(String::as_str).collect();
        let mut seen = BTreeSet::new();
        for file in &set {
            let ring = shortest_cycle(graph, &set, file);
            let mut key = ring.clone();
            key.sort();
            if !seen.insert(key) {
                continue;
            }
            let steps: Vec<String> = ring
                .iter()
                .zip(ring.iter().cycle().skip(1))
                .map(|(a, b)| format!("{src}/{a}:{}", graph[a][b]))
                .collect();
            out.push(format!(
                "file cycle: {} → {src}/{} (a file names the next at that line; break the \
                 cycle by moving the shared item down into a file both can import)",
                steps.join(" → "),
                ring[0]
            ));
        }
    }
    out
}

#[test]
fn no_file_of_a_crate_imports_a_file_that_imports_it_back() {
    let root = workspace_root();
    let map = std::fs::read_to_string(root.join(MAP)).expect("ARCHITECTURE.md");
    let mut problems = Vec::new();
    for table in tables(&map) {
        let files = source_files(&root.join(&table.src));
        problems.extend(file_cycles(&table.src, &file_graph(&files)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn in_memory(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(name, text)| ((*name).to_string(), code_only(text)))
        .collect()
}

#[test]
fn the_file_reader_resolves_each_path_to_the_deepest_file_that_holds_it() {
    let files = in_memory(&[
        (
            "lib.rs",
            "mod a;\nmod v;\npub use a::Thing;\n// crate::v::x\n",
        ),
        (
            "a.rs",
            "use crate::{v::{self, log::Line}, Root};\nfn f() { super::v::go() }\n",
        ),
        (
            "v/mod.rs",
            "mod log;\nmod tests { use super::*; use super::super::a; }\n",
        ),
        (
            "v/log.rs",
            "use super::Validator;\nfn f() { self::inner::g(); other_crate::a::b(); }\n",
        ),
    ]);
    let graph = file_graph(&files);
    let names = |file: &str| graph[file].keys().cloned().collect::<Vec<_>>();
    // `pub use a::Thing` in the root names its child; `mod a;` alone would not.
    assert_eq!(names("lib.rs"), ["a.rs"]);
    // `v::{self, log::Line}` names `v/mod.rs` and `v/log.rs`; `Root` is an item of the root.
    assert_eq!(names("a.rs"), ["lib.rs", "v/log.rs", "v/mod.rs"]);
    assert_eq!(graph["a.rs"]["v/mod.rs"], 1);
    // Inside the inline `mod tests`, `super::*` is the file itself, `super::super::a` is `a`.
    assert_eq!(names("v/mod.rs"), ["a.rs"]);
    // A child naming its parent's item names the parent's file; other crates are no edges.
    assert_eq!(names("v/log.rs"), ["v/mod.rs"]);
}

#[test]
fn a_file_cycle_is_refused_with_its_files_in_order_and_none_is_reported_without_one() {
    let tangled = in_memory(&[
        ("lib.rs", "mod error;\nmod paths;\npub use error::Error;\n"),
        (
            "error.rs",
            "pub enum Error { Read(crate::paths::ReadError) }\n",
        ),
        ("paths.rs", "use crate::Error;\npub struct ReadError;\n"),
        ("spec.rs", "pub const X: u8 = 1;\n"),
    ]);
    let found = file_cycles("src", &file_graph(&tangled));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with(
            "file cycle: src/error.rs:1 → src/paths.rs:1 → src/lib.rs:3 → src/error.rs "
        ),
        "{}",
        found[0]
    );
    // The parent using its child and the child using its parent is a cycle too.
    let both_ways = in_memory(&[
        ("lib.rs", "mod v;\n"),
        (
            "v/mod.rs",
            "mod log;\nuse log::Line;\npub struct Validator;\n",
        ),
        ("v/log.rs", "use super::Validator;\npub struct Line;\n"),
    ]);
    let found = file_cycles("src", &file_graph(&both_ways));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("file cycle: src/v/log.rs:1 → src/v/mod.rs:2 → src/v/log.rs "));
    // The same files with the shared item moved down: no cycle.
    let untangled = in_memory(&[
        ("lib.rs", "mod error;\nmod paths;\npub use error::Error;\n"),
        (
            "error.rs",
            "pub enum Error { Read(crate::paths::ReadError) }\n",
        ),
        ("paths.rs", "pub struct ReadError;\n"),
    ]);
    assert_eq!(
        file_cycles("src", &file_graph(&untangled)),
        Vec::<String>::new()
    );
}
