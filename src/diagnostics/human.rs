//! Compiler-style output: source line, caret under the span, code and help.
//!
//! Everything taken from the registry (path, message, help, the source excerpt) goes through
//! [`escape::terminal`] first; the excerpt's span is moved with it so the caret stays under
//! the characters it points at.

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

use acp_registry_core::escape;
use acp_registry_core::source::SourceFile;

use super::diagnostic::{Diagnostic, Location};
use super::report::Report;
use super::severity::Severity;

/// Render every finding followed by the summary line. `color` adds ANSI styles.
pub(crate) fn render_human(report: &Report, color: bool) -> String {
    let mut out = render_human_findings(report, color);
    out.push_str(&report.summary());
    out.push('\n');
    out
}

/// Render every finding, without the summary line (`--quiet`).
pub(crate) fn render_human_findings(report: &Report, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for diagnostic in &report.diagnostics {
        out.push_str(&render_one(&renderer, report, diagnostic));
        out.push_str("\n\n");
    }
    out
}

fn level(severity: Severity) -> Level<'static> {
    match severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Note => Level::NOTE,
    }
}

/// The escaped lines a span covers and the span within them. Only those lines, so
/// rendering stays linear in the output size.
fn excerpt(source: &SourceFile, location: &Location) -> (String, std::ops::Range<usize>) {
    let first = source.lines.line_start(location.start.line);
    let last_line_end = source.lines.line_start(location.end.line)
        + source.lines.line(&source.text, location.end.line).len();
    let raw = &source.text[first..last_line_end.max(first)];
    let start = location.span.start.saturating_sub(first).min(raw.len());
    let end = location
        .span
        .end
        .saturating_sub(first)
        .clamp(start, raw.len());
    let mut offsets = [start, end];
    let text = escape::terminal_mapped(raw, &mut offsets);
    (text, offsets[0]..offsets[1])
}

fn render_one(renderer: &Renderer, report: &Report, d: &Diagnostic) -> String {
    let message = escape::terminal(&d.message);
    let file = escape::terminal(&d.file);
    let title = level(d.severity)
        .primary_title(message.as_ref())
        .id(d.code.as_str());
    let source = report.sources.get(&d.file);
    let snippet;
    let main = match (&d.location, source) {
        (Some(location), Some(source)) => {
            snippet = excerpt(source, location);
            title.element(
                Snippet::source(snippet.0.as_str())
                    .line_start(location.start.line)
                    .path(file.as_ref())
                    .annotation(AnnotationKind::Primary.span(snippet.1.clone())),
            )
        }
        (Some(location), None) => title.element(
            Origin::path(file.as_ref())
                .line(location.start.line)
                .char_column(location.start.column),
        ),
        (None, _) => title.element(Origin::path(file.as_ref())),
    };
    let help = d.help.as_deref().map(escape::terminal);
    let mut groups = vec![main];
    if let Some(help) = &help {
        groups.push(Group::with_title(
            Level::HELP.secondary_title(help.as_ref()),
        ));
    }
    renderer.render(&groups)
}
