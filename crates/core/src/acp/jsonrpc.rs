//! JSON-RPC 2.0 messages: classification of one received line, and the lines we send.

use serde_json::{json, Map, Value};

/// Error codes of JSON-RPC 2.0 and the ACP additions (`agent-client-protocol-schema`'s
/// `ErrorCode`).
pub mod error_codes {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a JSON-RPC request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// A method the receiver does not have.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method's parameters do not fit.
    pub const INVALID_PARAMS: i64 = -32602;
    /// ACP: the agent needs authentication first.
    pub const AUTH_REQUIRED: i64 = -32000;
    /// ACP: the session or resource named does not exist.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
}

/// A request id: JSON-RPC allows numbers and strings (and `null` in error responses to
/// requests whose id could not be read).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    /// A numeric id.
    Number(i64),
    /// A string id.
    String(String),
    /// `null`: the request's id was unreadable.
    Null,
}

impl Id {
    fn from_value(value: &Value) -> Option<Id> {
        match value {
            Value::Number(n) => n.as_i64().map(Id::Number),
            Value::String(s) => Some(Id::String(s.clone())),
            Value::Null => Some(Id::Null),
            _ => None,
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Id::Number(n) => json!(n),
            Id::String(s) => json!(s),
            Id::Null => Value::Null,
        }
    }
}

/// The `error` member of a response.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// One of [`error_codes`], or the peer's own.
    pub code: i64,
    /// What went wrong, for people.
    pub message: String,
    /// Extra detail, as the peer sent it.
    pub data: Option<Value>,
}

/// One JSON-RPC 2.0 message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A call that expects a response with the same id.
    Request {
        /// Matches the response to the request.
        id: Id,
        /// The method called, e.g. `initialize`.
        method: String,
        /// The parameters, when sent.
        params: Option<Value>,
    },
    /// A call without an id: no response is sent.
    Notification {
        /// The method called, e.g. `session/update`.
        method: String,
        /// The parameters, when sent.
        params: Option<Value>,
    },
    /// The answer to a request: its result or its error.
    Response {
        /// The id of the request answered.
        id: Id,
        /// `result`, or `error`.
        outcome: Result<Value, RpcError>,
    },
}

/// Why a line is not a JSON-RPC 2.0 message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The line is not JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// JSON, but not shaped as a request, response or notification.
    #[error("not a JSON-RPC 2.0 message: {0}")]
    NotJsonRpc(&'static str),
}

impl Message {
    /// Classify one line (without its newline).
    pub fn parse(line: &[u8]) -> Result<Message, ParseError> {
        let value: Value =
            serde_json::from_slice(line).map_err(|e| ParseError::NotJson(e.to_string()))?;
        let Value::Object(object) = value else {
            return Err(ParseError::NotJsonRpc("not an object"));
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(ParseError::NotJsonRpc("`jsonrpc` is not \"2.0\""));
        }
        let id = match object.get("id") {
            Some(raw) => Some(Id::from_value(raw).ok_or(ParseError::NotJsonRpc(
                "`id` is neither a number, a string nor null",
            ))?),
            None => None,
        };
        if let Some(method) = object.get("method") {
            let method = method
                .as_str()
                .ok_or(ParseError::NotJsonRpc("`method` is not a string"))?
                .to_string();
            let params = object.get("params").cloned();
            return Ok(match id {
                Some(id) => Message::Request { id, method, params },
                None => Message::Notification { method, params },
            });
        }
        let id = id.ok_or(ParseError::NotJsonRpc("neither `method` nor `id`"))?;
        let outcome = match (object.get("result"), object.get("error")) {
            (Some(result), None) => Ok(result.clone()),
            (None, Some(error)) => Err(rpc_error(error)?),
            _ => {
                return Err(ParseError::NotJsonRpc(
                    "a response needs exactly one of `result` and `error`",
                ))
            }
        };
        Ok(Message::Response { id, outcome })
    }

