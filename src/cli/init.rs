//! `qgates init`: writes the embedded default configuration out as `quality.yaml`.

use std::path::Path;

use super::args::InitArgs;
use super::output::{print_stderr, print_stdout};
use super::workspace::find_root;
use crate::core::config;
use crate::core::report::exit;

pub fn init(a: InitArgs) -> i32 {
    let root = find_root(a.root.as_deref(), Path::new("."));
    let root = if a.root.is_some() {
        root
    } else {
        std::env::current_dir().unwrap_or(root)
    };
    if !a.force
        && let Some(existing) = config::discover(&root)
    {
        print_stderr(&format!(
            "qgates: {} already exists; nothing was written. Use --force to overwrite it.\n",
            existing.display()
        ));
        return exit::USAGE;
    }
    let target = root.join("quality.yaml");
    match std::fs::write(&target, config::DEFAULT_CONFIG) {
        Ok(()) => {
            print_stdout(&format!(
                "Wrote {} (ruff format, ruff check, mypy). Run `qgates check` to use it.\n",
                target.display()
            ));
            exit::GREEN
        }
        Err(e) => {
            print_stderr(&format!("qgates: cannot write {}: {e}\n", target.display()));
            exit::USAGE
        }
    }
}
