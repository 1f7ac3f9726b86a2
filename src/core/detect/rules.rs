//! What tells that a repository uses a tool, as data. Each preset says in its `detect` section
//! which configuration files, tool sections, dependency names, pre-commit hooks and package.json
//! scripts mean its tool is used; here those are gathered into one table per kind of evidence,
//! along with the kinds of files that propose a tool and the order proposals are listed in.

use std::sync::OnceLock;

use crate::core::config::presets::{self, Detect};

/// Every preset a rule may propose, in the order proposals are listed: by language, and within
/// one the formatter before the linter before the type checker (as the Python default runs them).
pub const ORDER: [&str; 93] = [
    "ruff-format",
    "black",
    "yapf",
    "autopep8",
    "isort",
    "docformatter",
    "ruff-lint",
    "mypy",
    "pyright",
    "basedpyright",
    "ty",
    "pyrefly",
    "pylint",
    "flake8",
    "pycodestyle",
    "pydocstyle",
    "interrogate",
    "bandit",
    "vulture",
    "deptry",
    "pytest",
    "prettier",
    "biome-format",
    "dprint",
    "eslint",
    "xo",
    "standard",
    "jshint",
    "biome-lint",
    "oxlint",
    "knip",
    "tsc",
    "vue-tsc",
    "svelte-check",
    "vitest",
    "ava",
    "playwright",
    "rustfmt",
    "cargo-clippy",
    "gofmt",
    "gofumpt",
    "go-vet",
    "staticcheck",
    "golangci-lint",
    "revive",
    "go-test",
    "google-java-format",
    "checkstyle",
    "shfmt",
    "shellcheck",
    "hadolint",
    "actionlint",
    "zizmor",
    "checkov",
    "cfn-lint",
    "ansible-lint",
    "stylelint",
    "htmlhint",
    "djlint-format",
    "djlint",
    "tidy",
    "xmllint",
    "yamllint",
    "taplo",
    "taplo-lint",
    "buf-format",
    "buf-lint",
    "markdownlint-cli2",
    "markdownlint-cli",
    "pymarkdown",
    "rstcheck",
    "doc8",
    "proselint",
    "textlint",
    "chktex",
    "sqlfluff",
    "clang-format",
    "clang-tidy",
    "cppcheck",
    "flawfinder",
    "cpplint",
    "rubocop",
    "phpcs",
    "hlint",
    "luacheck",
    "typos",
    "cspell",
    "codespell",
    "editorconfig-checker",
    "reuse",
    "jscpd",
    "semgrep",
    "secretlint",
];

/// What a Python repository needs checked, by role: each role the repository fills with none of
/// its presets gets the first preset (so a repository that configures no tool gets
/// ruff format, ruff check and mypy, and one that configures ruff's rules still gets mypy).
pub struct PythonRole {
    /// What the role is called in a reason: "no Python {noun} configured".
    pub noun: &'static str,
    /// The presets that fill it, the default first.
    pub presets: &'static [&'static str],
}

pub const PYTHON_ROLES: [PythonRole; 3] = [
    PythonRole {
        noun: "formatter",
        presets: &["ruff-format", "black", "yapf", "autopep8"],
    },
    PythonRole {
        noun: "linter",
        presets: &["ruff-lint", "pylint", "flake8"],
    },
    PythonRole {
        noun: "type checker",
        presets: &["mypy", "pyright", "basedpyright", "ty", "pyrefly"],
    },
];

/// The first preset of each role: the embedded default's gates.
pub const PYTHON_DEFAULT: [&str; 3] = ["ruff-format", "ruff-lint", "mypy"];

/// Manifests that make their folder a project: a folder below the root holding one of these, or
/// a tool's configuration file (`config_files()`), is a subproject with gates of its own (`subprojects.rs`).
pub const PROJECT_MANIFESTS: [&str; 8] = [
    "pyproject.toml",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "setup.cfg",
    "Gemfile",
    "composer.json",
    "pom.xml",
];

/// Whether a file of this name makes its folder a subproject.
pub fn marks_a_subproject(name: &str) -> bool {
    PROJECT_MANIFESTS.contains(&name) || config_files().iter().any(|(file, _)| *file == name)
}

/// The files of a Cargo package that a Cargo workspace's root covers: `cargo clippy` and
/// `rustfmt` there check every member, so a member holding only these is no subproject.
pub const CARGO_FILES: [&str; 5] = [
    "Cargo.toml",
    "rustfmt.toml",
    ".rustfmt.toml",
    "clippy.toml",
    ".clippy.toml",
];

/// Folders whose manifests are test data (a fixture project, Go's `testdata`), never a subproject.
pub const DATA_FOLDERS: [&str; 4] = ["testdata", "fixtures", "__fixtures__", "__snapshots__"];

/// The presets of `FILE_RULES` that check files wherever they are, with no project around them:
/// they stay at the root. The others (rustfmt, gofmt, pytest) go to the subproject that holds
/// the files.
pub const REPOSITORY_WIDE: [&str; 3] = ["shellcheck", "hadolint", "actionlint"];

