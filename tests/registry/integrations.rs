//! GitHub, release and pre-commit integration: scripts/package.sh (what release.yml runs)
//! packages the built binaries, the composite action's steps install that release through
//! `file://` and refuse tampered assets, the release workflow, the action's runner mapping and
//! cargo-binstall's metadata agree on the archives, `cargo package` ships what the build needs,
//! the README's snippets use what exists, the registry workflow pins its actions and keeps
//! secrets out of pull requests, and the pre-commit hooks run as pre-commit runs them.
//!
//! Release checks: the script packages the debug binaries for the host target and the action
//! installs that folder through `file://` and runs `--version`; a one-byte change and a
//! `SHA256SUMS` without the asset are refused; URLs for the default, `latest` and a tag (a
//! recording `curl`); budgets refuse; every matrix target packaged twice gives the same bytes;
//! the workflow runs the script, attests its output folder and moves the tag last; the matrix
//! equals the action's runner mapping; each package's file list equals what its `src/` embeds;
//! `acp-collab`'s dependency tree holds no HTTP, TLS, schema, template, archive or tokio crate.

use crate::common;
use acp_test_kit::git::git;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{acp_registry, copy_dir, public_sample, repo_root, Run};
use sha2::{Digest, Sha256};
use yaml_rust2::{Yaml, YamlLoader};

fn yaml(path: &str) -> Yaml {
    let text = std::fs::read_to_string(repo_root().join(path)).unwrap();
    YamlLoader::load_from_str(&text).unwrap().remove(0)
}

fn text(node: &Yaml) -> String {
    match node {
        Yaml::String(s) => s.clone(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Integer(i) => i.to_string(),
        other => panic!("not a scalar: {other:?}"),
    }
}

fn hash(node: &Yaml) -> Vec<(String, &Yaml)> {
    node.as_hash()
        .map(|h| h.iter().map(|(k, v)| (text(k), v)).collect())
        .unwrap_or_default()
}

/// The first fenced `yaml` block after the README heading `heading`.
fn readme_snippet(heading: &str) -> Yaml {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let section = readme
        .split_once(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README has no section {heading}"))
        .1;
    let block = section.split_once("```yaml\n").unwrap().1;
    let block = block.split_once("\n```").unwrap().0;
    YamlLoader::load_from_str(block).unwrap().remove(0)
}

/// `owner/name` of this repository, from Cargo.toml.
fn this_repository() -> String {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("repository = "))
        .unwrap();
    let url = line.split('"').nth(1).unwrap();
    url.trim_start_matches("https://github.com/").to_string()
}

/// The runner's names for this machine, as the action's install step reads them.
fn runner_platform() -> (&'static str, &'static str, &'static str) {
    match std::env::consts::ARCH {
        "x86_64" => ("Linux", "X64", "x86_64-unknown-linux-musl"),
        "aarch64" => ("Linux", "ARM64", "aarch64-unknown-linux-musl"),
        other => panic!("no runner architecture for {other}"),
    }
}

/// The one packaging script: release.yml runs it, and so do these tests.
const PACKAGE_SCRIPT: &str = "scripts/package.sh";

/// Budgets far above debug builds (the real ones are for stripped release builds).
const DEBUG_BUDGETS: [&str; 4] = [
    "--max-collab-bytes",
    "4000000000",
    "--max-registry-bytes",
    "4000000000",
];

/// Run scripts/package.sh for `target` with the executables in `bin_dir`, the registry copy
/// `registry` (made from the project's registry/ when missing) and the debug acp-registry as
/// pack's tool, into `out`; `extra` are more options.
fn package(target: &str, bin_dir: &Path, registry: &Path, out: &Path, extra: &[&str]) -> Run {
    if !registry.exists() {
        copy_dir(&repo_root().join("registry"), registry);
    }
    Command::new("bash")
        .arg(repo_root().join(PACKAGE_SCRIPT))
        .args(["--target", target, "--version", env!("CARGO_PKG_VERSION")])
        .arg("--bin-dir")
        .arg(bin_dir)
        .arg("--registry")
        .arg(registry)
        .arg("--tool")
        .arg(crate::REGISTRY)
        .arg("--out")
        .arg(out)
        .args(extra)
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("ACP_PACKAGE_MAX_COLLAB_BYTES")
        .env_remove("ACP_PACKAGE_MAX_REGISTRY_BYTES")
        .output()
        .unwrap()
        .into()
}

/// The release folder of this host's runner target, packaged once from the debug binaries
/// (they are large: every test that needs the real binaries shares this folder, read-only).
fn host_release() -> &'static Path {
    static RELEASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    RELEASE.get_or_init(|| {
        let (_, _, target) = runner_platform();
        let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("integrations-host-release");
        if work.exists() {
            std::fs::remove_dir_all(&work).unwrap();
        }
        let bin_dir = Path::new(crate::REGISTRY).parent().unwrap();
        assert_eq!(Path::new(crate::collab()).parent(), Some(bin_dir));
        let out = work.join("release");
        let run = package(
            target,
            bin_dir,
            &work.join("registry"),
            &out,
            &DEBUG_BUDGETS,
        );
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        out
    })
}

/// A copy of the host release, to change.
fn host_release_copy(dir: &Path) -> PathBuf {
    let copy = dir.join("release");
    copy_dir(host_release(), &copy);
    copy
}

/// Tiny stand-ins for both executables of `target` (packaging does not run them).
fn fake_bins(dir: &Path, target: &str) -> PathBuf {
    let exe = if target.contains("-windows-") {
        ".exe"
    } else {
        ""
    };
    let bin_dir = dir.join(format!("bin-{target}"));
    std::fs::create_dir_all(&bin_dir).unwrap();
    for bin in ["acp-registry", "acp-collab"] {
        std::fs::write(
            bin_dir.join(format!("{bin}{exe}")),
            format!("#!/bin/sh\necho {bin} {target}\n"),
        )
        .unwrap();
    }
    bin_dir
}

/// What running the action's steps did.
struct ActionRun {
    /// (step name, exit code, stdout + stderr) of each step run.
    steps: Vec<(String, i32, String)>,
    outputs: BTreeMap<String, String>,
    path_entries: Vec<String>,
}

/// `${{ … }}` of the action, evaluated as GitHub does for the few forms action.yml uses.
fn evaluate(
    template: &str,
    inputs: &BTreeMap<String, String>,
    outputs: &BTreeMap<String, String>,
) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some((before, after)) = rest.split_once("${{") {
        out.push_str(before);
        let (expr, tail) = after.split_once("}}").unwrap();
        out.push_str(&value_of(expr.trim(), inputs, outputs));
        rest = tail;
    }
    out + rest
}

fn value_of(
    expr: &str,
    inputs: &BTreeMap<String, String>,
    outputs: &BTreeMap<String, String>,
) -> String {
    if let Some(name) = expr.strip_prefix("inputs.") {
        return inputs.get(name).cloned().unwrap_or_default();
    }
    if let Some(rest) = expr.strip_prefix("steps.") {
        let (step, name) = rest.split_once(".outputs.").unwrap();
        return outputs
            .get(&format!("{step}.{name}"))
            .cloned()
            .unwrap_or_default();
    }
    match expr {
        "github.action_path" => repo_root().display().to_string(),
        other => panic!("action.yml uses an expression this test does not know: {other}"),
    }
}

