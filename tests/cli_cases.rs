//! CLI behaviour as data: every `tests/cmd/*.toml` case runs the binary and compares its
//! output and exit code with the files beside it, and every ```` ```console ```` block of
//! README.md runs as a trycmd case too, so the README cannot drift from what the tool prints
//! (`TRYCMD=overwrite` refreshes both, the README in place).

use std::path::{Path, PathBuf};

#[test]
fn cli_cases() {
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}

/// One console block of the README: its lines (fences included), where it is, and the
/// repository paths its folder starts with.
struct Block {
    first_line: usize,
    lines: Vec<String>,
    inputs: Vec<String>,
}

/// The marker before a block naming what its folder holds, e.g.
/// `<!-- trycmd-in: tests/fixtures/broken -->`; without one a block runs in an empty folder.
const INPUTS_MARKER: &str = "<!-- trycmd-in:";

fn console_blocks(readme: &str) -> Vec<Block> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut blocks = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        if lines[at].trim_end() != "```console" {
            at += 1;
            continue;
        }
        let inputs = lines[..at]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| l.trim().strip_prefix(INPUTS_MARKER))
            .map(|rest| {
                let rest = rest.trim_end_matches("-->");
                rest.split_whitespace().map(str::to_string).collect()
            })
            .unwrap_or_default();
        let end = (at + 1..lines.len())
            .find(|&i| lines[i].trim_end() == "```")
            .unwrap_or_else(|| panic!("README.md:{}: console block never ends", at + 1));
        blocks.push(Block {
            first_line: at,
            lines: lines[at..=end].iter().map(|l| (*l).to_string()).collect(),
            inputs,
        });
        at = end + 1;
    }
    blocks
}

fn copy_into(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for item in std::fs::read_dir(from).unwrap() {
            let item = item.unwrap();
            copy_into(&item.path(), &to.join(item.file_name()));
        }
    } else {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    }
}

#[test]
fn readme_console_blocks_print_what_the_tool_prints() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme_path = root.join("README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let blocks = console_blocks(&readme);
    assert!(
        blocks.len() >= 3,
        "README.md has too few console blocks to check"
    );
    let work = tempfile::tempdir().unwrap();
    let cases = trycmd::TestCases::new();
    cases.env("NO_COLOR", "1");
    let mut files = Vec::new();
    for block in &blocks {
        // Named by line, so a failure says where in README.md to look.
        let case = work
            .path()
            .join(format!("README-line-{}.md", block.first_line + 1));
        std::fs::write(&case, block.lines.join("\n") + "\n").unwrap();
        let folder = case.with_extension("in");
        std::fs::create_dir(&folder).unwrap();
        for input in &block.inputs {
            let from = root.join(input);
            assert!(
                from.exists(),
                "README.md:{}: {input} does not exist",
                block.first_line
            );
            copy_into(&from, &folder.join(input));
        }
        cases.case(&case);
        files.push(case);
    }
    cases.run();
    if std::env::var_os("TRYCMD").is_some_and(|mode| mode == "overwrite") {
        write_back(&readme_path, &readme, &blocks, &files);
    }
}

/// Put each block's refreshed text back in its place in README.md.
fn write_back(path: &Path, readme: &str, blocks: &[Block], files: &[PathBuf]) {
    let mut lines: Vec<String> = readme.lines().map(str::to_string).collect();
    for (block, file) in blocks.iter().zip(files).rev() {
        let fresh: Vec<String> = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let range = block.first_line..block.first_line + block.lines.len();
        lines.splice(range, fresh);
    }
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}