/// Which files a file rule counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Files with one of these extensions, anywhere.
    Ext(&'static [&'static str]),
    /// `Dockerfile`, `*.Dockerfile`, `Dockerfile.*`, `Containerfile` (the hadolint preset's files).
    Dockerfile,
    /// `.github/workflows/*.yml` and `*.yaml`.
    Workflow,
    /// Files of this name, anywhere.
    Name(&'static str),
    /// Files whose name ends with this, anywhere (`_test.go`).
    Suffix(&'static str),
}

/// Files whose presence proposes a tool: one useful with no configuration, one whose
/// configuration they are (pytest's `conftest.py`), or a test suite's (Go's `_test.go`).
/// Markdown, YAML and SQL files propose nothing: markdownlint's, yamllint's and sqlfluff's
/// defaults would fail most repositories.
pub const FILE_RULES: &[(Kind, &[&str], &str)] = &[
    (Kind::Ext(&["rs"]), &["rustfmt"], "Rust files"),
    (Kind::Ext(&["go"]), &["gofmt"], "Go files"),
    (Kind::Ext(&["sh", "bash"]), &["shellcheck"], "shell scripts"),
    (Kind::Dockerfile, &["hadolint"], "Dockerfiles"),
    (Kind::Workflow, &["actionlint"], "GitHub workflows"),
    (Kind::Name("conftest.py"), &["pytest"], "conftest.py files"),
    (Kind::Suffix("_test.go"), &["go-test"], "Go test files"),
];

/// The extensions of Python files (the repository has Python when it has one of them).
pub const PYTHON_EXTENSIONS: [&str; 2] = ["py", "pyi"];

impl Kind {
    /// Whether the file at `rel` (root-relative, `/`-separated), named `name`, is of this kind.
    pub fn matches(self, rel: &str, name: &str) -> bool {
        match self {
            Kind::Ext(exts) => extension(name).is_some_and(|e| exts.contains(&e)),
            Kind::Dockerfile => {
                name == "Dockerfile"
                    || name == "Containerfile"
                    || name.ends_with(".Dockerfile")
                    || name.starts_with("Dockerfile.")
            }
            Kind::Workflow => rel
                .strip_prefix(".github/workflows/")
                .is_some_and(|n| !n.contains('/') && matches!(extension(n), Some("yml" | "yaml"))),
            Kind::Name(wanted) => name == wanted,
            Kind::Suffix(end) => name.len() > end.len() && name.ends_with(end),
        }
    }
}

pub fn extension(name: &str) -> Option<&str> {
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then_some(ext)
}

/// One kind of evidence: each key (a file name, a section, a package, a hook id) with the
/// presets it proposes, in `ORDER` and then in the order each preset lists its keys (the first
/// reason given for a preset is kept).
pub type Table = Vec<(&'static str, Vec<&'static str>)>;

fn table(keys: fn(&'static Detect) -> &'static [String]) -> Table {
    let mut table: Table = Vec::new();
    for preset in ORDER.iter().filter_map(|name| presets::find(name)) {
        for key in keys(&preset.detect) {
            match table.iter_mut().find(|(k, _)| k == key) {
                Some((_, names)) => names.push(preset.name),
                None => table.push((key.as_str(), vec![preset.name])),
            }
        }
    }
    table
}

/// `pub fn NAME() -> &'static Table`: the table of one field of the presets' `detect`.
macro_rules! evidence {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name() -> &'static Table {
            static TABLE: OnceLock<Table> = OnceLock::new();
            TABLE.get_or_init(|| table(|d| &d.$name))
        }
    )*};
}

evidence! {
    /// Files at a project's root whose presence says the tool is used.
    config_files;
    /// `[tool.NAME]` sections of pyproject.toml (a dotted NAME is a sub-table).
    pyproject_tools;
    /// Sections of setup.cfg; a name ending in `.` matches every section that starts with it.
    setup_cfg_sections;
    /// Python packages (names normalized as PEP 503 does) in a dependency list.
    python_packages;
    /// npm packages in package.json `dependencies` or `devDependencies`.
    npm_packages;
    /// Top-level keys of package.json that configure a tool.
    package_json_keys;
    /// Programs named in package.json `scripts`.
    scripts;
    /// Hook ids of .pre-commit-config.yaml (the ids the tools' own hook repositories publish).
    pre_commit_hooks;
    /// Module paths in go.mod that mean the tool is used.
    go_mod_requires;
    /// Gems in a Gemfile or a gemspec's dependencies.
    gems;
    /// Packages in composer.json `require` or `require-dev`.
    composer_packages;
    /// Artifact ids of a pom.xml's plugins and dependencies.
    maven_artifacts;
}

/// The presets a table maps `key` to.
pub fn lookup(table: &'static Table, key: &str) -> &'static [&'static str] {
    table
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(&[], |(_, presets)| presets)
}
