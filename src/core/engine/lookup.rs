//! The result cache's part in a run: which of a gate's files it answers (and with what), and
//! recording a fresh result for the next run. A gate without file arguments has one result for
//! the whole workspace.

use std::collections::HashMap;
use std::sync::Arc;

use super::RunRequest;
use super::plan::PlannedGate;
use crate::core::cache::remote::{Session, Wanted};
use crate::core::cache::{KeyMaker, ResultCache, WHOLE_WORKSPACE};
use crate::core::config::{Config, Gate, GateKind};
use crate::core::report::fix_hint::render_fix_hint;
use crate::core::report::{GateResult, GateStatus};
use crate::core::runner::fresh_result;
use crate::core::violation::Violation;

/// A gate's files split into those the cache answers and those that must run.
#[derive(Debug, Default)]
pub(crate) struct Lookup {
    pub(crate) hits: Vec<(String, Vec<Violation>)>,
    /// The files that must run, each with the key to record its fresh result under (none when
    /// the gate's results are not cached).
    pub(crate) misses: Vec<(String, Option<String>)>,
    /// Hits no shared store has yet, with their keys: a run with one writes them after it.
    pub(crate) unshared: Vec<(String, String)>,
}

impl Lookup {
    /// The files that must run.
    pub(crate) fn files_to_run(&self) -> Vec<String> {
        self.misses.iter().map(|(f, _)| f.clone()).collect()
    }

    /// Adds what a shared store is asked for (each miss with a key) and what it is given after
    /// the run (the unshared hits) for `gate`.
    pub(crate) fn wanted(&self, gate: &Gate, asked: &mut Vec<Wanted>, given: &mut Vec<Wanted>) {
        let wanted = |file: &String, key: &String| Wanted {
            gate: gate.id.clone(),
            file: file.clone(),
            key: key.clone(),
        };
        asked.extend(
            self.misses
                .iter()
                .filter_map(|(f, k)| k.as_ref().map(|k| wanted(f, k))),
        );
        given.extend(self.unshared.iter().map(|(f, k)| wanted(f, k)));
    }

    /// Moves the files a shared store answered for `gate` from the misses to the hits; an
    /// answer is believed as a local entry is (`believed`).
    pub(crate) fn answer(&mut self, gate: &Gate, found: Vec<(String, Vec<Violation>)>) {
        let mut answers: HashMap<String, Vec<Violation>> = found.into_iter().collect();
        for (file, key) in std::mem::take(&mut self.misses) {
            let answer = key
                .is_some()
                .then(|| answers.remove(&file))
                .flatten()
                .filter(|v| believed(&file, v));
            match answer {
                Some(mut v) => {
                    set_gate(gate, &mut v);
                    self.hits.push((file, v));
                }
                None => self.misses.push((file, key)),
            }
        }
    }

    /// The lookup of files whose keys the caller made (the reference versions of files, which
    /// are not on disk: `core::novelty`).
    pub(crate) fn of_keys(cache: &ResultCache, gate: &Gate, keyed: Vec<(String, String)>) -> Self {
        let mut lookup = Lookup::default();
        for (file, key) in keyed {
            lookup.record(cache, gate, &file, key);
        }
        lookup
    }

    fn record(&mut self, cache: &ResultCache, gate: &Gate, file: &str, key: String) {
        match cache
            .get_noting_shared(&gate.id, file, &key)
            .filter(|(v, _)| believed(file, v))
        {
            Some((mut v, shared)) => {
                set_gate(gate, &mut v);
                if !shared {
                    self.unshared.push((file.to_string(), key));
                }
                self.hits.push((file.to_string(), v));
            }
            None => self.misses.push((file.to_string(), Some(key))),
        }
    }
}

/// An entry is believed only when every violation names the file it is kept under, as
/// `merge_with_cache` records them; the one result of a gate without file arguments, when each
/// names a file inside the workspace or none. Anything else is not qgates' own and runs again.
fn believed(file: &str, violations: &[Violation]) -> bool {
    if file == WHOLE_WORKSPACE {
        let inside =
            |f: &str| !f.starts_with('/') && !f.split('/').any(|c| c == ".." || c.is_empty());
        violations
            .iter()
            .all(|x| x.file.as_deref().is_none_or(inside))
    } else {
        violations.iter().all(|x| x.file.as_deref() == Some(file))
    }
}

fn set_gate(gate: &Gate, violations: &mut [Violation]) {
    let id: Arc<str> = gate.id.as_str().into();
    for x in violations {
        x.gate = id.clone();
    }
}

