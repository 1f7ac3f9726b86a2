//! Where a bare program name is looked up before `PATH`: the tool folders (`.venv/bin`,
//! `venv/bin`, `node_modules/.bin`) of the gate's `cwd`, then of the workspace root — so a
//! project's pinned tools win over global ones.
//!
//! A clean-room checkout has no tool folders of its own until its `deps` gates make them. Its
//! runs borrow the tool folders of the workspace it was made from (the request's `tools_from`):
//! its own come first, then the workspace's at the same place, then `PATH`. So "does this commit
//! pass" is answered with the tools the person has installed, unless the commit installs its own.

use std::path::{Path, PathBuf};

/// Folders of installed tools, relative to a project folder.
pub const TOOL_FOLDERS: [&str; 3] = [".venv", "venv", "node_modules"];

/// The folder inside each tool folder that holds its programs.
const BIN_DIRS: [&str; 3] = [".venv/bin", "venv/bin", "node_modules/.bin"];

/// The tool folders' program folders for a gate running in `cwd` of the workspace `root`, in
/// the order they are searched; `lender`: a workspace whose tool folders at the same places come
/// after the root's own.
pub fn program_dirs(root: &Path, cwd: &Path, lender: Option<&Path>) -> Vec<PathBuf> {
    let mut bases = vec![cwd.to_path_buf()];
    if cwd != root {
        bases.push(root.to_path_buf());
    }
    if let Some(lender) = lender {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_searches_its_own_folders_then_the_lenders() {
        let (checkout, workspace) = (Path::new("/tmp/room/repo"), Path::new("/home/u/repo"));
        let sub = checkout.join("web");
        assert_eq!(program_dirs(checkout, &sub, None).len(), 6);
        let dirs = program_dirs(checkout, &sub, Some(workspace));
        assert_eq!(dirs[0], sub.join(".venv/bin"));
        assert_eq!(dirs[3], checkout.join(".venv/bin"));
        assert_eq!(dirs[6], workspace.join("web/.venv/bin"));
        assert_eq!(dirs[11], workspace.join("node_modules/.bin"));
    }
}
