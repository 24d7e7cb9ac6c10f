//! Source files, byte spans and line:column mapping, shared by the manifest parser and the
//! diagnostics. Ground floor: imports nothing else of this crate.

use std::sync::Arc;

/// A byte range in a source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    /// Offset of the first byte.
    pub start: usize,
    /// Offset after the last byte.
    pub end: usize,
}

impl Span {
    /// The bytes `start..end`.
    pub fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }
}

/// A 1-based line and column; the column counts characters, not bytes, as editors do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// Start offsets of every line, for O(log n) offset look-ups.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// The index of `text`'s lines.
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { starts }
    }

    /// The position of byte `offset` of `text` (clamped, moved back to a character boundary).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let column = text[start..offset].trim_end_matches('\r').chars().count() + 1;
        Position {
            line: line + 1,
            column,
        }
    }

    /// The text of a 1-based line, without its line break.
    pub fn line<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let Some(&start) = self.starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self.starts.get(line).copied().unwrap_or(text.len());
        text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// How many lines the text has.
    pub(crate) fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Byte offset where 1-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or_default()
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// A text file of the registry: its path as shown to users (`/`-separated, relative to the
/// registry root until the command relocates the report) and its contents.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path shown to users, relative to the registry root until relocated.
    pub path: String,
    /// The text.
    pub text: Arc<str>,
    /// Its line index, built once.
    pub lines: Arc<LineIndex>,
}

impl SourceFile {
    /// A source of `text` shown as `path`.
    pub fn new(path: impl Into<String>, text: impl Into<Arc<str>>) -> Self {
        let text = text.into();
        let lines = Arc::new(LineIndex::new(&text));
        Self {
            path: path.into(),
            text,
            lines,
        }
    }

    /// The position of byte `offset`.
    pub fn position(&self, offset: usize) -> Position {
        self.lines.position(&self.text, offset)
    }

    /// Byte offset of a 1-based line and character column (clamped to the text).
    pub fn offset(&self, position: Position) -> usize {
        let start = self
            .lines
            .line_start(position.line.min(self.lines.line_count()));
        let line = self.lines.line(&self.text, position.line);
        start
            + line
                .char_indices()
                .nth(position.column.saturating_sub(1))
                .map_or(line.len(), |(i, _)| i)
    }

    /// The positions of a span's start and end.
    pub fn range(&self, span: Span) -> (Position, Position) {
        (self.position(span.start), self.position(span.end))
    }
}

/// The byte offset of a 1-based line and column as `serde_json`'s errors give them (the
/// column counts bytes; 0 is the line's start), kept inside the text and on a character
/// boundary: where a finding about a JSON document that failed to parse points.
pub fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut at = (start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters_from_one() {
        let text = "ab\n\u{e9}x\r\ny";
        let idx = LineIndex::new(text);
        assert_eq!(idx.position(text, 0), Position { line: 1, column: 1 });
        assert_eq!(idx.position(text, 3), Position { line: 2, column: 1 });
        // 'x' comes after the two-byte é: column 2, not 3
        assert_eq!(idx.position(text, 5), Position { line: 2, column: 2 });
        assert_eq!(idx.position(text, 8), Position { line: 3, column: 1 });
        assert_eq!(idx.line(text, 2), "\u{e9}x");
        assert_eq!(idx.position(text, 999), Position { line: 3, column: 2 });
    }

    #[test]
    fn serde_positions_become_byte_offsets_on_character_boundaries() {
        let text = "{\n  \"a\": \u{e9}\u{e9},\n}";
        assert_eq!(offset_of(text, 2, 8), text.find('\u{e9}').unwrap());
        // A column inside a character falls back to its start.
        assert_eq!(offset_of(text, 2, 10), text.find('\u{e9}').unwrap() + 2);
        assert_eq!(offset_of(text, 2, 9), text.find('\u{e9}').unwrap());
        assert_eq!(offset_of(text, 9, 1), text.len());
    }
}
