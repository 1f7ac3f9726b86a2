//! How to install a missing tool, in the package manager the subproject already uses. The
//! catalog's `about.install` says it the npm or pip way (`npm install --save-dev X`, `pip install
//! X`); here it becomes the command of the lock file found from the subproject's folder up to
//! the root: `npm install` would rewrite a bun workspace's package.json and put a
//! package-lock.json beside its bun.lock. Where no package.json is found, the advice is a global
//! install: `npm install --save-dev` there would make a package.json and node_modules/ in a
//! folder that had none.

use std::path::Path;

/// A command, and where to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    pub command: String,
    /// The folder to run it in, root-relative (empty: the root); `None`: anywhere.
    pub folder: Option<String>,
}

/// How each JavaScript package manager adds a dev dependency, and its flag for an exact version,
/// by the lock file it writes; the first found wins.
const NODE_LOCKS: [(&str, (&str, &str)); 5] = [
    ("bun.lock", BUN),
    ("bun.lockb", BUN),
    ("pnpm-lock.yaml", ("pnpm add -D", "--save-exact")),
    ("yarn.lock", ("yarn add -D", "--exact")),
    ("package-lock.json", NPM),
];
const BUN: (&str, &str) = ("bun add -d", "--exact");
const NPM: (&str, &str) = ("npm install --save-dev", "--save-exact");

/// Python project managers by their lock file.
const PYTHON_LOCKS: [(&str, &str); 3] = [
    ("uv.lock", "uv add --dev"),
    ("poetry.lock", "poetry add --group dev"),
    ("pdm.lock", "pdm add -dG dev"),
];

/// The advice for `install` (a preset's `about.install`) for a gate run in `dir` (root-relative).
pub fn install_advice(root: &Path, dir: &str, install: &str) -> Advice {
    let anywhere = |command: String| Advice {
        command,
        folder: None,
    };
    if let Some(rest) = install.strip_prefix("npm install ") {
        let (flags, packages): (Vec<&str>, Vec<&str>) =
            rest.split_whitespace().partition(|w| w.starts_with('-'));
        let exact = flags.contains(&"--save-exact");
        let packages = packages.join(" ");
        let Some(folder) = nearest(root, dir, "package.json") else {
            return anywhere(format!("npm install -g {packages}"));
        };
        let (add, exact_flag) = lock_from(root, &folder, &NODE_LOCKS).unwrap_or(NPM);
        let command = if exact {
            format!("{add} {exact_flag} {packages}")
        } else {
            format!("{add} {packages}")
        };
        return Advice {
            command,
            folder: Some(folder),
        };
    }
    if let Some(packages) = install.strip_prefix("pip install ")
        && let Some(folder) = nearest(root, dir, "pyproject.toml")
        && let Some(add) = lock_from(root, &folder, &PYTHON_LOCKS)
    {
        return Advice {
            command: format!("{add} {}", packages.trim()),
            folder: Some(folder),
        };
    }
    anywhere(install.to_string())
}

/// The nearest folder from `dir` up to the root (root-relative) that holds the file `name`.
fn nearest(root: &Path, dir: &str, name: &str) -> Option<String> {
    up_from(dir)
        .find(|folder| root.join(folder).join(name).is_file())
        .map(str::to_string)
}

/// What the first lock file found from `folder` up to the root says.
fn lock_from<T: Copy>(root: &Path, folder: &str, locks: &[(&str, T)]) -> Option<T> {
    up_from(folder).find_map(|f| {
        locks
            .iter()
            .find(|(lock, _)| root.join(f).join(lock).is_file())
            .map(|(_, manager)| *manager)
    })
}

/// `dir` and each folder holding it, up to the root (`""`).
fn up_from(dir: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(dir), |d| {
        (!d.is_empty()).then(|| d.rsplit_once('/').map_or("", |(parent, _)| parent))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[&str]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for path in files {
            let p = tmp.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        tmp
    }

    const BIOME: &str = "npm install --save-dev --save-exact @biomejs/biome";

    #[test]
    fn the_lock_file_names_the_package_manager() {
        for (lock, command) in [
            ("bun.lock", "bun add -d --exact @biomejs/biome"),
            ("bun.lockb", "bun add -d --exact @biomejs/biome"),
            ("pnpm-lock.yaml", "pnpm add -D --save-exact @biomejs/biome"),
            ("yarn.lock", "yarn add -D --exact @biomejs/biome"),
            (
                "package-lock.json",
                "npm install --save-dev --save-exact @biomejs/biome",
            ),
        ] {
            let tmp = repo(&["web/package.json", &format!("web/{lock}")]);
            let advice = install_advice(tmp.path(), "web", BIOME);
            assert_eq!(advice.command, command);
            assert_eq!(advice.folder.as_deref(), Some("web"));
        }
        // A workspace member: the lock file is at the workspace's root.
        let tmp = repo(&["package.json", "pnpm-lock.yaml", "packages/ui/package.json"]);
        let advice = install_advice(tmp.path(), "packages/ui", "npm install --save-dev eslint");
        assert_eq!(advice.command, "pnpm add -D eslint");
        assert_eq!(advice.folder.as_deref(), Some("packages/ui"));
    }

    #[test]
    fn without_package_json_the_advice_installs_globally() {
        let tmp = repo(&["pyproject.toml", "uv.lock"]);
        let advice = install_advice(tmp.path(), "", "npm install --save-dev pyright");
        assert_eq!(advice.command, "npm install -g pyright");
        assert_eq!(advice.folder, None);
        // The root's package.json serves a subproject that has none.
        let tmp = repo(&["package.json", "yarn.lock", "docs/x.md"]);
        let advice = install_advice(
            tmp.path(),
            "docs",
            "npm install --save-dev markdownlint-cli2",
        );
        assert_eq!(advice.command, "yarn add -D markdownlint-cli2");
        assert_eq!(advice.folder.as_deref(), Some(""));
    }

    #[test]
    fn python_tools_go_through_the_project_manager() {
        for (lock, command) in [
            ("uv.lock", "uv add --dev ruff"),
            ("poetry.lock", "poetry add --group dev ruff"),
            ("pdm.lock", "pdm add -dG dev ruff"),
        ] {
            let tmp = repo(&["backend/pyproject.toml", &format!("backend/{lock}")]);
            let advice = install_advice(tmp.path(), "backend", "pip install ruff");
            assert_eq!(advice.command, command);
            assert_eq!(advice.folder.as_deref(), Some("backend"));
        }
        let tmp = repo(&["pyproject.toml"]);
        let advice = install_advice(tmp.path(), "", "pip install ruff");
        assert_eq!(
            (advice.command.as_str(), advice.folder),
            ("pip install ruff", None)
        );
        let advice = install_advice(tmp.path(), "", "rustup component add clippy");
        assert_eq!(advice.command, "rustup component add clippy");
    }
}
