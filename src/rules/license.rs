//! `license`: an SPDX expression or `proprietary`. Unknown identifiers name the closest
//! known one; deprecated identifiers name their replacements; the spellings of
//! `proprietary` and the `+` forms of the GNU identifiers, whose replacement is certain,
//! carry a fix. The license list is the `spdx` crate's (its `identifiers` table).

use std::fmt::Write as _;

use super::entry::ManifestDoc;
use super::sink::Sink;
use crate::diagnostics::{Code, Diagnostic, Fix, FixEdit};

/// The value the format gives a license that is not open source.
const PROPRIETARY: &str = "proprietary";

const POINTER: &str = "/license";

/// The deprecated `GPL-x.y-with-…-exception` identifiers and the exception each names.
const WITH_EXCEPTION: [(&str, &str, &str); 7] = [
    ("GPL-2.0-with-GCC-exception", "GPL-2.0", "GCC-exception-2.0"),
    (
        "GPL-2.0-with-autoconf-exception",
        "GPL-2.0",
        "Autoconf-exception-2.0",
    ),
    (
        "GPL-2.0-with-bison-exception",
        "GPL-2.0",
        "Bison-exception-2.2",
    ),
    (
        "GPL-2.0-with-classpath-exception",
        "GPL-2.0",
        "Classpath-exception-2.0",
    ),
    (
        "GPL-2.0-with-font-exception",
        "GPL-2.0",
        "Font-exception-2.0",
    ),
    ("GPL-3.0-with-GCC-exception", "GPL-3.0", "GCC-exception-3.1"),
    (
        "GPL-3.0-with-autoconf-exception",
        "GPL-3.0",
        "Autoconf-exception-3.0",
    ),
];

pub(crate) fn check(doc: &ManifestDoc, sink: &mut Sink) {
    if doc.root.get("license_url").is_none() {
        let message = "the manifest has no `license_url`";
        // Next to `license` when there is one, else at the whole manifest.
        let d = match doc.root.member("license") {
            Some(_) => doc.at_key(Code::LicenseUrlMissing, POINTER, message),
            None => doc.at(Code::LicenseUrlMissing, "", message),
        };
        sink.push(
            d.help("add `\"license_url\": \"https://…/LICENSE\"` pointing at the license text"),
        );
    }
    let Some(license) = doc.root.get_str("license") else {
        return;
    };
    if license == PROPRIETARY || license.is_empty() || spdx::Expression::parse(license).is_ok() {
        return;
    }
    let d = doc.at(Code::LicenseUnknown, POINTER, String::new());
    sink.push(judge(license, d));
}

/// The finding for a `license` that is neither `proprietary` nor a valid SPDX expression:
/// `d` with its message, help and, when the right value is certain, its fix.
fn judge(license: &str, mut d: Diagnostic) -> Diagnostic {
    if is_proprietary_spelling(license) {
        d.message = format!("`{license}` is written `{PROPRIETARY}` in the manifest format");
        return d
            .help(format!("write `\"license\": \"{PROPRIETARY}\"`"))
            .fix(Fix::new(POINTER, FixEdit::SetString(PROPRIETARY.into())));
    }
    if let Some(deprecated) = Deprecated::find(license) {
        d.message = deprecated.message(license);
        let help = deprecated.help(license);
        return match deprecated.certain(license) {
            Some(value) => d
                .help(help)
                .fix(Fix::new(POINTER, FixEdit::SetString(value))),
            None => d.help(help),
        };
    }
    d.message = format!("`{license}` is not a known SPDX license expression");
    match closest(license) {
        Some(choices) => d.help(format!("did you mean {}?", or_list(&choices))),
        None => d.help("use an SPDX identifier (https://spdx.org/licenses/) or `proprietary`"),
    }
}

/// `Proprietary`, `PROPRIETARY`, ` proprietary `, `Proprietary License`: the one value the
/// format has for them, whatever the case, spacing or a trailing "license".
fn is_proprietary_spelling(license: &str) -> bool {
    let lower = license.trim().to_ascii_lowercase();
    let word = lower
        .strip_suffix("license")
        .map_or(lower.as_str(), |rest| {
            rest.trim_end_matches([' ', '-', '_'])
        });
    word == PROPRIETARY
}

