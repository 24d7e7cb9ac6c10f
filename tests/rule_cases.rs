//! Data-driven CLI cases: for every rule code, a registry that must trigger it and a
//! near-identical one that must not.
//!
//! Layout, one folder per code of `Code::ALL`:
//!
//! ```text
//! tests/rules/<code>/fail/            a complete registry root that triggers <code>
//! tests/rules/<code>/fail/expected.txt
//! tests/rules/<code>/fail-<what>/     optional further failing cases (same shape)
//! tests/rules/<code>/pass/            the same registry with the problem fixed
//! tests/rules/<code>/pass-<what>/     optional further passing cases
//! ```
//!
//! `expected.txt` lists exactly the findings *of that code* the run must produce, in the
//! tool's order (file, line, column), one per line: `<severity> <code> <file>:<line>:<col>`,
//! or `<severity> <code> <file>` for a whole-file finding. Blank lines and lines starting
//! with `#` are ignored. Findings of other codes are not compared. A failing case must exit
//! with 1 when an expected line is an error and 0 otherwise; a passing case must produce no
//! finding of its code.
//!
//! Some inputs cannot (or should not) be committed: they are produced at test time by the
//! generators in [`generate`], keyed by code and case name.
//!
//! Online codes: a case folder with `online.json` (`{"args": [...], "routes": {...}}`) runs
//! against a scripted HTTP server on 127.0.0.1 started for the case (see `net_server`):
//! `routes` maps `"METHOD /path"` to its replies, `{{server}}` in the copied files and in
//! the routes becomes the server's `https://127.0.0.1:<port>` (fetched over plain http under
//! the test-only `ACP_REGISTRY_TEST_ALLOW_LOOPBACK=1`), and the run adds `args` and
//! `--no-cache`.
//!
//! Launch codes (`verify`): an `online.json` with `"command": "verify"` runs `acp-registry
//! verify` instead of `validate` (same JSON findings, same expected.txt). The copy gets the
//! scriptable test agent at `_agents/acp-agent` (folders starting with `_` are not entries),
//! and a reply may say `"body_path": "<path in the copy>"` to serve that file's bytes, so
//! manifests point their archive at `{{server}}/…` and pick the agent's behaviour with
//! `args` (`["--mode", "silent"]`, see `tests/agents/acp_agent.py`). `"env"` sets variables
//! of the run, where `{{server_http}}` is the server's `http://127.0.0.1:<port>` (for tools
//! that speak to it themselves, such as uv through `ACP_REGISTRY_TEST_UV_INDEX`); the
//! generators put wheels of the test agent under `_index/` for routes to serve. `"needs":
//! "uvx"` names a program the case cannot run without: missing, the case fails in CI (`CI`
//! set; `.ci/run` installs it) and is skipped, saying so, elsewhere.
//!
//! Build codes: an `online.json` with `"command": "build"` runs `acp-registry build` (its
//! `--format json` findings on stdout), with `args` such as `["--no-site", "--last-good",
//! "_previous/registry.json"]`; `"exit": N` names the exit code a failing case expects when
//! it is not 1 or 0 (3: published with held-back entries).
//!
//! Skills index codes: an `online.json` with `"command": "skill check"` runs `acp-registry skill
//! check --format json` with `args` as its sources: paths of files in the case (a local site
//! folder such as `site`, an `index.json`, a `marketplace.json`) or `{{server}}/…` URLs served
//! by `routes` (with `body_path` for a file of the case). Finding paths are those sources as
//! given; there is no `--registry`.
//!
//! Cases about a base revision (`--changed-since`, pins as committed) run in a fresh git
//! repository whose one commit is the base: `_base/`'s content when the case holds `_base/`
//! (the case's other files are then the working tree, and the run adds `--changed-since
//! HEAD`), else the case's copy with `{{server}}` filled in. A `git.json` (`{"args": [...],
//! "after": {"<path>": "<text>"}, "replace": {"<path>": ["<old>", "<new>"]}}`) then writes the
//! files of `after` and makes the `replace` edits (changes since that commit), and the run
//! adds its `args` instead.
//!
//! Every case runs `acp-registry validate --registry . --format json` inside a fresh copy in
//! a temporary folder; cases run in parallel and every mismatch is reported at the end.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use acp_registry::Code;
use serde_json::Value;

