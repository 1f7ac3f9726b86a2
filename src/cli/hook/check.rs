//! What an agent's hook checks (docs/agents.md), and what it says about it.
//!
//! - After an edit: the edited files, with the gates that run on save (test suites do not), from
//!   the cache where their content is unchanged, their warm processes asked. Findings are
//!   compared with the `auto` scope's base, so only what the edit made is said. Gates still
//!   running when the time budget is spent are stopped: the end of the turn checks them.
//! - At the end of a turn: the `auto` scope, every gate an agent's run has. The turn is kept
//!   going for new findings only, and never twice in a row for the same ones, so an agent that
//!   cannot fix them is not held in a loop.
//! - Nothing runs in a workspace a person has not trusted: the person is told how to trust it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::agents::{Answer, Event};
use crate::core::api::novelty::judge_from_cache;
use crate::core::api::{
    NewFindings, OUT_OF_TIME, ResultCache, Run, RunRequest, ScopeRequest, execute,
};
use crate::core::cache::hash::stable_hash;
use crate::core::config::{Config, Trigger};
use crate::core::report::page::PageRequest;
use crate::core::report::{GateStatus, Report, agent};
use crate::core::scope;
use crate::core::trust::{self, FileHashes, Refusal};
use crate::core::workspace::{qgates_dir, safe_fs};

/// Where and how long to check.
pub struct Check<'a> {
    pub root: &'a Path,
    pub config_path: Option<&'a Path>,
    /// Relative paths in the payload are taken from here.
    pub folder: &'a Path,
    pub budget: Duration,
}

impl Check<'_> {
    pub async fn answer(&self, event: &Event) -> Answer {
        if matches!(event, Event::Other) {
            return Answer::Silent;
        }
        if let Err(e) = qgates_dir::check(self.root) {
            return Answer::Person(format!("qgates checked nothing: {e}"));
        }
        let config = match trust::trusted_config(
            self.root,
            self.config_path,
            &FileHashes::default(),
        ) {
            Ok((config, _)) => config,
            Err(Refusal::Config(e)) => {
                return Answer::Person(format!(
                    "qgates checked nothing: the configuration has errors.\n{e}"
                ));
            }
            Err(Refusal::Untrusted(_)) => {
                return Answer::Person(format!(
                    "qgates checks nothing in {root} until you trust what its quality gates run: read them with `qgates trust {root}` in a terminal, and answer yes.",
                    root = self.root.display()
                ));
            }
        };
        let deadline = Instant::now() + self.budget;
        match event {
            Event::Edited(files) => self.after_edit(&config, files, deadline).await,
            Event::TurnEnd { again } => self.turn_end(&config, *again, deadline).await,
            Event::Other => Answer::Silent,
        }
    }

    fn request(&self, config: &Config, scope: ScopeRequest, trigger: Trigger) -> RunRequest {
        RunRequest {
            cache: Some(Arc::new(ResultCache::load(self.root))),
            warm: true,
            new_findings: if config.new_only {
                NewFindings::Only
            } else {
                NewFindings::Mark
            },
            ..RunRequest::new(self.root.to_path_buf(), scope, trigger)
        }
    }

    async fn after_edit(&self, config: &Config, files: &[PathBuf], deadline: Instant) -> Answer {
        // Files of this workspace that are there (a deleted file has nothing to check).
        let files: Vec<PathBuf> = (files.iter())
            .map(|f| self.folder.join(f))
            .filter(|f| f.starts_with(self.root) && f.is_file())
            .collect();
        if files.is_empty() {
            return Answer::Silent;
        }
        let request = RunRequest {
            update_state: false,
            deadline: Some(deadline),
            ..self.request(config, ScopeRequest::Files(files), Trigger::Save)
        };
        // The base the `auto` scope compares with: what the edit is judged against.
        let base = {
            let (root, config) = (self.root.to_path_buf(), config.clone());
            tokio::task::spawn_blocking(move || scope::resolve(&root, &config, &ScopeRequest::Auto))
                .await
                .ok()
                .and_then(Result::ok)
                .and_then(|s| s.changed_since)
        };
        let reference = Arc::new(ResultCache::load_reference(self.root));
        let report = match self
            .judged(config, &request, base.as_deref(), &reference, deadline)
            .await
        {
            Ok(report) => report,
            Err(e) => return Answer::Person(format!("qgates could not check the edit: {e}")),
        };
        save(&request, &reference);
        let new = new_findings(&report);
        if new.is_empty() {
            return Answer::Silent;
        }
        let mut text = agent::render(&report.page(PageRequest::default()), &[]);
        let late = out_of_time(&report);
        if !late.is_empty() {
            text.push_str(&format!(
                "\nstill running when this answer was due, so checked at the end of the turn: {}",
                late.join(", ")
            ));
        }
        Answer::Agent(text)
    }

    /// The run's findings marked new or pre-existing from the reference's cached results; what
    /// the cache lacks is run at the reference within the budget, and the run is then answered
    /// again from the result cache. Past the budget, findings the reference could not be asked
    /// about count as new (the report's warnings say so). `base`: the commit to compare with
    /// when the scope has none of its own.
    async fn judged(
        &self,
        config: &Config,
        request: &RunRequest,
        base: Option<&str>,
        reference: &Arc<ResultCache>,
        deadline: Instant,
    ) -> Result<Report, String> {
        let once = async || -> Result<(Run, _), String> {
            let run = execute(config, request, None)
                .await
                .map_err(|e| e.to_string())?;
            Ok(judge_from_cache(config, request, run, base, reference).await)
        };
        let (run, warmup) = once().await?;
        let Some(warmup) = warmup else {
            return Ok(run.finish());
        };
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, warmup.run(config, reference)).await {
            Ok(Ok(())) => {
                drop(run);
                // The edited files' results are cached now: no tool runs again.
                Ok(once().await?.0.finish())
            }
            _ => Ok(run.finish()),
        }
    }

    async fn turn_end(&self, config: &Config, again: bool, deadline: Instant) -> Answer {
        let request = RunRequest {
            deadline: Some(deadline),
            ..self.request(config, ScopeRequest::Auto, Trigger::Command)
        };
        let reference = Arc::new(ResultCache::load_reference(self.root));
        // The scope's own base is what its findings are compared with.
        let report = match self
            .judged(config, &request, None, &reference, deadline)
            .await
        {
            Ok(report) => report,
            Err(e) => return Answer::Person(format!("qgates could not check the turn: {e}")),
        };
        save(&request, &reference);
        let new = new_findings(&report);
        let memory = Memory::of(self.root);
        let late = out_of_time(&report);
        let unchecked = match late.is_empty() {
            true => String::new(),
            false => format!(
                "qgates: {} did not finish within {} s; run `qgates check` to see them",
                late.join(", "),
                self.budget.as_secs()
            ),
        };
        if new.is_empty() {
            memory.forget();
            return match unchecked.is_empty() {
                true => Answer::Silent,
                false => Answer::Person(unchecked),
            };
        }
        let fingerprint = fingerprint(&new);
        if again && memory.last() == Some(fingerprint.clone()) {
            memory.forget();
            return Answer::Person(format!(
                "qgates: the turn ends with the same {} it was kept going for, still there; see `qgates check`",
                count(new.len())
            ));
        }
        memory.keep(&fingerprint);
        let mut text = agent::render(&report.page(PageRequest::default()), &[]);
        text.push_str(
            "\nThese findings are new in this turn's changes: fix them before ending the turn.",
        );
        Answer::Agent(text)
    }
}

