//! `verify` and `matrix`: launch each distribution as an editor would and speak ACP to it.
//!
//! One job per agent and distribution kind, planned in registry order: a binary target is
//! fetched for this machine's platform ([`fetch`]), an npx or uvx package installed into the
//! run's package cache; the agent runs in a [`sandbox`] and is sent `initialize` ([`session`]); the
//! answer is judged ([`checks`]) and, for `matrix`, the session methods are probed
//! ([`matrix`]). Jobs run `jobs` at a time; results come back in plan order, so the report
//! is the same whatever finished first. Findings are ordinary [`Diagnostic`]s at the
//! distribution's place in `agent.json`, through the registry's policy.

pub(crate) mod checks;
pub(crate) mod fetch;
pub(crate) mod matrix;
pub(crate) mod sandbox;
pub(crate) mod session;
pub(crate) mod shard;

pub use shard::Shard;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::acp::methods::{self, OfferedAuth};
use crate::diagnostics::{Diagnostic, Report, Severity};
use crate::manifest::agent::AgentView;
use crate::manifest::distribution::{current_platform, Distribution, Kind};
use crate::net::{Client, NetConfig};
use crate::registry::Checked;
use crate::rules::{Code, ManifestDoc, Policy, Sink};
use session::{Agent, Answer};

/// TEST ONLY: the variable naming a package index on a loopback address that the uvx
/// installs and launches of `verify` and `matrix` use instead of uv's default index (the
/// sandbox's `UV_DEFAULT_INDEX`), so tests serve their own wheels. Nothing else changes.
pub(crate) const TEST_UV_INDEX_ENV: &str = "ACP_REGISTRY_TEST_UV_INDEX";

/// The value of [`TEST_UV_INDEX_ENV`] when it is an `http` or `https` URL of a loopback
/// address (`127.0.0.0/8`, `[::1]`, `localhost`); otherwise why it is refused.
pub(crate) fn test_uv_index(value: &str) -> Result<String, String> {
    let refused = |why: &str| {
        format!(
            "{TEST_UV_INDEX_ENV}={}: {why}; it is for tests only and names a package index on this machine, such as http://127.0.0.1:8080/simple",
            crate::diagnostics::escape::visible(value)
        )
    };
    let url = url::Url::parse(value).map_err(|e| refused(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refused("not an http or https URL"));
    }
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if !loopback || !url.username().is_empty() || url.password().is_some() {
        return Err(refused("not a loopback address without credentials"));
    }
    Ok(value.to_string())
}

/// Grace between SIGTERM and SIGKILL at the end of each agent.
const GRACE: Duration = Duration::from_secs(2);

/// What `verify` checks and how; built by the `verify` and `matrix` commands.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--agent`: only these ids (quarantined ones included).
    pub(crate) agents: Option<BTreeSet<String>>,
    /// `--type`: only these kinds.
    pub(crate) kinds: Option<BTreeSet<Kind>>,
    /// `--changed-since`: only these entry folders.
    pub(crate) changed: Option<BTreeSet<String>>,
    /// `--shard K/N`: only this part of what the filters above select.
    pub(crate) shard: Option<Shard>,
    pub(crate) jobs: usize,
    /// Deadline of each ACP request.
    pub(crate) timeout: Duration,
    /// Deadline of an npx or uvx install.
    pub(crate) install_timeout: Duration,
    pub(crate) require_tested: bool,
    pub(crate) net: NetConfig,
    /// Where downloaded archives are kept by digest; `None`: inside the run only.
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) archive_cap: u64,
    /// `--unpack-cap`: bytes one archive may unpack to.
    pub(crate) unpack_cap: u64,
    /// Auth types the policy accepts (empty: any).
    pub(crate) auth_types: BTreeSet<String>,
    /// Also open a session and probe the session methods (`matrix`).
    pub(crate) probe: bool,
    /// `matrix --changed-only`: rows to reuse when version and distribution are unchanged.
    pub(crate) reuse: Vec<matrix::Row>,
    /// TEST ONLY ([`TEST_UV_INDEX_ENV`]): a loopback package index for uv.
    pub(crate) uv_test_index: Option<String>,
    /// Nothing else in this process starts children during the run (the command line):
    /// every process reparented to it is an agent's and is killed. A library caller keeps
    /// false: only processes provably an agent's are.
    pub(crate) sole_parent: bool,
}

