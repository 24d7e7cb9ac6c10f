//! Names that become file, folder and URL path segments: agent ids and output file names.
//!
//! One predicate for every user (rules, build, site), so what `validate` accepts is exactly
//! what `build` can write on every operating system.

/// The longest id accepted: ids become folder names, file names, URL segments and CSS classes.
pub(crate) const MAX_ID_LEN: usize = 64;

/// Why a name cannot be used as a portable file or folder name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameProblem {
    /// The name is empty.
    Empty,
    /// The name is longer than a file system allows.
    TooLong,
    /// A control character, `/`, `\` or a character Windows forbids (`<>:"|?*`).
    ForbiddenCharacter(char),
    /// `.`/`..`, or a trailing dot or space (Windows strips them).
    Dots,
    /// `con`, `nul`, `aux`, `prn`, `com1`–`com9`, `lpt1`–`lpt9` in any case, with or
    /// without an extension.
    WindowsReserved,
}

impl std::fmt::Display for NameProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameProblem::Empty => f.write_str("it is empty"),
            NameProblem::TooLong => write!(f, "it is longer than {MAX_FILE_NAME_LEN} bytes"),
            NameProblem::ForbiddenCharacter(c) => {
                write!(f, "it contains the character {}", c.escape_default())
            }
            NameProblem::Dots => {
                f.write_str("it is `.` or `..`, or ends with a dot or a space")
            }
            NameProblem::WindowsReserved => f.write_str(
                "it is a reserved device name on Windows (con, nul, aux, prn, com1-com9, lpt1-lpt9)",
            ),
        }
    }
}

/// The longest portable file name, in bytes (common file-system limit).
pub(crate) const MAX_FILE_NAME_LEN: usize = 255;

/// Whether `name` (before any extension, any case) is a Windows device name.
pub(crate) fn is_windows_reserved(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let lower = stem.to_ascii_lowercase();
    match lower.as_str() {
        "con" | "nul" | "aux" | "prn" => true,
        _ => {
            let bytes = lower.as_bytes();
            bytes.len() == 4
                && (lower.starts_with("com") || lower.starts_with("lpt"))
                && matches!(bytes[3], b'1'..=b'9')
        }
    }
}

/// Why `name` is not a portable file name, or `None` when it is one.
pub(crate) fn file_name_problem(name: &str) -> Option<NameProblem> {
    if name.is_empty() {
        return Some(NameProblem::Empty);
    }
    if name.len() > MAX_FILE_NAME_LEN {
        return Some(NameProblem::TooLong);
    }
    if let Some(c) = name.chars().find(|c| {
        c.is_control() || matches!(c, '/' | '\\' | '<' | '>' | ':' | '"' | '|' | '?' | '*')
    }) {
        return Some(NameProblem::ForbiddenCharacter(c));
    }
    if name == "." || name == ".." || name.ends_with('.') || name.ends_with(' ') {
        return Some(NameProblem::Dots);
    }
    if is_windows_reserved(name) {
        return Some(NameProblem::WindowsReserved);
    }
    None
}

/// Whether `id` has the id pattern `^[a-z][a-z0-9-]*$`, at most [`MAX_ID_LEN`] bytes.
pub(crate) fn matches_id_pattern(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && id.len() <= MAX_ID_LEN
}

/// The one id predicate: the pattern, the length, and not a Windows device name.
pub(crate) fn is_valid_id(id: &str) -> bool {
    matches_id_pattern(id) && !is_windows_reserved(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_device_names_are_reserved_in_any_case_and_with_extensions() {
        for name in [
            "con", "NUL", "Aux", "prn", "com1", "COM9", "lpt1", "lpt9", "nul.json", "con .txt",
        ] {
            assert!(is_windows_reserved(name), "{name}");
        }
        for name in [
            "com0",
            "com10",
            "lpt",
            "console",
            "nullable",
            "auxiliary",
            "com1x",
        ] {
            assert!(!is_windows_reserved(name), "{name}");
        }
    }

    #[test]
    fn ids_follow_pattern_length_and_reserved_names() {
        assert!(is_valid_id("claude-acp"));
        assert!(is_valid_id(&"a".repeat(MAX_ID_LEN)));
        assert!(!is_valid_id(&"a".repeat(MAX_ID_LEN + 1)));
        assert!(!is_valid_id("con"));
        assert!(!is_valid_id("lpt3"));
        assert!(!is_valid_id("1abc"));
        assert!(!is_valid_id("Abc"));
        assert!(!is_valid_id(""));
    }

    #[test]
    fn file_names_are_portable() {
        let long = "a".repeat(256);
        let cases = [
            ("registry.json", None),
            ("", Some(NameProblem::Empty)),
            ("a/b.json", Some(NameProblem::ForbiddenCharacter('/'))),
            ("a\\b.json", Some(NameProblem::ForbiddenCharacter('\\'))),
            (
                "a\u{1b}.json",
                Some(NameProblem::ForbiddenCharacter('\u{1b}')),
            ),
            ("a?.json", Some(NameProblem::ForbiddenCharacter('?'))),
            ("nul.json", Some(NameProblem::WindowsReserved)),
            ("x.json.", Some(NameProblem::Dots)),
            ("..", Some(NameProblem::Dots)),
            (long.as_str(), Some(NameProblem::TooLong)),
        ];
        for (name, problem) in cases {
            assert_eq!(file_name_problem(name), problem, "{name:?}");
        }
    }
}