/// The second stage of a run: each planned gate's files split into what the local cache answers
/// and what must run, then the misses asked of the shared store for every gate at once, before
/// any gate starts. Returns the lookups in the plan's order, and the shared store's session to
/// write back to once the gates are done.
pub(super) async fn look_up_plan(
    config: &Config,
    request: &RunRequest,
    keys: &KeyMaker<'_>,
    gates: &[PlannedGate<'_>],
) -> (Vec<Lookup>, Option<Session>) {
    let mut lookups: Vec<Lookup> = gates
        .iter()
        .map(|p| {
            let cache = request
                .cache
                .as_deref()
                .filter(|_| p.gate.kind != GateKind::Deps);
            if p.gate.pass_files {
                look_up(cache, keys, p.gate, &p.files)
            } else {
                // The one result of a gate without file arguments, kept under `WHOLE_WORKSPACE`.
                look_up(cache, keys, p.gate, &[&WHOLE_WORKSPACE.to_string()])
            }
        })
        .collect();
    let mut remote = request
        .cache
        .as_ref()
        .and_then(|cache| Session::start(cache, &config.cache));
    if let Some(remote) = &mut remote {
        let gates = gates.iter().map(|p| p.gate);
        read_shared(remote, gates.zip(&mut lookups).collect()).await;
    }
    (lookups, remote)
}

pub(crate) fn look_up(
    cache: Option<&ResultCache>,
    keys: &KeyMaker,
    gate: &Gate,
    files: &[&String],
) -> Lookup {
    let mut lookup = Lookup::default();
    for f in files {
        match cache.and_then(|c| Some((c, keys.key(gate, f)?))) {
            Some((cache, key)) => lookup.record(cache, gate, f, key),
            None => lookup.misses.push(((*f).clone(), None)),
        }
    }
    lookup
}

/// Asks a shared store, for every gate at once, for what the local cache missed, and moves
/// what it answers into the hits.
pub(crate) async fn read_shared(remote: &mut Session, lookups: Vec<(&Gate, &mut Lookup)>) {
    let (mut asked, mut given) = (Vec::new(), Vec::new());
    for (gate, lookup) in &lookups {
        lookup.wanted(gate, &mut asked, &mut given);
    }
    let mut found: HashMap<String, Vec<(String, Vec<Violation>)>> = HashMap::new();
    for (w, violations) in remote.read_through(asked, given).await {
        found.entry(w.gate).or_default().push((w.file, violations));
    }
    for (gate, lookup) in lookups {
        if let Some(answers) = found.remove(&gate.id) {
            lookup.answer(gate, answers);
        }
    }
}

/// A gate answered entirely from the cache: no process runs.
pub(crate) fn from_cache(gate: &Gate, lookup: Lookup) -> GateResult {
    merge_with_cache(gate, fresh_result(gate, 0), lookup, None)
}

/// Adds the cached files' violations to a fresh result and records the fresh files' results.
pub(crate) fn merge_with_cache(
    gate: &Gate,
    mut result: GateResult,
    lookup: Lookup,
    cache: Option<&ResultCache>,
) -> GateResult {
    // A run that stopped early did not check every file it was given: none is recorded, not
    // even the ones with findings (what it would say of them is not all said).
    if let Some(cache) = cache
        && matches!(result.status, GateStatus::Passed | GateStatus::Failed)
        && !result.incomplete
    {
        // A file-less finding or one about a file this run did not check cannot be replayed per
        // file: such a run is not recorded. A gate without file arguments records its result
        // whole, every violation under `WHOLE_WORKSPACE`.
        let keyed: HashMap<&str, &String> = lookup
            .misses
            .iter()
            .filter_map(|(f, k)| Some((f.as_str(), k.as_ref()?)))
            .collect();
        let entries: Vec<Option<&str>> = result
            .violations
            .iter()
            .map(|v| match gate.pass_files {
                true => v.file.as_deref(),
                false => Some(WHOLE_WORKSPACE),
            })
            .collect();
        if entries
            .iter()
            .all(|f| f.is_some_and(|f| keyed.contains_key(f)))
        {
            let mut by_file: HashMap<&str, Vec<Violation>> = HashMap::new();
            for (v, f) in result.violations.iter().zip(entries.into_iter().flatten()) {
                by_file.entry(f).or_default().push(v.clone());
            }
            for (file, key) in keyed {
                let found = by_file.remove(file).unwrap_or_default();
                cache.put(&gate.id, file, key.clone(), found);
            }
        }
    }
    if lookup.hits.is_empty() {
        return result;
    }
    result.cached_files = lookup.hits.len();
    result.files_checked += lookup.hits.len();
    for (_, v) in lookup.hits {
        result.violations.extend(v);
    }
    result.violations.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.code).cmp(&(&b.file, b.line, b.column, &b.code))
    });
    if result.status == GateStatus::Passed && gate.fails_with(&result.violations) {
        result.status = GateStatus::Failed;
    }
    if result.status == GateStatus::Failed {
        result.fix_hint = gate
            .fix_hint
            .as_ref()
            .map(|h| render_fix_hint(h, &result.violations, &[]));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> Gate {
        use crate::core::config::{ConfigSource, DEFAULT_CONFIG, parse_config};
        let config = parse_config(DEFAULT_CONFIG, ConfigSource::Embedded).unwrap();
        config.gate("ruff_lint").unwrap().clone()
    }

    fn naming(file: &str) -> Violation {
        Violation {
            file: Some(file.into()),
            ..Violation::message_only("elsewhere", "found")
        }
    }

    /// The store's answers move their files to the hits, whatever order they come in; a file
    /// it did not answer, an answer about another file, and a file without a key still run.
    #[test]
    fn a_shared_answer_replaces_only_its_own_miss() {
        let gate = gate();
        let mut lookup = Lookup::default();
        for (file, key) in [
            ("a.py", Some("ka")),
            ("b.py", Some("kb")),
            ("c.py", Some("kc")),
        ] {
            lookup.misses.push((file.into(), key.map(String::from)));
        }
        lookup.misses.push(("d.py".into(), None));
        let (mut asked, mut given) = (Vec::new(), Vec::new());
        lookup.wanted(&gate, &mut asked, &mut given);
        let asked: Vec<&str> = asked.iter().map(|w| w.file.as_str()).collect();
        assert_eq!(asked, ["a.py", "b.py", "c.py"]);
        lookup.answer(
            &gate,
            vec![
                ("c.py".into(), vec![naming("c.py")]),
                ("a.py".into(), vec![]),
                ("b.py".into(), vec![naming("a.py")]),
                ("d.py".into(), vec![]),
            ],
        );
        let hits: Vec<&str> = lookup.hits.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(hits, ["a.py", "c.py"]);
        assert_eq!(&*lookup.hits[1].1[0].gate, "ruff_lint");
        assert_eq!(lookup.files_to_run(), ["b.py", "d.py"]);
        assert_eq!(lookup.misses[0].1.as_deref(), Some("kb"));
    }
}