impl Options {
    /// The defaults with these network settings and this deadline per ACP request: what a
    /// library caller (or a test against a local server) needs to set.
    #[must_use]
    pub fn with_network(net: NetConfig, timeout: Duration) -> Self {
        Self {
            net,
            timeout,
            ..Self::default()
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            agents: None,
            kinds: None,
            changed: None,
            shard: None,
            jobs: 1,
            timeout: Duration::from_secs(60),
            install_timeout: Duration::from_secs(600),
            require_tested: false,
            net: NetConfig::default(),
            cache_dir: None,
            archive_cap: crate::online::DEFAULT_ARCHIVE_CAP_MIB * 1024 * 1024,
            unpack_cap: crate::fs::archive::DEFAULT_UNPACK_CAP_MIB * 1024 * 1024,
            auth_types: checks::DEFAULT_AUTH_TYPES
                .iter()
                .map(ToString::to_string)
                .collect(),
            probe: false,
            reuse: Vec::new(),
            uv_test_index: None,
            sole_parent: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Status {
    Passed,
    Failed,
    NotTested,
    Skipped,
    /// `matrix --changed-only`: the previous row was kept.
    Reused,
}

impl Status {
    /// The name `--format json` and `matrix.json` give it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::NotTested => "not-tested",
            Status::Skipped => "skipped",
            Status::Reused => "reused",
        }
    }
}

/// One agent and distribution: what happened, how long it took, what the agent answered.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AgentResult {
    pub(crate) id: String,
    pub(crate) version: String,
    pub(crate) distribution: Kind,
    pub(crate) platform: Option<String>,
    pub(crate) status: Status,
    /// Why it was skipped or not tested, or the first error.
    pub(crate) reason: Option<String>,
    pub(crate) fetch_seconds: Option<f64>,
    pub(crate) start_seconds: Option<f64>,
    pub(crate) total_seconds: f64,
    pub(crate) protocol_version: Option<u64>,
    pub(crate) auth_methods: Vec<OfferedAuth>,
    /// Optional session methods the `initialize` answer advertises.
    pub(crate) advertised: Vec<String>,
    /// The raw `initialize` result.
    pub(crate) initialize: Option<Value>,
    pub(crate) stderr_tail: Option<String>,
    /// Notifications the agent sent, and the methods of requests it sent us (each answered
    /// with a JSON-RPC error).
    pub(crate) notifications: usize,
    /// The first [`session::KEPT`] methods, and how many requests there were.
    pub(crate) agent_requests: Vec<String>,
    pub(crate) agent_requests_total: usize,
    /// The first [`session::KEPT`] protocol violations, and how many there were.
    pub(crate) protocol_violations: Vec<String>,
    pub(crate) protocol_violations_total: usize,
    /// `matrix`: `session/new` and each probe.
    pub(crate) probes: Vec<matrix::Probe>,
    /// `matrix`: the slash commands the agent announced (`available_commands_update`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) commands: Vec<String>,
    /// What isolation the launched agent got (none when it was not launched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) isolation: Option<sandbox::Isolation>,
    #[serde(skip)]
    pub(crate) fingerprint: String,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub(crate) results: Vec<AgentResult>,
    /// With `--shard`: which part of the selection this run was.
    pub(crate) part: Option<matrix::Part>,
    /// Every finding of the run, as `validate` reports them.
    pub report: Report,
}

