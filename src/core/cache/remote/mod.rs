//! The shared result cache (docs/remote-cache.md): a store other machines read and write — a
//! folder, Redis, S3 or GitHub Actions' cache — behind the local cache, under the same portable
//! keys (`cache_keys`).
//!
//! A run with a store configured (`cache.remote`, or `QGATES_REMOTE_CACHE`) makes a `Session`:
//! before the gates start, every key the local cache misses is asked of the store, and what it
//! has goes into the local cache, so only the rest runs. After the run, each (gate, file) result
//! the run recorded is written, red or green alike, unless the store is read-only.
//!
//! The store is a help, never a condition: one run's work with it shares one budget
//! (`timeout_ms`). A store that is down, refuses or hangs costs at most that, and the report
//! carries ONE warning naming the store (without credentials) and what went wrong; the exit code
//! is the run's own. An entry that does not check (`codec`) is not believed: the gate runs.

mod codec;
mod redis_store;
mod store;
mod url;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

pub use codec::{Rejected, decode, encode, full_key};
pub use store::{PASSWORD_VAR, Store, USER_VAR};
pub use url::{FORMS, StoreUrl, UrlError, redacted};

use crate::core::cache::ResultCache;
use crate::core::config::CacheSettings;
use crate::core::violation::Violation;

/// Overrides `cache.remote` (an empty value turns the shared cache off).
pub const URL_VAR: &str = "QGATES_REMOTE_CACHE";
/// `1` (or `true`, `yes`): read the shared cache, never write it.
pub const READ_ONLY_VAR: &str = "QGATES_REMOTE_CACHE_READ_ONLY";

/// After a failure a long-lived process (the language server) leaves the store alone this
/// long, so a store that is down costs one budget per minute, not one per save.
const QUIET_AFTER_FAILURE: Duration = Duration::from_secs(60);

/// The shared cache in force for a run: the configuration's, with the environment's word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    pub url: StoreUrl,
    pub read_only: bool,
    pub timeout: Duration,
}

/// `None`: no shared cache. An error names what is wrong with `QGATES_REMOTE_CACHE` (the
/// configuration's URL was checked when it was read).
pub fn effective(settings: &CacheSettings) -> Option<Result<Effective, String>> {
    let url = match std::env::var(URL_VAR) {
        Ok(text) if text.trim().is_empty() => return None,
        Ok(text) => match StoreUrl::parse(&text) {
            Ok(url) => url,
            Err(e) => return Some(Err(format!("{URL_VAR}: {e}"))),
        },
        Err(_) => settings.remote.clone()?,
    };
    let env_read_only = std::env::var(READ_ONLY_VAR)
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"));
    Some(Ok(Effective {
        read_only: settings.read_only || env_read_only,
        url,
        timeout: settings.timeout,
    }))
}

/// The store a long-lived cache keeps open between runs, and its last failure.
#[derive(Debug, Default)]
pub struct RemoteTier {
    state: Mutex<Option<Opened>>,
}

#[derive(Debug)]
struct Opened {
    url: StoreUrl,
    store: Result<Store, String>,
    failed: Option<(Instant, String)>,
}

impl RemoteTier {
    /// The store for `url`, opened once; `Err` says why it cannot be used now.
    fn open(&self, url: &StoreUrl) -> Result<Store, String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.as_ref().is_none_or(|o| &o.url != url) {
            *state = Some(Opened {
                url: url.clone(),
                store: Store::open(url),
                failed: None,
            });
        }
        let opened = state.as_ref().expect("just set");
        if let Some((at, why)) = &opened.failed
            && at.elapsed() < QUIET_AFTER_FAILURE
        {
            return Err(format!(
                "not asked: it failed {} s ago ({why}); it is asked again a minute after that",
                at.elapsed().as_secs()
            ));
        }
        opened.store.clone()
    }

    fn failed(&self, why: &str) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(opened) = state.as_mut() {
            opened.failed = Some((Instant::now(), why.to_string()));
        }
    }
}

