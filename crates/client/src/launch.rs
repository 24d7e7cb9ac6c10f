//! Starting an installed agent: the program with the registry's arguments, then the caller's,
//! and the registry's environment over the inherited one. The caller owns the
//! [`std::process::Command`] (it may pipe stdio, change the folder, add variables).

use std::process::Command;

use crate::platform::Kind;
use crate::store::Installed;

impl Installed {
    /// The command that starts this agent: [`Installed::program`] with [`Installed::args`]
    /// then `extra_args`, [`Installed::env`] set over the inherited environment, the current
    /// folder unchanged, stdio inherited (an npx package's script is run by `node` on
    /// Windows, which has no `#!`).
    ///
    /// ```no_run
    /// # fn demo(installed: &acp_registry_client::store::Installed) -> std::io::Result<()> {
    /// let status = installed.command(&["--acp".to_string()]).status()?;
    /// # let _ = status; Ok(()) }
    /// ```
    #[must_use]
    pub fn command(&self, extra_args: &[String]) -> Command {
        let mut command = if cfg!(windows) && self.kind == Kind::Npx {
            let mut node = Command::new("node");
            node.arg(&self.program);
            node
        } else {
            Command::new(&self.program)
        };
        command.args(&self.args).args(extra_args).envs(&self.env);
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[cfg(unix)]
    #[test]
    fn the_command_gives_the_registry_args_then_the_caller_s_and_sets_the_env_over_the_inherited_one(
    ) {
        let installed = Installed {
            id: "a".into(),
            version: "1".into(),
            platform: "linux-x86_64".into(),
            kind: Kind::Binary,
            dir: "/".into(),
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                r#"printf '%s|' "$0" "$@" "$ACP_T_SET" "$ACP_T_KEPT""#.into(),
                "zero".into(),
                "registry arg".into(),
            ],
            env: BTreeMap::from([("ACP_T_SET".into(), "from the registry".into())]),
            sha256: None,
            installed_at: "2026-01-01T00:00:00Z".into(),
            source: String::new(),
            warnings: Vec::new(),
        };
        let output = installed
            .command(&["caller arg".to_string()])
            .env("ACP_T_KEPT", "inherited")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "zero|registry arg|caller arg|from the registry|inherited|"
        );
    }
}