/// Why a run could not take place.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The async runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[from] crate::net::NetError),
    /// The private folder of the run could not be created.
    #[error("cannot create the run folder {path}: {source}")]
    RunDir {
        /// The folder asked for.
        path: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

impl Kind {
    fn in_manifest(self, dist: &Distribution) -> bool {
        dist.has(self)
    }
}

/// What one job will do.
#[derive(Debug, Clone)]
enum Plan {
    Run,
    NotTested(String),
    Skipped(String),
    Reuse(Box<matrix::Row>),
}

#[derive(Clone)]
struct Job {
    id: String,
    version: String,
    kind: Kind,
    doc: Arc<ManifestDoc>,
    dist: Arc<Distribution>,
    plan: Plan,
    fingerprint: String,
}

/// Verify the checked registry's entries.
pub fn run(checked: &Checked, options: &Options) -> Result<Outcome, VerifyError> {
    let containment = sandbox::Containment::begin(options.sole_parent);
    let (jobs, part) = take_shard(plan(checked, options), options.shard);
    let run_dir = std::env::temp_dir().join(format!(
        "acp-registry-verify-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    sandbox::private_dir(&run_dir).map_err(|source| VerifyError::RunDir {
        path: run_dir.display().to_string(),
        source,
    })?;
    let result = run_jobs(jobs, options, &run_dir);
    // Everything that escaped its keeper ends before its folders go.
    drop(containment);
    remove_tree(&run_dir);
    let results = result?;
    let mut outcome = report(checked, results, options);
    outcome.part = part;
    Ok(outcome)
}

/// The ids of each shard when what `options` selects is split for `--list-shards`:
/// `ceil(M / size)` shards of the `M` selected entries, at most `max`, at least one.
#[must_use]
pub(crate) fn list_shards(
    checked: &Checked,
    options: &Options,
    max: usize,
    size: usize,
) -> Vec<(Shard, Vec<String>)> {
    let shards = shard::plan(&selected_ids(&plan(checked, options)), max, size);
    let count = shards.len();
    (1..=count)
        .filter_map(|k| Shard::new(k, count).ok())
        .zip(shards)
        .collect()
}

/// The ids the jobs are for, once each, in plan (registry) order.
fn selected_ids(jobs: &[Job]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for job in jobs {
        if ids.last() != Some(&job.id) {
            ids.push(job.id.clone());
        }
    }
    ids
}

/// With a shard, only its entries' jobs, and the [`matrix::Part`] that says which.
fn take_shard(jobs: Vec<Job>, shard: Option<Shard>) -> (Vec<Job>, Option<matrix::Part>) {
    use sha2::{Digest, Sha256};
    let Some(shard) = shard else {
        return (jobs, None);
    };
    let ids = selected_ids(&jobs);
    let lines: Vec<String> = jobs
        .iter()
        .map(|job| {
            let manifest = Sha256::digest(job.doc.root.to_json().to_string().as_bytes());
            format!(
                "{}\t{}\t{}\t{}\t{}",
                job.id,
                job.kind,
                job.version,
                crate::fs::digest::hex(&manifest),
                matches!(job.plan, Plan::Skipped(_))
            )
        })
        .collect();
    let selection = shard::selection_digest(lines.iter().map(String::as_str));
    let mine: BTreeSet<&str> = ids
        .iter()
        .zip(shard::assign(&ids, shard.count()))
        .filter(|(_, s)| *s + 1 == shard.index())
        .map(|(id, _)| id.as_str())
        .collect();
    let entries = ids
        .iter()
        .filter(|id| mine.contains(id.as_str()))
        .cloned()
        .collect();
    let part = matrix::Part {
        version: matrix::PART_VERSION,
        shard: shard.to_string(),
        selection,
        selected: ids.len(),
        entries,
    };
    let jobs = jobs
        .into_iter()
        .filter(|job| mine.contains(job.id.as_str()))
        .collect();
    (jobs, Some(part))
}

fn plan(checked: &Checked, options: &Options) -> Vec<Job> {
    let platform = current_platform();
    let path = std::env::var("PATH").ok();
    let mut jobs = Vec::new();
    for entry in &checked.entries {
        let Some(doc) = entry.manifest_doc() else {
            continue;
        };
        let id = entry.id().to_string();
        if options.agents.as_ref().is_some_and(|a| !a.contains(&id))
            || options
                .changed
                .as_ref()
                .is_some_and(|c| !c.contains(&entry.entry.name))
        {
            continue;
        }
        let quarantined = checked
            .quarantine
            .ids
            .get(&id)
            .filter(|_| options.agents.is_none());
        let dist = Arc::new(launch_model(&doc));
        let doc = Arc::new(doc.into_owned());
        let version = doc.root.get_str("version").unwrap_or_default().to_string();
        for kind in Kind::ALL {
            if !kind.in_manifest(&dist)
                || options.kinds.as_ref().is_some_and(|k| !k.contains(&kind))
            {
                continue;
            }
            let fingerprint = dist.fingerprint(kind);
            let reuse = options.reuse.iter().find(|r| {
                r.id == id
                    && r.distribution == kind
                    && r.version == version
                    && r.fingerprint == fingerprint
            });
            let plan = if let Some(reason) = quarantined {
                Plan::Skipped(format!("quarantined: {reason}"))
            } else if let Some(row) = reuse {
                Plan::Reuse(Box::new(row.clone()))
            } else {
                runnable(kind, &dist, platform, path.as_deref())
            };
            jobs.push(Job {
                id: id.clone(),
                version: version.clone(),
                kind,
                doc: doc.clone(),
                dist: dist.clone(),
                plan,
                fingerprint,
            });
        }
    }
    jobs
}

/// What `verify` launches of a manifest: the stable distribution of its typed view.
pub(crate) fn launch_model(doc: &ManifestDoc) -> Distribution {
    AgentView::from_node(&doc.root).distribution
}

/// Whether the launch model has a binary build for `platform`.
pub(crate) fn has_build_for(dist: &Distribution, platform: &str) -> bool {
    dist.target(platform).is_some()
}

/// Whether this machine can launch `kind`: a build for its platform, or the launcher.
fn runnable(kind: Kind, dist: &Distribution, platform: Option<&str>, path: Option<&str>) -> Plan {
    match kind {
        Kind::Binary => match platform {
            Some(p) if has_build_for(dist, p) => Plan::Run,
            Some(p) => Plan::NotTested(format!("no binary build for {p}")),
            None => Plan::NotTested("this machine's platform has no platform key".into()),
        },
        launcher => match fetch::on_path(launcher.as_str(), path) {
            Some(_) => Plan::Run,
            None => Plan::NotTested(format!("`{launcher}` is not installed on this machine")),
        },
    }
}

fn run_jobs(
    jobs: Vec<Job>,
    options: &Options,
    run_dir: &Path,
) -> Result<Vec<(Job, AgentResult, Vec<Diagnostic>)>, VerifyError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(VerifyError::Runtime)?;
    let client = Arc::new(Client::new(options.net.clone())?);
    let mut shared = sandbox::Shared::create(run_dir).map_err(|source| VerifyError::RunDir {
        path: run_dir.display().to_string(),
        source,
    })?;
    shared.uv_test_index.clone_from(&options.uv_test_index);
    let context = Arc::new(Context {
        client,
        shared,
        options: options.clone(),
        run_dir: run_dir.to_path_buf(),
    });
    let permits = Arc::new(tokio::sync::Semaphore::new(options.jobs.max(1)));
    runtime.block_on(async move {
        let handles: Vec<_> = jobs
            .into_iter()
            .enumerate()
            .map(|(n, job)| {
                let (context, permits) = (context.clone(), permits.clone());
                tokio::spawn(async move {
                    let _permit = permits.acquire_owned().await.expect("semaphore");
                    let (result, findings) = run_job(&context, &job, n).await;
                    (job, result, findings)
                })
            })
            .collect();
        let mut out = Vec::new();
        for handle in handles {
            out.push(handle.await.expect("verify job"));
        }
        Ok(out)
    })
}