/// `if:` of a step: the action uses only `inputs.NAME != ''`.
fn condition(expr: &str, inputs: &BTreeMap<String, String>) -> bool {
    let name = expr
        .strip_prefix("inputs.")
        .and_then(|e| e.strip_suffix(" != ''"))
        .unwrap_or_else(|| panic!("unknown condition {expr}"));
    !inputs.get(name).cloned().unwrap_or_default().is_empty()
}

/// Run the composite action's steps with `with` as inputs (defaults from action.yml), as a
/// runner would: bash with `-eo pipefail`, `GITHUB_OUTPUT`/`GITHUB_PATH` files, each step's
/// `env` and `working-directory`; stops at the first failing step. `path_first` comes before
/// the test's PATH.
fn run_action(with: &[(String, String)], runner_temp: &Path, path_first: &[&Path]) -> ActionRun {
    let action = yaml("action.yml");
    let mut inputs: BTreeMap<String, String> = hash(&action["inputs"])
        .into_iter()
        .map(|(name, spec)| (name, spec["default"].as_str().unwrap_or("").to_string()))
        .collect();
    for (name, value) in with {
        assert!(
            inputs.contains_key(name),
            "action.yml has no input `{name}`"
        );
        inputs.insert(name.clone(), value.clone());
    }
    assert_eq!(text(&action["runs"]["using"]), "composite");
    let (os, arch, _) = runner_platform();
    let github_path = runner_temp.join("github_path");
    std::fs::write(&github_path, "").unwrap();
    let mut run = ActionRun {
        steps: Vec::new(),
        outputs: BTreeMap::new(),
        path_entries: Vec::new(),
    };
    for step in action["runs"]["steps"].as_vec().unwrap() {
        let name = text(&step["name"]);
        if let Some(expr) = step["if"].as_str() {
            if !condition(expr, &inputs) {
                continue;
            }
        }
        assert_eq!(step["shell"].as_str(), Some("bash"), "{name}");
        let script = runner_temp.join("step.sh");
        std::fs::write(
            &script,
            evaluate(step["run"].as_str().unwrap(), &inputs, &run.outputs),
        )
        .unwrap();
        let output_file = runner_temp.join("github_output");
        std::fs::write(&output_file, "").unwrap();
        let cwd = step["working-directory"].as_str().map_or_else(
            || runner_temp.to_path_buf(),
            |dir| PathBuf::from(evaluate(dir, &inputs, &run.outputs)),
        );
        let path = std::env::var("PATH").unwrap();
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .current_dir(cwd)
            .env("RUNNER_OS", os)
            .env("RUNNER_ARCH", arch)
            .env("RUNNER_TEMP", runner_temp)
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_PATH", &github_path)
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env("PATH", path_with(&run.path_entries, path_first, &path));
        for (key, value) in hash(&step["env"]) {
            command.env(key, evaluate(&text(value), &inputs, &run.outputs));
        }
        let output = command.output().unwrap();
        let code = output.status.code().unwrap_or(-1);
        let log = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        if let Some(id) = step["id"].as_str() {
            for line in std::fs::read_to_string(&output_file).unwrap().lines() {
                let (key, value) = line.split_once('=').unwrap();
                run.outputs.insert(format!("{id}.{key}"), value.to_string());
            }
        }
        run.path_entries = std::fs::read_to_string(&github_path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        run.steps.push((name, code, log));
        if code != 0 {
            break;
        }
    }
    run
}

/// PATH for a step: what the action added, then `first`, then `rest`.
fn path_with(added: &[String], first: &[&Path], rest: &str) -> String {
    added
        .iter()
        .cloned()
        .chain(first.iter().map(|p| p.display().to_string()))
        .chain([rest.to_string()])
        .collect::<Vec<_>>()
        .join(":")
}

/// The `with:` of the README's step that uses this repository's action.
fn readme_action_inputs() -> Vec<(String, String)> {
    let workflow = readme_snippet("Use in GitHub Actions");
    let prefix = format!("{}@", this_repository());
    let steps: Vec<&Yaml> = hash(&workflow["jobs"])
        .into_iter()
        .flat_map(|(_, job)| job["steps"].as_vec().unwrap().iter())
        .filter(|step| {
            step["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with(&prefix))
        })
        .collect();
    assert_eq!(steps.len(), 1, "the README shows one step using {prefix}");
    hash(&steps[0]["with"])
        .into_iter()
        .map(|(k, v)| (k, text(v)))
        .collect()
}

/// The runner's temporary folder of a test.
fn runner_temp(dir: &Path) -> PathBuf {
    let runner_temp = dir.join("runner");
    std::fs::create_dir(&runner_temp).unwrap();
    runner_temp
}

fn file_url(dir: &Path) -> (String, String) {
    ("download-url".into(), format!("file://{}", dir.display()))
}

#[test]
fn composite_action_installs_the_packaged_release_and_runs_the_readme_command() {
    let temp = tempfile::tempdir().unwrap();
    let registry = temp.path().join("registry-repo");
    copy_dir(&public_sample(), &registry);
    let mut with = readme_action_inputs();
    with.push(file_url(host_release()));
    with.push(("working-directory".into(), registry.display().to_string()));
    let runner_temp = runner_temp(temp.path());
    let run = run_action(&with, &runner_temp, &[]);
    let names: Vec<&str> = run.steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        names,
        ["Install acp-registry", "Run acp-registry"],
        "{:?}",
        run.steps
    );
    for (name, code, log) in &run.steps {
        assert_eq!(*code, 0, "{name}: {log}");
    }
    let version = format!("acp-registry {}", env!("CARGO_PKG_VERSION"));
    assert!(run.steps[0].2.contains(&version), "{}", run.steps[0].2);
    // `--format github` on the public sample: workflow commands, paths as named in the repo.
    let log = &run.steps[1].2;
    assert!(log.contains("::warning file="), "{log}");
    assert!(log.contains("errors,"), "{log}");
    let installed = PathBuf::from(&run.outputs["install.path"]);
    assert!(installed.starts_with(&runner_temp) && installed.is_file());
    assert_eq!(
        run.path_entries,
        [installed.parent().unwrap().display().to_string()]
    );
    let again = Command::new(&installed).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&again.stdout).trim(), version);
}

/// Run the action's install step against `release`; it must fail, installing nothing.
fn refused_install(release: &Path, runner_temp: &Path) -> String {
    let with = [file_url(release), ("command".into(), "--version".into())];
    let run = run_action(&with, runner_temp, &[]);
    assert_eq!(run.steps.len(), 1, "nothing runs after a failed install");
    let (_, code, log) = &run.steps[0];
    assert_ne!(*code, 0, "{log}");
    assert!(run.path_entries.is_empty());
    assert!(!run.outputs.contains_key("install.path"));
    log.clone()
}

#[test]
fn composite_action_refuses_an_archive_changed_by_one_byte() {
    let (_, _, target) = runner_platform();
    let temp = tempfile::tempdir().unwrap();
    let release = host_release_copy(temp.path());
    let archive = release.join(format!("acp-registry-{target}.tar.gz"));
    let mut bytes = std::fs::read(&archive).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&archive, bytes).unwrap();
    let log = refused_install(&release, &runner_temp(temp.path()));
    assert!(
        log.contains(&format!(
            "::error::acp-registry-{target}.tar.gz has sha256 "
        )) && log.contains("refusing to install it"),
        "{log}"
    );
}

