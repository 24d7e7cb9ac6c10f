//! Exit codes shared by every command, and [`Exit`], the type they have.

/// The exit code of a command that ran: one of [`exit`](self)'s constants. A plain `u8`, so
/// the binaries hand it to `ExitCode::from` as it is.
pub type Exit = u8;

/// Success: nothing to report (or only what does not fail the run).
pub const OK: Exit = 0;
/// Findings (or differences with `--check`).
pub const FINDINGS: Exit = 1;
/// Usage or I/O failure: what a [`CommandError`](crate::commands::CommandError) exits with.
pub const FAILURE: Exit = 2;
/// `build --last-good`: published, with failing entries held back in their previous form
/// or left out (the findings say which).
pub const HELD_BACK: Exit = 3;
/// `update --apply`: every entry that could be updated was written, and some entries failed
/// (the report names each with its source); the same code as [`HELD_BACK`], the same meaning:
/// the job did what it could, open the pull request and raise the alarm.
pub const PARTIAL: Exit = HELD_BACK;
