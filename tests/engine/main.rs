//! The engine called directly, in this process: configuration loading and its errors, the
//! schema, parsing strategies, report formats, git change detection and the `auto` scope's
//! tracker; and checks of the repository's own files (documentation examples, the platform
//! layer, the release workflow). One test binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod config_errors;
mod config_schema;
mod docs_examples;
mod folder_watch;
mod git_changes;
mod parse_props;
mod parse_saved;
mod parse_strategies;
mod platform_layer;
mod release_workflow;
mod report_formats;
mod scope_tracker;
mod watched_scope;