struct Context {
    client: Arc<Client>,
    shared: sandbox::Shared,
    options: Options,
    run_dir: PathBuf,
}

fn blank(job: &Job, status: Status, reason: Option<String>) -> AgentResult {
    AgentResult {
        id: job.id.clone(),
        version: job.version.clone(),
        distribution: job.kind,
        platform: (job.kind == Kind::Binary)
            .then(|| current_platform().map(str::to_string))
            .flatten(),
        status,
        reason,
        fetch_seconds: None,
        start_seconds: None,
        total_seconds: 0.0,
        protocol_version: None,
        auth_methods: Vec::new(),
        advertised: Vec::new(),
        initialize: None,
        stderr_tail: None,
        notifications: 0,
        agent_requests: Vec::new(),
        agent_requests_total: 0,
        protocol_violations: Vec::new(),
        protocol_violations_total: 0,
        probes: Vec::new(),
        commands: Vec::new(),
        isolation: None,
        fingerprint: job.fingerprint.clone(),
    }
}

fn pointer_of(job: &Job) -> String {
    match job.kind {
        Kind::Binary => current_platform()
            .and_then(|p| job.dist.target(p))
            .map_or("/distribution/binary".into(), |t| t.pointer.clone()),
        kind => job
            .dist
            .package(kind)
            .map_or("/distribution".into(), |p| p.pointer.clone()),
    }
}

