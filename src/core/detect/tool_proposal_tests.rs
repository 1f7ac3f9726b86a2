//! Which preset fills each Python role when the repository already runs a tool for it, and the
//! presets proposed where their tool is configured.

use super::detect;
use super::tests::{presets_of, repo};

#[test]
fn a_configured_tool_fills_its_role() {
    // Black formats and flake8 lints (their presets): the default adds only the type checker.
    let tmp = repo(&[
        ("pyproject.toml", "[tool.black]\nline-length = 100\n"),
        (".flake8", "[flake8]\n"),
        ("a.py", ""),
    ]);
    assert_eq!(presets_of(tmp.path()), ["black", "mypy", "flake8"]);
    // YAPF formats: the default adds neither a formatter nor, with flake8's hook, a linter.
    let tmp = repo(&[
        (
            ".pre-commit-config.yaml",
            "repos:\n- repo: local\n  hooks:\n  - id: yapf\n  - id: flake8\n  - id: mypy\n",
        ),
        ("a.py", ""),
    ]);
    assert_eq!(presets_of(tmp.path()), ["yapf", "mypy", "flake8"]);
    let tmp = repo(&[
        ("requirements-dev.txt", "autopep8\npyrefly\n"),
        ("a.py", ""),
    ]);
    assert_eq!(presets_of(tmp.path()), ["autopep8", "ruff-lint", "pyrefly"]);
    // Black's own hook and package.
    let tmp = repo(&[
        (
            ".pre-commit-config.yaml",
            "repos:\n- repo: https://github.com/psf/black\n  hooks:\n  - id: black\n",
        ),
        ("a.py", ""),
    ]);
    assert_eq!(presets_of(tmp.path()), ["black", "ruff-lint", "mypy"]);
    let tmp = repo(&[("requirements-dev.txt", "black\nflake8\n"), ("a.py", "")]);
    assert_eq!(presets_of(tmp.path()), ["black", "mypy", "flake8"]);
}

#[test]
fn dead_code_and_python_tools_with_presets_are_proposed_where_configured() {
    for (files, preset) in [
        (
            [("pyproject.toml", "[tool.vulture]\nmin_confidence = 80\n")],
            "vulture",
        ),
        ([("requirements-dev.txt", "vulture==2.16\n")], "vulture"),
        ([("ty.toml", "[rules]\n")], "ty"),
        (
            [("setup.cfg", "[tool:interrogate]\nfail-under = 90\n")],
            "interrogate",
        ),
        (
            [("pyproject.toml", "[tool.djlint]\nprofile = \"django\"\n")],
            "djlint",
        ),
        ([("REUSE.toml", "version = 1\n")], "reuse"),
        (
            [("setup.cfg", "[flake8]\nmax-line-length = 100\n")],
            "flake8",
        ),
    ] {
        let mut all = files.to_vec();
        all.push(("a.py", ""));
        let tmp = repo(&all);
        assert!(
            presets_of(tmp.path()).contains(&preset),
            "{preset} for {files:?}: {:?}",
            presets_of(tmp.path())
        );
    }
}

#[test]
fn go_tests_and_go_tools_are_proposed_where_the_module_has_them() {
    let module = ("go.mod", "module example.com/app\n\ngo 1.22\n");
    let tmp = repo(&[
        module,
        ("app.go", "package app\n"),
        ("app_test.go", "package app\n"),
    ]);
    assert_eq!(presets_of(tmp.path()), ["gofmt", "go-vet", "go-test"]);
    // A module without tests gets no test gate.
    let tmp = repo(&[module, ("app.go", "package app\n")]);
    assert_eq!(presets_of(tmp.path()), ["gofmt", "go-vet"]);
    // golangci-lint and revive by their configuration files.
    let tmp = repo(&[
        module,
        ("app.go", "package app\n"),
        (".golangci.yml", "version: \"2\"\n"),
        ("revive.toml", ""),
    ]);
    assert_eq!(
        presets_of(tmp.path()),
        ["gofmt", "go-vet", "golangci-lint", "revive"]
    );
}

#[test]
fn ruby_php_and_java_dependencies_propose_their_tools() {
    for (files, preset, why) in [
        (
            [(
                "Gemfile",
                "source \"https://rubygems.org\"\ngem \"rubocop\", \"~> 1.60\"\n",
            )],
            "rubocop",
            "Gemfile has gem rubocop",
        ),
        (
            [(
                "lib.gemspec",
                "Gem::Specification.new do |s|\n  s.add_development_dependency(\"rubocop\")\nend\n",
            )],
            "rubocop",
            "lib.gemspec depends on rubocop",
        ),
        (
            [(
                "composer.json",
                r#"{"require-dev": {"squizlabs/php_codesniffer": "^3.7"}}"#,
            )],
            "phpcs",
            "composer.json require-dev has squizlabs/php_codesniffer",
        ),
        (
            [(
                "pom.xml",
                "<project><build><plugins><plugin>\n<artifactId>maven-checkstyle-plugin</artifactId>\n</plugin></plugins></build></project>\n",
            )],
            "checkstyle",
            "pom.xml has maven-checkstyle-plugin",
        ),
    ] {
        let tmp = repo(&files);
        let d = detect(tmp.path());
        let found = d.proposals.iter().find(|p| p.preset == preset);
        assert_eq!(found.map(|p| p.why.as_str()), Some(why), "{files:?}: {d:?}");
    }
    // A gem no preset runs proposes nothing.
    let tmp = repo(&[("Gemfile", "gem 'rails'\n")]);
    assert!(detect(tmp.path()).proposals.is_empty());
}
