//! The one template filler of `new` and `init` (`templates/`): `{{key}}` becomes its value
//! in one pass, so a value is never scanned for further keys. GitHub's `${{ … }}`
//! expressions in a workflow template are left as they are.

/// `template` with every `{{key}}` replaced by `value(key)`. A line holding only `{{key}}`
/// takes a value of several lines, each indented as the key was, and disappears when the
/// value is empty. `Err` names a key `value` does not know (a template bug).
pub(crate) fn fill(
    template: &str,
    value: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    for line in template.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let indent = &body[..body.len() - body.trim_start().len()];
        let whole = body
            .trim()
            .strip_prefix("{{")
            .and_then(|rest| rest.strip_suffix("}}"))
            .filter(|key| !key.contains('}'));
        match whole {
            Some(key) => {
                let text = value(key).ok_or_else(|| format!("unknown template key `{key}`"))?;
                for value_line in text.lines() {
                    if value_line.is_empty() {
                        out.push('\n');
                    } else {
                        out.push_str(indent);
                        out.push_str(value_line);
                        out.push('\n');
                    }
                }
                if !line.ends_with('\n') && out.ends_with('\n') {
                    out.pop();
                }
            }
            None => fill_inline(line, value, &mut out)?,
        }
    }
    Ok(out)
}

fn fill_inline(
    mut rest: &str,
    value: &dyn Fn(&str) -> Option<String>,
    out: &mut String,
) -> Result<(), String> {
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        let key = &rest[start + 2..start + 2 + len];
        let end = start + 2 + len + 2;
        if rest[..start].ends_with('$') {
            out.push_str(&rest[..end]);
        } else {
            out.push_str(&rest[..start]);
            out.push_str(&value(key).ok_or_else(|| format!("unknown template key `{key}`"))?);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(key: &str) -> Option<String> {
        match key {
            "a" => Some("{{b}}".into()),
            "b" => Some("B".into()),
            "block" => Some("x:\n  y".into()),
            "none" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn values_are_not_filled_again() {
        assert_eq!(fill("<{{a}}|{{b}}>\n", &values).unwrap(), "<{{b}}|B>\n");
    }

    #[test]
    fn a_key_alone_on_its_line_takes_a_block_at_its_indentation_or_vanishes() {
        let text = "s:\n    {{block}}\n    {{none}}\nend\n";
        assert_eq!(fill(text, &values).unwrap(), "s:\n    x:\n      y\nend\n");
    }

    #[test]
    fn github_expressions_are_left_alone() {
        let text = "if: ${{ github.ref }} and {{b}}\n";
        assert_eq!(
            fill(text, &values).unwrap(),
            "if: ${{ github.ref }} and B\n"
        );
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_it() {
        assert_eq!(
            fill("{{nope}}", &values).unwrap_err(),
            "unknown template key `nope`"
        );
    }
}
