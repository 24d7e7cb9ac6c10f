//! The versioned document of `validate --format json` (and of the other commands that report
//! findings), deserialised: `src/diagnostics/json.rs` writes it.

use serde::Deserialize;

/// The only version of the document these types read; a new one must fail loudly here.
pub const VERSION: u32 = 1;

/// `{"version", "summary", "findings"}`; other members are not read (`verify` adds its
/// `agents` and `part`).
#[derive(Debug, Clone, Deserialize)]
pub struct Findings {
    /// The document version, [`VERSION`].
    #[serde(deserialize_with = "version")]
    pub version: u32,
    /// The counts.
    pub summary: Summary,
    /// Every finding, in report order.
    pub findings: Vec<Finding>,
}

fn version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = u32::deserialize(d)?;
    if v == VERSION {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!(
            "findings document version {v}, the test kit reads {VERSION}"
        )))
    }
}

/// The counts of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Findings of severity error.
    pub errors: usize,
    /// Findings of severity warning.
    pub warnings: usize,
    /// Findings of severity note.
    pub notes: usize,
    /// Entries checked.
    pub entries: usize,
}

/// One finding; positions are 1-based, `None` for a finding about a whole file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// The rule code.
    pub code: String,
    /// `error`, `warning` or `note`.
    pub severity: String,
    /// The file, relative to the registry root.
    pub file: String,
    /// First line.
    pub line: Option<usize>,
    /// First column (characters).
    pub column: Option<usize>,
    /// Last line.
    pub end_line: Option<usize>,
    /// Last column.
    pub end_column: Option<usize>,
    /// The JSON pointer into the file, when the finding has one.
    pub pointer: Option<String>,
    /// The message.
    pub message: String,
    /// The help line, when there is one.
    pub help: Option<String>,
}

impl Finding {
    /// `file:line:col`, or `file` for a finding about a whole file.
    pub fn place(&self) -> String {
        match (self.line, self.column) {
            (Some(line), Some(column)) => format!("{}:{line}:{column}", self.file),
            _ => self.file.clone(),
        }
    }

    /// `code file`.
    pub fn code_and_file(&self) -> String {
        format!("{} {}", self.code, self.file)
    }
}

impl Findings {
    /// Parses a document (panics with the text when it is not one).
    #[track_caller]
    pub fn parse(text: &str) -> Findings {
        serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("not a findings document ({e}): {text}"))
    }

    /// The code of every finding, in order.
    pub fn codes(&self) -> Vec<String> {
        self.findings.iter().map(|f| f.code.clone()).collect()
    }

    /// `(severity, code, place)` of every finding ([`Finding::place`]).
    pub fn triples(&self) -> Vec<(String, String, String)> {
        self.findings
            .iter()
            .map(|f| (f.severity.clone(), f.code.clone(), f.place()))
            .collect()
    }

    /// The findings with `code`.
    pub fn with_code<'a>(&'a self, code: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.findings.iter().filter(move |f| f.code == code)
    }
}