/// The closest valid expressions to an unknown one (two when the closest is a GNU
/// license whose `-only` / `-or-later` choice the text does not make), never the text itself.
fn closest(license: &str) -> Option<Vec<String>> {
    let lax = spdx::Expression::parse_mode(license, spdx::ParseMode::LAX)
        .ok()
        .map(|e| e.to_string());
    // A known misspelling of one license (`Apache 2`), never the first term of an
    // expression: `MIT OR Foo` is not `MIT`.
    let imprecise = || {
        let text = license.trim();
        spdx::imprecise_license_id(text)
            .filter(|(_, matched)| !has_operator(&text[*matched..]))
            .map(|(id, _)| id.name.to_string())
    };
    let guess = lax.filter(|s| s != license).or_else(imprecise)?;
    if let Some(deprecated) = Deprecated::find(&guess) {
        return Some(deprecated.choices(&guess));
    }
    // An imprecise name (`gpl3`) maps to `-only`: that is the licensor's choice to make.
    let id = spdx::license_id(&guess).filter(|id| id.is_gnu());
    if let Some(base) = id.and_then(|id| id.name.strip_suffix("-only")) {
        if !license.to_ascii_lowercase().contains("only") {
            return Some(vec![format!("{base}-only"), format!("{base}-or-later")]);
        }
    }
    (guess != license).then(|| vec![guess])
}

/// How a deprecated identifier is replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Replacement {
    /// One certain replacement (`GPL-2.0+` is `GPL-2.0-or-later`).
    Certain(String),
    /// Two, between which the licensor chooses: `-only` or `-or-later` (each in full).
    Choice(String, String),
    /// None this tool can name: the SPDX list says what replaces it.
    LookUp,
}

/// One identifier of an expression that the SPDX list deprecates.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    /// Byte range of the identifier in the expression.
    range: std::ops::Range<usize>,
    /// The identifier as the SPDX list spells it (`AGPL-3.0` for `agpl-3.0`).
    id: String,
    replacement: Replacement,
}

/// The deprecated identifiers of an expression that is valid once they are replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Deprecated {
    terms: Vec<Term>,
}

impl Deprecated {
    /// The deprecated identifiers of `license`, when they are its only problem: with each
    /// replaced (by its first choice), the expression is valid SPDX.
    fn find(license: &str) -> Option<Deprecated> {
        let terms: Vec<Term> = words(license)
            .filter_map(|(start, word)| deprecated_term(start, word))
            .collect();
        if terms.is_empty() {
            return None;
        }
        let found = Deprecated { terms };
        let probe = found.rewrite(license, |t| match &t.replacement {
            Replacement::Certain(s) | Replacement::Choice(s, _) => s.clone(),
            Replacement::LookUp => t.id.clone(),
        });
        let looked_up = found
            .terms
            .iter()
            .any(|t| t.replacement == Replacement::LookUp);
        let valid = match looked_up {
            // What replaces them is not known here: valid apart from them is enough.
            true => spdx::Expression::parse_mode(&probe, LENIENT).is_ok(),
            false => spdx::Expression::parse(&probe).is_ok(),
        };
        valid.then_some(found)
    }

    /// `license` with each deprecated term replaced by `pick(term)`.
    fn rewrite(&self, license: &str, pick: impl Fn(&Term) -> String) -> String {
        let mut out = String::new();
        let mut at = 0;
        for term in &self.terms {
            out.push_str(&license[at..term.range.start]);
            out.push_str(&pick(term));
            at = term.range.end;
        }
        out.push_str(&license[at..]);
        out
    }

    fn message(&self, license: &str) -> String {
        let ids: Vec<String> = self.terms.iter().map(|t| format!("`{}`", t.id)).collect();
        let what = match ids.len() {
            1 => format!("{} is a deprecated SPDX license identifier", ids[0]),
            _ => format!("{} are deprecated SPDX license identifiers", and_list(&ids)),
        };
        if license.trim() == self.terms[0].id && self.terms.len() == 1 {
            what
        } else {
            format!("`{license}`: {what}")
        }
    }

    /// The whole value when every replacement is certain.
    fn certain(&self, license: &str) -> Option<String> {
        let all = self
            .terms
            .iter()
            .all(|t| matches!(t.replacement, Replacement::Certain(_)));
        let value = self.rewrite(license, |t| match &t.replacement {
            Replacement::Certain(s) => s.clone(),
            _ => t.id.clone(),
        });
        (all && spdx::Expression::parse(&value).is_ok()).then_some(value)
    }