#[test]
fn composite_action_refuses_a_release_whose_sha256sums_lists_no_such_asset() {
    let (_, _, target) = runner_platform();
    let temp = tempfile::tempdir().unwrap();
    let release = host_release_copy(temp.path());
    let sums = std::fs::read_to_string(release.join("SHA256SUMS")).unwrap();
    let asset = format!("acp-registry-{target}.tar.gz");
    let others: String = sums
        .lines()
        .filter(|line| !line.ends_with(&format!("  {asset}")))
        .flat_map(|line| [line, "\n"])
        .collect();
    assert_ne!(others, sums, "SHA256SUMS listed {asset}");
    std::fs::write(release.join("SHA256SUMS"), others).unwrap();
    let log = refused_install(&release, &runner_temp(temp.path()));
    assert!(
        log.contains(&format!("lists no {asset}: refusing to install it")),
        "{log}"
    );
}

/// A `curl` that records its arguments in `log` and answers 404, as GitHub does for an asset
/// of a release that does not exist.
fn curl_answering_404(dir: &Path, log: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let curl = bin.join("curl");
    std::fs::write(
        &curl,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nprintf 404\n\
             echo 'curl: (22) The requested URL returned error: 404' >&2\nexit 22\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&curl, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[test]
fn composite_action_downloads_the_release_of_its_own_version_by_default_else_latest_or_a_tag() {
    let repo = this_repository();
    let own = format!("v{}", env!("CARGO_PKG_VERSION"));
    let cases = [
        (
            "",
            format!("https://github.com/{repo}/releases/download/{own}"),
        ),
        (
            "latest",
            format!("https://github.com/{repo}/releases/latest/download"),
        ),
        (
            "v9.8.7",
            format!("https://github.com/{repo}/releases/download/v9.8.7"),
        ),
    ];
    for (version, base) in cases {
        let temp = tempfile::tempdir().unwrap();
        let log = temp.path().join("curl.log");
        let fake = curl_answering_404(temp.path(), &log);
        let with = [("version".to_string(), version.to_string())];
        let run = run_action(&with, &runner_temp(temp.path()), &[&fake]);
        let (_, code, output) = &run.steps[0];
        assert_ne!(*code, 0, "{output}");
        let calls = std::fs::read_to_string(&log).unwrap();
        let first = calls.lines().next().unwrap();
        assert!(
            first.contains("--proto =https,file --proto-redir =https")
                && first.ends_with(&format!(" {base}/SHA256SUMS")),
            "version {version:?}: {first}"
        );
        assert!(
            output.contains(&format!("::error::no release asset at {base}/SHA256SUMS"))
                && output.contains("use version: latest")
                && output.contains("or version: source"),
            "version {version:?}: {output}"
        );
    }
}

#[test]
fn composite_action_names_download_url_and_its_schemes_before_curl_runs() {
    for url in [
        "http://mirror.example/acp",
        "ftp://mirror.example/acp",
        "/srv/releases",
        "https://",
    ] {
        let temp = tempfile::tempdir().unwrap();
        let log = temp.path().join("curl.log");
        let fake = curl_answering_404(temp.path(), &log);
        let with = [("download-url".to_string(), url.to_string())];
        let run = run_action(&with, &runner_temp(temp.path()), &[&fake]);
        let (_, code, output) = &run.steps[0];
        assert_ne!(*code, 0, "{output}");
        assert!(
            output.contains(&format!(
                "::error::download-url: {url} is not an https:// or file:// URL"
            )),
            "{url}: {output}"
        );
        assert!(!log.exists(), "{url}: curl ran");
    }
}

/// `key = "value"` lines of the table `[header]` of Cargo.toml, if it has one.
fn cargo_toml_table(header: &str) -> Option<BTreeMap<String, String>> {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let body = manifest.split_once(&format!("\n[{header}]\n"))?.1;
    let table = body
        .lines()
        .take_while(|line| !line.starts_with('['))
        .filter_map(|line| line.split_once(" = "))
        .map(|(key, value)| (key.to_string(), value.trim_matches('"').to_string()))
        .collect();
    Some(table)
}

/// A `[package.metadata.binstall]` template expanded as cargo-binstall does.
fn binstall_expand(template: &str, target: &str, bin: &str) -> String {
    let exe = if target.contains("-windows-") {
        ".exe"
    } else {
        ""
    };
    template
        .replace(
            "{ repo }",
            &format!("https://github.com/{}", this_repository()),
        )
        .replace("{ version }", env!("CARGO_PKG_VERSION"))
        .replace("{ name }", env!("CARGO_PKG_NAME"))
        .replace("{ target }", target)
        .replace("{ bin }", bin)
        .replace("{ binary-ext }", exe)
}

/// (target, runner label) of release.yml's build matrix.
fn release_matrix() -> Vec<(String, String)> {
    let workflow = yaml(".github/workflows/release.yml");
    workflow["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|entry| (text(&entry["target"]), text(&entry["os"])))
        .collect()
}

/// (path, mode) of every entry of a tar.gz or zip, asserting the fixed metadata of a
/// deterministic archive (owner 0, time with `SOURCE_DATE_EPOCH` unset: 1970 for tar, 1980 for
/// zip).
fn deterministic_entries(archive: &Path) -> Vec<(String, u32)> {
    let file = std::fs::File::open(archive).unwrap();
    if archive.extension().is_some_and(|e| e == "zip") {
        let mut zip = zip::ZipArchive::new(file).unwrap();
        return (0..zip.len())
            .map(|i| {
                let entry = zip.by_index(i).unwrap();
                let time = entry.last_modified().unwrap();
                assert_eq!((time.year(), time.month(), time.day()), (1980, 1, 1));
                (
                    entry.name().unwrap().to_string(),
                    entry.unix_mode().unwrap() & 0o7777,
                )
            })
            .collect();
    }
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    tar.entries()
        .unwrap()
        .map(|entry| {
            let header = entry.unwrap().header().clone();
            assert_eq!(
                (
                    header.uid().unwrap(),
                    header.gid().unwrap(),
                    header.mtime().unwrap()
                ),
                (0, 0, 0)
            );
            let path = header.path().unwrap().display().to_string();
            (path, header.mode().unwrap())
        })
        .collect()
}

/// The files of a folder, by name.
fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|item| {
            let item = item.unwrap();
            let name = item.file_name().into_string().unwrap();
            (name, std::fs::read(item.path()).unwrap())
        })
        .collect()
}

/// The archive extension of `target`.
fn archive_ext(target: &str) -> &'static str {
    if target.contains("-windows-") {
        "zip"
    } else {
        "tar.gz"
    }
}

