//! One finished run of a program: its exit code and both outputs.

use std::process::Output;

use serde_json::Value;

use crate::findings::Findings;

/// A program's exit code (`-1` when a signal or a time limit ended it), standard output and
/// standard error, decoded lossily.
#[derive(Debug, Clone)]
pub struct Run {
    /// The exit code, `-1` when there is none.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Runs `command` to the end.
    pub fn of(command: &mut std::process::Command) -> Run {
        command.output().expect("the program starts").into()
    }

    /// The exit code, `None` when a signal or a time limit ended the program.
    pub fn exited(&self) -> Option<i32> {
        (self.code >= 0).then_some(self.code)
    }

    /// Standard output then standard error, as a reader of a terminal sees them.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// Both outputs, labelled: the message of a failed assertion.
    pub fn explain(&self) -> String {
        format!(
            "exit {}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    /// Asserts the exit code, showing both outputs when it differs.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Run {
        assert_eq!(self.code, code, "{}", self.explain());
        self
    }

    /// Asserts exit code 0.
    #[track_caller]
    pub fn assert_ok(&self) -> &Run {
        self.assert_code(0)
    }

    /// Standard output as JSON, `Null` when it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or(Value::Null)
    }

    /// The `--format json` document on standard output (panics, showing both outputs, when
    /// it is not one).
    #[track_caller]
    pub fn findings(&self) -> Findings {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not a findings document ({e})\n{}", self.explain()))
    }

    /// The code of every finding, in order.
    #[track_caller]
    pub fn codes(&self) -> Vec<String> {
        self.findings().codes()
    }

    /// Whether a finding has `code` and concerns `file`.
    #[track_caller]
    pub fn has(&self, code: &str, file: &str) -> bool {
        self.findings()
            .findings
            .iter()
            .any(|f| f.code == code && f.file == file)
    }
}