use acp_test_kit::server as net_server;
use acp_test_kit::{fifo, symlink, Finding, Findings};

const BIN: &str = env!("CARGO_BIN_EXE_acp-registry");

/// Limits from `docs/format.md#reading-files`, written out to pin the contract, not the constants.
const ICON_LIMIT: usize = 32 * 1024;
const SKILL_LIMIT: usize = 1024 * 1024;

/// The icon every entry of a copied case gets when it has none (`tests/rules/default-icon.svg`,
/// stored once instead of in every case); a case's `no-icon` file lists, one a line, the
/// folders (relative to the case) that must stay without one.
const DEFAULT_ICON: &str = "default-icon.svg";
/// The case file naming the entries that get no default icon.
const NO_ICON: &str = "no-icon";

fn cases_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rules")
}

#[derive(Debug)]
struct Case {
    code: Code,
    /// `fail`, `fail-<what>`, `pass` or `pass-<what>`.
    name: String,
    dir: PathBuf,
}

impl Case {
    fn fails(&self) -> bool {
        self.name == "fail" || self.name.starts_with("fail-")
    }

    fn label(&self) -> String {
        format!("{}/{}", self.code, self.name)
    }
}

#[test]
fn every_rule_code_has_a_failing_and_a_passing_case() {
    let root = cases_root();
    let mut problems = Vec::new();
    let cases = collect_cases(&root, &mut problems);

    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(4, std::num::NonZero::get)
        .min(16);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let outcome = run_case(case);
                results.lock().unwrap().push((case.label(), outcome));
            });
        }
    });

    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    problems.extend(results.into_iter().filter_map(|(_, r)| r.err()));
    assert!(
        problems.is_empty(),
        "{} of {} rule cases are wrong:\n\n{}",
        problems.len(),
        cases.len(),
        problems.join("\n\n")
    );
}

/// Every case folder, checking that each code has `fail` and `pass` and that no folder
/// names an unknown code or an unknown kind of case.
fn collect_cases(root: &Path, problems: &mut Vec<String>) -> Vec<Case> {
    let mut cases = Vec::new();
    for &code in Code::ALL {
        let dir = root.join(code.as_str());
        for required in ["fail", "pass"] {
            if !dir.join(required).is_dir() {
                problems.push(format!(
                    "rule `{code}` has no `{required}` case: add tests/rules/{code}/{required}/"
                ));
            }
        }
        let Ok(read) = fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = read
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let path = dir.join(&name);
            let known = ["fail", "pass"]
                .iter()
                .any(|k| name == *k || name.starts_with(&format!("{k}-")));
            if !path.is_dir() || !known {
                problems.push(format!(
                    "tests/rules/{code}/{name}: expected only `fail`, `fail-*`, `pass` and `pass-*` folders"
                ));
                continue;
            }
            let case = Case {
                code,
                name,
                dir: path,
            };
            let has_expected = case.dir.join("expected.txt").is_file();
            if case.fails() && !has_expected {
                problems.push(format!("{}: missing expected.txt", case.label()));
            } else if !case.fails() && has_expected {
                problems.push(format!(
                    "{}: a passing case has no expected.txt (it must produce no `{code}` finding)",
                    case.label()
                ));
            }
            cases.push(case);
        }
    }
    let codes: BTreeSet<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    if let Ok(read) = fs::read_dir(root) {
        for entry in read.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !codes.contains(name.as_str()) && name != DEFAULT_ICON {
                problems.push(format!(
                    "tests/rules/{name}: not a rule code (renamed or removed?)"
                ));
            }
        }
    }
    cases
}

/// Prefixes a problem with the rule and case it happened in.
fn failure(case: &Case) -> impl Fn(String) -> String + '_ {
    |msg: String| format!("rule `{}`, case `{}`: {msg}", case.code, case.name)
}

