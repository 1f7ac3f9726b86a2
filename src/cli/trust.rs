//! `qgates trust [DIR]`: records trust in a workspace's configuration for the language server
//! (for editors without a trust prompt of their own, such as Neovim).

use std::path::Path;

use super::args::TrustArgs;
use super::output::{print_stderr, print_stdout};
use super::workspace::find_root;
use crate::core::config::{self, ConfigSource};
use crate::core::report::exit;
use crate::core::trust::TrustStore;

pub fn trust(a: TrustArgs) -> i32 {
    let start = a.dir.as_deref().unwrap_or(Path::new("."));
    if !start.is_dir() {
        print_stderr(&format!(
            "qgates: {} is not a folder. Give the workspace folder to trust.\n",
            start.display()
        ));
        return exit::USAGE;
    }
    let root = find_root(None, None, start);
    let root = root.canonicalize().unwrap_or(root);
    let config = match config::load_for_workspace(&root, None) {
        Ok(c) => c,
        Err(e) => {
            print_stderr(&format!(
                "{e}\nqgates: the configuration has errors; fix them before trusting it.\n"
            ));
            return exit::USAGE;
        }
    };
    let Some(store) = TrustStore::for_user() else {
        print_stderr("qgates: no home folder is known (set HOME or QGATES_TRUST_FILE).\n");
        return exit::USAGE;
    };
    if let Err(e) = store.trust(&root, &config.content_hash) {
        print_stderr(&format!(
            "qgates: cannot write {}: {e}\n",
            store.path().display()
        ));
        return exit::USAGE;
    }
    let what = match &config.source {
        ConfigSource::File(p) => p.display().to_string(),
        ConfigSource::Embedded => "the built-in Python default".into(),
    };
    let commands: std::collections::BTreeSet<&str> = config
        .gates
        .iter()
        .filter_map(|g| g.command.first().map(String::as_str))
        .collect();
    print_stdout(&format!(
        "Trusted {} ({what}: runs {}). The language server now runs its gates; a change to the file needs trust again.\n",
        root.display(),
        commands.into_iter().collect::<Vec<_>>().join(", ")
    ));
    exit::GREEN
}
