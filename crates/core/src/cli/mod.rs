//! What both binaries share around their commands: the `error: …` line a failure ends with
//! and the generated completions and manual page ([`manual`]), and the skill commands' target
//! flags ([`SkillTarget`]).

pub mod manual;
mod skill_target;

pub use skill_target::SkillTarget;

/// The one `error: …` line of a failure that ends a command (exit 2), from its chain of
/// messages outermost first, escaped for the terminal. Each cause is added once: most errors
/// of the library already quote their cause (`cannot write `dist`: No space left on
/// device`), and a chain printing it again adds only noise.
pub fn failure_line<I>(chain: I) -> String
where
    I: IntoIterator,
    I::Item: std::fmt::Display,
{
    let mut line = String::new();
    for cause in chain {
        let cause = cause.to_string();
        if cause.is_empty() || line.contains(&cause) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&cause);
    }
    format!("error: {}", crate::escape::terminal(&line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_line_names_each_cause_once_and_escapes_it() {
        let os = "No space left on device (os error 28)";
        let outer = format!("cannot write `dist`: {os}");
        assert_eq!(
            failure_line([outer.as_str(), os]),
            format!("error: cannot write `dist`: {os}")
        );
        assert_eq!(
            failure_line(["cannot read `x`", "no such file"]),
            "error: cannot read `x`: no such file"
        );
        let hostile = failure_line(["bad \u{1b}[31mname"]);
        assert!(!hostile.contains('\u{1b}'), "{hostile}");
    }
}