/// Package every target of release.yml's matrix (tiny executables) into `dir/release`, as the
/// release job does; returns the release folder and the registry copy `pack` edited.
fn package_every_target(dir: &Path) -> (PathBuf, PathBuf) {
    let out = dir.join("release");
    let registry = dir.join("registry");
    for (target, _) in &release_matrix() {
        let bins = fake_bins(dir, target);
        let run = package(target, &bins, &registry, &out, &[]);
        assert_eq!(run.code, 0, "{target}: {}{}", run.stdout, run.stderr);
        for (stem, budget) in [("acp-registry", 10_000_000), ("acp-collab", 3_000_000)] {
            let name = format!("{stem}-{target}.{}", archive_ext(target));
            let size = std::fs::metadata(out.join(&name)).unwrap().len();
            let line = format!("{name}: {size} bytes (budget {budget})");
            assert!(run.stdout.contains(&line), "{line}: {}", run.stdout);
        }
    }
    (out, registry)
}

#[test]
fn package_script_makes_every_release_target_deterministically_as_binstall_expects() {
    let temp = tempfile::tempdir().unwrap();
    let matrix = release_matrix();
    let releases = [
        package_every_target(&temp.path().join("first")),
        package_every_target(&temp.path().join("second")),
    ];
    let files = files_of(&releases[0].0);
    assert_eq!(
        files,
        files_of(&releases[1].0),
        "the same inputs, other bytes"
    );
    assert_eq!(files.len(), 4 * matrix.len() + 1, "{:?}", files.keys());
    // SHA256SUMS: every archive's .sha256 line, each the archive's digest.
    let mut lines: Vec<String> = Vec::new();
    for (name, bytes) in files.iter().filter(|(n, _)| n.ends_with(".sha256")) {
        let archive = name.strip_suffix(".sha256").unwrap();
        let line = format!("{:x}  {archive}\n", Sha256::digest(&files[archive]));
        assert_eq!(String::from_utf8_lossy(bytes), line);
        lines.push(line);
    }
    assert_eq!(
        String::from_utf8_lossy(&files["SHA256SUMS"]),
        lines.concat()
    );
    let binstall = cargo_toml_table("package.metadata.binstall").unwrap();
    let assets = format!(
        "https://github.com/{}/releases/download/v{}/",
        this_repository(),
        env!("CARGO_PKG_VERSION")
    );
    let agent = std::fs::read_to_string(
        releases[0]
            .1
            .join("agent-collaboration-protocol/agent.json"),
    )
    .unwrap();
    for (target, _) in &matrix {
        let windows = target.contains("-windows-");
        let overrides = cargo_toml_table(&format!("package.metadata.binstall.overrides.{target}"))
            .unwrap_or_default();
        let setting = |key: &str| overrides.get(key).unwrap_or(&binstall[key]).clone();
        assert_eq!(
            setting("pkg-fmt"),
            if windows { "zip" } else { "tgz" },
            "{target}"
        );
        let url = binstall_expand(&setting("pkg-url"), target, "");
        let file = url.strip_prefix(&assets).unwrap_or_else(|| panic!("{url}"));
        assert!(files.contains_key(file), "binstall downloads {url}");
        let entries = deterministic_entries(&releases[0].0.join(file));
        for bin in ["acp-registry", "acp-collab"] {
            let path = binstall_expand(&setting("bin-dir"), target, bin);
            assert!(
                entries.contains(&(path.clone(), 0o755)),
                "{path}: {entries:?}"
            );
        }
        // The entry's archive is the released asset, under its release URL.
        let collab = format!("acp-collab-{target}.{}", archive_ext(target));
        deterministic_entries(&releases[0].0.join(&collab));
        let digest = format!("{:x}", Sha256::digest(&files[&collab]));
        assert!(agent.contains(&format!("\"{assets}{collab}\"")), "{collab}");
        assert!(
            agent.contains(&format!("\"sha256\": \"{digest}\"")),
            "{collab}"
        );
    }
}

