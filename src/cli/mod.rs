//! The command-line face: `qgates check`, `merge`, `init`, `schema`, `parse`, `baseline`, `trust`,
//! `status`, `presets`, `completions`, `man`, and `mcp` and `lsp` (which hand over to the
//! servers).

mod agent_setup;
mod args;
mod baseline;
mod check;
mod daemon;
mod hook;
mod init;
mod manuals;
mod merge;
mod output;
mod parse;
pub mod preset_test;
mod presets;
mod status;
mod trust;
mod workspace;

use std::path::Path;

use clap::Parser;

pub use args::{Cli, Command};

use crate::core::report::exit;

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::GREEN
            };
            let _ = e.print();
            return code;
        }
    };
    if let Command::Lsp(_) = cli.command {
        return crate::lsp::main();
    }
    init_logging();
    let code = match cli.command {
        Command::Check(a) => check::check(a),
        Command::Merge(a) => merge::merge(a),
        Command::Init(a) => init::init(a),
        Command::Schema => {
            output::print_stdout(&format!("{}\n", crate::core::config::schema::json_schema()));
            exit::GREEN
        }
        Command::Parse(a) => parse::parse(a),
        Command::Baseline(c) => baseline::baseline(c),
        Command::Daemon(c) => daemon::daemon(c),
        Command::Trust(a) => trust::trust(a),
        Command::Status(a) => status::status(a),
        Command::Presets(a) => presets::presets(a),
        Command::Lsp(_) => exit::GREEN,
        Command::Mcp(a) => mcp(a),
        Command::Hook(a) => hook::hook(a),
        Command::Completions(a) => manuals::completions(a),
        Command::Man(a) => manuals::man(a),
    };
    output::finish(code)
}

/// `qgates mcp`: the agent server for the workspace the command starts in.
fn mcp(a: args::McpArgs) -> i32 {
    let root = workspace::find_root(a.root.as_deref(), Path::new("."));
    let config = workspace::config_file(a.config.as_deref());
    // The file is read anew for every run, so its mistakes reach the agent then; a file that is
    // not there at all is a mistake in how the server is started, and is said now, to the person
    // setting it up.
    if let Some(path) = config.as_deref().filter(|p| !p.is_file()) {
        return output::usage(&format!(
            "the configuration file {} given to --config does not exist or is not a file. \
             Check the path in the server's arguments (a relative one is taken from the folder the \
             server starts in).",
            path.display()
        ));
    }
    crate::mcp::serve(root, config)
}

/// Logs go to stderr (stdout carries results); the level comes from `QGATES_LOG` (default: warn).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("QGATES_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(crate::core::api::DEFAULT_LOG_FILTER)
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
