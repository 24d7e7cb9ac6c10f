//! The rule catalogue: one `Code` per check, with its family, default severity and
//! documentation. Every [`Diagnostic`](super::Diagnostic) carries its `Code`; `acp-registry
//! explain`, `docs/rules.md` and the SARIF rule table are generated from this table.
//!
//! A `Diagnostic` holds the `Code` value, never a string mapped back to one, and the catalogue is
//! one `catalogue!` table in the ground layer so every layer can name a code. Each message and
//! help sentence is written once, beside the rule that emits it.

use std::fmt;
use std::str::FromStr;

use super::severity::Severity;

/// The command that pins the missing `sha256` of binary archives, as a literal so the
/// catalogue can `concat!` it: the `sha256-missing` help and explanation, the placeholder help
/// and the comment of `new`'s binary scaffold all name this one command.
macro_rules! pin_digests_command {
    () => {
        "acp-registry validate --fix --verify-archives"
    };
}
pub(crate) use pin_digests_command;

/// [`pin_digests_command!`]: downloads each archive without a pin (all of the registry, or the
/// entries named after it) and writes its digest into the manifest.
pub(crate) const PIN_DIGESTS_COMMAND: &str = pin_digests_command!();

macro_rules! catalogue {
    ($( $variant:ident = $name:literal, $family:ident, $severity:ident, $summary:literal, $explanation:expr; )*) => {
        /// A stable rule code. The kebab-case name is the public identifier: never rename one
        /// once released.
        // Each variant's doc is its summary: plain text shown by `explain`, not rustdoc Markdown.
        #[allow(clippy::doc_markdown)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $( #[doc = $summary] $variant, )* }

        impl Code {
            /// Every code, in catalogue order (the order of `docs/rules.md` and SARIF).
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The kebab-case name findings and configuration use.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $name, )* }
            }

            /// The family the code is listed under.
            pub fn family(self) -> Family {
                match self { $( Code::$variant => Family::$family, )* }
            }

            /// Severity before configuration overrides. A few rules report a milder severity
            /// for a milder case; their explanation says so.
            pub fn default_severity(self) -> Severity {
                match self { $( Code::$variant => Severity::$severity, )* }
            }

            /// One sentence saying what the code reports.
            pub fn summary(self) -> &'static str {
                match self { $( Code::$variant => $summary, )* }
            }

            /// Why the rule exists and how to satisfy it.
            pub fn explanation(self) -> &'static str {
                match self { $( Code::$variant => $explanation, )* }
            }
        }
    };
}

/// A group of related codes; `docs/rules.md` has one section per family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// Reading files: syntax, encoding, links, sizes, the schema, the entry layout.
    Files,
    /// The id and the versions.
    Identity,
    /// Descriptive fields: license, URLs, capabilities, auth, tags.
    Metadata,
    /// How the agent launches: binaries, npx and uvx packages.
    Distribution,
    /// The `preview` block.
    Preview,
    /// The icon files.
    Icons,
    /// The `skill/` folder.
    Skills,
    /// The registry as a whole and its configuration.
    Registry,
    /// `validate --online`: URLs and package registries.
    Online,
    /// `verify` and `matrix`: launching the agent.
    Verify,
    /// `skill check`: other people's skill indexes and plugin marketplaces.
    Indexes,
}

impl Family {
    /// The heading of the family's section.
    pub fn title(self) -> &'static str {
        match self {
            Family::Files => "Files and syntax",
            Family::Identity => "Identity and versions",
            Family::Metadata => "Metadata",
            Family::Distribution => "Distribution",
            Family::Preview => "Preview channel",
            Family::Icons => "Icons",
            Family::Skills => "Skills",
            Family::Registry => "Registry-wide and configuration",
            Family::Online => "Online checks (`--online`)",
            Family::Verify => "Launch checks (`verify`, `matrix`)",
            Family::Indexes => "Skill indexes and marketplaces (`skill check`)",
        }
    }
}