/// One (gate, file) result a run looks up, by its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub gate: String,
    pub file: String,
    pub key: String,
}

impl Wanted {
    fn full_key(&self) -> String {
        full_key(&self.gate, &self.file, &self.key)
    }
}

/// One run's work with the shared store.
pub struct Session {
    cache: Arc<ResultCache>,
    /// `None` when the store cannot be used (the warning says why).
    store: Option<Store>,
    shown: String,
    read_only: bool,
    budget: Duration,
    spent: Duration,
    /// Asked and not found (or not believed): written after the run, if the run recorded them.
    pending: Vec<Wanted>,
    warning: Option<String>,
}

impl Session {
    /// The session of a run with `cache`, when a shared cache is configured.
    pub fn start(cache: &Arc<ResultCache>, settings: &CacheSettings) -> Option<Session> {
        let mut session = Session {
            cache: cache.clone(),
            store: None,
            shown: String::new(),
            read_only: true,
            budget: settings.timeout,
            spent: Duration::ZERO,
            pending: Vec::new(),
            warning: None,
        };
        match effective(settings)? {
            Err(why) => session.warn(format!("the shared cache is not used: {why}")),
            Ok(e) => {
                session.shown = e.url.to_string();
                session.read_only = e.read_only;
                session.budget = e.timeout;
                match cache.remote.open(&e.url) {
                    Ok(store) => session.store = Some(store),
                    Err(why) => session.problem(&why),
                }
            }
        }
        Some(session)
    }

    /// The store as the report names it.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Asks the store for what the local cache misses (`asked`), and returns what it has and
    /// is believed, each recorded in the local cache too. `given`: results the local cache has
    /// that no store has yet, written after the run with the fresh ones.
    pub async fn read_through(
        &mut self,
        asked: Vec<Wanted>,
        given: Vec<Wanted>,
    ) -> Vec<(Wanted, Vec<Violation>)> {
        let Some(store) = self.store.clone() else {
            return Vec::new();
        };
        self.pending.extend(given);
        if asked.is_empty() {
            return Vec::new();
        }
        let count = asked.len();
        tracing::debug!("shared cache {}: asking for {count} entries", self.shown);
        let found: Found = Arc::new(Mutex::new(Vec::new()));
        let started = Instant::now();
        let cache = self.cache.clone();
        let reads = in_batches(&store, asked, "read", |chunk| {
            read_batch(store.clone(), chunk, cache.clone(), found.clone())
        });
        let outcome = tokio::time::timeout(self.remaining(), reads).await;
        self.spent += started.elapsed();
        // What was read before a failure or the deadline is as good as any.
        let found = std::mem::take(&mut *found.lock().unwrap_or_else(|e| e.into_inner()));
        let got = found.len();
        match outcome {
            Ok(Ok(pending)) => {
                tracing::debug!(
                    "shared cache {}: {got} of {count} found in {} ms",
                    self.shown,
                    started.elapsed().as_millis()
                );
                self.pending.extend(pending);
            }
            Ok(Err(failure)) => self.fail(&format!("could not be read: {failure}")),
            Err(_) => self.fail(&format!(
                "did not answer within {} ms ({got} of {count} entries read)",
                self.budget.as_millis()
            )),
        }
        found
    }