#[test]
fn package_script_refuses_archives_over_their_budgets() {
    let (_, _, target) = runner_platform();
    let temp = tempfile::tempdir().unwrap();
    let bins = fake_bins(temp.path(), target);
    let out = temp.path().join("small-budget");
    let run = package(
        target,
        &bins,
        &temp.path().join("registry"),
        &out,
        &["--max-registry-bytes", "100"],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let asset = format!("acp-registry-{target}.tar.gz");
    let refusal = regex::Regex::new(&format!(
        r"package.sh: {} is \d+ bytes, over its budget of 100 bytes",
        regex::escape(&asset)
    ))
    .unwrap();
    assert!(refusal.is_match(&run.stderr), "{}", run.stderr);
    assert!(!out.join(&asset).exists(), "an archive over budget stays");
    // The default budget of the entry's archive, 3,000,000 bytes, against an executable
    // that does not compress.
    let mut noise = vec![0; 3_100_000];
    fastrand::Rng::with_seed(19).fill(&mut noise);
    std::fs::write(bins.join("acp-collab"), noise).unwrap();
    let out = temp.path().join("default-budget");
    let run = package(target, &bins, &temp.path().join("registry"), &out, &[]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("(budget 10000000)"), "{}", run.stdout);
    let refusal = format!("acp-collab-{target}.tar.gz is ");
    assert!(
        run.stderr.contains(&refusal)
            && run
                .stderr
                .contains("bytes, over its budget of 3000000 bytes"),
        "{}",
        run.stderr
    );
}

#[test]
fn release_workflow_packages_with_the_script_the_tests_run_and_attests_every_asset() {
    let workflow = yaml(".github/workflows/release.yml");
    let steps = |job: &str| workflow["jobs"][job]["steps"].as_vec().unwrap().clone();
    let run_of = |step: &Yaml| step["run"].as_str().unwrap_or_default().to_string();
    for (job, spec) in hash(&workflow["jobs"]) {
        for step in spec["steps"].as_vec().unwrap() {
            // pack runs inside the script only: no packing written twice.
            assert!(!run_of(step).contains(" pack "), "{job}: {}", run_of(step));
        }
    }
    for job in ["release", "pull-request"] {
        assert!(
            steps(job)
                .iter()
                .any(|s| run_of(s).contains(&format!("{PACKAGE_SCRIPT} "))),
            "{job} does not run {PACKAGE_SCRIPT}"
        );
    }
    assert!(steps("build")
        .iter()
        .any(|s| run_of(s).starts_with("cargo build --profile dist ")));
    let release = steps("release");
    let find = |what: &dyn Fn(&Yaml) -> bool| release.iter().position(what).unwrap();
    let package = find(&|s| run_of(s).contains(PACKAGE_SCRIPT));
    let out = regex::Regex::new(r"--out (\S+)")
        .unwrap()
        .captures(&run_of(&release[package]))
        .unwrap()[1]
        .to_string();
    let attest = find(&|s| {
        s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/attest-build-provenance@"))
    });
    assert_eq!(
        text(&release[attest]["with"]["subject-path"]).trim(),
        format!("{out}/*"),
        "every asset is attested"
    );
    let upload = find(&|s| run_of(s).contains("gh release upload"));
    assert!(run_of(&release[upload]).contains(&format!(" {out}/*")));
    let major = find(&|s| run_of(s).contains("scripts/major-tag.sh"));
    assert!(
        package < attest && attest < upload && upload < major,
        "package, attest, publish, then move the major tag"
    );
}

#[test]
fn release_targets_are_exactly_the_targets_the_action_installs() {
    let script = std::fs::read_to_string(repo_root().join("scripts/install-action.sh")).unwrap();
    let mapping = regex::Regex::new(r"(?m)^\s*(\w+)/(\w+)\) target=([\w-]+) ;;$").unwrap();
    let action: BTreeMap<String, (String, String)> = mapping
        .captures_iter(&script)
        .map(|c| (c[3].to_string(), (c[1].to_string(), c[2].to_string())))
        .collect();
    let matrix = release_matrix();
    let built: Vec<&String> = matrix.iter().map(|(target, _)| target).collect();
    assert_eq!(action.keys().collect::<Vec<_>>(), {
        let mut sorted = built.clone();
        sorted.sort();
        sorted
    });
    for (target, label) in &matrix {
        let runner = match action[target].0.as_str() {
            "Linux" => "ubuntu-",
            "macOS" => "macos-",
            other => &format!("{}-", other.to_lowercase()),
        };
        assert!(label.starts_with(runner), "{target} is built on {label}");
    }
    let (os, arch, target) = runner_platform();
    assert_eq!(action[target], (os.to_string(), arch.to_string()));
}

/// What scripts/major-tag.sh prints for `release` given the repository's `tags`.
fn major_tag(release: &str, tags: &[&str]) -> (i32, String) {
    use std::io::Write;
    let mut child = Command::new("bash")
        .arg(repo_root().join("scripts/major-tag.sh"))
        .arg(release)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The script may refuse its argument before it reads the tags: a closed pipe is its answer.
    match stdin.write_all(tags.join("\n").as_bytes()) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let printed = String::from_utf8(output.stdout).unwrap();
    (output.status.code().unwrap(), printed.trim().to_string())
}

#[test]
fn the_major_tag_moves_to_the_highest_release_of_its_major_only() {
    let tags = ["v0", "v0.1.0", "v0.2.0", "v0.9.0", "v1", "v1.0.0"];
    assert_eq!(major_tag("v0.1.0", &[]), (0, "v0".into()));
    assert_eq!(major_tag("v0.10.0", &tags), (0, "v0".into()), "0.10 > 0.9");
    assert_eq!(
        major_tag("v0.1.1", &tags),
        (0, String::new()),
        "a fix of an older line"
    );
    assert_eq!(major_tag("v1.0.1", &tags), (0, "v1".into()));
    assert_eq!(major_tag("v2.0.0", &tags), (0, "v2".into()));
    assert_eq!(major_tag("0.1.0", &tags).0, 2);
}

/// `path` below `base`, `..` resolved without touching the disk.
fn lexical_join(base: &Path, path: &str) -> PathBuf {
    let mut joined = PathBuf::new();
    for part in base.join(path).components() {
        match part {
            std::path::Component::ParentDir => {
                joined.pop();
            }
            other => joined.push(other),
        }
    }
    joined
}

/// Every file below `dir` (relative to the repository root).
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for item in std::fs::read_dir(repo_root().join(dir)).unwrap() {
        let item = item.unwrap();
        let path = dir.join(item.file_name());
        if item.file_type().unwrap().is_dir() {
            found.extend(files_below(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn cargo_package_ships_every_file_the_build_embeds_and_no_test_data() {
    // (package, its folder, the documents it ships besides its sources)
    let packages: [(&str, &str, &[&str]); 4] = [
        (
            "acp-registry",
            "",
            &["LICENSE", "README.md", "CHANGELOG.md"],
        ),
        ("acp-registry-core", "crates/core", &[]),
        ("acp-registry-client", "crates/client", &["README.md"]),
        ("acp-collab", "crates/collab", &[]),
    ];
    for (package, dir, documents) in packages {
        package_ships_what_its_build_embeds(package, Path::new(dir), documents);
    }
}

/// `cargo package --list -p «package»` holds every source of `dir/src` and every file they
/// embed, plus the packaging files and `documents`, and nothing else.
fn package_ships_what_its_build_embeds(package: &str, dir: &Path, documents: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let run = Run::of(
        Command::new(cargo)
            .args([
                "package",
                "--list",
                "--allow-dirty",
                "--offline",
                "-p",
                package,
            ])
            .current_dir(repo_root()),
    );
    run.assert_ok();
    let listed: std::collections::BTreeSet<String> =
        run.stdout.lines().map(str::to_string).collect();
    let include =
        regex::Regex::new(r#"include_(?:str|bytes)!\(\s*(concat!\(\s*)?"([^"]+)""#).unwrap();
    let sources = files_below(&dir.join("src"));
    let mut needed: Vec<PathBuf> = Vec::new();
    for source in &sources {
        needed.push(source.clone());
        let code = std::fs::read_to_string(repo_root().join(source)).unwrap();
        for found in include.captures_iter(&code) {
            let path = lexical_join(source.parent().unwrap(), &found[2]);
            if found.get(1).is_some() {
                // `concat!("folder/", $file)`: the whole folder.
                needed.extend(files_below(&path));
            } else {
                needed.push(path);
            }
        }
    }
    let needed: std::collections::BTreeSet<String> = needed
        .iter()
        .map(|p| {
            let inside = p
                .strip_prefix(dir)
                .unwrap_or_else(|_| panic!("{package} embeds {}, outside its folder", p.display()));
            inside.display().to_string()
        })
        .collect();
    for file in &needed {
        assert!(
            listed.contains(file),
            "{package} lacks {file}, which the build needs"
        );
    }
    let packaging = [
        ".cargo_vcs_info.json",
        "Cargo.toml",
        "Cargo.toml.orig",
        "Cargo.lock",
    ];
    for file in &listed {
        assert!(
            needed.contains(file)
                || packaging.contains(&file.as_str())
                || documents.contains(&file.as_str()),
            "{package} ships {file}, which the build does not need"
        );
    }
    for file in documents {
        assert!(listed.contains(*file), "{file}");
    }
}

/// `acp-collab` links none of the registry tool's heavy dependencies: no HTTP client, TLS,
/// JSON Schema, templates, archive formats or async runtime.
#[test]
fn acp_collab_depends_on_no_http_schema_template_or_archive_crate() {
    let forbidden = [
        "reqwest",
        "rustls",
        "hyper",
        "jsonschema",
        "minijinja",
        "tar",
        "zip",
        "flate2",
        "xz2",
        "bzip2",
        "tokio",
    ];
    assert_links_none("acp-collab", &forbidden);
}

/// The client library editors embed links only what installing and running needs: no JSON
/// Schema, templates, Markdown, site or manifest-parsing crates, no argument parser, no ACP
/// schema (it hands the agent's stdio to the caller).
#[test]
fn the_client_library_depends_on_no_schema_template_site_or_cli_crate() {
    let forbidden = [
        "jsonschema",
        "minijinja",
        "pulldown-cmark",
        "ammonia",
        "jsonc-parser",
        "saphyr",
        "roxmltree",
        "spdx",
        "annotate-snippets",
        "rayon",
        "indicatif",
        "clap",
        "agent-client-protocol-schema",
        "acp-registry",
    ];
    assert_links_none("acp-registry-client", &forbidden);
}

/// What editors read on docs.rs builds without a warning: every public item documented, no
/// broken intra-doc link (its own target folder, so the test build's lock is not contended).
#[test]
fn the_client_library_documents_without_warnings() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["doc", "-p", "acp-registry-client", "--no-deps", "--offline"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .env("CARGO_TARGET_DIR", repo_root().join("target/doc-check"))
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `cargo tree` of `package` (normal dependencies) holds the core and none of `forbidden`.
fn assert_links_none(package: &str, forbidden: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["tree", "-p", package, "-e", "normal", "--prefix", "none"])
        .args(["--offline", "--format", "{p}"])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).unwrap();
    let names: std::collections::BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert!(names.contains("acp-registry-core"), "{names:?}");
    let linked: Vec<&&str> = forbidden
        .iter()
        .filter(|name| names.contains(**name))
        .collect();
    assert!(linked.is_empty(), "{package} depends on {linked:?}");
}

#[test]
fn readme_action_snippet_gives_only_inputs_the_action_has() {
    let action = yaml("action.yml");
    let inputs: Vec<String> = hash(&action["inputs"])
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let with = readme_action_inputs();
    assert!(!with.is_empty());
    for (name, _) in &with {
        assert!(
            inputs.contains(name),
            "README passes `{name}`; inputs: {inputs:?}"
        );
    }
    for (name, spec) in hash(&action["inputs"]) {
        assert!(
            !spec["description"].is_badvalue(),
            "input {name} has no description"
        );
        if spec["required"].as_bool() == Some(true) {
            assert!(
                with.iter().any(|(k, _)| *k == name),
                "README omits required `{name}`"
            );
        }
    }
}

/// Every `uses:` of a workflow, by job.
fn uses_of(workflow: &Yaml) -> Vec<(String, String)> {
    hash(&workflow["jobs"])
        .into_iter()
        .flat_map(|(job, spec)| {
            spec["steps"]
                .as_vec()
                .into_iter()
                .flatten()
                .filter_map(|s| s["uses"].as_str())
                .map(move |u| (job.clone(), u.to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The registry workflows to hold to the same properties, by name: this repository's own and
/// the one `acp-registry init` writes for a registry repository (both layouts), with the
/// reference each uses for this repository's action.
fn registry_workflows() -> Vec<(String, String, String)> {
    let own = std::fs::read_to_string(repo_root().join(".github/workflows/registry.yml")).unwrap();
    let mut workflows = vec![(".github/workflows/registry.yml".into(), own, "./".into())];
    let published = format!("{}@v{}", this_repository(), env!("CARGO_PKG_VERSION"));
    for registry in ["registry", "."] {
        let dir = tempfile::tempdir().unwrap();
        let init = acp_registry(&["init", "--registry", registry], dir.path());
        assert_eq!(init.code, 0, "{}", init.stderr);
        let text =
            std::fs::read_to_string(dir.path().join(".github/workflows/registry.yml")).unwrap();
        workflows.push((
            format!("init --registry {registry}"),
            text,
            published.clone(),
        ));
    }
    workflows
}

fn parsed(text: &str) -> Yaml {
    YamlLoader::load_from_str(text).unwrap().remove(0)
}

#[test]
fn registry_workflow_pins_actions_by_commit_and_grants_least_privilege() {
    for (name, text, this_action) in registry_workflows() {
        let workflow = parsed(&text);
        assert!(
            workflow["permissions"]
                .as_hash()
                .is_some_and(yaml_rust2::yaml::Hash::is_empty),
            "{name}: the workflow grants nothing by default"
        );
        let uses = uses_of(&workflow);
        assert!(
            uses.iter().any(|(_, u)| *u == this_action),
            "{name}: {uses:?}"
        );
        for (job, uses) in uses {
            let pinned = uses.split_once('@').is_some_and(|(_, rev)| {
                rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit())
            });
            // This repository's action is the one exception: the checked-out commit, or the
            // release of the acp-registry that wrote the workflow.
            assert!(
                uses == this_action || pinned,
                "{name}: {job}: {uses} is not pinned by commit"
            );
        }
        for (job, spec) in hash(&workflow["jobs"]) {
            assert!(
                spec["permissions"].as_hash().is_some(),
                "{name}: {job} states its permissions"
            );
        }
    }
}

#[test]
fn registry_workflow_reads_secrets_only_in_jobs_that_never_run_for_pull_requests() {
    for (name, text, _) in registry_workflows() {
        let workflow = parsed(&text);
        let triggers: Vec<String> = hash(&workflow["on"]).into_iter().map(|(k, _)| k).collect();
        assert!(
            triggers.contains(&"pull_request".to_string()),
            "{name}: {triggers:?}"
        );
        // The one trigger that gives a fork's pull request the secrets.
        assert!(!triggers.contains(&"pull_request_target".to_string()));
        for (job, spec) in hash(&workflow["jobs"]) {
            let mut out = String::new();
            let mut emitter = yaml_rust2::YamlEmitter::new(&mut out);
            emitter.dump(spec).unwrap();
            if out.contains("secrets.") {
                let condition = spec["if"].as_str().unwrap_or_default();
                let excluded = condition.contains("github.event_name != 'pull_request'")
                    || (!condition.contains("pull_request")
                        && condition.contains("github.event_name =="));
                assert!(
                    excluded,
                    "{name}: {job} reads secrets but may run for pull requests: {condition}"
                );
            }
        }
    }
}

#[test]
fn registry_workflow_runs_only_commands_the_tool_documents() {
    let help = acp_registry(&["--help"], &repo_root()).stdout;
    for (name, text, _) in registry_workflows() {
        let used: std::collections::BTreeSet<&str> = text
            .split("acp-registry ")
            .skip(1)
            .filter_map(|rest| rest.split_whitespace().next())
            .filter(|word| word.chars().all(|c| c.is_ascii_lowercase()))
            .collect();
        assert!(
            used.contains("validate") && used.contains("build"),
            "{name}: {used:?}"
        );
        for command in used {
            assert!(
                help.contains(&format!("  {command} ")),
                "{name} runs `acp-registry {command}`"
            );
        }
    }
}

/// The hooks of `.pre-commit-hooks.yaml`, by id.
fn hooks() -> BTreeMap<String, Yaml> {
    yaml(".pre-commit-hooks.yaml")
        .as_vec()
        .unwrap()
        .iter()
        .map(|hook| (text(&hook["id"]), hook.clone()))
        .collect()
}

#[test]
fn pre_commit_hooks_offer_validate_and_fmt_check_for_registry_files() {
    let hooks = hooks();
    assert_eq!(
        hooks["acp-registry-validate"]["entry"].as_str(),
        Some("acp-registry validate")
    );
    assert_eq!(
        hooks["acp-registry-fmt"]["entry"].as_str(),
        Some("acp-registry fmt --check")
    );
    let files =
        regex::Regex::new(hooks["acp-registry-validate"]["files"].as_str().unwrap()).unwrap();
    for path in [
        "registry/foo/agent.json",
        "foo/icon-dark.svg",
        "foo/README.md",
        "foo/skill/foo/SKILL.md",
        "acp-registry.jsonc",
    ] {
        assert!(files.is_match(path), "{path}");
    }
    for path in ["src/main.rs", "foo/agent.json.bak", "foo/notes.txt"] {
        assert!(!files.is_match(path), "{path}");
    }
}

#[test]
fn init_pre_commit_config_uses_this_repositorys_hooks_at_this_release() {
    let hooks = hooks();
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(acp_registry(&["init"], dir.path()).code, 0);
    let config = std::fs::read_to_string(dir.path().join(".pre-commit-config.yaml")).unwrap();
    let repo = &parsed(&config)["repos"][0];
    assert_eq!(
        text(&repo["repo"]),
        format!("https://github.com/{}", this_repository())
    );
    assert_eq!(
        text(&repo["rev"]),
        format!("v{}", env!("CARGO_PKG_VERSION"))
    );
    let ids: Vec<String> = repo["hooks"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|h| text(&h["id"]))
        .collect();
    assert_eq!(ids, ["acp-registry-validate", "acp-registry-fmt"]);
    assert!(ids.iter().all(|id| hooks.contains_key(id)), "{ids:?}");
}

#[test]
fn readme_pre_commit_snippet_runs_as_pre_commit_runs_it() {
    let config = readme_snippet("Use with pre-commit");
    let repo = &config["repos"][0];
    assert_eq!(
        text(&repo["repo"]),
        format!("https://github.com/{}", this_repository())
    );
    let hooks = hooks();
    let help = acp_registry(&["--help"], &repo_root()).stdout;
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&public_sample(), dir.path());
    let mut ran = Vec::new();
    for hook in repo["hooks"].as_vec().unwrap() {
        let id = text(&hook["id"]);
        let spec = hooks.get(&id).unwrap_or_else(|| panic!("no hook {id}"));
        let entry = text(&spec["entry"]);
        let mut words: Vec<String> = entry.split_whitespace().skip(1).map(String::from).collect();
        // A hook whose command is still being built elsewhere is checked once it exists.
        if !help.contains(&format!("  {} ", words[0])) {
            continue;
        }
        words.extend(hook["args"].as_vec().into_iter().flatten().map(text));
        // pre-commit appends the staged files that match the hook's `files`, relative to the
        // repository root.
        let files = regex::Regex::new(text(&spec["files"]).as_str()).unwrap();
        words.extend(
            ["claude-acp/agent.json", "gemini/icon.svg"]
                .into_iter()
                .filter(|path| files.is_match(path))
                .map(String::from),
        );
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let run = acp_registry(&args, dir.path());
        assert_eq!(run.code, 0, "{id}: {}{}", run.stdout, run.stderr);
        ran.push((id, run.stdout));
    }
    let (id, stdout) = &ran[0];
    assert_eq!(id, "acp-registry-validate");
    assert!(stdout.contains("in 2 entries"), "{stdout}");
}

#[test]
fn registry_workflow_builds_with_the_last_good_registry_and_only_the_issue_job_writes_issues() {
    for (name, text, _) in registry_workflows() {
        let workflow = parsed(&text);
        let jobs = hash(&workflow["jobs"]);
        for (job, spec) in &jobs {
            let writes_issues = spec["permissions"]["issues"].as_str() == Some("write");
            assert_eq!(writes_issues, job == "held-back", "{name}: {job}");
        }
        let (_, held) = jobs.iter().find(|(job, _)| job == "held-back").unwrap();
        let permissions = hash(&held["permissions"]);
        assert_eq!(
            permissions.len(),
            1,
            "{name}: issues: write and nothing else"
        );
        let condition = held["if"].as_str().unwrap();
        assert!(
            condition.contains("github.event_name != 'pull_request'")
                && condition.contains("needs.publish.result == 'success'"),
            "{name}: {condition}"
        );
        assert_eq!(held["needs"][0].as_str(), Some("publish"), "{name}");
        let script = held["steps"][1]["run"].as_str().unwrap();
        for command in ["gh issue create", "gh issue edit", "gh issue close"] {
            assert!(script.contains(command), "{name}: {command}");
        }
        // No expression is expanded into the script: untrusted text only through the env.
        assert!(!script.contains("${{"), "{name}");
        let (_, publish) = jobs.iter().find(|(job, _)| job == "publish").unwrap();
        let steps = publish["steps"].as_vec().unwrap();
        let build = steps
            .iter()
            .find(|s| s["id"].as_str() == Some("build"))
            .unwrap()["run"]
            .as_str()
            .unwrap();
        assert!(
            build.contains("--last-good \"$previous\""),
            "{name}: {build}"
        );
        assert!(build.contains("\"$status\" -eq 3"), "{name}: {build}");
        let fetch = steps
            .iter()
            .filter_map(|s| s["run"].as_str())
            .find(|run| run.contains("/latest\" \"$RUNNER_TEMP/previous\""))
            .unwrap_or_else(|| panic!("{name}: the published registry is fetched"));
        assert!(fetch.contains("--exclude 'site/*'"), "{name}");
        assert_eq!(
            publish["outputs"]["held-back"].as_str(),
            Some("${{ steps.build.outputs.held-back }}"),
            "{name}"
        );
    }
}

/// A job of a parsed workflow, by id.
fn job<'a>(workflow: &'a Yaml, id: &str) -> &'a Yaml {
    let job = &workflow["jobs"][id];
    assert!(!job.is_badvalue(), "no job {id}");
    job
}

/// The `run:` script of the step of `job` with this `id`.
fn step_script(job: &Yaml, id: &str) -> String {
    job["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|s| s["id"].as_str() == Some(id))
        .and_then(|s| s["run"].as_str())
        .unwrap_or_else(|| panic!("no step {id}"))
        .to_string()
}

/// Runs a workflow script with bash as a runner would (`-e`, `GITHUB_OUTPUT` and
/// `GITHUB_STEP_SUMMARY` files, the built acp-registry first on PATH) in `dir`; the exit code
/// and the outputs it wrote.
fn run_script(
    script: &str,
    dir: &Path,
    env: &[(&str, &str)],
) -> (i32, BTreeMap<String, String>, String) {
    let scratch = tempfile::tempdir().unwrap();
    let (output, summary) = (
        scratch.path().join("output"),
        scratch.path().join("summary"),
    );
    let bin = Path::new(crate::REGISTRY).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = Command::new("bash")
        .args(["-e", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .status()
        .unwrap();
    let outputs = std::fs::read_to_string(&output)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let summary = std::fs::read_to_string(&summary).unwrap_or_default();
    (status.code().unwrap_or(-1), outputs, summary)
}

fn write_entries(registry: &Path, ids: impl IntoIterator<Item = String>, description: &str) {
    for id in ids {
        let folder = registry.join(&id);
        std::fs::create_dir_all(&folder).unwrap();
        let manifest = serde_json::json!({
            "id": id, "name": id, "version": "1.0.0", "description": description,
            "distribution": {"npx": {"package": format!("{id}@1.0.0")}},
        });
        std::fs::write(folder.join("agent.json"), manifest.to_string()).unwrap();
    }
}

/// The `strategy.matrix` a plan job's output gives: each shard `k/n` once, every entry in one.
fn shard_matrix(outputs: &BTreeMap<String, String>) -> Vec<(String, Vec<String>)> {
    let matrix: serde_json::Value = serde_json::from_str(&outputs["shards"]).unwrap();
    let include = matrix["include"].as_array().unwrap();
    include
        .iter()
        .enumerate()
        .map(|(k, shard)| {
            assert_eq!(shard["shard"], format!("{}/{}", k + 1, include.len()));
            let agents = shard["agents"].as_array().unwrap().iter();
            (
                shard["shard"].as_str().unwrap().to_string(),
                agents.map(|a| a.as_str().unwrap().to_string()).collect(),
            )
        })
        .collect()
}

/// A shard job's cache is its own, it launches its shard, and its shard's name is what the
/// artifacts, the cache key and the report use.
fn check_shard_steps(name: &str, shards: &str, shard_job: &Yaml) {
    let steps = shard_job["steps"].as_vec().unwrap();
    let cache = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/cache@"))
        })
        .unwrap();
    assert!(
        cache["with"]["key"]
            .as_str()
            .unwrap()
            .contains("${{ steps.shard.outputs.name }}"),
        "{name}: {shards}: a cache per shard"
    );
    let launch: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .filter(|r| r.contains("--shard \"$SHARD\""))
        .collect();
    assert_eq!(launch.len(), 1, "{name}: {shards}");
    // The shard's name, in artifact names, the cache key and the report's paths.
    let (code, outputs, _) = run_script(
        &step_script(shard_job, "shard"),
        Path::new("."),
        &[("SHARD", "2/3")],
    );
    assert_eq!(
        (code, outputs["name"].as_str()),
        (0, "shard-2-of-3"),
        "{name}"
    );
}

#[test]
fn registry_workflow_fans_verify_and_matrix_out_over_shards_each_with_its_timeout_and_cache() {
    for (name, text, _) in registry_workflows() {
        let workflow = parsed(&text);
        for (plan, shards, merge) in [
            ("verify-plan", "verify", "verify-report"),
            ("matrix-plan", "matrix-shard", "matrix"),
        ] {
            let (plan_job, shard_job, merge_job) = (
                job(&workflow, plan),
                job(&workflow, shards),
                job(&workflow, merge),
            );
            assert_eq!(
                plan_job["outputs"]["shards"].as_str(),
                Some("${{ steps.plan.outputs.shards }}"),
                "{name}: {plan}"
            );
            let strategy = &shard_job["strategy"];
            assert_eq!(
                strategy["fail-fast"].as_bool(),
                Some(false),
                "{name}: {shards}: one failure cancels nothing"
            );
            assert_eq!(
                strategy["matrix"].as_str(),
                Some(format!("${{{{ fromJSON(needs.{plan}.outputs.shards) }}}}").as_str()),
                "{name}: {shards}"
            );
            assert_eq!(
                shard_job["needs"][0].as_str(),
                Some(plan),
                "{name}: {shards}"
            );
            let needs: Vec<&str> = merge_job["needs"]
                .as_vec()
                .unwrap()
                .iter()
                .filter_map(Yaml::as_str)
                .collect();
            assert!(
                needs.contains(&shards),
                "{name}: {merge} waits for every shard"
            );
            let condition = merge_job["if"].as_str().unwrap();
            assert!(
                condition.contains("always()"),
                "{name}: {merge} runs whatever the shards did: {condition}"
            );
            for job in [plan_job, shard_job, merge_job] {
                assert!(
                    job["timeout-minutes"].as_i64().is_some_and(|m| m > 0),
                    "{name}: every job has its own timeout"
                );
            }
            check_shard_steps(&name, shards, shard_job);
        }
    }
}

#[test]
fn registry_workflow_plans_one_shard_for_a_few_changed_entries_and_more_for_many() {
    for (name, text, _) in registry_workflows() {
        let workflow = parsed(&text);
        let registry_dir = workflow["env"]["REGISTRY_DIR"]
            .as_str()
            .unwrap()
            .to_string();
        // The pull request's plan: a few changed entries are one shard, more fan out.
        let repo = tempfile::tempdir().unwrap();
        let registry = repo.path().join(&registry_dir);
        let ids = |range: std::ops::Range<usize>| range.map(|i| format!("agent-{i:02}"));
        write_entries(&registry, ids(0..12), "An agent.");
        acp_test_kit::git::init_base(repo.path()).unwrap();
        let base = git(repo.path(), &["rev-parse", "HEAD"]);
        let plan = step_script(job(&workflow, "verify-plan"), "plan");
        let env = [
            ("REGISTRY_DIR", registry_dir.as_str()),
            ("BASE", base.as_str()),
        ];
        write_entries(&registry, ids(3..5), "A changed agent.");
        let (code, outputs, _) = run_script(&plan, repo.path(), &env);
        assert_eq!(code, 0, "{name}");
        let few = shard_matrix(&outputs);
        assert_eq!(
            few,
            vec![("1/1".to_string(), ids(3..5).collect::<Vec<_>>())],
            "{name}"
        );
        write_entries(&registry, ids(5..11), "A changed agent.");
        write_entries(&registry, ids(20..22), "A new agent.");
        let (code, outputs, _) = run_script(&plan, repo.path(), &env);
        assert_eq!(code, 0, "{name}");
        let many = shard_matrix(&outputs);
        assert_eq!(
            many.len(),
            3,
            "{name}: 10 changed entries, 4 a shard: {many:?}"
        );
        let mut listed: Vec<String> = many.iter().flat_map(|(_, a)| a.clone()).collect();
        listed.sort();
        assert_eq!(
            listed,
            ids(3..11).chain(ids(20..22)).collect::<Vec<_>>(),
            "{name}"
        );
        // The nightly plan: every entry, 5 a shard.
        let nightly = step_script(job(&workflow, "matrix-plan"), "plan");
        let (code, outputs, _) = run_script(&nightly, repo.path(), &env[..1]);
        assert_eq!(
            (code, shard_matrix(&outputs).len()),
            (0, 3),
            "{name}: 14 entries"
        );
    }
}

#[test]
fn registry_workflow_report_names_a_failed_and_a_missing_shard_and_fails() {
    let shards: Vec<(String, Vec<String>)> = (1..=3)
        .map(|k| (format!("{k}/3"), vec![format!("agent-{k}")]))
        .collect();
    for (name, text, _) in registry_workflows() {
        let workflow = parsed(&text);
        // The report: one shard failed, one never reported; both are named, the run fails.
        let report = job(&workflow, "verify-report")["steps"][1]["run"]
            .as_str()
            .unwrap()
            .to_string();
        let results = tempfile::tempdir().unwrap();
        for (k, code) in [(1, "0"), (3, "1")] {
            let folder = results.path().join(format!("shards/shard-{k}-of-3"));
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("exit-code"), code).unwrap();
        }
        let (code, _, summary) = run_script(
            &report,
            results.path(),
            &[("SHARDS", &outputs_json(&shards))],
        );
        assert_eq!(code, 1, "{name}: {summary}");
        assert!(
            summary.contains("| 1/3 |") && summary.contains("| passed |"),
            "{name}: {summary}"
        );
        assert!(
            summary.contains("2/3") && summary.contains("missing"),
            "{name}: {summary}"
        );
        assert!(
            summary.contains("3/3") && summary.contains("failed"),
            "{name}: {summary}"
        );
    }
}

fn outputs_json(shards: &[(String, Vec<String>)]) -> String {
    let include: Vec<serde_json::Value> = shards
        .iter()
        .map(|(shard, agents)| serde_json::json!({"shard": shard, "agents": agents}))
        .collect();
    serde_json::json!({ "include": include }).to_string()
}