catalogue! {
    JsoncSyntax = "jsonc-syntax", Files, Error,
        "The file is not valid JSONC.",
        "Manifests and the configuration file are JSONC: JSON plus `//` and `/* */` comments and trailing commas. Anything else (single quotes, unquoted keys, missing commas, hex numbers, raw control characters such as a tab inside a string, which must be written `\\t`) is refused because every client reads the published output with a strict JSON parser. The finding points at the first token that could not be parsed; fix it and run again, later errors may appear once this one is gone.";
    DuplicateKey = "duplicate-key", Files, Error,
        "A key appears twice in one object.",
        "JSON parsers silently keep only one of two equal keys (most keep the last), so the value a reviewer reads may not be the one clients use. Remove one of the two occurrences; the finding points at the repeated key and names the line of the first.";
    NotUtf8 = "not-utf8", Files, Error,
        "A text file is not valid UTF-8.",
        "Manifests, icons, READMEs and skill files must be UTF-8. Re-save the file as UTF-8 (without a byte order mark for JSON).";
    FileUnreadable = "file-unreadable", Files, Error,
        "A file or folder of the registry cannot be read.",
        "The path exists but reading it failed: permissions, a folder where a file belongs (`agent.json/`, `icon.svg/`), a file where a folder belongs (`skill`), an I/O error. The entry is still reported, never silently dropped. The message names the path and carries the reason; make the path readable or give it the right kind.";
    FileLink = "file-link", Files, Error,
        "A registry path is a symbolic link or a hard link.",
        "Links are never followed in a registry, wherever they point (a hard link, a regular file with more than one name, is refused the same way: it can bring any file of the same file system into the tree with nothing at the path to show it): an entry folder at the root, `agent.json`, an icon, `README.md`, anything under `skill/`, `acp-registry.jsonc` or `quarantine.json`. A link that stays inside the registry today can be retargeted by the next change, git on Windows checks links out as plain text files, and the published output would copy content a reviewer never saw at that path. Replace the link with the file (or folder) itself. The registry root named with `--registry` may itself be a link.";
    FileNotRegular = "file-not-regular", Files, Error,
        "A registry path is a FIFO, socket or device.",
        "Only regular files are read. A FIFO (named pipe), socket or device node in a registry is refused by its file type and never read; opening never blocks, so the tool neither hangs on a FIFO nor reads a device like `/dev/zero` forever. Replace it with a regular file, or remove it.";
    FileTooLarge = "file-too-large", Files, Error,
        "A file is larger than its limit.",
        "Limits protect clients and the build: `agent.json` at most 64 KiB, each icon at most 32 KiB, `README.md` at most 64 KiB, `releases.json` at most 4 MiB. Files over the limit are not parsed. Shrink the file: optimise the SVG (remove metadata, round coordinates), shorten the README.";
    Schema = "schema", Files, Error,
        "The manifest violates the JSON Schema.",
        "Every manifest is validated against `schemas/agent.schema.json` (JSON Schema draft-07, `format` checked). Each violation is reported once, at the offending value, or at the object missing a required field. Violations that a more specific rule already reports at the same place are not repeated. Unknown top-level fields are `unknown-field` warnings. The agent as `build` publishes it in each output (preview resolved, patches applied, `icon` set) is also checked against `schemas/registry.schema.json`, so that whatever validates also builds; those findings name the output.";
    MissingManifest = "missing-manifest", Files, Warning,
        "A folder in the registry has no agent.json.",
        "Every non-hidden folder of the registry root is an entry and needs `agent.json`. Folders whose names start with `.` or `_`, and `dist`, `target` and `node_modules`, are skipped. Add the manifest, or rename the folder with a leading `_` if it is not an entry.";
    UnexpectedFile = "unexpected-file", Files, Warning,
        "An entry folder holds a file that is not part of the layout.",
        "An entry folder may hold `agent.json`, `icon.svg`, `icon-light.svg`, `icon-dark.svg`, `README.md` and `skill/`. Anything else is not published and is probably a mistake (a stray build artefact, an icon with the wrong name). Remove it or move it out of the registry.";
    IdFormat = "id-format", Identity, Error,
        "The id is not a lowercase slug usable as a file name on every system.",
        "`id` must match `^[a-z][a-z0-9-]*$`: a lowercase letter, then lowercase letters, digits and hyphens; at most 64 bytes; and not a Windows device name (`con`, `nul`, `aux`, `prn`, `com1`-`com9`, `lpt1`-`lpt9`). Ids are used in URLs, file and folder names and client settings, on every operating system.";
    IdMismatch = "id-mismatch", Identity, Error,
        "The id differs from the folder name.",
        "`id` must equal the name of the folder holding `agent.json`, so that paths and ids always agree. Rename the folder or change the id.";
    DuplicateId = "duplicate-id", Identity, Error,
        "Two entries declare the same id.",
        "Ids are unique in the registry; clients key settings by id. Both entries are reported. Registry-wide, this rule also sees entries outside `--changed-since`.";
    VersionFormat = "version-format", Identity, Error,
        "The version is not X.Y.Z.",
        "`version` is three dot-separated numbers, digits only (leading zeros allowed, for calendar versions like `2026.07.20`). Pre-release tags belong to the `preview` block, never to the root version.";
    SchemaVersion = "schema-version", Identity, Error,
        "The manifest's schema_version is newer than this tool or malformed.",
        "`schema_version` is the semantic version of the manifest format (absent means 1.0.0). A newer major version cannot be read safely: upgrade acp-registry. A newer minor version is reported as a warning: the manifest may use fields this tool does not know yet.";
    VersionDecreased = "version-decreased", Identity, Error,
        "The version is lower than at the base revision of --changed-since.",
        "With `validate --changed-since REV`, an entry's `version` is compared with the same entry's `version` at `REV`, read from git (no network). Versions are `X.Y.Z` compared number by number (so `2026.07.20` is above `2026.7.3`); when either side is not `X.Y.Z`, nothing is compared (`version-format` reports the current one). A lower version makes clients that already installed the higher one see a downgrade, or never update; publish a new, higher version instead. Reported at the `version` value.";
    VersionUnchanged = "version-unchanged", Identity, Warning,
        "The distribution changed but the version did not (against --changed-since).",
        "With `validate --changed-since REV`, an entry whose `version` equals the one at `REV` while its `distribution` (compared as data: formatting and comments do not count) differs is reported at `version`. Clients and caches key what they downloaded by version, so they keep the old package or archive, and a changed archive at an unchanged version is what a retagged or compromised release looks like. Raise `version` with the distribution; a change that only fixes a typo in the URL of the same release may be accepted as it is.";
    IdRenamed = "id-renamed", Identity, Warning,
        "An id was removed and another added in the same change: a likely rename.",
        "With `validate --changed-since REV`, an entry added since `REV` while another was removed is reported at the new `id` when the two look like the same agent (same `repository`, the same `name`, or the same `distribution`), or when they are the only entry removed and the only one added. Clients save the id in their settings, so renaming it breaks every existing setup. Keep the old folder and id, and change `name` (the display name) instead; if the agent really is a different one, this warning can be ignored.";
    EntryRemoved = "entry-removed", Identity, Note,
        "An entry that exists at the base revision of --changed-since was removed.",
        "With `validate --changed-since REV`, every entry folder whose `agent.json` exists at `REV` but not in the working tree is reported as a note at the removed `<id>/agent.json`, naming the agent, so reviewers see that clients will lose it. Removal is sometimes right (an abandoned agent); `quarantine.json` keeps an entry listed with a reason instead.";
    LicenseUrlMissing = "license-url-missing", Metadata, Warning,
        "The manifest has no license_url.",
        "`license_url` (an absolute https URL to the license text) lets users read the terms before installing. Missing is a warning by default; a registry can raise it to an error in `acp-registry.jsonc` and exempt grandfathered ids.";
    LicenseUnknown = "license-unknown", Metadata, Warning,
        "The license is not a known SPDX expression.",
        "`license` should be an SPDX license expression (`MIT`, `Apache-2.0`, `MIT OR Apache-2.0`, `GPL-3.0-or-later WITH Classpath-exception-2.0`) or `proprietary` (lowercase). Unknown identifiers are reported with the closest known one. Identifiers the SPDX list deprecates are reported with their replacements: a bare GNU identifier (`AGPL-3.0`, `GPL-2.0`, `GPL-3.0`, `LGPL-2.1`, `GFDL-1.3`, `GPL-2.0-with-classpath-exception`) names both `-only` and `-or-later` (as whole expressions for `MIT OR GPL-3.0`), which grant different rights: only the project's license says which applies, so `--fix` never picks one. `--fix` does write what is certain: `GPL-2.0+` (or `AGPL-3.0+`) becomes `GPL-2.0-or-later`, which means the same, and `Proprietary`, `PROPRIETARY` or `Proprietary License` becomes `proprietary`. Other deprecated identifiers link to the SPDX list's page, which names their replacement.";
    UrlFormat = "url-format", Metadata, Error,
        "A URL field is not an absolute https URL.",
        "`repository`, `website`, `homepage`, `license_url` and binary `archive` URLs must be absolute `https://` URLs with a host and without credentials (`user:pass@`). Plain http can be tampered with in transit.";
    IconFieldIgnored = "icon-field-ignored", Metadata, Warning,
        "The manifest sets icon, which the build overrides.",
        "The build sets `icon` to the published URL of `<id>/icon.svg`. A value in the manifest is ignored; remove it.";
    CapabilityUnknown = "capability-unknown", Metadata, Warning,
        "A declared capability is not a known ACP method.",
        "`capabilities` lists ACP method names the agent implements (`session/load`, `session/set_mode`, `terminal/create`, `fs/read_text_file`, ...). Unknown names are reported with the nearest known name; they may be typos or methods newer than this tool. Methods the protocol defines as unstable are `capability-unstable` instead.";
    CapabilityUnstable = "capability-unstable", Metadata, Note,
        "A declared capability is an unstable ACP method.",
        "The method is in the protocol, but only behind an `unstable_*` feature of the ACP schema or in the protocol v2 preview (`session/fork`, `session/set_title`, `session/status`, `session/archive`, `auth/status`, `providers/list`, ...): it may still change or go away, and clients may not call it. A note, not a warning: declaring what the agent implements is right; raise it with `severity` to keep a registry to stable methods. `matrix` does not probe unstable methods; it lists the ones the agent advertised.";
    AuthType = "auth-type", Metadata, Error,
        "An auth method has an unknown type.",
        "Each `auth` entry has `type` `agent` (the agent runs its own login), `terminal` (the user runs a login command) or `env_var` (the user sets variables listed in `vars`). The RFD's `api_key` is accepted as an alias of `env_var`, with a warning. An `env_var` method must list its `vars`.";
    TagsFormat = "tags-format", Metadata, Error,
        "Tags are not unique lowercase slugs, or more than ten.",
        "`tags` are lowercase slugs (`^[a-z0-9][a-z0-9-]*$`), unique, at most 10. They drive the catalogue's filters.";
    ProtocolVersion = "protocol-version", Metadata, Error,
        "protocol_version is not a supported ACP major version.",
        "`protocol_version` is the ACP protocol major version the agent speaks, a positive integer. Today that is 1; higher values are reported because no client can speak them yet.";
    HomepageConflict = "homepage-conflict", Metadata, Warning,
        "homepage and website are both set and differ.",
        "`homepage` (from the RFD) is a synonym of `website`. Keep one, or make them equal.";
    UnknownField = "unknown-field", Metadata, Warning,
        "The manifest has a top-level field the format does not define.",
        "The top level of the manifest format is open, as in the public registry: a field it does not define is accepted with this warning (naming the nearest known field when it looks like a typo, e.g. `licence` for `license`) and published as it is, after the known fields, sorted by name. Inside the format's objects (`distribution`, `auth`, `preview`, ...) an unknown field is a `schema` error.";
    Placeholder = "placeholder", Metadata, Error,
        "A string acp-registry new wrote for a person to replace is still there.",
        "`acp-registry new` scaffolds an entry with placeholders: `your-org` in the repository, licence and archive URLs, `Your Name` in `authors`, a template sentence in `description`, two template paragraphs in `README.md`, and a generic `icon.svg`. Each one left is reported at its place with what to write there, so an unedited scaffold never reaches `registry.json` or the site (`build` refuses it like any error). The placeholders are matched exactly, case-sensitively and as whole words, so an honest \"your organisation\" or `your-orgs` is not one; README text is searched only for the README's placeholders, and an icon only when it is the scaffold's icon byte for byte (line endings aside). Replace each with the real value; `acp-registry new` prints the list when it creates the entry.";
    PlatformUnknown = "platform-unknown", Distribution, Error,
        "A binary target uses an unknown platform key.",
        "Platform keys are `darwin-aarch64`, `darwin-x86_64`, `linux-aarch64`, `linux-x86_64`, `windows-aarch64`, `windows-x86_64`. Common spellings from other ecosystems (`linux-x64`, `darwin-arm64`, `macos-*`, `win32-*`) are reported with the right key.";
    PlatformCoverage = "platform-coverage", Distribution, Warning,
        "Binary builds are missing for an operating system family.",
        "An agent distributed only as binaries should cover every required OS family (by default darwin, linux and windows) so no user is left without an install option. The required families are configurable (`required_os`).";
    ArchiveFormat = "archive-format", Distribution, Error,
        "A binary archive is an installer or an unsupported format.",
        "Clients extract archives themselves: `.zip`, `.tar.gz`, `.tgz`, `.tar.bz2`, `.tbz2`, `.tar.xz`, or a raw executable. Installers (`.dmg`, `.pkg`, `.deb`, `.rpm`, `.msi`, `.appimage`) need privileges and user interaction and are refused.";
    ArchiveUrl = "archive-url", Distribution, Error,
        "A binary archive URL is not a pinned https URL.",
        "Archive URLs must be `https` and must not point at a moving `/latest/` release: the registry pins exact versions.";
    CmdPath = "cmd-path", Distribution, Error,
        "A binary cmd is not a safe relative path inside the archive.",
        "`cmd` is the path of the executable inside the extracted archive: relative (`./agent`, `bin/agent`), no `..`, no absolute or drive paths. Backslashes are accepted for Windows targets.";
    CmdWindowsSuffix = "cmd-windows-suffix", Distribution, Error,
        "A Windows target's cmd does not end in .exe, .cmd or .bat.",
        "Clients look for the file `cmd` names inside the unpacked archive, and a Windows executable's file name carries its suffix: a `cmd` such as `./opencode` in a `windows-*` target names a file that is not there (the archive holds `opencode.exe`), so clients fail to launch it (the public registry fixed such entries in its pull request #379; one had shipped `./opencode` for windows-aarch64). Write the file's full name as it is inside the archive, e.g. `./opencode.exe` or `.\\bin\\agent.cmd`; the suffix is compared ignoring case.";
    Sha256Missing = "sha256-missing", Distribution, Warning,
        "A binary target does not pin a sha256 checksum.",
        concat!("Pinning `sha256` lets clients verify downloads, and editors and gateways refuse binaries without one. `require_sha256` in `acp-registry.jsonc` sets how strict this is: `changed` (the default) makes it an error in entries changed since `--changed-since` and a warning elsewhere and in runs without `--changed-since` (so `build` and whole-registry runs keep working while every pull request that touches an entry adds its digests); `all` makes it an error everywhere; `off` silences it. A `severity` override of this code wins over that choice, everywhere; exemptions per id apply as usual. `", pin_digests_command!(), "` pins each missing digest (GitHub's published asset digest when the release API has one, else the sha256 of the download); name entry folders after it (`", pin_digests_command!(), " registry/my-agent`) to download only their archives. By hand, `sha256sum <archive>` (or `shasum -a 256` on macOS) on the exact file the URL serves.");
    VersionMismatch = "version-mismatch", Distribution, Error,
        "A distribution pins a different version than the manifest.",
        "The version in binary archive URLs (`/download/vX.Y.Z/`, `/releases/...`, npm tarball names), the npx pin (`pkg@X.Y.Z`, scope-aware) and the uvx pin (`pkg==X.Y.Z` or `pkg@X.Y.Z`, extras such as `pkg[acp]==X.Y.Z` included) must equal `version` (in the `preview` block: `preview.version`). Versions are compared as versions, so `2026.07.20` equals `2026.7.20`.";
    LatestTag = "latest-tag", Distribution, Error,
        "A distribution points at a moving latest version.",
        "`@latest` or `/latest/` anywhere in a distribution makes installs change under users' feet and breaks reproducibility. Pin the exact version.";
    PackageUnpinned = "package-unpinned", Distribution, Warning,
        "An npx or uvx package has no version pin.",
        "Without a pin, clients run whatever is newest at launch. Pin the version: `pkg@X.Y.Z` for npx, `pkg==X.Y.Z` for uvx.";
    PackageSpec = "package-spec", Distribution, Error,
        "An npx or uvx package spec is invalid.",
        "npx packages are npm names (`name` or `@scope/name`, lowercase) with an exact `@X.Y.Z` version; uvx packages are PyPI names, optionally with extras (`pkg[acp]`, `pkg[acp,cli]`), with `==X.Y.Z` (or `@X.Y.Z`). Version ranges (`^1.0.0`, `~1`, `>=1`), URLs and paths are refused: launches must be reproducible.";
    EnvReserved = "env-reserved", Distribution, Error,
        "env sets a variable that clients drop or that would hijack the launch.",
        "Variables such as `PATH`, `HOME`, `LD_PRELOAD`, `LD_LIBRARY_PATH`, `DYLD_*`, `NODE_OPTIONS`, `PYTHONPATH`, `PYTHONHOME`, `GITHUB_*`, `RUNNER_*`, CA bundle variables (`SSL_CERT_FILE`, `NODE_EXTRA_CA_CERTS`, `REQUESTS_CA_BUNDLE`, ...) and proxy settings change how every process starts or what it trusts. Clients drop them; the registry refuses them (case-insensitive).";
    AcpArgsMissing = "acp-args-missing", Distribution, Warning,
        "A well-known agent CLI is launched without its ACP-mode argument.",
        "Several agent CLIs start an interactive terminal UI unless told to speak ACP: gemini needs `--acp` (older: `--experimental-acp`); opencode, goose, kimi, openhands and kiro need the `acp` subcommand; qwen, cline, auggie and copilot-language-server need `--acp`. Without it, editors hang waiting for JSON-RPC.";
    DistributionLegacy = "distribution-legacy", Distribution, Warning,
        "Platform keys sit directly under distribution (the RFD's early form).",
        "The RFD's first draft put platform targets directly under `distribution`. They are accepted and normalised into `distribution.binary` in every output; move them under `binary` to silence this warning.";
    ClientIncompatible = "client-incompatible", Distribution, Note,
        "A known client installs this entry only partly or not at all.",
        "The registry keeps facts about what each known client can install (Zed, acpr, JetBrains IDEs: distribution kinds, archive formats, `env`, auth types, platforms and which registry file it reads), each with its public source, in `src/rules/compat/clients.jsonc`. An entry that some client cannot install, or installs only on some platforms or without a feature it uses, gets one note naming those clients (`no` or `partly`) and every reason, for example \"Zed does not install uvx packages, and the entry offers nothing else\" or \"acpr cannot unpack .tar.bz2 (linux-x86_64)\". Facts nobody could establish are never reasons. Nothing is wrong with the entry: offer another kind or archive format those clients read if they matter to you, or lower this rule in the configuration. The same verdicts are published in `lifecycle.json` (docs/format.md, \"Client compatibility\").";
    PreviewVersion = "preview-version", Preview, Error,
        "The preview version is not X.Y.Z or X.Y.Z-preview.N.",
        "`preview.version` is `X.Y.Z-preview.N` (N >= 1, no leading zero) or plain `X.Y.Z`. Preview pins must match `preview.version`. No ordering against the stable version is required: a preview older than stable is simply not served (the stable entry is).";
    IconMissing = "icon-missing", Icons, Error,
        "The entry has no icon.svg.",
        "Every entry needs `icon.svg`, a 16x16 monochrome SVG, because clients show it in menus. A registry can lower this rule in its configuration.";
    IconXml = "icon-xml", Icons, Error,
        "The icon is not well-formed XML.",
        "Icons are parsed as XML, not matched with patterns. Fix the reported syntax error; DTDs and entities are refused.";
    IconRoot = "icon-root", Icons, Error,
        "The icon's root element is not <svg>.",
        "The document element must be `<svg>` in the SVG namespace.";
    IconSize = "icon-size", Icons, Error,
        "The icon is not 16x16.",
        "`width` and `height` (units stripped) must both be 16; without them the `viewBox` must be square and 16x16. An icon with neither is refused: clients would render it at an arbitrary size.";
    IconColor = "icon-color", Icons, Error,
        "The icon uses a fixed colour instead of currentColor.",
        "Icons follow the text colour of the client's theme. Every `fill` and `stroke`, in attributes, `style=` or a `<style>` element, must be `currentColor`, `none` or `inherit`, and `currentColor` must be used at least once.";
    IconComment = "icon-comment", Icons, Error,
        "The icon contains an XML comment.",
        "`<!-- -->` comments break MDX embedding of icons in documentation sites. Remove them.";
    IconVariants = "icon-variants", Icons, Error,
        "Only one of icon-light.svg and icon-dark.svg exists.",
        "Theme variants come in pairs: add the missing one or remove the other.";
    IconUnsafe = "icon-unsafe", Icons, Error,
        "The icon uses markup or CSS outside the icon allow-list (script, links, external resources).",
        "Clients inline icons into web pages, so an icon is untrusted input, judged by an allow-list (stricter than the public registry). Allowed: the XML declaration; SVG-namespace `svg`, `g`, `defs`, `symbol`, `use`, `path`, `circle`, `ellipse`, `line`, `polyline`, `polygon`, `rect`, `linearGradient`, `radialGradient`, `stop`, `clipPath`, `mask`, `text`, `tspan`, `title`, `desc` and `style`; geometry and presentation attributes, `id`, `class`, `role`, `aria-*`; `href`/`xlink:href` and `url()` only as same-document `#id` references to an element the icon defines. Refused: every other element (`script`, `foreignObject`, `image`, `a`, `animate`, `set`, filters, ...), namespace or attribute, `on*` handlers, processing instructions such as `<?xml-stylesheet?>`, and a DOCTYPE. CSS (`style=`, `<style>`, presentation attributes) is read after resolving escapes (`u\\72l(` is `url(`) and comments; refused there: `url()` to anything but `#id`, `@import`, `image()`/`image-set()`, `expression()`, `-moz-binding`, `behavior` and `javascript:`.";
    SkillLayout = "skill-layout", Skills, Error,
        "skill/ does not hold exactly one skill folder named after the skill.",
        "An entry ships at most one Agent Skill, stored as `<id>/skill/<name>/SKILL.md` where `<name>` is the skill's `name`: the Agent Skills specification requires a skill's folder to be named as the skill, and `pack` and `acp-collab skill install` copy that folder under the same name, so the stored, packed and installed skill are the same folder. Files directly in `skill/` (the older `skill/SKILL.md` layout) and a second folder are reported; move the skill into `skill/<name>/` (`git mv skill skill-tmp && mkdir skill && git mv skill-tmp skill/<name>`). The registry's `skills/` folder of stand-alone skills holds only skill folders (`skills/<name>/SKILL.md`): a file there is reported too.";
    SkillFrontmatter = "skill-frontmatter", Skills, Error,
        "SKILL.md is missing or its front matter cannot be read.",
        "`skill/<name>/SKILL.md` starts with YAML front matter between two `---` lines: a mapping of keys to values. Reported here: no SKILL.md, no block or no closing `---`, YAML that does not parse (a duplicate key included), a block that is not a mapping, and YAML the reference validator (`agentskills validate`, whose strict YAML reader clients' tooling follows) refuses although YAML allows it: flow collections (`{a: b}`, `[a]`), anchors and aliases, tags, and a `---` inside the block (it ends the block there and reads the rest as text). Write block mappings and lists, plain or quoted strings, and `>-`/`|` block scalars for long text.";
    SkillName = "skill-name", Skills, Error,
        "The skill's name is missing, malformed or differs from its folder.",
        "The Agent Skills specification: `name` is required, 1-64 characters of lowercase letters, digits and hyphens (`^[a-z0-9]+(-[a-z0-9]+)*$`: no leading, trailing or doubled hyphen), and equal to the name of the folder holding SKILL.md. Clients list and invoke the skill by this name (Claude Code as `/<name>`), and the reference validator rejects a folder named otherwise. The help gives a valid name derived from the one written. A Windows device name (`con`, `prn`, `aux`, `nul`, `com1`-`com9`, `lpt1`-`lpt9`) is refused too: the skill is installed as a folder of its name, which Windows cannot create.";
    SkillNameId = "skill-name-id", Skills, Note,
        "The skill's name differs from the entry id.",
        "Allowed, but worth knowing: agents list and invoke the skill by its `name` (the folder it is installed in), while the registry and its site list the agent by its id. Use the id as the skill's name when the skill is about that agent alone.";
    SkillDescription = "skill-description", Skills, Error,
        "The skill's description is missing, empty, not a string or over 1024 characters.",
        "The Agent Skills specification: `description` is required, 1-1024 characters, and says what the skill does and when an agent should use it; agents read it to decide whether to load the skill. Long text fits a folded block scalar (`description: >-` and indented lines); details belong in the body.";
    SkillFieldInvalid = "skill-field-invalid", Skills, Error,
        "An optional front-matter field of the specification has the wrong shape.",
        "The Agent Skills specification's optional fields: `license` (a string: an SPDX expression or the name of a bundled licence file), `compatibility` (a string of at most 500 characters: the environment the skill needs), `metadata` (a mapping of string keys to string values; quote numbers and booleans: `version: \"1.0\"`) and `allowed-tools` (a string of space-separated tools, experimental).";
    SkillFieldUnknown = "skill-field-unknown", Skills, Warning,
        "A front-matter key outside the Agent Skills specification.",
        "The reference validator (`agentskills validate`) rejects every key but `name`, `description`, `license`, `compatibility`, `metadata` and `allowed-tools`. Claude Code defines keys of its own (`agent`, `argument-hint`, `arguments`, `context`, `disable-model-invocation`, `disallowed-tools`, `effort`, `hooks`, `model`, `paths`, `shell`, `user-invocable`, `when_to_use`): the message says so, since other clients ignore them. Any other key is read by no client we know of; a misspelt specification key is named in the help, and custom data belongs under `metadata`.";
    SkillBodyLong = "skill-body-long", Skills, Warning,
        "The body of SKILL.md is longer than 500 lines.",
        "The Agent Skills specification recommends a SKILL.md body under 500 lines: agents load the whole file when the skill is activated, so move detailed material into `references/` files that SKILL.md links to and agents read only when needed.";
    SkillReferenceDepth = "skill-reference-depth", Skills, Warning,
        "A file SKILL.md refers to refers on to a further file of the skill.",
        "The Agent Skills specification recommends keeping file references one level deep from SKILL.md: agents may read a referenced file only partly and miss what it refers to in turn. Link every file an agent may need from SKILL.md itself. Reported at the link, in the referenced Markdown file, to a skill file SKILL.md does not refer to.";
    SkillLink = "skill-link", Skills, Error,
        "SKILL.md refers to a file that does not exist.",
        "Relative links and paths mentioned in SKILL.md and in the Markdown files it links to (`references/...`, `scripts/...`, `assets/...`, Markdown links) must exist inside the skill's folder, and must not escape it.";
    SkillTooLarge = "skill-too-large", Skills, Error,
        "The skill folder is larger than 1 MiB.",
        "`pack` bundles the skill into every archive of the entry, and `build` publishes a stand-alone skill's folder as it is; keep a skill under 1 MiB in total.";
    SkillNameDuplicate = "skill-name-duplicate", Skills, Error,
        "Two skills of the registry have the same name.",
        "Skill names are unique across the whole registry, stand-alone skills (`skills/<name>/`) and agents' skills (`<id>/skill/<name>/`) alike: the skills indexes `build` publishes, the marketplace's plugins and every client's skills folder hold one skill per name, so a second skill of the name would replace the first on install. Skills are taken in folder order; each later one is reported at its `name`. Rename one of them, folder and `name` together.";
    SkillFilePath = "skill-file-path", Skills, Error,
        "A skill file's path cannot be listed in a skills index.",
        "The well-known skills index lists every file of a skill by its path, and its clients drop a path that is not relative, printable ASCII and `/`-separated, or that holds `..` or `\\` (the `skills` CLI drops the whole 0.1.0 index for one such path). Rename the file with ASCII letters, digits, `-`, `_` and single dots.";
    QuarantineUnknownId = "quarantine-unknown-id", Registry, Warning,
        "quarantine.json names an id that is not in the registry.",
        "Entries of `quarantine.json` should name existing ids; a stale entry usually means the agent was renamed or removed. Remove it.";
    QuarantineFormat = "quarantine-format", Registry, Error,
        "quarantine.json is not an object of id to reason.",
        "`quarantine.json` is `{\"<id>\": \"<reason>\"}`, compatible with the public registry.";
    DeprecationFormat = "deprecation-format", Registry, Error,
        "deprecations.json is not an object of id to retirement.",
        "`deprecations.json` retires entries: `{\"<id>\": {\"status\": \"deprecated\" | \"disabled\", \"reason\": \"<one line>\", \"since\": \"YYYY-MM-DD\", \"replacement\": \"<id>\"}}` (`replacement` optional). A member that cannot be read whole is left out, so the entry stays active until it is fixed.";
    DeprecationUnknownId = "deprecation-unknown-id", Registry, Warning,
        "deprecations.json retires an id that is not in the registry.",
        "A disabled entry keeps its folder (the lifecycle document still lists it); a member for an id no folder declares is stale. Remove it.";
    DeprecationReplacement = "deprecation-replacement", Registry, Error,
        "A retired entry's replacement is not an entry users can install.",
        "`replacement` is what clients tell users to install instead, so it must be the id of another entry of the registry that is not disabled itself.";
    EntryDeprecated = "entry-deprecated", Registry, Warning,
        "A changed entry is deprecated or disabled.",
        "With `--changed-since`, a pull request that changes an entry `deprecations.json` retires is updating an agent users are told to leave. Either the change is welcome (a last fix) or the entry is back in service: then remove its member from `deprecations.json`.";
    ReleasesFormat = "releases-format", Registry, Error,
        "releases.json is not the release history update --apply writes.",
        "`releases.json` at the root is written by `acp-registry update --apply`: `{\"version\": 1, \"agents\": {\"<id>\": {\"npm\" | \"pypi\": {\"package\", \"versions\"}, \"github\": {\"repository\", \"versions\"}}}}`, each release `{\"version\"` (`X.Y.Z` or `X.Y.Z-preview.N`), optional `\"published\"` (UTC `YYYY-MM-DDTHH:MM:SSZ`), `\"digest\"`, `\"yanked\": true`, `\"deprecated\"` (a message) and `\"preview\": true` (exactly for a `-preview.N` version)`}`; strings at most 1024 bytes, at most 64 releases a source, at most 4 MiB and 500,000 JSON values in all. People do not edit it: the finding points at the first value that is not this shape. Restore the file from git, or delete it and run `acp-registry update --apply` to record it again. `update --apply` refuses to run while the file is malformed, so a file it cannot read is never overwritten.";
    ConfigSyntax = "config-syntax", Registry, Error,
        "acp-registry.jsonc is not valid JSONC.",
        "The configuration file is JSONC (comments and trailing commas allowed). Fix the reported token.";
    ConfigInvalid = "config-invalid", Registry, Error,
        "acp-registry.jsonc has an unknown key or a value of the wrong shape.",
        "`docs/format.md` (Configuration) lists every key. Unknown keys are errors so that typos do not silently disable a policy. These codes stay errors whatever the configuration says, because `build` refuses what they report (the configuration arrives with the pull request too): `jsonc-syntax`, `not-utf8`, `file-unreadable`, `file-link`, `file-not-regular`, `file-too-large`, `schema`, `id-format`, `duplicate-id`, `icon-xml`, `icon-root`, `icon-unsafe`. A `severity` setting that lowers one of them, or an exemption from one, is reported here and ignored. `require_sha256` set together with a `severity` override of `sha256-missing` is reported here as a warning: the override wins, so `require_sha256` has no effect.";
    ConfigUnknownCode = "config-unknown-code", Registry, Error,
        "acp-registry.jsonc names a rule code that does not exist.",
        "Severity overrides and exemptions name rule codes; `acp-registry explain --list` prints them all. The nearest code is suggested.";
    BaseUrlPublic = "base-url-public", Registry, Warning,
        "acp-registry.jsonc publishes under the public ACP registry's URL.",
        "`base_url` is where the files `build` writes are served: every icon URL in `registry.json` and the site's links to `registry.json` and `lifecycle.json` start with it. When it is absent it defaults to the public ACP registry's (`https://cdn.agentclientprotocol.com/registry/v1/latest`), where another registry's files are never published, so its clients would fetch the public registry's icons, or none. Reported, at the `base_url` value or at the start of `acp-registry.jsonc` when the key is absent, when `base_url` is any URL on the host `cdn.agentclientprotocol.com` (any case) and the configuration does not say `\"registry\": {\"public\": true}`, which only the public ACP registry itself sets (the bundled `registry/` is a copy of it). Set `\"base_url\": \"https://<your host>/registry/v1/latest\"`, the public URL of the folder `dist/` is published to, or pass `acp-registry init --base-url URL` when creating a registry. A registry without `acp-registry.jsonc` is not checked.";
    ConfigUnknownId = "config-unknown-id", Registry, Warning,
        "acp-registry.jsonc names an id that is not in the registry.",
        "Exemptions and outputs name entry ids; an unknown id is usually a typo or a removed agent.";
    EntryHeldBack = "entry-held-back", Registry, Warning,
        "build --last-good: a failing entry is published in its previous form.",
        "With `build --last-good PREVIOUS`, an entry that fails validation does not stop the build: every other entry is published as usual and this one keeps the object it had in the previous `registry.json`, byte for byte, with its icons from the previous folder when they can be read safely. The finding names the failing codes and the version still served. Fix the entry's errors (they are reported beside this finding); the next build publishes it again. `build` exits 3 when it held an entry back.";
    EntryLeftOut = "entry-left-out", Registry, Warning,
        "build --last-good: a failing entry that was never published is left out.",
        "With `build --last-good PREVIOUS`, an entry that fails validation and has no object in the previous `registry.json` (a new entry, or one the output did not list), or whose previous object does not validate against `registry.schema.json` any more, is left out of the output while the other entries are published. Fix the entry's errors (they are reported beside this finding). `build` exits 3 when it left an entry out.";
    ArchiveUnreachable = "archive-unreachable", Online, Error,
        "A binary archive URL does not answer 200.",
        "With `--online`, every binary `archive` URL of `distribution` (not of `preview`) is requested: HEAD, then GET when HEAD is refused with 403 or 405, following at most 5 redirects; it must end in 200. Timeouts, connection failures, 429 and 5xx are retried with backoff (honouring `Retry-After`) before this is reported. A 404 usually means the release asset was renamed or never uploaded.";
    UrlRefused = "url-refused", Online, Error,
        "A URL or one of its redirects leads off public https.",
        "Online checks only talk `https` to public addresses: a URL, or any redirect hop, that is plain `http` or whose host is (or resolves to) a loopback, private, link-local, CGNAT, multicast or unspecified address is refused without being requested. CI runs the tool on untrusted pull requests, so a manifest must not be able to make it reach internal services. Publish the archive on a public https host.";
    ArchiveTooLarge = "archive-too-large", Online, Error,
        "An archive is larger than the download cap of --verify-archives.",
        "`--verify-archives` downloads each archive to hash it, up to `--archive-cap` MiB (default 512). A larger archive (declared or streamed) is not hashed. Raise the cap if the archive really is that large.";
    Sha256Mismatch = "sha256-mismatch", Online, Error,
        "The pinned sha256 differs from the archive the URL serves.",
        "`--verify-archives` downloads each archive and compares its sha256 with the pin. This code is for a pin just edited (the entry's `version`, the target's `archive` or its `sha256` changed against `--changed-since`, or without it against the committed manifest) or without git history to compare with: the new pin is wrong, or the download was tampered with; clients refuse to install it. The finding points at the pin and gives the served digest; check the release before pasting it. A pin that was not edited and no longer matches is `archive-retagged`.";
    ArchiveRetagged = "archive-retagged", Online, Error,
        "A pinned archive changed while its version and pin stayed the same: a possible compromise.",
        "`--verify-archives` downloads each pinned archive. When the bytes no longer match a pin that was not just edited (the entry's `version`, the target's `archive` URL and its `sha256` all unchanged against `--changed-since`, or without it against the committed manifest, git's `HEAD`), the release was re-uploaded under the same version: the classic sign of a compromised release, and clients that pinned the old digest refuse it. Do not re-pin the new digest before the agent's maintainers confirm the change. Quarantine the entry meanwhile: the finding gives the `quarantine.json` member to add, and `--quarantine-retagged` adds it (comments kept, the file created when absent). A pin edited in the change, or an entry without git history, is a plain `sha256-mismatch`.";
    ArchiveDigest = "archive-digest", Online, Note,
        "The digest of an archive that pins no sha256, ready to paste.",
        "`--verify-archives` finds the digest of archives that have no `sha256` pin too and reports it as a fix-it, next to the offline `sha256-missing` finding: GitHub's published `digest` of the asset when the URL is a GitHub release download and the release API answers with one (`GITHUB_TOKEN` is sent to the API only), else the sha256 of the downloaded archive (under `--archive-cap`). `--fix` pins it; by hand, paste it as `\"sha256\"` after checking that the URL serves the release you mean.";
    NpmMissing = "npm-missing", Online, Error,
        "The npx package or its pinned version does not exist on npm.",
        "With `--online`, the npm registry's metadata document of each npx package is fetched (`GET <npm>/<name>`, scoped names URL-encoded). The package must exist and its `versions` must contain the pinned version. The npm base URL is configurable (`online.npm_registry`, `--npm-registry`).";
    NpmDeprecated = "npm-deprecated", Online, Warning,
        "The pinned npm version is deprecated.",
        "npm marks a version deprecated (its `deprecated` message) when its authors want users to move on; clients show the warning on every launch. Pin a version that is not deprecated.";
    PypiMissing = "pypi-missing", Online, Error,
        "The uvx package or its pinned version does not exist on PyPI.",
        "With `--online`, PyPI's JSON API (`GET <pypi>/pypi/<name>/json`) is asked for each uvx package. The package must exist and `releases` must list the pinned version with at least one file. The PyPI base URL is configurable (`online.pypi`, `--pypi-url`).";
    PypiYanked = "pypi-yanked", Online, Error,
        "The pinned PyPI version is yanked.",
        "A release whose files are all yanked (PEP 592) is skipped by installers unless pinned exactly, and its authors withdrew it for a reason (shown in the finding). Pin a release that is not yanked.";
    PackageUnreachable = "package-unreachable", Online, Error,
        "npm or PyPI could not be asked about a package.",
        "The package registry did not answer (timeout, connection failure, repeated 5xx or 429, a document that is not JSON) after retries, so the package could not be checked. Run again later, or check the configured base URL.";
    ArchiveRepositoryMismatch = "archive-repository-mismatch", Online, Warning,
        "A GitHub release archive belongs to another repository than the manifest's `repository`.",
        "With `--online`, every binary `archive` that is a GitHub release asset (`https://github.com/<owner>/<repo>/releases/download/…`, or the same path on the configured `online.github_api` host) must come from the manifest's `repository`, compared as GitHub does (ignoring case, `www.`, `.git` and a trailing `/`). An archive from someone else's repository is how a manifest ships a binary its authors never published. Registries whose agents publish binaries from a separate public releases repository declare it per id in `acp-registry.jsonc` (`\"provenance\": {\"release_repositories\": {\"<id>\": [\"owner/releases\"]}}`) and it is then accepted. Needs no network: the repository is read from the URL.";
    PackageRepositoryMismatch = "package-repository-mismatch", Online, Warning,
        "The pinned npm or PyPI version says it comes from another repository than the manifest's.",
        "With `--online`, the pinned version's own metadata is read: npm's version document (`GET <npm>/<name>/<version>`: `repository` as a string, `{\"url\"}` object, `github:owner/repo` or bare `owner/repo` shorthand, `git+https://`, `git@host:` and `.git` forms; `directory` ignored) and PyPI's release document (`GET <pypi>/pypi/<name>/<version>/json`: `info.project_urls` and `info.home_page`). npm's `repository`, or PyPI's source-like project URLs (`Homepage`, `Source`, `Repository`, `Source Code`, `Code`, `GitHub`, `GitLab`) when none points at the manifest's repository, naming another repository is reported: the package may belong to someone else. Fix `repository` in the manifest, pin the right package, or fix the package's metadata in its next release; a repository declared in `provenance.release_repositories` for the id is accepted too.";
    PackageRepositoryMissing = "package-repository-missing", Online, Note,
        "The pinned npm or PyPI version names no source repository.",
        "The version's metadata (npm `repository`, PyPI project URLs) names no repository at all, so nothing ties the package to the manifest's `repository`. Add `repository` to `package.json`, or `[project.urls] Source = \"…\"` to `pyproject.toml`, in the next release.";
    PackageProvenance = "package-provenance", Online, Note,
        "The pinned npm or PyPI version publishes provenance attestations; the repository they name.",
        "npm (`dist.attestations`, then the attestations endpoint `<npm>/-/npm/v1/attestations/<name>@<version>`: the SLSA provenance statement's workflow repository) and PyPI (the integrity API `<pypi>/integrity/<name>/<version>/<file>/provenance`: each attestation bundle's Trusted Publisher `kind` and `repository`) say which source repository and CI workflow built the pinned version. The finding reports that claim and whether it names the manifest's `repository`. It is a claim read from the registry's answer: acp-registry does not verify the Sigstore signatures, certificates or transparency-log entries behind it (`npm audit signatures` and `pypi-attestations verify pypi` do).";
    PackageProvenanceMissing = "package-provenance-missing", Online, Note,
        "The pinned npm or PyPI version publishes no provenance attestation.",
        "Neither npm's version document (`dist.attestations`) nor PyPI's integrity API offers a provenance attestation for the pinned version, so nothing but the publisher's account ties it to a source repository. Publishing from CI with npm's `--provenance` (or trusted publishing) or PyPI's Trusted Publishers adds one.";
    AgentLaunch = "agent-launch", Verify, Error,
        "The agent could not be fetched, unpacked or started, or exited before answering.",
        "`verify` launches every distribution the way an editor does: it downloads the platform's archive (or installs the npx or uvx package into a private cache), unpacks it, runs `cmd` with the manifest's `args` and `env` in a fresh sandbox, and sends `initialize`. This finding says which step failed: the download, `cmd` missing from the archive, npx or uv unable to install the package (a refusal for the Python version is `agent-python-version`), or the process exiting before it answered (its exit code and the end of its stderr are in the message). Run the launch command from the site's snippet on a clean machine and fix the distribution.";
    AgentPythonVersion = "agent-python-version", Verify, Error,
        "A uvx package needs a Python version this machine does not have, and uv could not get one.",
        "`verify` installs a `uvx` package with uv before it launches it. When uv refuses because the package (or one of its dependencies) declares a `Requires-Python` that the machine's interpreter does not satisfy and uv cannot use or download one that does, the launch fails for that reason alone: the finding names the Python the package needs and the one uv found. Editors on such a machine fail the same way. Lower the package's `Requires-Python` if it runs on older versions, or run `verify` where uv can reach a matching interpreter (installed, or downloaded by uv). A registry whose CI machines lack that Python can lower this code's severity in `acp-registry.jsonc` (`\"severity\": {\"agent-python-version\": \"warning\"}`).";
    AgentTimeout = "agent-timeout", Verify, Error,
        "The agent did not answer `initialize` in time.",
        "The agent started but sent no response to `initialize` within the deadline (`verify --timeout`, 60 s by default). Editors give up the same way. Common causes: the ACP mode needs an argument (`--acp`, `acp`) the manifest does not pass, the agent waits for input on a terminal, or it writes its answer without a newline. The end of its stderr is in the message.";
    AgentProtocol = "agent-protocol", Verify, Error,
        "The agent broke the ACP wire protocol.",
        "ACP is newline-delimited JSON-RPC 2.0 on stdio: every stdout line must be one JSON-RPC message. A log line on stdout, a malformed message, a response to an id never sent, an error answer to `initialize` or an answer that is not an `InitializeResponse` breaks clients that read stdout strictly. Log to stderr instead, and answer `initialize` with `protocolVersion`, `agentCapabilities` and `authMethods`.";
    AgentProtocolVersion = "agent-protocol-version", Verify, Error,
        "The agent answered a protocol version the client did not ask for.",
        "`verify` asks for ACP version 1. An agent that supports it must answer `protocolVersion: 1`; answering another version tells the client to disconnect. Answer the version the client asked for when you support it.";
    AgentAuth = "agent-auth", Verify, Error,
        "The agent offers no sign-in method the auth policy accepts.",
        "By default an agent must offer at least one `authMethods` entry of type `agent` (also when `type` is absent) or `terminal`; a `_meta` key `agent-auth` or `terminal-auth` counts as that type. Editors can only sign users in through those. The accepted types are set with `verify.auth_types` in `acp-registry.jsonc` (an empty list accepts any answer), and ids can be exempted with `exemptions`. `verify` sends `clientCapabilities.auth.terminal: true` and `_meta: {\"terminal-auth\": true}`, so agents that advertise terminal login only when asked do so.";
    AgentManifestMismatch = "agent-manifest-mismatch", Verify, Error,
        "The manifest claims something the agent's `initialize` answer contradicts.",
        "`protocol_version`, `capabilities` and `auth` in `agent.json` are published to users; `verify` compares them with what the agent really answers: a declared `session/load` without `agentCapabilities.loadSession`, `session/list`, `session/resume`, `session/close`, `session/delete` or `session/fork` without its `sessionCapabilities` entry, another protocol version, or an `auth` method whose id the agent does not offer (or offers with another type). Fix the manifest, or the agent.";
    AgentNotTested = "agent-not-tested", Verify, Note,
        "A distribution could not be launched on this machine.",
        "A binary distribution without a build for the machine's platform, or an `npx`/`uvx` distribution when `npx` or `uvx` is not installed, is reported as not tested rather than passed. `verify --require-tested` makes this an error, for CI runners that must cover everything.";
    ArchiveUnsafe = "archive-unsafe", Verify, Error,
        "The archive holds something unsafe to unpack and was refused.",
        "Archives are unpacked into a fresh folder, and refused as a whole (nothing is left on disk) when an entry has an absolute path or `..`, is a link or hard link leading out of the folder or a device or FIFO, when an entry would be written through a link, when two entries land on one path (the same path twice, a file where a folder is named, or names that differ only in case or Unicode form, which are one file on macOS and Windows), or when the archive unpacks to more than `verify --unpack-cap` (a decompression bomb). Rebuild the archive with plain relative paths, each once.";
    IndexFormat = "index-format", Indexes, Error,
        "A skills index cannot be read, is not the JSON its version requires, or has keys its version does not define.",
        "`skill check` reads a well-known skills index as the `skills` CLI does: strict JSON (no comments or trailing commas), UTF-8, at most 16 MiB, 2,000,000 values and 128 levels deep. Version 0.2.0 (`.well-known/agent-skills/index.json`) needs `$schema` equal to `https://schemas.agentskills.io/discovery/0.2.0/schema.json` exactly, else the CLI refuses the whole index; version 0.1.0 (`.well-known/skills/index.json`) has no `$schema`. Both are an object whose `skills` is an array of objects. More than 10,000 skills are reported here and only the first 10,000 are checked. A key neither version defines is reported as a warning (clients ignore it, so a misspelt `description` loses its value): the help names the nearest known key.";
    IndexEntry = "index-entry", Indexes, Error,
        "A skill of an index has a field the `skills` CLI refuses: name, description, type, url, digest or files.",
        "Each skill needs `name` (1-64 characters of lowercase letters, digits and single hyphens: the folder it is installed as) and `description` (1-1024 characters). Version 0.2.0 adds `type` (`skill-md` or `archive`), a non-empty `url` and `digest` (`sha256:` and 64 lowercase hex digits); the CLI skips an entry that fails one of them. Version 0.1.0 adds `files`: a non-empty array of relative paths with forward slashes, no `..`, no leading `/`, no backslash and no control or non-ASCII character, `SKILL.md` among them; the CLI drops the WHOLE index, every skill of it, when one entry fails, so one bad entry hides every skill of the site.";
    IndexDuplicateName = "index-duplicate-name", Indexes, Error,
        "Two skills of one index have the same name.",
        "A skill is installed into a folder named as the skill, so two entries of one name install over each other, and which one a user gets depends on the client. Give each skill its own name, or remove the stale entry.";
    IndexUrl = "index-url", Indexes, Error,
        "A 0.2.0 `url` does not resolve to a file of the site, or leads to another origin.",
        "The `skills` CLI resolves `url` against the index's URL. A relative URL must stay inside the site the index is served from (`..` that climbs above the site root, or a root-relative path outside it, is refused); from a local folder only relative URLs inside the folder can be checked. An absolute URL to another origin is a warning (milder): it works, but the skill then depends on a host the site does not control, and a local check cannot read it.";
    IndexFileMissing = "index-file-missing", Indexes, Error,
        "A file or artifact the index lists cannot be fetched or read.",
        "Every 0.1.0 file (`<index folder>/<name>/<path>`) and every 0.2.0 artifact must be served as a regular file: a 404 or missing file, another HTTP status, a symbolic link or special file in a local site (never followed), or a file over the 50 MiB cap is reported here. The 0.1.0 CLI silently skips a file it cannot download, so the skill installs incomplete; the 0.2.0 CLI fails the skill.";
    IndexFileUnlisted = "index-file-unlisted", Indexes, Warning,
        "A local site serves a file in a 0.1.0 skill's folder that its `files` does not list.",
        "Clients download only the listed files, so an unlisted file is never installed: a stale `files` list (a file added to the skill after the index was written), or a leftover. Checked for local sources only (a web server cannot be listed). List the file, or remove it.";
    IndexDigest = "index-digest", Indexes, Error,
        "A 0.2.0 `digest` differs from the sha256 of the bytes `url` serves.",
        "The `skills` CLI hashes what it downloads and refuses the skill when the hash differs from `digest`. The finding gives the digest of the bytes served: regenerate the index from the files you publish (or publish the files the index was made from).";
    IndexArtifact = "index-artifact", Indexes, Error,
        "A 0.2.0 artifact is not what its `type` says, or an archive the `skills` CLI refuses.",
        "A `skill-md` artifact is a SKILL.md: UTF-8 text starting with `---` front matter. An `archive` is a zip (members stored or deflated) or a gzip-compressed tar, read as the `skills` CLI reads it: only regular files (tar type `0`; no GNU or PAX long names, so member paths fit ustar's 100-byte name and 155-byte prefix), no links, every member path relative without `..`, a backslash or a drive, each path once, `SKILL.md` at the archive's root (not inside a `<name>/` folder), at most 1,000 files and 50 MiB unpacked. Archives are unpacked by acp-registry's safe unpacker into a private scratch folder, so nothing of a refused archive is written anywhere else.";
    IndexSkillMismatch = "index-skill-mismatch", Indexes, Error,
        "An index's name or description differs from the SKILL.md it serves.",
        "Clients install the skill as the index's `name` and agents read SKILL.md's front matter: a different `name` there installs a skill whose folder and name disagree, which the Agent Skills specification forbids (an error). A different `description` (a warning, milder) means the index advertises what the skill no longer says. Regenerate the index from the skills.";
    MarketplaceFormat = "marketplace-format", Indexes, Error,
        "A marketplace.json cannot be read or has a field Claude Code refuses.",
        "`.claude-plugin/marketplace.json` is strict JSON with `name` (kebab-case: lowercase letters, digits and single hyphens; what users type after `@`), `owner` (an object with a `name`) and `plugins` (an array of objects, each with a kebab-case `name`, unique in the marketplace). A missing marketplace description (`description` or `metadata.description`) or plugin `description` is a warning: `claude plugin validate` warns about it too, and users choose plugins by it.";
    MarketplaceSource = "marketplace-source", Indexes, Error,
        "A plugin's `source` has the wrong shape, leaves the marketplace, or names a folder that is not there.",
        "`source` is a relative path starting with `./` inside the marketplace root (no `..`, no link on the way, the folder present), or an object: `{\"source\": \"github\", \"repo\": \"owner/repo\"}`, `{\"source\": \"url\", \"url\": \"https://…\"}`, `{\"source\": \"git-subdir\", \"url\": …, \"path\": …}` or `{\"source\": \"npm\", \"package\": …}` (shapes checked, not fetched). A marketplace read by URL with relative sources is a warning: Claude Code cannot install a relative plugin from a marketplace added by URL (\"a relative entry in a url-catalog marketplace, which has no local directory\"); users must add the repository (or a local clone) instead.";
    PluginManifest = "plugin-manifest", Indexes, Error,
        "A plugin's `.claude-plugin/plugin.json` cannot be read or has a field Claude Code refuses.",
        "A plugin folder may hold `.claude-plugin/plugin.json` (Claude Code reads a plugin without one: the folder names it, a `strict: false` marketplace entry describes it; one read by URL must be served): strict JSON with `name` (kebab-case, equal to the plugin's marketplace entry), `version` when present a semantic version (`1.2.3`), and a `description` (missing: a warning). Its skills are `skills/<name>/SKILL.md`, each checked by the skill rules (their own codes, reported at the plugin's files).";
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Code {
    type Err = UnknownCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCode {
                code: s.to_string(),
                nearest: nearest(s, Code::ALL.iter().map(|c| c.as_str())).map(str::to_string),
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule code `{code}`{}", .nearest.as_ref().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default())]
/// A name that is no rule code.
pub struct UnknownCode {
    /// The name as given.
    pub code: String,
    /// The nearest existing code, when one is close.
    pub nearest: Option<String>,
}

/// "did you mean `…`?" naming the nearest of `candidates` to `word`, when one is near.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    nearest(word, candidates).map(|n| format!("did you mean `{n}`?"))
}

/// The closest candidate by edit distance, if it is plausibly a typo.
pub(crate) fn nearest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(3) / 3).max(2))
        .min()
        .map(|(_, c)| c)
}