async fn run_job(context: &Context, job: &Job, n: usize) -> (AgentResult, Vec<Diagnostic>) {
    let doc = &job.doc;
    let pointer = pointer_of(job);
    match &job.plan {
        Plan::Skipped(reason) => {
            return (
                blank(job, Status::Skipped, Some(reason.clone())),
                Vec::new(),
            )
        }
        Plan::Reuse(row) => {
            let mut result = blank(
                job,
                Status::Reused,
                Some("unchanged since the last matrix".into()),
            );
            row.restore(&mut result);
            return (result, Vec::new());
        }
        Plan::NotTested(reason) => {
            let finding = doc.at(
                Code::AgentNotTested,
                &pointer,
                format!("{} not tested: {reason}", job.kind),
            );
            return (
                blank(job, Status::NotTested, Some(reason.clone())),
                vec![finding],
            );
        }
        Plan::Run => {}
    }
    let started = Instant::now();
    let mut result = blank(job, Status::Passed, None);
    let mut findings = Vec::new();
    let dir = context
        .run_dir
        .join(format!("{n:04}-{}-{}", job.id, job.kind));
    launch_and_check(context, job, &dir, &pointer, &mut result, &mut findings).await;
    result.total_seconds = started.elapsed().as_secs_f64();
    (result, findings)
}

/// Fetch, start, `initialize`, judge, probe; findings pushed as they arise.
async fn launch_and_check(
    context: &Context,
    job: &Job,
    dir: &Path,
    pointer: &str,
    result: &mut AgentResult,
    findings: &mut Vec<Diagnostic>,
) {
    let doc = &job.doc;
    let sandbox = match sandbox::private_dirs(dir)
        .and_then(|()| sandbox::Sandbox::create(&dir.join("sandbox")))
    {
        Ok(s) => s,
        Err(e) => {
            findings.push(doc.at(
                Code::AgentLaunch,
                pointer,
                format!("cannot create the sandbox: {e}"),
            ));
            return;
        }
    };
    let ready = match prepare(context, job, dir, &sandbox).await {
        Ok(ready) => ready,
        Err(finding) => {
            findings.push(*finding);
            return;
        }
    };
    result.fetch_seconds = Some(ready.fetch_seconds);
    let env = sandbox.environment(&context.shared, &env_of(job));
    let begun = Instant::now();
    let confinement = sandbox.confinement(&context.shared);
    let spawned = Agent::spawn(
        &ready.program,
        &ready.args,
        &env,
        &sandbox.workspace,
        &confinement,
    );
    let mut agent = match spawned {
        Ok(agent) => agent,
        Err(e) => {
            findings.push(doc.at(
                Code::AgentLaunch,
                pointer,
                format!("cannot start `{}`: {e}", ready.program.display()),
            ));
            return;
        }
    };
    result.isolation = Some(agent.isolation);
    let params = methods::initialize_params("acp-registry", env!("CARGO_PKG_VERSION"));
    let answer = agent
        .request("initialize", params, context.options.timeout)
        .await;
    result.start_seconds = Some(begun.elapsed().as_secs_f64());
    judge(context, job, pointer, &answer, result, findings);
    if context.options.probe && matches!(answer, Answer::Result(_)) {
        let loads = result.advertised.iter().any(|m| m == "session/load");
        result.probes = matrix::probe(
            &mut agent,
            &sandbox.workspace,
            context.options.timeout,
            loads,
        )
        .await;
    }
    let record = agent.record();
    protocol_findings(doc, pointer, &record, findings);
    result.notifications = record.notifications;
    result.commands = record.commands.unwrap_or_default();
    result.agent_requests = record.agent_requests;
    result.agent_requests_total = record.agent_requests_total;
    result.protocol_violations = record.violations;
    result.protocol_violations_total = record.violations_total;
    let tail = agent.stderr_tail();
    if !tail.trim().is_empty() {
        with_stderr(findings, &tail);
    }
    result.stderr_tail = (!tail.is_empty()).then_some(tail);
    agent.shutdown(&sandbox.token, GRACE).await;
}