    /// The valid expressions to suggest: one per choice when one term has a choice, else
    /// the expression with every certain replacement made.
    fn choices(&self, license: &str) -> Vec<String> {
        let choosing: Vec<&Term> = self
            .terms
            .iter()
            .filter(|t| matches!(t.replacement, Replacement::Choice(..)))
            .collect();
        let certain = |t: &Term| match &t.replacement {
            Replacement::Certain(s) => s.clone(),
            _ => t.id.clone(),
        };
        match choosing.as_slice() {
            [one] => {
                let Replacement::Choice(only, later) = &one.replacement else {
                    unreachable!("filtered on Choice")
                };
                let with = |pick: &String| {
                    self.rewrite(
                        license,
                        |t| if t == *one { pick.clone() } else { certain(t) },
                    )
                };
                vec![with(only), with(later)]
            }
            _ => vec![self.rewrite(license, certain)],
        }
    }

    fn help(&self, license: &str) -> String {
        if let Some(value) = self.certain(license) {
            return format!("write `{value}`, its replacement with the same meaning");
        }
        let choosing = self
            .terms
            .iter()
            .filter(|t| matches!(t.replacement, Replacement::Choice(..)))
            .count();
        let mut help = match choosing {
            0 => String::new(),
            1 => format!(
                "write {}: the project's license says whether later versions of the GNU license apply",
                or_list(&self.choices(license))
            ),
            _ => {
                let each: Vec<String> = self
                    .terms
                    .iter()
                    .filter_map(|t| match &t.replacement {
                        Replacement::Choice(only, later) => {
                            Some(format!("`{}` by `{only}` or `{later}`", t.id))
                        }
                        _ => None,
                    })
                    .collect();
                format!(
                    "replace {}, as the project's license says whether later versions of the GNU licenses apply",
                    and_list(&each)
                )
            }
        };
        if choosing > 0 {
            help.push_str(" (`--fix` leaves this choice to you)");
        }
        for t in &self.terms {
            if t.replacement == Replacement::LookUp {
                if !help.is_empty() {
                    help.push_str("; ");
                }
                let _ = write!(
                    help,
                    "the SPDX list names what replaces `{0}`: https://spdx.org/licenses/{0}.html",
                    t.id
                );
            }
        }
        help
    }
}

/// Strict SPDX but for deprecated identifiers.
const LENIENT: spdx::ParseMode = spdx::ParseMode {
    allow_deprecated: true,
    ..spdx::ParseMode::STRICT
};

