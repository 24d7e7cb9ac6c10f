//! Escaping registry text for each place it is shown: one function per output kind.
//!
//! A registry is untrusted input: a manifest can hold ESC sequences (in comments even raw),
//! bidi overrides, lines that GitHub Actions reads as workflow commands, Markdown or HTML.
//! Every renderer passes what it prints from a finding through one of these functions.

use std::borrow::Cow;
use std::fmt::Write;

/// Characters that must not reach a terminal or log raw: C0 controls other than line feed
/// and tab, DEL, C1 controls (U+009B is a one-byte CSI on some terminals), and the bidi
/// embeddings, overrides and isolates that reorder what a reader sees.
fn is_hidden(c: char) -> bool {
    matches!(c,
        '\0'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escape(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", c as u32);
}

/// `word` as one POSIX `sh` word: bare when it has only characters the shell takes
/// literally, else in single quotes (an inner `'` written `'\''`). For commands printed for a
/// person to copy; [`terminal`] still applies to what reaches a terminal.
#[must_use]
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:@=+-,%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Hidden characters as visible `\u{1b}` escapes; everything else unchanged.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hidden(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text for a terminal or a CI log: [`visible`], and no workflow command either. The
/// Actions runner runs a line as a command when it starts with `::` after leading
/// whitespace, and the legacy `##[` form anywhere in a line; the first character of either
/// becomes an escape.
pub fn terminal(text: &str) -> Cow<'_, str> {
    let safe = !text.chars().any(is_hidden) && !text.contains("::") && !text.contains("##[");
    if safe {
        return Cow::Borrowed(text);
    }
    Cow::Owned(terminal_mapped(text, &mut []))
}

/// [`terminal`], also moving the byte offsets in `offsets` (into `text`) to the same places
/// in the escaped text, so a span still covers its characters. An offset inside a character
/// moves to the end of that character.
pub fn terminal_mapped(text: &str, offsets: &mut [usize]) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let original: Vec<usize> = offsets.to_vec();
    let mut moved = vec![false; offsets.len()];
    let mut move_up_to = |index: usize, to: usize, offsets: &mut [usize]| {
        for (k, &was) in original.iter().enumerate() {
            if !moved[k] && was <= index {
                offsets[k] = to;
                moved[k] = true;
            }
        }
    };
    let mut line_start = true;
    for (i, c) in text.char_indices() {
        move_up_to(i, out.len(), offsets);
        let rest = &text[i..];
        let command = (line_start && rest.starts_with("::")) || rest.starts_with("##[");
        if is_hidden(c) || command {
            push_escape(&mut out, c);
            line_start = false;
        } else {
            out.push(c);
            line_start = c == '\n' || (line_start && c.is_whitespace());
        }
    }
    move_up_to(usize::MAX, out.len(), offsets);
    out
}

/// Data of a GitHub workflow command (the message after `::`): [`visible`] (so a CR is
/// already an escape), then `%` and LF percent-encoded as the runner decodes them.
pub fn workflow_data(text: &str) -> String {
    visible(text).replace('%', "%25").replace('\n', "%0A")
}

/// A property value of a workflow command (`file=`, `title=`): data escapes plus `:` and `,`.
pub fn workflow_property(text: &str) -> String {
    workflow_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A message in a Markdown table cell of the step summary. Text between a pair of
/// backticks stays a code span (messages quote values that way) through
/// [`markdown_code_cell`]; the rest through [`markdown_text_cell`]. Both are inert whatever
/// the registry put in the message.
pub fn markdown_cell(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    // An odd number of backticks leaves the last one unpaired: plain text.
    let paired = parts.len() - (1 - parts.len() % 2);
    let mut out = String::with_capacity(text.len() + 8);
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 && i < paired && !part.is_empty() {
            out.push_str(&markdown_code_cell(part));
        } else {
            if i % 2 == 1 {
                out.push_str("\\`");
            }
            out.push_str(&markdown_text_cell(part));
            if i % 2 == 1 && i < paired {
                out.push_str("\\`");
            }
        }
    }
    out
}

/// Plain text in a Markdown table cell: no HTML, no cell break, no link, emphasis or code
/// span; newlines become spaces.
fn markdown_text_cell(text: &str) -> String {
    let mut marked = String::with_capacity(text.len() + 8);
    for c in visible(text).chars() {
        match c {
            '\n' | '\r' => marked.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '!' => {
                marked.push('\\');
                marked.push(c);
            }
            _ => marked.push(c),
        }
    }
    // The backslashes added above are no HTML, so escaping after them is the same.
    let mut out = String::with_capacity(marked.len() + 8);
    let _ = html_into(&mut out, &marked, Quotes::None);
    out
}

/// Which quotes [`html_into`] replaces besides `&`, `<` and `>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quotes {
    /// None: text outside attributes (a Markdown cell).
    None,
    /// `"` only: SVG attribute values and text, always written in double quotes.
    Double,
    /// `"` as `&quot;` and `'` as `&#39;`: HTML text and attributes of either quoting.
    Both,
}