/// `docs/rules.md`, generated from the catalogue (a test keeps the committed file fresh).
pub fn rules_markdown() -> String {
    let mut out = String::from(
        "# Rules\n\n<!-- Generated by `acp-registry explain --markdown`; do not edit by hand. -->\n\n\
         Every finding of `acp-registry validate` carries one of these codes. Severities are the \
         defaults; `acp-registry.jsonc` can change them (`\"severity\": {\"<code>\": \"error\" | \
         \"warning\" | \"note\" | \"off\"}`) or exempt ids. `acp-registry explain <code>` prints the \
         same text.\n",
    );
    let mut family = None;
    for code in Code::ALL {
        if family != Some(code.family()) {
            family = Some(code.family());
            out.push_str(&format!("\n## {}\n", code.family().title()));
        }
        out.push_str(&format!(
            "\n### `{}`\n\n*Default severity: {}.* {}\n\n{}\n",
            code,
            code.default_severity(),
            code.summary(),
            code.explanation()
        ));
    }
    out
}

/// What `acp-registry explain <code>` prints.
pub(crate) fn explain(code: Code) -> String {
    format!(
        "{code} ({}, default severity: {})\n\n{}\n\n{}\n",
        code.family().title().to_lowercase(),
        code.default_severity(),
        code.summary(),
        code.explanation()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.as_str()), "duplicate {code}");
            assert!(code
                .as_str()
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'));
            assert_eq!(code.as_str().parse::<Code>().unwrap(), *code);
        }
    }

    #[test]
    fn unknown_code_suggests_the_nearest() {
        let err = "icon-colour".parse::<Code>().unwrap_err();
        assert_eq!(err.nearest.as_deref(), Some("icon-color"));
    }
}