/// Add the end of the agent's stderr to launch and timeout findings: usually the reason.
fn with_stderr(findings: &mut [Diagnostic], tail: &str) {
    const SHOWN: usize = 300;
    let flat = tail.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = flat
        .char_indices()
        .rev()
        .nth(SHOWN - 1)
        .map_or(0, |(i, _)| i);
    let end = &flat[start..];
    for finding in findings.iter_mut() {
        if finding.code == Code::AgentLaunch || finding.code == Code::AgentTimeout {
            finding.message = format!(
                "{}; its stderr ends: {}{end}",
                finding.message,
                if start > 0 { "…" } else { "" }
            );
        }
    }
}

fn env_of(job: &Job) -> BTreeMap<String, String> {
    match job.kind {
        Kind::Binary => current_platform()
            .and_then(|p| job.dist.target(p))
            .map(|t| t.env.clone())
            .unwrap_or_default(),
        kind => job
            .dist
            .package(kind)
            .map(|p| p.env.clone())
            .unwrap_or_default(),
    }
}

/// The program to run, fetched; or the finding saying why not.
async fn prepare(
    context: &Context,
    job: &Job,
    dir: &Path,
    sandbox: &sandbox::Sandbox,
) -> Result<fetch::Ready, Box<Diagnostic>> {
    let doc = &job.doc;
    let options = &context.options;
    match job.kind {
        Kind::Binary => {
            let target = current_platform()
                .and_then(|p| job.dist.target(p))
                .expect("planned");
            let cache = options.cache_dir.as_ref().map(|d| d.join("archives"));
            fetch::binary(
                &context.client,
                target,
                cache.as_deref(),
                dir,
                &dir.join("unpacked"),
                (options.archive_cap, options.unpack_cap),
            )
            .await
            .map_err(|e| Box::new(fetch_finding(doc, target, &e)))
        }
        kind => {
            let package = job.dist.package(kind).expect("planned");
            let launch = package.launch();
            let env = sandbox.environment(&context.shared, &package.env);
            let program = fetch::on_path(&launch.program, env.get("PATH").map(String::as_str))
                .expect("planned");
            let fetch_seconds = fetch::package_install(
                &program,
                package,
                &env,
                &sandbox.workspace,
                &sandbox.confinement(&context.shared),
                options.install_timeout,
            )
            .await
            .map_err(|e| Box::new(install_finding(doc, package, &e)))?;
            Ok(fetch::Ready {
                program,
                args: launch.args,
                fetch_seconds,
            })
        }
    }
}

/// The finding of a failed npx or uvx install, at the package spec.
fn install_finding(
    doc: &ManifestDoc,
    package: &crate::manifest::distribution::Package,
    error: &fetch::FetchError,
) -> Diagnostic {
    let at = format!("{}/package", package.pointer);
    match error {
        fetch::FetchError::PythonVersion { need, .. } => doc
            .at(Code::AgentPythonVersion, &at, error.to_string())
            .help(format!(
                "run verify where uv can use or download a Python {}, or release the package for older versions of Python",
                need.requires
            )),
        _ => doc.at(Code::AgentLaunch, &at, error.to_string()),
    }
}

fn fetch_finding(
    doc: &ManifestDoc,
    target: &crate::manifest::distribution::BinaryTarget,
    error: &fetch::FetchError,
) -> Diagnostic {
    use fetch::FetchError;
    let at = |field: &str| format!("{}/{field}", target.pointer);
    match error {
        FetchError::Sha256 { .. } => doc.at(Code::Sha256Mismatch, &at("sha256"), error.to_string())
            .help("pin the sha256 of the archive the URL serves, or restore the archive that was pinned"),
        FetchError::Unsafe(_) => doc.at(Code::ArchiveUnsafe, &at("archive"), error.to_string())
            .help("rebuild the archive with plain relative paths and no links leading out"),
        FetchError::Cmd(_) => doc.at(Code::AgentLaunch, &at("cmd"), error.to_string())
            .help("set `cmd` to the executable's path inside the archive"),
        _ => doc.at(Code::AgentLaunch, &at("archive"), error.to_string()),
    }
}

