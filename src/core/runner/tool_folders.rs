//! Where a bare program name is looked up before `PATH`: the tool folders (`.venv/bin`,
//! `venv/bin`, `node_modules/.bin`) of the gate's `cwd`, then of the workspace root — so a
//! project's pinned tools win over global ones.
//!
//! A clean-room checkout has no tool folders of its own until its `deps` gates make them. While
//! one exists it borrows the tool folders of the workspace it was made from (`lend`): its own
//! come first, then the workspace's at the same place, then `PATH`. So "does this commit pass"
//! is answered with the tools the person has installed, unless the commit installs its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Folders of installed tools, relative to a project folder.
pub const TOOL_FOLDERS: [&str; 3] = [".venv", "venv", "node_modules"];

/// The folder inside each tool folder that holds its programs.
const BIN_DIRS: [&str; 3] = [".venv/bin", "venv/bin", "node_modules/.bin"];

/// Checkout root → the workspace root whose tool folders it borrows.
static LOANS: Mutex<BTreeMap<PathBuf, PathBuf>> = Mutex::new(BTreeMap::new());

/// The tool folders' program folders for a gate running in `cwd` of the workspace `root`, in
/// the order they are searched.
pub fn program_dirs(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut bases = vec![cwd.to_path_buf()];
    if cwd != root {
        bases.push(root.to_path_buf());
    }
    if let Some(lender) = lender_of(root) {
        let borrowed: Vec<PathBuf> = bases
            .iter()
            .filter_map(|b| b.strip_prefix(root).ok().map(|rel| lender.join(rel)))
            .collect();
        bases.extend(borrowed);
    }
    bases
        .iter()
        .flat_map(|base| BIN_DIRS.map(|d| base.join(d)))
        .collect()
}

fn lender_of(root: &Path) -> Option<PathBuf> {
    let loans = LOANS.lock().unwrap_or_else(PoisonError::into_inner);
    loans.get(root).cloned()
}

/// Lets the checkout at `checkout_root` use the tool folders of `workspace_root` until the
/// returned value is dropped.
pub fn lend(checkout_root: &Path, workspace_root: &Path) -> Loan {
    let mut loans = LOANS.lock().unwrap_or_else(PoisonError::into_inner);
    loans.insert(checkout_root.to_path_buf(), workspace_root.to_path_buf());
    Loan(checkout_root.to_path_buf())
}

/// A checkout's use of a workspace's tool folders; ends when dropped.
#[derive(Debug)]
pub struct Loan(PathBuf);

impl Drop for Loan {
    fn drop(&mut self) {
        let mut loans = LOANS.lock().unwrap_or_else(PoisonError::into_inner);
        loans.remove(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_searches_its_own_folders_then_the_lenders_while_the_loan_lasts() {
        let (checkout, workspace) = (Path::new("/tmp/room/repo"), Path::new("/home/u/repo"));
        let sub = checkout.join("web");
        assert_eq!(program_dirs(checkout, &sub).len(), 6);
        let loan = lend(checkout, workspace);
        let dirs = program_dirs(checkout, &sub);
        assert_eq!(dirs[0], sub.join(".venv/bin"));
        assert_eq!(dirs[3], checkout.join(".venv/bin"));
        assert_eq!(dirs[6], workspace.join("web/.venv/bin"));
        assert_eq!(dirs[11], workspace.join("node_modules/.bin"));
        drop(loan);
        assert_eq!(program_dirs(checkout, &sub).len(), 6);
    }
}
