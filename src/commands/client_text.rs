//! What the client commands print and how: `--format` of `list` and `which`, registry text
//! escaped for a terminal, command lines quoted, ages for people, versions in order, and the
//! download progress bar. Shared plumbing of the client commands, beside [`client`](super::client).

use std::sync::Arc;
use std::time::Duration;

use acp_registry_client::install;
use acp_registry_core::escape;

use super::stream::Stream;
use crate::flags;

/// `--format` of `list` and `which`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// Lines for people, registry text escaped.
    #[default]
    Human,
    /// One versioned JSON document (docs/format.md, "Commands").
    Json,
}

flags::bare_value_enum!(OutputFormat {
    OutputFormat::Human => "human",
    OutputFormat::Json => "json",
});

/// `duration` for people: `40 s`, `12 min`, `5 h 3 min`, `3 days`.
pub(crate) fn human_age(duration: Duration) -> String {
    let s = duration.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        _ => format!("{} days", s / 86_400),
    }
}

/// Text from the registry or the cache, safe to print on a terminal.
pub(crate) fn t(text: &str) -> String {
    escape::terminal(text).into_owned()
}

/// `words` as one shell command line, each word quoted where it needs it and escaped.
pub(crate) fn shell_line<'w>(words: impl IntoIterator<Item = &'w str>) -> String {
    words
        .into_iter()
        .map(|word| {
            let quoted = shlex::try_quote(word)
                .map_or_else(|_| format!("{word:?}"), std::borrow::Cow::into_owned);
            t(&quoted)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Versions in the client library's order (numeric parts, a pre-release below its release):
/// one order for lists, `--version` and the lifecycle history.
pub(crate) use acp_registry_client::lifecycle::version_order;

/// A download progress bar on stderr when it is a terminal and `--quiet` is not given;
/// nothing otherwise.
pub(crate) fn progress_bar() -> Option<Arc<install::ProgressFn>> {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if !Stream::Stderr.shows_progress() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{msg} {wide_bar} {bytes}/{total_bytes}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    Some(Arc::new(
        move |progress: &install::Progress| match progress {
            install::Progress::Downloading { url, done, total } => {
                if let Some(total) = total {
                    bar.set_length(*total);
                }
                bar.set_position(*done);
                let name = url.rsplit('/').next().unwrap_or(url);
                bar.set_message(format!("downloading {}", t(name)));
            }
            install::Progress::Unpacking => bar.set_message("unpacking"),
            install::Progress::Installing => bar.set_message("installing the package"),
            install::Progress::Done => bar.finish_and_clear(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_ordered_numerically_with_prereleases_below_their_release() {
        assert!(version_order("1.10.0", "1.9.0").is_gt());
        assert!(version_order("1.0.0-rc.1", "1.0.0").is_lt());
        assert!(version_order("b", "a").is_gt());
    }
}
