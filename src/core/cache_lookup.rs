//! The result cache's part in a run: which of a gate's files it answers (and with what), and
//! recording a fresh result for the next run. A gate without file arguments has one result for
//! the whole workspace.

use std::collections::HashMap;
use std::sync::Arc;

use crate::core::cache::{KeyMaker, ResultCache, WHOLE_WORKSPACE};
use crate::core::config::Gate;
use crate::core::report::{GateResult, GateStatus};
use crate::core::runner::render_fix_hint;
use crate::core::skips::skipped;

/// A gate's files split into those the cache answers and those that must run.
#[derive(Debug, Default)]
pub(crate) struct Lookup {
    pub(crate) hits: Vec<(String, Vec<crate::core::violation::Violation>)>,
    pub(crate) misses: Vec<String>,
    /// The keys of the misses, to record their fresh results under.
    pub(crate) keys: HashMap<String, String>,
}

pub(crate) fn look_up(
    cache: Option<&ResultCache>,
    keys: &KeyMaker,
    gate: &Gate,
    files: &[&String],
) -> Lookup {
    let mut lookup = Lookup::default();
    for f in files {
        let key = cache.and_then(|_| keys.key(gate, f));
        match (cache, key) {
            // An entry is believed only for the file it is kept under: the run that recorded it
            // checked that every violation named that file (`merge_with_cache`), a file in the
            // workspace, as fresh ones are checked when parsed. Anything else is not qgates' own
            // and runs again.
            (Some(cache), Some(key)) => match cache
                .get(&gate.id, f, &key)
                .filter(|v| v.iter().all(|x| x.file.as_deref() == Some(f.as_str())))
            {
                Some(mut v) => {
                    let id: Arc<str> = gate.id.as_str().into();
                    for x in &mut v {
                        x.gate = id.clone();
                    }
                    lookup.hits.push(((*f).clone(), v));
                }
                None => {
                    lookup.keys.insert((*f).clone(), key);
                    lookup.misses.push((*f).clone());
                }
            },
            _ => lookup.misses.push((*f).clone()),
        }
    }
    lookup
}

/// The one result of a gate without file arguments. An entry is believed only when every
/// violation names a file inside the workspace (or none), as fresh ones do when parsed.
pub(crate) fn look_up_whole(cache: Option<&ResultCache>, keys: &KeyMaker, gate: &Gate) -> Lookup {
    let mut lookup = Lookup::default();
    let whole = WHOLE_WORKSPACE.to_string();
    let key = cache.and_then(|_| keys.key(gate, &whole));
    let inside = |f: &str| !f.starts_with('/') && !f.split('/').any(|c| c == ".." || c.is_empty());
    let hit = match (cache, &key) {
        (Some(cache), Some(key)) => cache
            .get(&gate.id, &whole, key)
            .filter(|v| v.iter().all(|x| x.file.as_deref().is_none_or(inside))),
        _ => None,
    };
    match hit {
        Some(mut v) => {
            let id: Arc<str> = gate.id.as_str().into();
            for x in &mut v {
                x.gate = id.clone();
            }
            lookup.hits.push((whole, v));
        }
        None => {
            if let Some(key) = key {
                lookup.keys.insert(whole.clone(), key);
            }
            lookup.misses.push(whole);
        }
    }
    lookup
}

/// A gate answered entirely from the cache: no process runs.
pub(crate) fn from_cache(gate: &Gate, lookup: Lookup) -> GateResult {
    let fresh = GateResult {
        status: GateStatus::Passed,
        skip_reason: None,
        ..skipped(gate, String::new())
    };
    merge_with_cache(gate, fresh, lookup, None)
}

/// Adds the cached files' violations to a fresh result and records the fresh files' results.
pub(crate) fn merge_with_cache(
    gate: &Gate,
    mut result: GateResult,
    lookup: Lookup,
    cache: Option<&ResultCache>,
) -> GateResult {
    if let Some(cache) = cache
        && matches!(result.status, GateStatus::Passed | GateStatus::Failed)
    {
        // Only when every violation belongs to a file this run checked: a file-less finding or
        // one about another file cannot be replayed per file, so such a run is not recorded.
        // A gate without file arguments records its whole result as one.
        let per_file = result.violations.iter().all(|v| {
            v.file
                .as_deref()
                .is_some_and(|f| lookup.keys.contains_key(f))
        });
        if !gate.pass_files {
            if let Some(key) = lookup.keys.get(WHOLE_WORKSPACE) {
                cache.put(
                    &gate.id,
                    WHOLE_WORKSPACE,
                    key.clone(),
                    result.violations.clone(),
                );
            }
        } else if per_file {
            let mut by_file: HashMap<&str, Vec<crate::core::violation::Violation>> = HashMap::new();
            for v in &result.violations {
                if let Some(f) = &v.file {
                    by_file.entry(f).or_default().push(v.clone());
                }
            }
            for (file, key) in &lookup.keys {
                cache.put(
                    &gate.id,
                    file,
                    key.clone(),
                    by_file.remove(file.as_str()).unwrap_or_default(),
                );
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
        let checked: Vec<String> = Vec::new();
        result.fix_hint = gate
            .fix_hint
            .as_ref()
            .map(|h| render_fix_hint(h, &result.violations, &checked));
    }
    result
}