    /// Writes the results the run recorded for the keys the store did not have, and those an
    /// earlier run could not share.
    pub async fn write_back(&mut self) {
        let Some(store) = self.store.clone() else {
            return;
        };
        if self.read_only || self.pending.is_empty() {
            return;
        }
        let entries: Vec<(Wanted, Vec<u8>)> = std::mem::take(&mut self.pending)
            .into_iter()
            .filter_map(|w| {
                let violations = self.cache.peek(&w.gate, &w.file, &w.key)?;
                let bytes = encode(&w.full_key(), &violations);
                Some((w, bytes))
            })
            .collect();
        if entries.is_empty() {
            return;
        }
        let total = entries.len();
        let written = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let cache = self.cache.clone();
        let writes = in_batches(&store, entries, "write", |chunk| {
            write_batch(store.clone(), chunk, cache.clone(), written.clone())
        });
        let outcome = tokio::time::timeout(self.remaining(), writes).await;
        self.spent += started.elapsed();
        let written = written.load(Ordering::Relaxed);
        match outcome {
            Ok(Ok(_)) => tracing::debug!("shared cache {}: {written} entries written", self.shown),
            Ok(Err(Failure::Refused(why))) => self.warn(format!(
                "shared cache {}: refused this run's results ({why}); nothing was shared. Where \
                 that is expected, say so: `cache.read_only: true` or {READ_ONLY_VAR}=1",
                self.shown
            )),
            Ok(Err(Failure::Broken(why))) => self.fail(&format!(
                "could not be written: {why} ({written} of {total} written)"
            )),
            Err(_) => self.fail(&format!(
                "did not take this run's results within {} ms ({written} of {total} written)",
                self.budget.as_millis()
            )),
        }
    }

    /// The one warning of the run, if something went wrong.
    pub fn into_warning(self) -> Option<String> {
        self.warning
    }

    fn remaining(&self) -> Duration {
        self.budget.saturating_sub(self.spent)
    }

    /// The store failed: no more work with it in this run, nor for a while in this process.
    fn fail(&mut self, what: &str) {
        self.cache.remote.failed(what);
        self.store = None;
        self.problem(what);
    }

    fn problem(&mut self, what: &str) {
        self.store = None;
        self.warn(format!(
            "shared cache {}: {what}; the run went on with the local cache only",
            self.shown
        ));
    }

    /// Keeps the first warning only: one problem, said once.
    fn warn(&mut self, warning: String) {
        tracing::warn!("{warning}");
        self.warning.get_or_insert(warning);
    }
}

/// The believed entries of a read so far, with their violations.
type Found = Arc<Mutex<Vec<(Wanted, Vec<Violation>)>>>;

/// Runs `work` on `items` in the store's batches, a few batches at a time, and gathers what each
/// batch returns; stops at the first failure (`what` names the work of a task that stopped).
async fn in_batches<I, T, Fut>(
    store: &Store,
    items: Vec<I>,
    what: &str,
    work: impl Fn(Vec<I>) -> Fut,
) -> Result<Vec<T>, Failure>
where
    T: Send + 'static,
    Fut: Future<Output = Result<Vec<T>, Failure>> + Send + 'static,
{
    let (batch, in_flight) = store.batching();
    let mut gathered = Vec::new();
    let mut tasks = JoinSet::new();
    let mut queue = items.into_iter().peekable();
    loop {
        while tasks.len() < in_flight && queue.peek().is_some() {
            tasks.spawn(work(queue.by_ref().take(batch).collect()));
        }
        match tasks.join_next().await {
            None => return Ok(gathered),
            Some(Ok(Ok(part))) => gathered.extend(part),
            Some(Ok(Err(failure))) => return Err(failure),
            Some(Err(e)) => return Err(Failure::Broken(format!("a {what} stopped: {e}"))),
        }
    }
}

/// Reads one batch; a believed entry goes into `cache` and `found`. Returns the keys to write
/// after the run (absent or not believed).
async fn read_batch(
    store: Store,
    chunk: Vec<Wanted>,
    cache: Arc<ResultCache>,
    found: Found,
) -> Result<Vec<Wanted>, Failure> {
    let keys: Vec<String> = chunk.iter().map(Wanted::full_key).collect();
    let names: Vec<String> = keys.iter().map(|k| Store::name_of(k)).collect();
    let values = store.get_many(&names).await?;
    let mut absent = Vec::new();
    let mut believed = Vec::new();
    for ((w, key), bytes) in chunk.into_iter().zip(&keys).zip(values) {
        let Some(bytes) = bytes else {
            absent.push(w);
            continue;
        };
        match decode(key, &bytes) {
            Ok(violations) => {
                cache.put_shared(&w.gate, &w.file, w.key.clone(), violations.clone());
                believed.push((w, violations));
            }
            Err(why) => {
                tracing::debug!(
                    "shared cache {}: the entry of {} for `{}` is not believed: {why}",
                    store.url,
                    w.gate,
                    w.file
                );
                absent.push(w);
            }
        }
    }
    found
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(believed);
    Ok(absent)
}

