//! The environment variable that marks every process of one sandbox: set in each agent's
//! environment, and read back by the clean-up to find what escaped its keeper.

/// The variable marking every process of one sandbox (inherited across fork, exec, setsid).
pub(crate) const MARKER: &str = "ACP_REGISTRY_VERIFY_SANDBOX";
