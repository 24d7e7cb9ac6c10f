//! GitHub and pre-commit integration: the composite action's shell steps run here against a
//! fake release of the built binary, the README's snippets use what exists, the registry
//! workflow pins its actions and keeps secrets out of pull requests, and the pre-commit hooks
//! run as pre-commit runs them.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{acp_registry, copy_dir, public_sample, repo_root};
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

/// A release folder as the action expects it: the built binary in
/// `acp-registry-<target>.tar.gz` and `SHA256SUMS` (with `digest` in place of the real one when
/// given).
fn fake_release(dir: &Path, digest: Option<&str>) -> PathBuf {
    let (_, _, target) = runner_platform();
    let release = dir.join("release");
    let staging = dir.join("staging").join(format!("acp-registry-{target}"));
    std::fs::create_dir_all(&release).unwrap();
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::copy(
        env!("CARGO_BIN_EXE_acp-registry"),
        staging.join("acp-registry"),
    )
    .unwrap();
    let asset = format!("acp-registry-{target}.tar.gz");
    let status = Command::new("tar")
        .arg("-czf")
        .arg(release.join(&asset))
        .arg("-C")
        .arg(dir.join("staging"))
        .arg(format!("acp-registry-{target}"))
        .status()
        .unwrap();
    assert!(status.success());
    let real = format!(
        "{:x}",
        Sha256::digest(std::fs::read(release.join(&asset)).unwrap())
    );
    let sums = format!(
        "{}  {asset}\n{}  acp-registry-other.zip\n",
        digest.unwrap_or(&real),
        "0".repeat(64)
    );
    std::fs::write(release.join("SHA256SUMS"), sums).unwrap();
    release
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
/// `env` and `working-directory`; stops at the first failing step.
fn run_action(with: &[(String, String)], runner_temp: &Path) -> ActionRun {
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
            .env("PATH", [run.path_entries.join(":"), path].join(":"));
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

#[test]
fn composite_action_installs_a_checksummed_release_and_runs_the_readme_command() {
    let temp = tempfile::tempdir().unwrap();
    let release = fake_release(temp.path(), None);
    let registry = temp.path().join("registry-repo");
    copy_dir(&public_sample(), &registry);
    let mut with = readme_action_inputs();
    with.push((
        "download-url".into(),
        format!("file://{}", release.display()),
    ));
    with.push(("working-directory".into(), registry.display().to_string()));
    let runner_temp = temp.path().join("runner");
    std::fs::create_dir(&runner_temp).unwrap();
    let run = run_action(&with, &runner_temp);
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
    assert!(
        run.steps[0].2.contains("acp-registry 0.1.0"),
        "{}",
        run.steps[0].2
    );
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
}

#[test]
fn composite_action_refuses_a_release_whose_checksum_differs() {
    let temp = tempfile::tempdir().unwrap();
    let release = fake_release(temp.path(), Some(&"a".repeat(64)));
    let runner_temp = temp.path().join("runner");
    std::fs::create_dir(&runner_temp).unwrap();
    let with = [
        (
            "download-url".to_string(),
            format!("file://{}", release.display()),
        ),
        ("command".to_string(), "--version".to_string()),
    ];
    let run = run_action(&with, &runner_temp);
    assert_eq!(run.steps.len(), 1, "nothing runs after a failed install");
    let (_, code, log) = &run.steps[0];
    assert_ne!(*code, 0);
    assert!(log.contains("refusing to install"), "{log}");
    assert!(run.path_entries.is_empty());
    assert!(!run.outputs.contains_key("install.path"));
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
        "foo/skill/SKILL.md",
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
