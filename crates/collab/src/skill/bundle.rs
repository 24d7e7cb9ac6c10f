//! The bundled skill: its name, its files as compiled in from the crate's `skill/` folder, and
//! the name of the file an install adds (the launchers' pointer; the record is the core's).

use std::collections::BTreeMap;

/// The skill's name as stored in the registry.
pub const NAME: &str = "agent-collaboration-protocol";
/// Where the launchers read the installed binary's path.
pub const POINTER: &str = "scripts/acp-collab-path.txt";
/// The engine version an install records.
pub(crate) const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The name of the installed skill folder, in every skills folder: the one place install,
/// uninstall, list and the shadowing checks take it from.
pub(crate) fn folder_name() -> &'static str {
    NAME
}

macro_rules! skill_files {
    ($($path:literal),* $(,)?) => {
        /// The skill's files (path below `skill/<name>/`, bytes), as compiled in.
        pub const FILES: &[(&str, &[u8])] = &[$((
            $path,
            include_bytes!(concat!("../../skill/agent-collaboration-protocol/", $path)),
        )),*];
    };
}

skill_files!(
    "SKILL.md",
    "references/commands.md",
    "references/file-formats.md",
    "scripts/_acp_collab.py",
    "scripts/append_event.py",
    "scripts/init_collaboration.py",
    "scripts/next_action.py",
    "scripts/validate_collaboration.py",
    "scripts/wait_for_turn.py",
);

/// The compiled-in skill, by path.
pub(crate) fn skill_tree() -> BTreeMap<String, Vec<u8>> {
    FILES
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
        .collect()
}
