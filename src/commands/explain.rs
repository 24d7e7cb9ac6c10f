//! `acp-registry explain`: a rule's documentation, the code list, or `docs/rules.md`.

use crate::rules::{explain, rules_markdown, Code, UnknownCode};

pub enum Request {
    Code(String),
    List,
    Markdown,
}

pub fn run(request: Request) -> Result<String, UnknownCode> {
    Ok(match request {
        Request::Code(name) => explain(name.parse::<Code>()?),
        Request::List => Code::ALL
            .iter()
            .map(|c| {
                format!(
                    "{:<24} {:<8} {}\n",
                    c.as_str(),
                    c.default_severity(),
                    c.summary()
                )
            })
            .collect(),
        Request::Markdown => rules_markdown(),
    })
}