/// Turn the `initialize` answer into findings and result fields.
fn judge(
    context: &Context,
    job: &Job,
    pointer: &str,
    answer: &Answer,
    result: &mut AgentResult,
    findings: &mut Vec<Diagnostic>,
) {
    let doc = &job.doc;
    let secs = context.options.timeout.as_secs();
    match answer {
        Answer::Result(value) => match methods::read_initialize(value) {
            Ok(read) => {
                result.protocol_version = read.protocol_version;
                result.auth_methods = read.auth.clone();
                result.advertised = read.advertised.iter().cloned().collect();
                result.initialize = Some(value.clone());
                findings.extend(checks::check(
                    doc,
                    pointer,
                    &read,
                    &context.options.auth_types,
                ));
            }
            Err(why) => {
                result.initialize = Some(value.clone());
                findings.push(doc.at(Code::AgentProtocol, pointer, format!("initialize: {why}")));
            }
        },
        Answer::Error(error) => findings.push(doc.at(
            Code::AgentProtocol,
            pointer,
            format!(
                "the agent answered initialize with error {}: {}",
                error.code, error.message
            ),
        )),
        Answer::NoResponse => findings.push(
            doc.at(
                Code::AgentTimeout,
                pointer,
                format!("no answer to initialize within {secs} s"),
            )
            .help("check that `args` start the ACP mode and that the answer ends with a newline"),
        ),
        Answer::Exited(code) => findings.push(doc.at(
            Code::AgentLaunch,
            pointer,
            format!(
                "the agent exited{} before answering initialize",
                code.map_or(String::new(), |c| format!(" with code {c}"))
            ),
        )),
    }
}

/// Non-JSON stdout lines and stray responses (the first few; the count says the rest), and
/// replies the agent left unread.
fn protocol_findings(
    doc: &ManifestDoc,
    pointer: &str,
    record: &session::Record,
    findings: &mut Vec<Diagnostic>,
) {
    const SHOWN: usize = 3;
    for why in record.violations.iter().take(SHOWN) {
        findings.push(
            doc.at(Code::AgentProtocol, pointer, why.clone())
                .help("stdout carries only JSON-RPC messages, one per line; write logs to stderr"),
        );
    }
    if record.violations_total > SHOWN {
        findings.push(doc.at(
            Code::AgentProtocol,
            pointer,
            format!(
                "… and {} more protocol violations",
                record.violations_total - SHOWN
            ),
        ));
    }
    if record.replies_dropped > 0 {
        findings.push(
            doc.at(
                Code::AgentProtocol,
                pointer,
                format!(
                    "{} of the agent's {} requests got no reply: it did not read its stdin",
                    record.replies_dropped, record.agent_requests_total
                ),
            )
            .help("read stdin while sending requests: the client's replies come back there"),
        );
    }
}

/// Apply the policy, decide each status, and gather the findings into one report.
fn report(
    checked: &Checked,
    results: Vec<(Job, AgentResult, Vec<Diagnostic>)>,
    options: &Options,
) -> Outcome {
    let policy: &Policy = &checked.config.policy;
    let mut outcome = Outcome::default();
    let mut ids = BTreeSet::new();
    for (job, mut result, findings) in results {
        let mut sink = Sink::new(policy, Some(job.id.clone()));
        for mut finding in findings {
            if options.require_tested && finding.code == Code::AgentNotTested {
                finding.severity = Severity::Error;
            }
            sink.push(finding);
        }
        let first_error = sink
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error);
        if let Some(error) = first_error {
            if result.status == Status::Passed {
                result.status = Status::Failed;
                result.reason = Some(format!("{}: {}", error.code, error.message));
            }
        }
        if !sink.diagnostics.is_empty() {
            outcome
                .report
                .sources
                .insert(job.doc.source.path.clone(), job.doc.source.clone());
        }
        ids.insert(job.id.clone());
        outcome.report.diagnostics.extend(sink.diagnostics);
        outcome.results.push(result);
    }
    outcome.report.entries = ids.len();
    outcome.report.finish();
    outcome
}

/// Remove the run folder we created, making read-only folders (npm and Go caches write
/// some) writable first when a plain removal fails. Links are removed, never followed.
fn remove_tree(dir: &Path) {
    if std::fs::remove_dir_all(dir).is_ok() {
        return;
    }
    make_writable(dir);
    let _ = std::fs::remove_dir_all(dir);
}

/// Give `dir` and every folder below it (links not followed) owner rwx.
fn make_writable(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    if let Ok(read) = std::fs::read_dir(dir) {
        for entry in read.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                make_writable(&entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_are_the_serialized_ones() {
        for status in [
            Status::Passed,
            Status::Failed,
            Status::NotTested,
            Status::Skipped,
            Status::Reused,
        ] {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
    }
}