/// Text for HTML or XML, written into `out`: `&`, `<`, `>` and the chosen [`Quotes`] as
/// character references, everything else unchanged. The one HTML escaper of the crate (the
/// site's templates, README links, icons, Markdown cells).
pub fn html_into(out: &mut impl Write, text: &str, quotes: Quotes) -> std::fmt::Result {
    let mut last = 0;
    for (i, byte) in text.bytes().enumerate() {
        let replacement = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' if quotes != Quotes::None => "&quot;",
            b'\'' if quotes == Quotes::Both => "&#39;",
            _ => continue,
        };
        out.write_str(&text[last..i])?;
        out.write_str(replacement)?;
        last = i + 1;
    }
    out.write_str(&text[last..])
}

/// A Markdown code span in a table cell holding `text` literally: the fence is one backtick
/// longer than the longest run inside, and `|` is escaped (GFM splits cells before it
/// parses code spans).
pub fn markdown_code_cell(text: &str) -> String {
    let text = visible(text).replace(['\n', '\r'], " ");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{}{pad}{fence}", text.replace('|', "\\|"))
}

/// JSON text as a JavaScript expression that stays one even inside an HTML `<script>`
/// element: `<` (so no `</script>` or `<!--`), `>` and U+2028/U+2029 (line terminators in
/// scripts before ES2019) written as `\uXXXX` escapes. These characters can only occur
/// inside JSON strings, where the escape means the same character, so the result is still
/// JSON that parses to the same value.
pub fn json_for_script(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' | '>' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            _ => out.push(c),
        }
    }
    out
}

/// A SARIF plain-text message. GitHub code scanning renders it as Markdown and resolves
/// SARIF embedded links (`[text](target)`) and placeholders (`{0}`), so: [`visible`],
/// brackets and backslashes escaped with a backslash, `<`/`>` too (no autolink, no HTML),
/// and braces doubled as the SARIF 2.1.0 message-string rules require for literal braces.
pub fn sarif_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in visible(text).chars() {
        match c {
            '\\' | '[' | ']' | '<' | '>' => {
                out.push('\\');
                out.push(c);
            }
            '{' => out.push_str("{{"),
            '}' => out.push_str("}}"),
            _ => out.push(c),
        }
    }
    out
}

