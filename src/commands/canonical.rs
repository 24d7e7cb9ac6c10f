//! The canonical layout of a manifest's text, shared by `fmt` and `new`.

use crate::manifest::edit::{EditError, Editor};
use acp_registry_core::source::SourceFile;

/// The canonical layout of a manifest's text (what `fmt` writes and `new` scaffolds), or why
/// there is none; `display` names the file in the message.
pub(crate) fn formatted(text: &str, display: &str) -> Result<String, String> {
    let mut editor = Editor::parse(text).map_err(|error| match error {
        EditError::Parse(syntax) => {
            let source = SourceFile::new(display, text);
            let (start, _) = source.range(syntax.span);
            format!(
                "{display}:{}:{}: not valid JSONC: {}; fix it first (`acp-registry validate` explains)",
                start.line, start.column, syntax.message
            )
        }
        other => format!("{display}: {other}"),
    })?;
    editor
        .format()
        .map_err(|error| format!("{display}: {error}"))?;
    Ok(editor.into_text())
}
