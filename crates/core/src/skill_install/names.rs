//! The rules for a skill's name and its files' paths: the one definition both tools and the
//! client library's index vocabulary (`skill_index`) use.

/// A skill name's length limit in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// A skill name by the Agent Skills rule: 1-64 characters of `^[a-z0-9]+(-[a-z0-9]+)*$`
/// (lowercase letters, digits, single hyphens inside). It is also the installed folder's name,
/// so it can never climb or hide.
#[must_use]
pub fn is_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// A path a skill's file may have: relative, forward slashes, printable ASCII, no empty or
/// `.` segment, no `..` anywhere, no backslash or drive letter.
#[must_use]
pub fn is_safe_file_path(path: &str) -> bool {
    let drive = path.as_bytes().get(1) == Some(&b':');
    let refused = path.is_empty()
        || drive
        || path.starts_with('/')
        || path.contains('\\')
        || path.contains("..")
        || path.bytes().any(|b| !(0x20..0x7f).contains(&b));
    !refused && path.split('/').all(|seg| !seg.is_empty() && seg != ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths_that_could_climb_or_hide_are_refused() {
        assert!(is_skill_name("pdf-tools2"));
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "A",
            "a_b",
            "..",
            "a/b",
            &"a".repeat(65),
        ] {
            assert!(!is_skill_name(bad), "{bad}");
        }
        assert!(is_safe_file_path("scripts/run.sh"));
        for bad in [
            "", "/etc/x", "a/../b", "..", "a\\b", "C:x", "a//b", "./a", "a/\u{1b}",
        ] {
            assert!(!is_safe_file_path(bad), "{bad:?}");
        }
    }
}