/// A file path as a relative URI reference (RFC 3986): unreserved characters and `/` kept,
/// every other byte percent-encoded, so a folder named `a b#c` stays one path.
pub fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_for_script_hides_markup_and_line_separators_and_keeps_the_value() {
        let value = serde_json::json!({"d": "</script><!--x-->\u{2028}\u{2029}é\\u003c"});
        let json = serde_json::to_string(&value).unwrap();
        let script = json_for_script(&json);
        assert_eq!(
            script,
            r#"{"d":"\u003c/script\u003e\u003c!--x--\u003e\u2028\u2029é\\u003c"}"#
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&script).unwrap(),
            value
        );
    }

    #[test]
    fn visible_escapes_c0_c1_del_and_bidi_but_keeps_newline_and_tab() {
        let text = "a\u{1b}[2J\u{7}\r\u{7f}\u{9b}\u{202e}\u{2066}\tb\nc\u{e9}";
        assert_eq!(
            visible(text),
            "a\\u{1b}[2J\\u{7}\\u{d}\\u{7f}\\u{9b}\\u{202e}\\u{2066}\tb\nc\u{e9}"
        );
        assert!(matches!(visible("plain `text`"), Cow::Borrowed(_)));
    }

    #[test]
    fn terminal_neutralises_workflow_commands_at_line_start_and_legacy_anywhere() {
        assert_eq!(
            terminal("x\n  ::error::pwned\na::b ##[group]"),
            "x\n  \\u{3a}:error::pwned\na::b \\u{23}#[group]"
        );
        assert_eq!(terminal("::warning::x"), "\\u{3a}:warning::x");
        assert_eq!(terminal("a::b"), "a::b");
    }

    #[test]
    fn terminal_mapped_moves_offsets_past_escapes() {
        let text = "\u{1b}x\u{9b}yz";
        // offsets of `x`, `y` and the end
        let mut offsets = [1, 4, text.len()];
        let out = terminal_mapped(text, &mut offsets);
        assert_eq!(out, "\\u{1b}x\\u{9b}yz");
        assert_eq!(&out[offsets[0]..offsets[0] + 1], "x");
        assert_eq!(&out[offsets[1]..offsets[1] + 1], "y");
        assert_eq!(offsets[2], out.len());
        // inside the two-byte `\u{e9}`: moved past it
        let mut inside = [1];
        assert_eq!(terminal_mapped("\u{e9}a", &mut inside), "\u{e9}a");
        assert_eq!(inside, [2]);
    }

    #[test]
    fn workflow_escapes_follow_the_runner() {
        // CR is shown as an escape (it would move the cursor in the log), LF is kept encoded
        assert_eq!(workflow_data("50%\r\n\u{1b}"), "50%25\\u{d}%0A\\u{1b}");
        assert_eq!(workflow_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn markdown_cell_leaves_no_html_link_or_cell_break() {
        assert_eq!(
            markdown_cell("<script>|[x](y)\n&"),
            "&lt;script&gt;\\|\\[x\\](y) &amp;"
        );
        // quoted values stay code spans; an unpaired or empty pair of backticks is text
        assert_eq!(markdown_cell("tag `a|<b>` bad"), "tag `a\\|<b>` bad");
        assert_eq!(markdown_cell("a `b` `c"), "a `b` \\`c");
        assert_eq!(markdown_cell("``"), "\\`\\`");
        assert_eq!(markdown_code_cell("a|b"), "`a\\|b`");
        assert_eq!(markdown_code_cell("x``y"), "```x``y```");
        assert_eq!(markdown_code_cell("`a"), "`` `a ``");
    }

    #[test]
    fn sarif_text_escapes_links_html_and_placeholders() {
        assert_eq!(
            sarif_text("[x](1) {0} <b>\\"),
            "\\[x\\](1) {{0}} \\<b\\>\\\\"
        );
    }

    #[test]
    fn uri_path_percent_encodes_all_but_unreserved_and_slash() {
        assert_eq!(
            uri_path("a b/c#d%/e\u{e9}.json"),
            "a%20b/c%23d%25/e%C3%A9.json"
        );
    }

    #[test]
    fn html_escapes_markup_and_only_the_chosen_quotes() {
        let text = r#"a & <b> "c" 'd'"#;
        let escaped = |quotes| {
            let mut out = String::new();
            html_into(&mut out, text, quotes).unwrap();
            out
        };
        assert_eq!(escaped(Quotes::None), r#"a &amp; &lt;b&gt; "c" 'd'"#);
        assert_eq!(
            escaped(Quotes::Double),
            "a &amp; &lt;b&gt; &quot;c&quot; 'd'"
        );
        assert_eq!(
            escaped(Quotes::Both),
            "a &amp; &lt;b&gt; &quot;c&quot; &#39;d&#39;"
        );
    }
}