/// Run one case; `Err` carries a readable description of what went wrong.
fn run_case(case: &Case) -> Result<(), String> {
    let fail = failure(case);
    if let Some(program) = missing_program(&case.dir) {
        if std::env::var_os("CI").is_some() {
            return Err(fail(format!(
                "`{program}` is not installed; .ci/run installs it"
            )));
        }
        eprintln!("skipped {}: `{program}` is not installed", case.label());
        return Ok(());
    }
    let temp = tempfile::tempdir().map_err(|e| fail(format!("cannot create a temp dir: {e}")))?;
    let registry = temp.path().join("registry");
    let subcommand = online_command(&case.dir);
    prepare_case(case, &registry, &subcommand)?;
    let (exit, all) = run_subcommand(case, &registry, &subcommand)?;
    check_findings(case, exit, &all)
}

/// Copy the case to `registry`, with the test agent when it runs `verify`, and generate its
/// inputs.
fn prepare_case(case: &Case, registry: &Path, subcommand: &str) -> Result<(), String> {
    let fail = failure(case);
    copy_case(&case.dir, registry).map_err(|e| fail(format!("cannot copy the case: {e}")))?;
    if subcommand == "verify" {
        let agents = registry.join("_agents");
        fs::create_dir_all(&agents).map_err(|e| fail(e.to_string()))?;
        fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/acp_agent.py"),
            agents.join("acp-agent"),
        )
        .map_err(|e| fail(format!("cannot copy the test agent: {e}")))?;
    }
    generate(case.code.as_str(), &case.name, registry)
        .map_err(|e| fail(format!("cannot generate inputs: {e}")))?;
    supply_default_icons(&case.dir, registry)
        .map_err(|e| fail(format!("cannot supply the default icon: {e}")))
}

/// Writes [`DEFAULT_ICON`] as `icon.svg` into every folder of the copy that holds an
/// `agent.json` and no `icon.svg` (a link counts as one; links are not followed), except the
/// folders the case's [`NO_ICON`] file lists. After [`generate`], so generated icons stand.
fn supply_default_icons(case: &Path, registry: &Path) -> std::io::Result<()> {
    let listed = match fs::read_to_string(case.join(NO_ICON)) {
        Ok(text) => text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
        Err(e) => return Err(e),
    };
    let icon = fs::read(cases_root().join(DEFAULT_ICON))?;
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let dir = registry.join(&rel);
        let holds = |name: &str| fs::symlink_metadata(dir.join(name)).is_ok();
        if holds("agent.json") && !holds("icon.svg") && !listed.contains(&rel) {
            fs::write(dir.join("icon.svg"), &icon)?;
        }
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                pending.push(rel.join(entry.file_name()));
            }
        }
    }
    Ok(())
}

/// A run's exit code and every finding as (code, line).
type Outcome = (Option<i32>, Vec<(String, String)>);

