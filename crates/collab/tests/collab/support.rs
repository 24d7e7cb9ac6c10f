//! Shared fixtures of the collab tests: a collaboration in a temporary
//! folder, driven through the library, with one helper per protocol step.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use acp_collab::{self as collab, AppendOptions, Appended, CollabError, InitOptions, Report};
use acp_test_kit::{sha256_hex, Append};
use tempfile::TempDir;

pub(crate) const REF: &str = "deliverables/design-spec.md";

pub(crate) fn bin() -> Command {
    Command::new(crate::COLLAB)
}

/// Runs `append`, which must be refused as a usage error (exit 2); returns its stderr.
pub(crate) fn refused_stderr(append: &Append) -> String {
    let out = append.command().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    stderr(&out)
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub(crate) fn init_options(folder: &Path, participants: &[&str]) -> InitOptions {
    InitOptions {
        folder: folder.display().to_string(),
        participants: participants.iter().map(|p| (*p).to_owned()).collect(),
        objective: "Design the cache".to_owned(),
        completion: vec!["Gate A".to_owned()],
        primary_type: "design-spec".to_owned(),
        deliverables_mode: "internal".to_owned(),
        deliverables_dir: "deliverables".to_owned(),
        ..InitOptions::default()
    }
}

/// A collaboration folder inside a temporary directory.
pub(crate) struct Fx {
    pub(crate) tmp: TempDir,
    pub(crate) folder: PathBuf,
    pub(crate) participants: Vec<String>,
    /// The primary ref (`deliverables/design-spec.md` by default).
    pub(crate) primary: String,
}

impl Fx {
    /// A design-spec collaboration with one objective gate, `Gate A`.
    pub(crate) fn new(participants: &[&str]) -> Self {
        Self::with(participants, |_| {})
    }

    pub(crate) fn with(participants: &[&str], tweak: impl FnOnce(&mut InitOptions)) -> Self {
        Self::with_tmp(tempfile::tempdir().unwrap(), participants, tweak)
    }

    /// A fixture in memory-backed storage where available: the fsyncs that
    /// make appends durable then cost nothing, which keeps load tests fast.
    pub(crate) fn in_memory(participants: &[&str]) -> Self {
        let shm = Path::new("/dev/shm");
        let tmp = if shm.is_dir() {
            tempfile::tempdir_in(shm).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        Self::with_tmp(tmp, participants, |_| {})
    }

    fn with_tmp(tmp: TempDir, participants: &[&str], tweak: impl FnOnce(&mut InitOptions)) -> Self {
        let folder = tmp.path().canonicalize().unwrap().join("collab");
        let mut opts = init_options(&folder, participants);
        tweak(&mut opts);
        collab::init(&opts).expect("init");
        let protocol: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(folder.join("protocol.json")).unwrap())
                .unwrap();
        let primary = collab::Protocol {
            folder: folder.clone(),
            map: protocol.as_object().unwrap().clone(),
        }
        .primary_ref()
        .unwrap();
        Fx {
            tmp,
            folder,
            participants: participants.iter().map(|p| (*p).to_owned()).collect(),
            primary,
        }
    }

    pub(crate) fn owner(&self) -> &str {
        &self.participants[0]
    }

    pub(crate) fn reviewers(&self) -> Vec<String> {
        let mut r: Vec<String> = self.participants[1..].to_vec();
        r.sort();
        r
    }

    /// `acp-collab append --folder <this folder>`, flags to add.
    pub(crate) fn append(&self) -> Append {
        Append::new(crate::COLLAB, &self.folder)
    }

    pub(crate) fn folder_str(&self) -> String {
        self.folder.display().to_string()
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.folder.join(rel)
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub(crate) fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub(crate) fn edit(&self, rel: &str, f: impl FnOnce(String) -> String) {
        let text = self.read(rel);
        self.write(rel, &f(text));
    }

    /// Replaces every `from` in `rel` with `to`.
    pub(crate) fn replace(&self, rel: &str, from: &str, to: &str) {
        self.edit(rel, |t| t.replace(from, to));
    }

    pub(crate) fn protocol(&self) -> serde_json::Value {
        serde_json::from_str(&self.read("protocol.json")).unwrap()
    }

    pub(crate) fn edit_protocol(&self, f: impl FnOnce(&mut serde_json::Value)) {
        let mut p = self.protocol();
        f(&mut p);
        self.write("protocol.json", &serde_json::to_string_pretty(&p).unwrap());
    }

    pub(crate) fn last_seq(&self) -> i64 {
        std::fs::read_to_string(self.path("events.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count() as i64
    }

    /// Appends with `reply_to` = the last seq and the given extra fields
    /// (`doc`, `role`, `sha256`, `reply_to`, `summary`).
    pub(crate) fn try_append(
        &self,
        who: &str,
        event: &str,
        extra: &[(&str, &str)],
    ) -> Result<Appended, CollabError> {
        let mut opts = AppendOptions {
            folder: self.folder_str(),
            participant: who.to_owned(),
            event: event.to_owned(),
            summary: format!("{event} by {who}"),
            reply_to: Some(self.last_seq()),
            ..AppendOptions::default()
        };
        for (k, v) in extra {
            match *k {
                "doc" => opts.doc = Some((*v).to_owned()),
                "role" => opts.role = Some((*v).to_owned()),
                "sha256" => opts.sha256 = Some((*v).to_owned()),
                "summary" => opts.summary = (*v).to_owned(),
                "reply_to" => opts.reply_to = v.parse().ok(),
                other => panic!("unknown field {other}"),
            }
        }
        collab::append(&opts)
    }

    pub(crate) fn ok(&self, who: &str, event: &str, extra: &[(&str, &str)]) -> i64 {
        match self.try_append(who, event, extra) {
            Ok(a) => a.seq,
            Err(e) => panic!("{event} from {who} refused: {e}"),
        }
    }

    pub(crate) fn refused(&self, who: &str, event: &str, extra: &[(&str, &str)]) -> String {
        match self.try_append(who, event, extra) {
            Ok(a) => panic!("{event} from {who} was accepted as seq {}", a.seq),
            Err(e) => e.to_string(),
        }
    }

    pub(crate) fn validate(&self) -> Report {
        collab::validate(&self.folder_str()).expect("validate runs")
    }

    pub(crate) fn assert_valid(&self) {
        let r = self.validate();
        assert_eq!(r.exit_code(), 0, "{}", r.render_text());
    }

    /// Validation errors (asserts there is at least one).
    pub(crate) fn errors(&self) -> Vec<String> {
        let r = self.validate();
        assert_eq!(r.exit_code(), 2, "{}", r.render_text());
        r.errors
    }

    pub(crate) fn next(&self, who: &str) -> String {
        let n = collab::next_action(&self.folder_str(), who).unwrap();
        // The follow-up lines (next seq, commands) come after `next action:`.
        n.lines
            .iter()
            .find_map(|l| l.strip_prefix("next action: "))
            .unwrap()
            .to_owned()
    }

    // ---- protocol steps -------------------------------------------------

    pub(crate) fn draft(&self) -> i64 {
        let r = self.primary.clone();
        self.ok(
            self.owner(),
            "deliverable_drafted",
            &[("doc", &r), ("role", "primary")],
        )
    }

    pub(crate) fn submit(&self) -> i64 {
        self.ok(self.owner(), "proposal_submitted", &[])
    }

    /// Writes a review heading for the seq the next event will get.
    pub(crate) fn write_review_heading(&self, who: &str) {
        let seq = self.last_seq() + 1;
        self.edit("review.md", |t| {
            format!(
                "{t}\n## 2026-11-30T00:00:00Z - {who} - seq {seq}\n\nReview Scope:\n- Primary deliverable completeness\n\nPosition:\n- Fine.\n"
            )
        });
    }

    pub(crate) fn review(&self, who: &str) -> i64 {
        self.write_review_heading(who);
        self.ok(who, "review_submitted", &[])
    }

    pub(crate) fn all_review(&self) {
        for r in self.reviewers() {
            self.review(&r);
        }
    }

    pub(crate) fn revise(&self) -> i64 {
        self.ok(self.owner(), "proposal_revised", &[])
    }

    /// Resolves the seeded readiness question.
    pub(crate) fn resolve_readiness(&self) {
        self.edit("readiness.md", |t| {
            t.replace("- [unresolved]", "- [resolved]")
        });
    }

    pub(crate) fn classify(&self) -> i64 {
        self.resolve_readiness();
        self.ok(self.owner(), "question_classified", &[])
    }

    pub(crate) fn all_accept(&self) {
        let mut ps = self.participants.clone();
        ps.sort();
        for p in ps {
            self.ok(&p, "decision_accepted", &[]);
        }
    }

    /// Draft → submit → reviews → revise → classify → acceptances.
    pub(crate) fn to_readiness_check(&self) {
        self.draft();
        self.submit();
        self.all_review();
        self.revise();
        self.classify();
        self.all_accept();
    }

    /// Fills every section and sets `Status: Frozen`.
    pub(crate) fn finish_deliverable(&self) {
        self.edit(REF, |t| acp_test_kit::collab::finish_deliverable(&t));
    }

    pub(crate) fn deliverable_sha(&self) -> String {
        sha256_hex(&std::fs::read(self.path(REF)).unwrap())
    }

    pub(crate) fn freeze(&self) -> i64 {
        self.finish_deliverable();
        let sha = self.deliverable_sha();
        let r = self.primary.clone();
        self.ok(
            self.owner(),
            "deliverable_frozen",
            &[("doc", &r), ("role", "primary"), ("sha256", &sha)],
        )
    }

    pub(crate) fn tick_all(&self) {
        self.edit("readiness.md", |t| t.replace("- [ ] ", "- [x] "));
    }

    pub(crate) fn pass_readiness(&self) -> i64 {
        self.tick_all();
        self.ok(self.owner(), "readiness_passed", &[])
    }

    pub(crate) fn write_conclusion(&self, outcome: &str) {
        self.edit("conclusion.md", |t| {
            t.replace(
                "- [blocked] The collaboration is not complete yet.",
                &format!("- [{outcome}] Build it."),
            )
        });
    }

    pub(crate) fn complete(&self) -> i64 {
        self.write_conclusion("proceed");
        self.ok(self.owner(), "completed", &[("doc", "conclusion.md")])
    }

    /// The whole normal path, ending in `completed`.
    pub(crate) fn run_all(&self) {
        self.to_readiness_check();
        self.freeze();
        self.pass_readiness();
        self.complete();
    }
}
