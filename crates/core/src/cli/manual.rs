//! `completions` and `man` of both binaries: shell completion scripts and one complete manual
//! page, both generated from the binary's clap definitions, so they list exactly what
//! `--help` does.

use std::io::{self, Write};

use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;

/// What a manual page says beyond the argument definitions.
#[derive(Debug, Clone, Copy)]
pub struct ManualText {
    /// `(code, meaning)` rows of EXIT STATUS.
    pub exit_status: &'static [(&'static str, &'static str)],
    /// `(variable, meaning)` rows of ENVIRONMENT.
    pub environment: &'static [(&'static str, &'static str)],
    /// `(command line, what it does)` rows of EXAMPLES.
    pub examples: &'static [(&'static str, &'static str)],
    /// Other pages, as `name(section)`; only pages that are generated too.
    pub see_also: &'static [&'static str],
}

/// Writes the completion script of `shell` for `cmd`, named `bin_name`.
///
/// `clap_complete`'s bash script spells a hyphenated binary's command states two ways (the
/// loop says `acp__registry__subcmd__validate`, the case arms `acp__subcmd__registry__…`),
/// so no subcommand's options or values ever complete (clap-rs/clap#6421); the arms are
/// spelled back to the loop's form here.
pub fn completions(
    shell: clap_complete::Shell,
    cmd: &mut clap::Command,
    bin_name: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(shell, cmd, bin_name, &mut script);
    if shell == clap_complete::Shell::Bash && bin_name.contains('-') {
        let text = String::from_utf8_lossy(&script);
        let arms = format!("{}__subcmd__", bin_name.replace('-', "__subcmd__"));
        let states = format!("{}__subcmd__", bin_name.replace('-', "__"));
        return out.write_all(text.replace(&arms, &states).as_bytes());
    }
    out.write_all(&script)
}

/// Writes one complete manual page (roff) for `cmd`: every subcommand with its synopsis,
/// description and every option, then exit status, environment, examples and related pages.
/// One page, so that nothing it names is missing from an installation.
pub fn man_page(cmd: clap::Command, text: &ManualText, out: &mut dyn Write) -> io::Result<()> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let man = Man::new(cmd.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    let mut commands = Roff::default();
    commands.control("SH", ["COMMANDS"]);
    commands.to_writer(out)?;
    for sub in leaves(&cmd) {
        subcommand_section(sub, out)?;
    }
    extra_sections(text, out)?;
    man.render_version_section(out)
}

/// The subcommands that run something, depth first, in definition order.
fn leaves(cmd: &clap::Command) -> Vec<&clap::Command> {
    let mut found = Vec::new();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.has_subcommands() {
            found.extend(leaves(sub));
        } else {
            found.push(sub);
        }
    }
    found
}

/// One subcommand as a subsection: its name, what it does, its synopsis and options.
fn subcommand_section(sub: &clap::Command, out: &mut dyn Write) -> io::Result<()> {
    let name = sub.get_bin_name().unwrap_or_else(|| sub.get_name());
    let mut head = Roff::default();
    head.control("SS", [name]);
    head.to_writer(out)?;
    let man = Man::new(sub.clone());
    let mut parts = Vec::new();
    man.render_synopsis_section(&mut parts)?;
    man.render_description_section(&mut parts)?;
    man.render_options_section(&mut parts)?;
    if sub.get_after_help().is_some() || sub.get_after_long_help().is_some() {
        man.render_extra_section(&mut parts)?;
    }
    out.write_all(demoted(&String::from_utf8_lossy(&parts)).as_bytes())
}

/// A subcommand's sections inside its subsection: no `.SH` of their own; the headings that
/// carry meaning (an option group such as "Online checks") become an italic line.
fn demoted(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len());
    for line in roff.lines() {
        let Some(heading) = line.strip_prefix(".SH ") else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let heading = heading.trim_matches('"');
        if ["SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXTRA"].contains(&heading) {
            out.push_str(".PP\n");
        } else {
            out.push_str(&format!(".PP\n.I \"{}\"\n", sentence_case(heading)));
        }
    }
    out
}

/// `ONLINE CHECKS` as `Online checks`.
fn sentence_case(heading: &str) -> String {
    let lower = heading.to_lowercase();
    let mut chars = lower.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// EXIT STATUS, ENVIRONMENT, EXAMPLES and SEE ALSO.
fn extra_sections(text: &ManualText, out: &mut dyn Write) -> io::Result<()> {
    let mut roff = Roff::default();
    let table = |roff: &mut Roff, heading: &str, rows: &[(&str, &str)]| {
        if rows.is_empty() {
            return;
        }
        roff.control("SH", [heading]);
        for (term, meaning) in rows {
            roff.control("TP", []);
            roff.text([bold(*term)]);
            roff.text([roman(*meaning)]);
        }
    };
    table(&mut roff, "EXIT STATUS", text.exit_status);
    table(&mut roff, "ENVIRONMENT", text.environment);
    table(&mut roff, "EXAMPLES", text.examples);
    if !text.see_also.is_empty() {
        roff.control("SH", ["SEE ALSO"]);
        roff.text([roman(text.see_also.join(", "))]);
    }
    roff.to_writer(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> clap::Command {
        clap::Command::new("my-tool")
            .version("1.0.0")
            .about("Does things")
            .subcommand(
                clap::Command::new("build").about("Builds").arg(
                    clap::Arg::new("format")
                        .long("format")
                        .value_parser(["human", "json"]),
                ),
            )
            .subcommand(
                clap::Command::new("skill").subcommand(
                    clap::Command::new("install")
                        .arg(clap::Arg::new("agent").long("agent").help("The agent")),
                ),
            )
    }

    #[test]
    fn bash_completion_of_a_hyphenated_binary_reaches_its_subcommands_states() {
        let mut script = Vec::new();
        completions(
            clap_complete::Shell::Bash,
            &mut sample(),
            "my-tool",
            &mut script,
        )
        .unwrap();
        let script = String::from_utf8(script).unwrap();
        assert!(
            script.contains("cmd=\"my__tool__subcmd__build\""),
            "{script}"
        );
        assert!(
            script.contains("        my__tool__subcmd__build)\n"),
            "{script}"
        );
        assert!(!script.contains("my__subcmd__tool"), "{script}");
    }

    #[test]
    fn the_manual_page_holds_every_leaf_subcommand_and_its_options_and_no_other_pages() {
        let text = ManualText {
            exit_status: &[("0", "done")],
            environment: &[("NO_COLOR", "no colour")],
            examples: &[("my-tool build", "builds")],
            see_also: &[],
        };
        let mut page = Vec::new();
        man_page(sample(), &text, &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        for expected in [
            ".SS \"my-tool build\"",
            ".SS \"my-tool skill install\"",
            "\\-\\-format",
            "\\-\\-agent",
            ".SH \"EXIT STATUS\"",
            ".SH EXAMPLES",
        ] {
            assert!(page.contains(expected), "{expected} missing:\n{page}");
        }
        assert!(!page.contains("my-tool-build(1)"), "{page}");
        assert_eq!(page.matches(".SH OPTIONS").count(), 1, "{page}");
    }
}
