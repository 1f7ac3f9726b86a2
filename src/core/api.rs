//! The engine's API: what the CLI, the language server and the agent server call to run gates
//! and what they name of a run. They depend on this module for a run, not on where each part
//! lives inside the engine.

pub(crate) use crate::core::cache::ResultCache;
pub(crate) use crate::core::cache::remote as shared_cache;
pub(crate) use crate::core::clean_room;
pub(crate) use crate::core::engine::kinds::{KindFilter, KindFilterError};
pub(crate) use crate::core::engine::shard::Shard;
pub(crate) use crate::core::engine::{
    NewFindings, OUT_OF_TIME, Run, RunEvent, RunRequest, execute,
};
pub(crate) use crate::core::fix;
pub(crate) use crate::core::novelty;
pub(crate) use crate::core::parse::tool_text;
pub(crate) use crate::core::runner::children;
pub(crate) use crate::core::runner::own_selection::is_set as place_is_set;
pub(crate) use crate::core::runner::process::resolve_program;
pub(crate) use crate::core::runner::report_files;
pub(crate) use crate::core::scope::choice::{ScopeChoice, ScopeChoiceError, scope_request};
pub(crate) use crate::core::scope::{ResolvedScope, ScopeRequest};

/// What is logged without `QGATES_LOG`: warnings, but not OpenDAL's about a write cut short
/// (a shared cache past its run's deadline has its requests dropped on purpose; the report
/// says so once).
pub(crate) const DEFAULT_LOG_FILTER: &str = "warn,opendal_core=error";
