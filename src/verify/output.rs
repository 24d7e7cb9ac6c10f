//! What `verify` and `matrix` print: one line per agent and distribution, then the findings
//! in `--format` (JSON: the findings document with the agents and the shard part added), or
//! for `--list-shards` the shards of the selection.

use std::io::Write;

use super::error::VerifyError;
use super::options::{prepare, Options};
use super::outcome::Outcome;
use super::plan::shards;
use super::result::{AgentResult, Status};
use super::sandbox::{Isolation, Landlock, ProcView};
use super::shard::{self, Shard};
use crate::diagnostics::{
    append_step_summary, escape, json_document, json_text, render, render_github_summary,
    ReportFormat,
};

/// `--list-shards`: the shards of what `options` selects, as a GitHub Actions
/// `strategy.matrix` (`--format json`, one line: `{"include":[{"shard":"1/2","agents":[…]},…]}`)
/// or one line per shard; nothing is launched.
pub(crate) fn list_shards(options: &Options, out: &mut dyn Write) -> Result<(), VerifyError> {
    let max = options.list_shards.unwrap_or(1);
    shard::check_count(max).map_err(|e| VerifyError::Usage(format!("--list-shards {max}: {e}")))?;
    if options.shard_size == 0 {
        return Err(VerifyError::Usage(
            "--shard-size 0: a shard holds at least one entry".into(),
        ));
    }
    let (checked, run) = prepare(options)?;
    let shards = shards(&checked, &run, max, options.shard_size);
    write_shards(&shards, options.format, out)
}

fn write_shards(
    shards: &[(Shard, Vec<String>)],
    format: ReportFormat,
    out: &mut dyn Write,
) -> Result<(), VerifyError> {
    match format {
        ReportFormat::Json => {
            let include: Vec<serde_json::Value> = shards
                .iter()
                .map(|(shard, ids)| serde_json::json!({"shard": shard.to_string(), "agents": ids}))
                .collect();
            let matrix = serde_json::json!({ "include": include });
            writeln!(out, "{matrix}")?;
        }
        ReportFormat::Human => {
            for (shard, ids) in shards {
                let line = format!("{shard}: {}", ids.join(", "));
                writeln!(out, "{}", escape::terminal(line.trim_end()))?;
            }
        }
        ReportFormat::Github | ReportFormat::Sarif => {
            return Err(VerifyError::Usage(
                "--list-shards prints --format human or json".into(),
            ))
        }
    }
    Ok(())
}

/// The per-agent lines and the findings, in `options.format`; the report's paths are the
/// caller's to place first (`Report::relocate`).
pub(crate) fn write(
    outcome: &Outcome,
    options: &Options,
    out: &mut dyn Write,
) -> Result<(), VerifyError> {
    let report = &outcome.report;
    match options.format {
        ReportFormat::Json => {
            let mut document = json_document(report);
            if let Some(part) = &outcome.part {
                document["part"] = serde_json::to_value(part).map_err(std::io::Error::from)?;
            }
            document["agents"] =
                serde_json::to_value(&outcome.results).map_err(std::io::Error::from)?;
            out.write_all(json_text(&document).as_bytes())?;
        }
        ReportFormat::Human => {
            for result in &outcome.results {
                writeln!(out, "{}", line(result))?;
            }
            for isolation in isolations(&outcome.results) {
                writeln!(out, "isolation: {}", describe(&isolation))?;
            }
            out.write_all(render(report, ReportFormat::Human, options.color).as_bytes())?;
        }
        ReportFormat::Github => {
            out.write_all(render(report, ReportFormat::Github, false).as_bytes())?;
            append_step_summary(&github_summary(outcome))?;
        }
        ReportFormat::Sarif => {
            out.write_all(render(report, ReportFormat::Sarif, false).as_bytes())?;
        }
    }
    Ok(())
}