fn save(request: &RunRequest, reference: &ResultCache) {
    if let Some(cache) = &request.cache {
        cache.save();
    }
    reference.save();
}

/// The report's new findings (all of them when nothing was compared), as (gate, file, code,
/// message).
fn new_findings(report: &Report) -> Vec<String> {
    let mut found: Vec<String> = (report.gates.iter())
        .flat_map(|g| {
            g.violations
                .iter()
                .filter(|v| v.new != Some(false))
                .map(move |v| {
                    format!(
                        "{}\u{0}{}\u{0}{}\u{0}{}",
                        g.id,
                        v.file.as_deref().unwrap_or(""),
                        v.code.as_deref().unwrap_or(""),
                        v.message
                    )
                })
        })
        .collect();
    found.sort();
    found
}

/// The gates the deadline stopped.
fn out_of_time(report: &Report) -> Vec<String> {
    (report.gates.iter())
        .filter(|g| {
            g.status == GateStatus::Skipped && g.skip_reason.as_deref() == Some(OUT_OF_TIME)
        })
        .map(|g| g.id.clone())
        .collect()
}

fn fingerprint(findings: &[String]) -> String {
    stable_hash(findings.join("\n").as_bytes())
}

fn count(n: usize) -> String {
    match n {
        1 => "1 new finding".into(),
        n => format!("{n} new findings"),
    }
}

/// Which findings the last turn's end was kept going for (`.qgates/hooks/turn-end`).
struct Memory {
    file: Option<PathBuf>,
}

impl Memory {
    fn of(root: &Path) -> Memory {
        Memory {
            file: qgates_dir::make(root, "hooks")
                .ok()
                .map(|d| d.join("turn-end")),
        }
    }

    fn last(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.file.as_ref()?).ok()?;
        Some(text.trim().to_string())
    }

    fn keep(&self, fingerprint: &str) {
        if let Some(file) = &self.file {
            let _ = safe_fs::write_atomic(file, fingerprint.as_bytes(), 0o600);
        }
    }

    fn forget(&self) {
        if let Some(file) = &self.file {
            let _ = std::fs::remove_file(file);
        }
    }
}
