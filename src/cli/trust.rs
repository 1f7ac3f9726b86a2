//! `qgates trust [DIR]`: shows what a workspace's configuration runs and records a person's
//! trust in exactly that, for the language server and the agent server (editors without a trust
//! prompt of their own, such as Neovim, and agents, which must never trust for themselves).

use std::io::{BufRead, IsTerminal};
use std::path::Path;

use super::args::TrustArgs;
use super::output::{print_stderr, print_stdout};
use super::workspace::{config_file, find_root};
use crate::core::config;
use crate::core::report::exit;
use crate::core::trust::{FileHashes, Manifest, TrustStore};

pub fn trust(a: TrustArgs) -> i32 {
    let start = a.dir.as_deref().unwrap_or(Path::new("."));
    if !start.is_dir() {
        print_stderr(&format!(
            "qgates: {} is not a folder. Give the workspace folder to trust.\n",
            start.display()
        ));
        return exit::USAGE;
    }
    let root = find_root(None, start);
    let root = root.canonicalize().unwrap_or(root);
    let config_path = config_file(a.config.as_deref());
    let config = match config::load_for_workspace(&root, config_path.as_deref()) {
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
    // What is shown is what is recorded: the manifest is taken once.
    let manifest = Manifest::of(&config, &root, &FileHashes::default());
    if store.is_trusted(&root, &manifest.hash) {
        print_stdout(&format!(
            "{} is trusted already; {} runs:\n{}",
            root.display(),
            manifest.source,
            manifest.describe()
        ));
        return exit::GREEN;
    }
    print_stdout(&format!(
        "{} ({}) runs:\n{}",
        root.display(),
        manifest.source,
        manifest.describe()
    ));
    if !a.yes {
        if !std::io::stdin().is_terminal() {
            print_stderr(
                "qgates: not trusted: read the commands above, then run `qgates trust --yes` to trust them without a question.\n",
            );
            return exit::USAGE;
        }
        print_stdout("Trust these commands? Only if you trust this repository. [y/N] ");
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
            print_stdout("Not trusted.\n");
            return exit::VIOLATIONS;
        }
    }
    if let Err(e) = store.trust(&root, &manifest.hash) {
        print_stderr(&format!(
            "qgates: cannot write {}: {e}\n",
            store.path().display()
        ));
        return exit::USAGE;
    }
    print_stdout(&format!(
        "Trusted. The language server and `qgates mcp` now run these commands in {}; a change to any of them needs trust again.\n",
        root.display()
    ));
    exit::GREEN
}
