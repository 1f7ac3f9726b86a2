//! The real tools: every preset of the catalog against its tool, repositories nobody here
//! wrote checked as their own invocations check them, the tools' own file selection, test
//! runners' JUnit reports, coverage, and the bundled Python examples. One test binary: each file
//! below is a module.

#[path = "../common/mod.rs"]
mod common;

mod check_python_basic;
mod check_python_tests;
mod coverage_gate;
mod junit_real_runners;
mod junit_reports;
mod mixed_repository;
mod presets_config;
mod presets_polyglot;
mod presets_real_tools;
mod real_repositories;
mod real_repositories_catalog;
mod real_repositories_ts_go;
mod tool_selection;
mod warm_presets;
