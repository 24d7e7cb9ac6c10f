//! Compiler-style output: source line, caret under the span, code and help.

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

use super::{Diagnostic, Report, Severity};

/// Render every finding followed by the summary line. `color` adds ANSI styles.
pub fn render_human(report: &Report, color: bool) -> String {
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
    out.push_str(&report.summary());
    out.push('\n');
    out
}

fn level(severity: Severity) -> Level<'static> {
    match severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Note => Level::NOTE,
    }
}

fn render_one(renderer: &Renderer, report: &Report, d: &Diagnostic) -> String {
    let title = level(d.severity)
        .primary_title(d.message.as_str())
        .id(d.code);
    let source = report.sources.get(&d.file);
    let main = match (&d.location, source) {
        (Some(location), Some(source)) => {
            // Only the lines the span covers, so rendering stays linear in the output size.
            let first = source.lines.line_start(location.start.line);
            let last_line_end = source.lines.line_start(location.end.line)
                + source.lines.line(&source.text, location.end.line).len();
            let excerpt = &source.text[first..last_line_end.max(first)];
            let start = location.span.start.saturating_sub(first).min(excerpt.len());
            let end = location
                .span
                .end
                .saturating_sub(first)
                .clamp(start, excerpt.len());
            title.element(
                Snippet::source(excerpt)
                    .line_start(location.start.line)
                    .path(d.file.as_str())
                    .annotation(AnnotationKind::Primary.span(start..end)),
            )
        }
        (Some(location), None) => title.element(
            Origin::path(d.file.as_str())
                .line(location.start.line)
                .char_column(location.start.column),
        ),
        (None, _) => title.element(Origin::path(d.file.as_str())),
    };
    let mut groups = vec![main];
    if let Some(help) = &d.help {
        groups.push(Group::with_title(
            Level::HELP.secondary_title(help.as_str()),
        ));
    }
    renderer.render(&groups)
}