/// The identifiers of an expression with their byte offsets: the words between spaces and
/// parentheses, operators left out.
fn words(license: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in license.char_indices().chain([(license.len(), ' ')]) {
        let separator = c.is_whitespace() || c == '(' || c == ')';
        match (separator, start) {
            (true, Some(s)) => {
                out.push((s, &license[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    out.into_iter()
        .filter(|(_, w)| !["AND", "OR", "WITH"].contains(&w.to_ascii_uppercase().as_str()))
}

/// Whether `text` holds an `AND`, `OR` or `WITH` operator (or `/`, read as `OR` by lax
/// parsers) between its words.
fn has_operator(text: &str) -> bool {
    text.contains('/')
        || text
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .any(|w| ["AND", "OR", "WITH"].contains(&w.to_ascii_uppercase().as_str()))
}

/// `word` at `start`, when it is a deprecated license or exception identifier (compared
/// ignoring case, with a trailing `+`).
fn deprecated_term(start: usize, word: &str) -> Option<Term> {
    let range = start..start + word.len();
    let (bare, plus) = match word.strip_suffix('+') {
        Some(bare) => (bare, true),
        None => (word, false),
    };
    if let Some((id, base, exception)) = WITH_EXCEPTION
        .iter()
        .find(|(id, ..)| id.eq_ignore_ascii_case(bare))
    {
        let with = |suffix: &str| format!("{base}-{suffix} WITH {exception}");
        let replacement = match plus {
            true => Replacement::Certain(with("or-later")),
            false => Replacement::Choice(with("only"), with("or-later")),
        };
        return Some(Term {
            range,
            id: (*id).to_string(),
            replacement,
        });
    }
    if let Some(exception) = spdx::identifiers::EXCEPTIONS
        .iter()
        .find(|e| e.name.eq_ignore_ascii_case(word))
    {
        let deprecated =
            spdx::exception_id(exception.name).is_some_and(spdx::ExceptionId::is_deprecated);
        return deprecated.then(|| Term {
            range,
            id: exception.name.to_string(),
            replacement: Replacement::LookUp,
        });
    }
    let license = spdx::identifiers::LICENSES
        .iter()
        .find(|l| l.name.eq_ignore_ascii_case(bare))?;
    let id = spdx::license_id(license.name)?;
    if !id.is_deprecated() {
        return None;
    }
    let name = id.name.trim_end_matches('+');
    let or_later = spdx::gnu_license_id(name, true).map(|l| l.name.to_string());
    let only = spdx::gnu_license_id(name, false).map(|l| l.name.to_string());
    // `GPL-2.0+` is an identifier of its own, `AGPL-3.0+` is `AGPL-3.0` with `+`: both
    // mean "or later".
    let replacement = match (id.is_gnu(), plus, only, or_later) {
        (true, true, _, Some(or_later)) => Replacement::Certain(or_later),
        (true, false, Some(only), Some(or_later)) => Replacement::Choice(only, or_later),
        _ => Replacement::LookUp,
    };
    Some(Term {
        range,
        id: if plus {
            format!("{}+", id.name)
        } else {
            id.name.to_string()
        },
        replacement,
    })
}

/// `a`, `a or b`, `a, b or c`, each in backticks.
fn or_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
    join(&quoted, " or ")
}

fn and_list(items: &[String]) -> String {
    join(items, " and ")
}

fn join(items: &[String], last: &str) -> String {
    match items.split_last() {
        None => String::new(),
        Some((only, [])) => only.clone(),
        Some((tail, head)) => format!("{}{last}{tail}", head.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(license: &str) -> Diagnostic {
        judge(license, Diagnostic::new(Code::LicenseUnknown, ""))
    }

    fn fixed(d: &Diagnostic) -> Option<&str> {
        match d.fix.as_ref().map(|f| &f.edit) {
            Some(FixEdit::SetString(value)) => Some(value),
            _ => None,
        }
    }

    #[test]
    fn a_deprecated_gnu_id_names_both_replacements_never_itself_and_has_no_fix() {
        for (id, only, later) in [
            ("AGPL-3.0", "AGPL-3.0-only", "AGPL-3.0-or-later"),
            ("GPL-2.0", "GPL-2.0-only", "GPL-2.0-or-later"),
            ("GPL-3.0", "GPL-3.0-only", "GPL-3.0-or-later"),
            ("LGPL-2.0", "LGPL-2.0-only", "LGPL-2.0-or-later"),
            ("LGPL-2.1", "LGPL-2.1-only", "LGPL-2.1-or-later"),
            ("LGPL-3.0", "LGPL-3.0-only", "LGPL-3.0-or-later"),
            ("GFDL-1.3", "GFDL-1.3-only", "GFDL-1.3-or-later"),
            ("AGPL-1.0", "AGPL-1.0-only", "AGPL-1.0-or-later"),
        ] {
            let d = finding(id);
            assert_eq!(
                d.message,
                format!("`{id}` is a deprecated SPDX license identifier")
            );
            let help = d.help.clone().unwrap();
            assert!(
                help.contains(&format!("write `{only}` or `{later}`")),
                "{help}"
            );
            assert!(help.contains("`--fix` leaves this choice to you"), "{help}");
            assert!(!help.contains(&format!("`{id}`")), "{help}");
            assert_eq!(d.fix, None, "{id}");
        }
    }

    #[test]
    fn an_expression_gets_the_whole_expression_with_each_choice() {
        let d = finding("MIT OR GPL-3.0");
        assert_eq!(
            d.message,
            "`MIT OR GPL-3.0`: `GPL-3.0` is a deprecated SPDX license identifier"
        );
        assert!(d
            .help
            .unwrap()
            .starts_with("write `MIT OR GPL-3.0-only` or `MIT OR GPL-3.0-or-later`:"));
        assert_eq!(d.fix, None);
    }

    #[test]
    fn two_choices_are_listed_per_identifier() {
        let d = finding("(GPL-2.0 AND LGPL-2.1) OR MIT");
        assert!(
            d.message
                .contains("`GPL-2.0` and `LGPL-2.1` are deprecated"),
            "{}",
            d.message
        );
        let help = d.help.unwrap();
        assert!(
            help.contains("`GPL-2.0` by `GPL-2.0-only` or `GPL-2.0-or-later`"),
            "{help}"
        );
        assert!(
            help.contains("`LGPL-2.1` by `LGPL-2.1-only` or `LGPL-2.1-or-later`"),
            "{help}"
        );
        assert_eq!(d.fix, None);
    }

    #[test]
    fn a_plus_form_is_fixed_to_or_later_which_means_the_same() {
        for (license, value) in [
            ("GPL-2.0+", "GPL-2.0-or-later"),
            ("LGPL-2.1+", "LGPL-2.1-or-later"),
            ("AGPL-3.0+", "AGPL-3.0-or-later"),
            ("MIT OR GPL-3.0+", "MIT OR GPL-3.0-or-later"),
            (
                "GPL-2.0-with-classpath-exception+",
                "GPL-2.0-or-later WITH Classpath-exception-2.0",
            ),
        ] {
            let d = finding(license);
            assert!(d.message.contains("deprecated"), "{license}: {}", d.message);
            assert_eq!(fixed(&d), Some(value), "{license}");
            assert!(spdx::Expression::parse(value).is_ok());
        }
    }

    #[test]
    fn a_gnu_id_with_an_exception_names_both_with_expressions() {
        let d = finding("GPL-2.0-with-classpath-exception");
        assert!(d.help.unwrap().contains(
            "write `GPL-2.0-only WITH Classpath-exception-2.0` or `GPL-2.0-or-later WITH Classpath-exception-2.0`"
        ));
        assert_eq!(d.fix, None);
    }

    #[test]
    fn every_suggested_replacement_is_valid_spdx() {
        for (id, ..) in WITH_EXCEPTION {
            let Some(Term { replacement, .. }) = deprecated_term(0, id) else {
                panic!("{id} is not found")
            };
            let Replacement::Choice(only, later) = replacement else {
                panic!("{id}: {replacement:?}")
            };
            assert!(spdx::Expression::parse(&only).is_ok(), "{only}");
            assert!(spdx::Expression::parse(&later).is_ok(), "{later}");
        }
        // Every deprecated id of the list is reported as deprecated, never as unknown,
        // and never suggested.
        for license in spdx::identifiers::LICENSES {
            let id = spdx::license_id(license.name).unwrap();
            if !id.is_deprecated() {
                continue;
            }
            let d = finding(license.name);
            assert!(
                d.message.contains("deprecated"),
                "{}: {}",
                license.name,
                d.message
            );
            let help = d.help.unwrap();
            assert!(
                !help.contains(&format!("write `{}`", license.name)),
                "{}: {help}",
                license.name
            );
        }
    }

    #[test]
    fn other_deprecated_ids_point_at_the_spdx_list() {
        let d = finding("wxWindows");
        assert_eq!(
            d.message,
            "`wxWindows` is a deprecated SPDX license identifier"
        );
        assert_eq!(
            d.help.as_deref(),
            Some("the SPDX list names what replaces `wxWindows`: https://spdx.org/licenses/wxWindows.html")
        );
        assert_eq!(d.fix, None);
    }

    #[test]
    fn a_lowercase_deprecated_id_is_named_as_the_list_spells_it() {
        let d = finding("agpl-3.0");
        assert!(
            d.message.contains("`AGPL-3.0` is a deprecated"),
            "{}",
            d.message
        );
        assert!(d
            .help
            .unwrap()
            .contains("`AGPL-3.0-only` or `AGPL-3.0-or-later`"));
    }

    #[test]
    fn an_imprecise_gnu_name_gets_both_versions_and_an_unknown_id_the_closest() {
        let d = finding("agplv3");
        assert_eq!(
            d.help.as_deref(),
            Some("did you mean `AGPL-3.0-only` or `AGPL-3.0-or-later`?")
        );
        let d = finding("Apache 2");
        assert_eq!(d.help.as_deref(), Some("did you mean `Apache-2.0`?"));
        let d = finding("Apache 2.0");
        assert_eq!(
            d.message,
            "`Apache 2.0` is not a known SPDX license expression"
        );
        assert_eq!(d.help.as_deref(), Some("did you mean `Apache-2.0`?"));
        assert_eq!(d.fix, None);
        let d = finding("MIT OR Frobnicate-1.0");
        assert_eq!(
            d.help.as_deref(),
            Some("use an SPDX identifier (https://spdx.org/licenses/) or `proprietary`")
        );
        let d = finding("Frobnicate-1.0");
        assert_eq!(
            d.help.as_deref(),
            Some("use an SPDX identifier (https://spdx.org/licenses/) or `proprietary`")
        );
    }

    #[test]
    fn spellings_of_proprietary_are_fixed_and_nothing_else_is() {
        for license in [
            "Proprietary",
            "PROPRIETARY",
            " proprietary ",
            "Proprietary License",
            "proprietary-license",
        ] {
            let d = finding(license);
            assert_eq!(fixed(&d), Some("proprietary"), "{license}");
            assert_eq!(
                d.message,
                format!("`{license}` is written `proprietary` in the manifest format")
            );
        }
        for license in ["Proprietary OR MIT", "proprietary-ish", "closed"] {
            assert_eq!(fixed(&finding(license)), None, "{license}");
        }
    }
}