/// Run the case's subcommand on `registry`.
fn run_subcommand(case: &Case, registry: &Path, subcommand: &str) -> Result<Outcome, String> {
    let fail = failure(case);
    // From inside the copy with `--registry .`, finding paths are relative to the registry
    // root, as expected.txt writes them.
    let mut command = Command::new(BIN);
    if subcommand == SKILL_CHECK {
        // Checks the sources `args` names (files of the case, or `{{server}}` URLs), not a
        // registry: finding paths are those sources as given, relative to the case's copy.
        command.args(["skill", "check", "--format", "json"]);
    } else {
        command.args([subcommand, "--registry", ".", "--format", "json"]);
    }
    command
        .current_dir(registry)
        .env_remove("GITHUB_STEP_SUMMARY");
    // Kept alive until the run ends; its URL is written `{{server}}` in expected.txt.
    let server = online_case(&case.dir, registry, &mut command)
        .map_err(|e| fail(format!("cannot set up the online case: {e}")))?;
    let base = server.as_ref().map(|(_, base)| base.clone());
    git_case(&case.dir, registry, &mut command)
        .map_err(|e| fail(format!("cannot set up the git case: {e}")))?;
    let output = command
        .output()
        .map_err(|e| fail(format!("cannot run {BIN}: {e}")))?;
    let exit = output.status.code();
    let document: Findings = serde_json::from_slice(&output.stdout).map_err(|e| {
        fail(format!(
            "output is not JSON ({e}), exit {exit:?}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    })?;
    let all: Vec<(String, String)> = document
        .findings
        .iter()
        .map(finding_line)
        .map(|(code, line)| match &base {
            Some(base) => (code, line.replace(base.as_str(), "{{server}}")),
            None => (code, line),
        })
        .collect();
    Ok((exit, all))
}

/// Compare the findings of the case's own code and the exit code with what the case expects.
fn check_findings(case: &Case, exit: Option<i32>, all: &[(String, String)]) -> Result<(), String> {
    let fail = failure(case);
    let actual: Vec<&str> = all
        .iter()
        .filter(|(code, _)| code == case.code.as_str())
        .map(|(_, line)| line.as_str())
        .collect();
    let others = || {
        let lines: Vec<&str> = all
            .iter()
            .filter(|(code, _)| code != case.code.as_str())
            .map(|(_, line)| line.as_str())
            .collect();
        if lines.is_empty() {
            String::new()
        } else {
            format!("\n  other findings:{}", indent(&lines))
        }
    };

    if !case.fails() {
        if actual.is_empty() && exit != Some(2) {
            return Ok(());
        }
        return Err(fail(format!(
            "expected no `{}` finding, exit {exit:?}\n  actual:{}{}",
            case.code,
            indent(&actual),
            others()
        )));
    }

    let text = fs::read_to_string(case.dir.join("expected.txt"))
        .map_err(|e| fail(format!("cannot read expected.txt: {e}")))?;
    let expected: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let want_exit = match expected_exit(&case.dir) {
        Some(exit) => exit,
        None if expected.iter().any(|l| l.starts_with("error ")) => 1,
        None => 0,
    };
    let mut wrong = Vec::new();
    if expected != actual {
        wrong.push(format!(
            "findings differ\n  expected:{}\n  actual:{}",
            indent(&expected),
            indent(&actual)
        ));
    }
    if exit != Some(want_exit) {
        wrong.push(format!("exit code {exit:?}, expected {want_exit}"));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(fail(format!("{}{}", wrong.join("\n  "), others())))
    }
}

/// The `command` of a case that checks skills indexes and marketplaces (`skill check`).
const SKILL_CHECK: &str = "skill check";

/// The subcommand a case runs: `online.json`'s `command`, else `validate`.
fn online_command(dir: &Path) -> String {
    fs::read_to_string(dir.join("online.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|spec| spec["command"].as_str().map(str::to_string))
        .unwrap_or_else(|| "validate".into())
}

/// The program `online.json`'s `needs` names, when it is not on PATH.
fn missing_program(dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join("online.json")).ok()?;
    let spec: Value = serde_json::from_str(&text).ok()?;
    let program = spec["needs"].as_str()?;
    (!acp_test_kit::on_path(program)).then(|| program.to_string())
}

/// `online.json`'s `exit`, when it names one.
fn expected_exit(dir: &Path) -> Option<i32> {
    let text = fs::read_to_string(dir.join("online.json")).ok()?;
    let spec: Value = serde_json::from_str(&text).ok()?;
    spec["exit"].as_i64().and_then(|e| i32::try_from(e).ok())
}

/// Replies with `body_path` get the bytes of that file of the copied registry.
fn load_bodies(routes: &mut Value, registry: &Path) -> std::io::Result<()> {
    let Some(routes) = routes.as_object_mut() else {
        return Ok(());
    };
    for replies in routes.values_mut() {
        let list = match replies {
            Value::Array(list) => list.iter_mut().collect::<Vec<_>>(),
            one => vec![one],
        };
        for reply in list {
            if let Some(path) = reply["body_path"].as_str() {
                let bytes = fs::read(registry.join(path))?;
                reply["body_hex"] = Value::String(acp_test_kit::hex(&bytes));
            }
        }
    }
    Ok(())
}

/// For a case with `online.json`: start its server, put the server's URL into the copied
/// files and add the online arguments to `command`.
fn online_case(
    dir: &Path,
    registry: &Path,
    command: &mut Command,
) -> std::io::Result<Option<(net_server::Server, String)>> {
    let Ok(text) = fs::read_to_string(dir.join("online.json")) else {
        return Ok(None);
    };
    let placeholder = "{{server}}";
    // Bind first so the URL is known; the routes may mention it (redirects, tarball URLs).
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    // `https`, as every rule requires: the test-only loopback switch fetches an https URL of
    // a loopback address over plain http, which is all the local server speaks.
    let base = format!("https://{}", listener.local_addr()?);
    let plain = format!("http://{}", listener.local_addr()?);
    let text = text.replace("{{server_http}}", &plain);
    let mut spec: Value = serde_json::from_str(&text.replace(placeholder, &base))
        .map_err(|e| std::io::Error::other(format!("online.json: {e}")))?;
    load_bodies(&mut spec["routes"], registry)?;
    let server =
        net_server::Server::start_with(listener, net_server::routes_from_json(&spec["routes"]));
    replace_in_files(registry, placeholder, &base)?;
    let args = spec["args"].as_array().cloned().unwrap_or_default();
    command
        .args(args.iter().filter_map(Value::as_str))
        .env("ACP_REGISTRY_TEST_ALLOW_LOOPBACK", "1");
    for (key, value) in spec["env"].as_object().into_iter().flatten() {
        command.env(key, value.as_str().unwrap_or_default());
    }
    if spec["command"] != "build" && spec["command"] != SKILL_CHECK {
        command.arg("--no-cache");
    }
    Ok(Some((server, base)))
}

/// For a case about a base revision (`_base/` or `git.json`, see the module's doc): commit
/// the base to a fresh repository in `registry`, leave the case's changes in the working tree
/// and add the arguments.
fn git_case(dir: &Path, registry: &Path, command: &mut Command) -> std::io::Result<()> {
    let spec: Option<Value> = match fs::read_to_string(dir.join("git.json")) {
        Ok(text) => Some(
            serde_json::from_str(&text)
                .map_err(|e| std::io::Error::other(format!("git.json: {e}")))?,
        ),
        Err(_) => None,
    };
    let base = registry.join("_base");
    let has_base = base.is_dir();
    if spec.is_none() && !has_base {
        return Ok(());
    }
    let current = registry.with_file_name("current");
    if has_base {
        fs::rename(registry, &current)?;
        fs::rename(current.join("_base"), registry)?;
    }
    acp_test_kit::git::init_base(registry)?;
    if has_base {
        replace_work_tree(registry, &current)?;
    }
    let spec = spec.unwrap_or_default();
    apply_git_edits(&spec, registry)?;
    match spec["args"].as_array() {
        Some(args) => command.args(args.iter().filter_map(Value::as_str)),
        None => command.args(["--changed-since", "HEAD"]),
    };
    Ok(())
}

/// Replace everything of the work tree `registry` but `.git` with the files of `from`.
fn replace_work_tree(registry: &Path, from: &Path) -> std::io::Result<()> {
    for entry in fs::read_dir(registry)? {
        let entry = entry?;
        if entry.file_name() != ".git" {
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                fs::remove_dir_all(path)?;
            } else {
                fs::remove_file(path)?;
            }
        }
    }
    copy_dir(from, registry, false)
}

/// `git.json`'s `after` files and `replace` edits, made in `registry`.
fn apply_git_edits(spec: &Value, registry: &Path) -> std::io::Result<()> {
    for (path, text) in spec["after"].as_object().into_iter().flatten() {
        fs::write(registry.join(path), text.as_str().unwrap_or_default())?;
    }
    for (path, edit) in spec["replace"].as_object().into_iter().flatten() {
        let (Some(old), Some(new)) = (edit[0].as_str(), edit[1].as_str()) else {
            return Err(std::io::Error::other("git.json: replace takes [old, new]"));
        };
        let text = fs::read_to_string(registry.join(path))?;
        if !text.contains(old) {
            return Err(std::io::Error::other(format!(
                "git.json: `{old}` is not in {path}"
            )));
        }
        fs::write(registry.join(path), text.replace(old, new))?;
    }
    Ok(())
}

fn replace_in_files(dir: &Path, from: &str, to: &str) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            replace_in_files(&path, from, to)?;
        } else if let Ok(text) = fs::read_to_string(&path) {
            if text.contains(from) {
                fs::write(&path, text.replace(from, to))?;
            }
        }
    }
    Ok(())
}

/// `(code, "<severity> <code> <file>[:<line>:<col>]")` for one JSON finding.
fn finding_line(finding: &Finding) -> (String, String) {
    let line = format!("{} {} {}", finding.severity, finding.code, finding.place());
    (finding.code.clone(), line)
}

fn indent(lines: &[&str]) -> String {
    if lines.is_empty() {
        return " (none)".into();
    }
    lines.iter().flat_map(|l| ["\n    ", *l]).collect()
}

/// Copy a case folder (without its `expected.txt` and `online.json`) to `to`.
fn copy_case(from: &Path, to: &Path) -> std::io::Result<()> {
    copy_dir(from, to, true)
}

fn copy_dir(from: &Path, to: &Path, top: bool) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if top
            && ["expected.txt", "online.json", "git.json", NO_ICON]
                .contains(&&*name.to_string_lossy())
        {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target, false)?;
        } else {
            fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// Inputs written at test time, keyed by code and case name. `root` is the copied registry;
/// every generated case has one entry, `example-agent/`.
///
/// - `file-link/fail`: `icon.svg` is a link to `../common-icon.svg`, inside the registry
///   (links are refused wherever they point; git could store them, but generated ones
///   survive every checkout and copy, including on Windows).
/// - `file-link/fail-outside`: `agent.json` is moved out of the registry and linked back.
/// - `file-link/fail-dangling`: `icon.svg` is a link to nothing.
/// - `file-link/fail-entry`: the root holds `linked-agent`, a link to `example-agent/`.
/// - `file-link/fail-skill`: `skill/example-agent/references/guide.md` is a link to the
///   entry's icon.
/// - `file-link/fail-skill-folder`: `skill` is a link to `../_skill-source`.
/// - `file-not-regular/fail`: `README.md` is a FIFO; `fail-config`: `acp-registry.jsonc`
///   is one (a FIFO cannot be committed; reading one must not block).
/// - `file-too-large/{fail,pass}`: `icon.svg` of 32 KiB + 1 byte / exactly 32 KiB (the limit
///   is inclusive), so no large file is committed.
/// - `skill-too-large/{fail,pass}`: `skill/` padded to 1 MiB + 1 byte / exactly 1 MiB (in
///   the skill's folder, `skill/example-agent/assets/`).
/// - `archive-unsafe/{fail,pass}`: `_archives/agent.tar.gz` holding the test agent as
///   `../escaped-agent` / `bin/acp-agent` (a hostile archive is better built than committed).
fn generate(code: &str, case: &str, root: &Path) -> std::io::Result<()> {
    let entry = root.join("example-agent");
    match (code, case) {
        ("file-link", "fail") => symlink("../common-icon.svg", &entry.join("icon.svg")),
        ("file-link", "fail-outside") => {
            let outside = root.with_file_name("outside-agent.json");
            fs::rename(entry.join("agent.json"), &outside)?;
            symlink(&outside, &entry.join("agent.json"))
        }
        ("file-link", "fail-dangling") => symlink("missing-icon.svg", &entry.join("icon.svg")),
        ("file-link", "fail-entry") => symlink("example-agent", &root.join("linked-agent")),
        ("file-link", "fail-skill") => {
            fs::create_dir_all(entry.join("skill/example-agent/references"))?;
            symlink(
                "../../../icon.svg",
                &entry.join("skill/example-agent/references/guide.md"),
            )
        }
        ("file-link", "fail-skill-folder") => symlink("../_skill-source", &entry.join("skill")),
        ("file-not-regular", "fail") => fifo(&entry.join("README.md")),
        ("file-not-regular", "fail-config") => fifo(&root.join("acp-registry.jsonc")),
        ("file-too-large", "fail") => write_icon_of_size(&entry.join("icon.svg"), ICON_LIMIT + 1),
        ("file-too-large", "pass") => write_icon_of_size(&entry.join("icon.svg"), ICON_LIMIT),
        ("skill-too-large", "fail") => {
            pad_folder(&entry.join("skill/example-agent"), SKILL_LIMIT + 1)
        }
        ("skill-too-large", "pass") => pad_folder(&entry.join("skill/example-agent"), SKILL_LIMIT),
        ("archive-unsafe", "fail") => write_tar_gz(
            &root.join("_archives/agent.tar.gz"),
            "../escaped-agent",
            root,
        ),
        ("archive-unsafe", "pass") => {
            write_tar_gz(&root.join("_archives/agent.tar.gz"), "bin/acp-agent", root)
        }
        ("agent-python-version", "fail") => write_wheel(root, "acp-future-agent", Some(">=3.99")),
        ("agent-python-version", "pass") => write_wheel(root, "acp-future-agent", Some(">=3.8")),
        _ => Ok(()),
    }
}

/// A wheel of the test agent as `_index/<file>` (see `acp_test_kit::wheel::wheel`).
fn write_wheel(root: &Path, name: &str, requires_python: Option<&str>) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let (file, bytes) = acp_test_kit::wheel::wheel(name, "1.0.0", requires_python);
        fs::create_dir_all(root.join("_index"))?;
        fs::write(root.join("_index").join(file), bytes)
    }
    #[cfg(not(unix))]
    {
        let _ = (root, name, requires_python);
        Ok(())
    }
}

