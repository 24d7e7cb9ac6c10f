//! The per-agent job: fetch or install the distribution, launch it in its sandbox, send
//! `initialize`, judge the answer (and for `matrix` probe the session methods), and turn
//! what happened into an [`AgentResult`] and findings at the distribution's place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::error::VerifyError;
use super::options::Options;
use super::plan::{Job, Plan};
use super::result::{AgentResult, Status};
use super::sandbox::GRACE;
use super::session::{self, Agent, Answer};
use super::{checks, fetch, matrix, sandbox};
use crate::diagnostics::Diagnostic;
use crate::manifest::distribution::{current_platform, Kind};
use crate::net::Client;
use crate::rules::{Code, ManifestDoc};
use acp_registry_core::acp::methods;

/// Run the jobs `options.jobs` at a time; the results come back in plan order.
pub(super) fn run_jobs(
    jobs: Vec<Job>,
    options: &Options,
    run_dir: &Path,
) -> Result<Vec<(Job, AgentResult, Vec<Diagnostic>)>, VerifyError> {
    let runtime = crate::net::runtime().map_err(VerifyError::Runtime)?;
    let client = Arc::new(Client::new(options.net.clone())?);
    let mut shared =
        sandbox::Shared::create(run_dir, &options.registry.root).map_err(|source| {
            VerifyError::RunDir {
                path: run_dir.display().to_string(),
                source,
            }
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
    let ready = match fetch_program(context, job, dir, &sandbox).await {
        Ok(ready) => ready,
        Err(finding) => {
            findings.push(*finding);
            return;
        }
    };
    result.fetch_seconds = Some(ready.fetch_seconds);
    let env = sandbox.environment(&context.shared, &env_of(job));
    let begun = Instant::now();
    let confinement = sandbox.confinement(&context.shared, dir);
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
async fn fetch_program(
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
                (options.archive_cap.bytes(), options.unpack_cap.bytes()),
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
                &sandbox.confinement(&context.shared, dir),
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
