//! A folder's last resolved `auto` scope, so a save can start its gates at once. Resolving it (a
//! git status and the branch's baseline state) costs as much as a linter's run on one file, so a
//! save runs over the last known scope plus the saved file, and the current scope is resolved
//! once the diagnostics are out (`Done::settle` compares the two; the state is only recorded for
//! a scope that was current). A save the cache answers alone does no scope work at all.

use std::sync::Arc;

use tokio::sync::oneshot;

use crate::core::config::Config;
use crate::core::scope::tracker::ScopeTracker;
use crate::core::scope::{ResolvedScope, ScopeError};

/// A resolution under way (`ScopeTracker::current_in_background`, at a lower priority, so it
/// does not delay the diagnostics going out); awaiting it gives the scope.
pub type Resolving = oneshot::Receiver<Result<ResolvedScope, ScopeError>>;

/// Resolves the `auto` scope now: the run waits for it.
pub async fn resolve_now(
    scope: Arc<ScopeTracker>,
    config: Arc<Config>,
) -> Result<ResolvedScope, String> {
    match tokio::task::spawn_blocking(move || scope.current(&config)).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(e) => Err(format!("resolving the scope failed: {e}")),
    }
}

#[derive(Default)]
enum Memo {
    #[default]
    Unknown,
    /// Resolved a while ago: a run may start over it, but must check it against a fresh one.
    Known(ResolvedScope),
    /// Resolved during the last run, which found it differed from the one it ran over: the
    /// follow-up run uses it as it is.
    Current(ResolvedScope),
    /// Being resolved in the background (after a run moved the baseline, say).
    Resolving(Resolving),
}

/// How the next `auto` run gets its scope.
pub enum Start {
    /// Resolved just now: run over it and record the run in the state.
    Current(ResolvedScope),
    /// The last known scope: run over it at once and resolve the current one after the run.
    Remembered(ResolvedScope),
    /// None known: resolve it first.
    Unknown,
}

/// The last `auto` scope of one folder, for the configuration it was resolved with.
#[derive(Default)]
pub struct AutoScope {
    config_hash: String,
    memo: Memo,
}

impl AutoScope {
    /// How the next run starts. A resolution under way (it started when the last run ended,
    /// so it is normally done) is waited for.
    pub async fn start(&mut self, config: &Config) -> Start {
        if self.config_hash != config.content_hash {
            self.forget();
            return Start::Unknown;
        }
        match std::mem::take(&mut self.memo) {
            Memo::Unknown => Start::Unknown,
            Memo::Known(s) => {
                self.memo = Memo::Known(s.clone());
                Start::Remembered(s)
            }
            Memo::Current(s) => {
                self.memo = Memo::Known(s.clone());
                Start::Current(s)
            }
            Memo::Resolving(handle) => match handle.await {
                Ok(Ok(s)) => {
                    self.memo = Memo::Known(s.clone());
                    Start::Remembered(s)
                }
                _ => Start::Unknown,
            },
        }
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self.memo, Memo::Unknown)
    }

    fn keep(&mut self, config: &Config, memo: Memo) {
        self.config_hash = config.content_hash.clone();
        self.memo = memo;
    }

    /// A scope that was current a moment ago.
    pub fn set(&mut self, config: &Config, scope: ResolvedScope) {
        self.keep(config, Memo::Known(scope));
    }

    /// A scope resolved just now, for the follow-up run to use as it is.
    pub fn set_current(&mut self, config: &Config, scope: ResolvedScope) {
        self.keep(config, Memo::Current(scope));
    }

    /// Starts resolving the scope again in the background (the state or the repository changed).
    pub fn refresh(&mut self, scope: &Arc<ScopeTracker>, config: &Arc<Config>) {
        self.keep(config, Memo::Resolving(scope.current_in_background(config)));
    }

    /// Forgets the scope (a resolution under way finishes unread).
    pub fn forget(&mut self) {
        self.memo = Memo::Unknown;
    }
}