/// Writes one batch, noting each written entry in `cache` and counting it in `written`.
async fn write_batch(
    store: Store,
    chunk: Vec<(Wanted, Vec<u8>)>,
    cache: Arc<ResultCache>,
    written: Arc<AtomicUsize>,
) -> Result<Vec<()>, Failure> {
    let (wanted, named): (Vec<Wanted>, Vec<(String, Vec<u8>)>) = chunk
        .into_iter()
        .map(|(w, bytes)| {
            let name = Store::name_of(&w.full_key());
            (w, (name, bytes))
        })
        .unzip();
    store.put_many(&named).await?;
    for w in &wanted {
        cache.mark_shared(&w.gate, &w.file, &w.key);
    }
    written.fetch_add(wanted.len(), Ordering::Relaxed);
    Ok(Vec::new())
}

/// What a read or write came to, beside success.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The store refused: a read-only token, a bucket policy.
    #[error("{0}")]
    Refused(String),
    /// Anything else: not reachable, a protocol error, a full disk.
    #[error("{0}")]
    Broken(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str, read_only: bool) -> CacheSettings {
        CacheSettings {
            remote: Some(StoreUrl::parse(url).unwrap()),
            read_only,
            timeout: Duration::from_millis(2000),
        }
    }

    #[tokio::test]
    async fn a_folder_store_round_trips_through_the_local_cache() {
        let store_dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}", store_dir.path().display());
        let wanted = vec![Wanted {
            gate: "lint".into(),
            file: "a.py".into(),
            key: "k1".into(),
        }];
        // Machine A: nothing in the store; the run records a result; it is written.
        let a = Arc::new(ResultCache::in_memory());
        let mut session = Session::start(&a, &settings(&url, false)).unwrap();
        assert_eq!(session.read_through(wanted.clone(), vec![]).await, vec![]);
        a.put("lint", "a.py", "k1".into(), vec![]);
        session.write_back().await;
        assert_eq!(session.into_warning(), None);
        // Machine B: the store answers before any gate runs.
        let b = Arc::new(ResultCache::in_memory());
        let mut session = Session::start(&b, &settings(&url, false)).unwrap();
        let found = session.read_through(wanted.clone(), vec![]).await;
        assert_eq!(found, vec![(wanted[0].clone(), vec![])]);
        assert_eq!(b.get("lint", "a.py", "k1"), Some(vec![]));
        assert_eq!(session.into_warning(), None);
    }

    #[tokio::test]
    async fn an_unreachable_store_gives_one_warning_and_is_left_alone_a_while() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let cache = Arc::new(ResultCache::in_memory());
        let s = settings(&format!("redis://127.0.0.1:{port}"), false);
        let wanted = vec![Wanted {
            gate: "lint".into(),
            file: "a.py".into(),
            key: "k1".into(),
        }];
        let mut session = Session::start(&cache, &s).unwrap();
        session.read_through(wanted.clone(), vec![]).await;
        session.write_back().await;
        let warning = session.into_warning().expect("a warning");
        assert!(
            warning.contains(&format!("redis://127.0.0.1:{port}/0")),
            "{warning}"
        );
        assert!(warning.contains("not reachable"), "{warning}");
        let mut again = Session::start(&cache, &s).unwrap();
        again.read_through(wanted, vec![]).await;
        let warning = again.into_warning().unwrap();
        assert!(warning.contains("not asked"), "{warning}");
    }
}
