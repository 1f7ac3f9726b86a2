//! `qgates trust [DIR]`: shows what a workspace's configuration runs and records a person's
//! trust in exactly that, for the language server and the agent server (editors without a trust
//! prompt of their own, such as Neovim, and agents, which must never trust for themselves).

use std::io::{BufRead, IsTerminal};

use super::args::TrustArgs;
use super::output::{print_stderr, print_stdout, usage};
use super::workspace::{config_file, given_workspace};
use crate::core::config;
use crate::core::report::exit;
use crate::core::trust::{FileHashes, Manifest, TrustStore};

pub fn trust(a: TrustArgs) -> i32 {
    let root = match given_workspace(a.dir.as_deref(), "to trust") {
        Ok(root) => root,
        Err(code) => return code,
    };
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
        return usage("no home folder is known (set HOME or QGATES_TRUST_FILE).");
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
            return usage(
                "not trusted: read the commands above, then run `qgates trust --yes` to trust them without a question.",
            );
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
        return usage(&format!("cannot write {}: {e}", store.path().display()));
    }
    print_stdout(&format!(
        "Trusted. The language server and `qgates mcp` now run these commands in {}; a change to any of them needs trust again.\n",
        root.display()
    ));
    exit::GREEN
}