    /// The message as one line, newline included.
    pub fn to_line(&self) -> String {
        let mut object = Map::new();
        object.insert("jsonrpc".into(), json!("2.0"));
        match self {
            Message::Request { id, method, params } => {
                object.insert("id".into(), id.to_value());
                object.insert("method".into(), json!(method));
                if let Some(params) = params {
                    object.insert("params".into(), params.clone());
                }
            }
            Message::Notification { method, params } => {
                object.insert("method".into(), json!(method));
                if let Some(params) = params {
                    object.insert("params".into(), params.clone());
                }
            }
            Message::Response { id, outcome } => {
                object.insert("id".into(), id.to_value());
                match outcome {
                    Ok(result) => object.insert("result".into(), result.clone()),
                    Err(error) => object.insert("error".into(), error_value(error)),
                };
            }
        }
        let mut line = Value::Object(object).to_string();
        line.push('\n');
        line
    }

    /// The error response to a request we do not serve.
    pub fn method_not_found(id: Id, method: &str) -> Message {
        Message::Response {
            id,
            outcome: Err(RpcError {
                code: error_codes::METHOD_NOT_FOUND,
                message: format!("method not found: {method}"),
                data: None,
            }),
        }
    }
}

fn rpc_error(value: &Value) -> Result<RpcError, ParseError> {
    let code = value
        .get("code")
        .and_then(Value::as_i64)
        .ok_or(ParseError::NotJsonRpc("`error.code` is not an integer"))?;
    Ok(RpcError {
        code,
        message: value
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        data: value.get("data").cloned(),
    })
}

fn error_value(error: &RpcError) -> Value {
    let mut value = json!({"code": error.code, "message": error.message});
    if let Some(data) = &error.data {
        value["data"] = data.clone();
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified_as_request_notification_or_response() {
        let request = Message::parse(
            br#"{"jsonrpc":"2.0","id":"a","method":"fs/read_text_file","params":{}}"#,
        );
        assert!(matches!(
            request,
            Ok(Message::Request {
                id: Id::String(_),
                ..
            })
        ));
        let note = Message::parse(br#"{"jsonrpc":"2.0","method":"session/update"}"#);
        assert!(matches!(
            note,
            Ok(Message::Notification { params: None, .. })
        ));
        let ok = Message::parse(br#"{"jsonrpc":"2.0","id":0,"result":{"x":1}}"#).unwrap();
        assert_eq!(
            ok,
            Message::Response {
                id: Id::Number(0),
                outcome: Ok(json!({"x": 1}))
            }
        );
        let err = Message::parse(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}"#,
        )
        .unwrap();
        assert!(matches!(
            err,
            Message::Response {
                id: Id::Null,
                outcome: Err(RpcError { code: -32601, .. })
            }
        ));
    }

    #[test]
    fn malformed_lines_say_why() {
        assert!(matches!(
            Message::parse(b"Starting agent..."),
            Err(ParseError::NotJson(_))
        ));
        assert_eq!(
            Message::parse(br#"{"id":1,"result":1}"#),
            Err(ParseError::NotJsonRpc("`jsonrpc` is not \"2.0\""))
        );
        assert!(
            Message::parse(br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1}}"#).is_err()
        );
        assert!(Message::parse(br#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#).is_err());
        assert!(Message::parse(br#"[1]"#).is_err());
    }

    #[test]
    fn written_lines_parse_back_to_the_same_message() {
        for message in [
            Message::Request {
                id: Id::Number(7),
                method: "initialize".into(),
                params: Some(json!({"a": 1})),
            },
            Message::Notification {
                method: "session/cancel".into(),
                params: None,
            },
            Message::method_not_found(Id::String("x".into()), "fs/read_text_file"),
            Message::Response {
                id: Id::Number(1),
                outcome: Ok(Value::Null),
            },
        ] {
            let line = message.to_line();
            assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
            assert_eq!(Message::parse(line.trim_end().as_bytes()).unwrap(), message);
        }
    }
}