/// A `.tar.gz` at `path` holding the test agent under the entry name `name` (written into
/// the raw header, since the tar crate refuses `..` itself).
fn write_tar_gz(path: &Path, name: &str, root: &Path) -> std::io::Result<()> {
    let script = fs::read(root.join("_agents/acp-agent"))?;
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut header = tar::Header::new_gnu();
    header.set_size(script.len() as u64);
    header.set_mode(0o755);
    header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    header.set_cksum();
    builder.append(&header, script.as_slice())?;
    fs::create_dir_all(path.parent().expect("a folder"))?;
    fs::write(path, builder.into_inner()?.finish()?)
}

/// A valid 16x16 currentColor icon of exactly `size` bytes (padded with whitespace).
fn write_icon_of_size(path: &Path, size: usize) -> std::io::Result<()> {
    let head = concat!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\" viewBox=\"0 0 16 16\">\n",
        "  <circle cx=\"8\" cy=\"8\" r=\"6\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.5\"/>\n",
    );
    let tail = "</svg>\n";
    let mut text = String::with_capacity(size);
    text.push_str(head);
    text.push_str(&" ".repeat(size - head.len() - tail.len()));
    text.push_str(tail);
    assert_eq!(text.len(), size);
    fs::write(path, text)
}

/// Add `assets/padding.bin` to `dir` so the folder totals exactly `total` bytes.
fn pad_folder(dir: &Path, total: usize) -> std::io::Result<()> {
    let existing = folder_size(dir)?;
    fs::create_dir_all(dir.join("assets"))?;
    fs::write(
        dir.join("assets/padding.bin"),
        vec![b'\n'; total - existing as usize],
    )
}

fn folder_size(dir: &Path) -> std::io::Result<u64> {
    let mut size = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            size += folder_size(&entry.path())?;
        } else if kind.is_file() {
            size += entry.metadata()?.len();
        }
    }
    Ok(size)
}