/// The step summary of `--format github`: a row per agent and distribution, then the
/// findings table `validate` writes.
fn github_summary(outcome: &Outcome) -> String {
    let statuses = [
        Status::Passed,
        Status::Failed,
        Status::NotTested,
        Status::Skipped,
        Status::Reused,
    ];
    let counts: Vec<String> = statuses
        .iter()
        .map(|s| (s, outcome.results.iter().filter(|r| r.status == *s).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {}", s.as_str()))
        .collect();
    let counts = if counts.is_empty() {
        "no agents".to_string()
    } else {
        counts.join(", ")
    };
    let shard = outcome
        .part
        .as_ref()
        .map_or(String::new(), |p| format!(" (shard {})", p.shard));
    let mut text = format!("### acp-registry verify{shard}: {counts}\n\n");
    text.push_str("| agent | distribution | platform | status | time | reason |\n");
    text.push_str("|---|---|---|---|---|---|\n");
    for result in &outcome.results {
        let time = match result.status {
            Status::Passed | Status::Failed => format!("{:.1} s", result.total_seconds),
            _ => String::new(),
        };
        text.push_str(&format!(
            "| {} | {} | {} | {} | {time} | {} |\n",
            escape::markdown_code_cell(&result.id),
            result.distribution,
            result.platform.as_deref().unwrap_or(""),
            result.status.as_str(),
            escape::markdown_cell(result.reason.as_deref().unwrap_or("")),
        ));
    }
    let isolations = isolations(&outcome.results);
    if !isolations.is_empty() {
        text.push('\n');
    }
    for isolation in isolations {
        text.push_str(&format!("**Isolation:** {}\n", describe(&isolation)));
    }
    if let Some(findings) = render_github_summary(&outcome.report) {
        text.push('\n');
        text.push_str(&findings);
    }
    text
}

/// The isolations the launched agents got, each once, in the order of the agents.
fn isolations(results: &[AgentResult]) -> Vec<Isolation> {
    let mut seen: Vec<Isolation> = Vec::new();
    for isolation in results.iter().filter_map(|r| r.isolation) {
        if !seen.contains(&isolation) {
            seen.push(isolation);
        }
    }
    seen
}

/// One isolation in words, saying plainly when the kernel offered nothing (never a failure).
fn describe(isolation: &Isolation) -> String {
    let landlock = match isolation.landlock {
        Landlock::Full => "Landlock: reads and writes confined to the allow-list",
        Landlock::Partial => {
            "Landlock (partial: an older kernel): reads and writes confined to the allow-list"
        }
        Landlock::Unavailable => "no Landlock: reads and writes not confined",
    };
    let proc = match isolation.proc {
        ProcView::Private => "a private /proc",
        ProcView::Host => "the host's /proc (other processes' command lines visible)",
    };
    let namespace = match (isolation.pid_namespace, isolation.user_namespace) {
        (true, true) => "its own PID and user namespaces",
        (true, false) => "its own PID namespace",
        _ => "no PID namespace",
    };
    let mut text = format!("{landlock}; {proc}; {namespace}");
    if isolation.landlock == Landlock::Unavailable && !isolation.pid_namespace {
        text.push_str(
            ": this kernel offered no isolation, agents ran with this user's access (not a failure)",
        );
    }
    text
}

/// `✓ id npx 1.2 s`, `✗ id binary (linux-x86_64) 60.0 s: agent-timeout: …`, `- id uvx: not tested: …`.
fn line(result: &AgentResult) -> String {
    let mark = match result.status {
        Status::Passed => "✓",
        Status::Failed => "✗",
        Status::NotTested | Status::Skipped | Status::Reused => "-",
    };
    let platform = result
        .platform
        .as_ref()
        .map_or(String::new(), |p| format!(" ({p})"));
    let time = match result.status {
        Status::Passed | Status::Failed => format!(" {:.1} s", result.total_seconds),
        _ => String::new(),
    };
    let why = match (result.status, &result.reason) {
        (Status::NotTested, Some(r)) => format!(": not tested: {r}"),
        (Status::Skipped, Some(r)) => format!(": skipped: {r}"),
        (_, Some(r)) => format!(": {r}"),
        (_, None) => String::new(),
    };
    let text = format!(
        "{mark} {} {}{platform}{time}{why}",
        result.id, result.distribution
    );
    escape::terminal(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{render_json, Report};

    #[test]
    fn an_isolation_says_what_held_and_plainly_when_the_kernel_offered_nothing() {
        let full = Isolation {
            landlock: Landlock::Full,
            reads: super::super::sandbox::Reads::Landlock,
            proc: ProcView::Private,
            pid_namespace: true,
            user_namespace: true,
            verifier_dumpable: false,
        };
        assert_eq!(
            describe(&full),
            "Landlock: reads and writes confined to the allow-list; a private /proc; its own PID and user namespaces"
        );
        let none = Isolation {
            landlock: Landlock::Unavailable,
            reads: super::super::sandbox::Reads::Unrestricted,
            proc: ProcView::Host,
            pid_namespace: false,
            user_namespace: false,
            verifier_dumpable: false,
        };
        let text = describe(&none);
        assert!(
            text.starts_with("no Landlock: reads and writes not confined; the host's /proc"),
            "{text}"
        );
        assert!(text.ends_with("this kernel offered no isolation, agents ran with this user's access (not a failure)"), "{text}");
    }

    #[test]
    fn the_json_report_is_the_findings_document_with_the_agents_added_in_order() {
        let options = Options {
            format: ReportFormat::Json,
            ..Options::default()
        };
        let mut out = Vec::new();
        write(&Outcome::default(), &options, &mut out).unwrap();
        let findings = render_json(&Report::default());
        let body = findings.strip_suffix("\n}\n").expect("a JSON object");
        let expected = format!("{body},\n  \"agents\": []\n}}\n");
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}
