//! One `matrix` probe: a session method sent and how its answer was classified.

use serde::{Deserialize, Serialize};

use super::session::Answer;
use acp_registry_core::acp::error_codes;

/// How a probe was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Class {
    Success,
    MethodNotFound,
    AuthRequired,
    InvalidParams,
    NotFound,
    OtherError,
    NoResponse,
    ProcessExited,
}

impl Class {
    pub(crate) const ALL: [Class; 8] = [
        Class::Success,
        Class::MethodNotFound,
        Class::AuthRequired,
        Class::InvalidParams,
        Class::NotFound,
        Class::OtherError,
        Class::NoResponse,
        Class::ProcessExited,
    ];

    pub(crate) fn of(answer: &Answer) -> Class {
        match answer {
            Answer::Result(_) => Class::Success,
            Answer::Error(e) => match e.code {
                error_codes::METHOD_NOT_FOUND => Class::MethodNotFound,
                error_codes::AUTH_REQUIRED => Class::AuthRequired,
                error_codes::INVALID_PARAMS => Class::InvalidParams,
                error_codes::RESOURCE_NOT_FOUND => Class::NotFound,
                _ => Class::OtherError,
            },
            Answer::NoResponse => Class::NoResponse,
            Answer::Exited(_) => Class::ProcessExited,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Class::Success => "success",
            Class::MethodNotFound => "method not found",
            Class::AuthRequired => "auth required",
            Class::InvalidParams => "invalid params",
            Class::NotFound => "not found",
            Class::OtherError => "other error",
            Class::NoResponse => "no response",
            Class::ProcessExited => "process exited",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Probe {
    pub(crate) method: String,
    pub(crate) class: Class,
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_registry_core::acp::RpcError;
    use serde_json::json;

    #[test]
    fn answers_are_classified_by_json_rpc_code() {
        let err = |code| {
            Answer::Error(RpcError {
                code,
                message: String::new(),
                data: None,
            })
        };
        assert_eq!(Class::of(&Answer::Result(json!({}))), Class::Success);
        assert_eq!(Class::of(&err(-32601)), Class::MethodNotFound);
        assert_eq!(Class::of(&err(-32000)), Class::AuthRequired);
        assert_eq!(Class::of(&err(-32602)), Class::InvalidParams);
        assert_eq!(Class::of(&err(-32002)), Class::NotFound);
        assert_eq!(Class::of(&err(-1)), Class::OtherError);
        assert_eq!(Class::of(&Answer::NoResponse), Class::NoResponse);
        assert_eq!(Class::of(&Answer::Exited(Some(1))), Class::ProcessExited);
    }
}
