//! `qgates presets`: the preset catalog, as a table, JSON or the Markdown of docs/presets.md;
//! `qgates presets show NAME`: the gate one preset stands for.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::args::{PresetsArgs, PresetsCommand, PresetsFormat};
use super::output::{print_stdout, usage};
use std::path::Path;

use super::workspace::find_root;
use crate::core::config::presets::{self, About, Preset};
use crate::core::config::{self, local_presets};
use crate::core::report::exit;

pub fn presets(a: PresetsArgs) -> i32 {
    match a.show {
        Some(PresetsCommand::Show { name }) => show(&name),
        Some(PresetsCommand::Test { preset, fixture }) => {
            super::preset_test::test(&preset, &fixture)
        }
        None => {
            let list = presets::catalog();
            let own = own_presets(&find_root(None, Path::new(".")));
            print_stdout(&match a.format {
                PresetsFormat::Text => table(list) + &own_table(&own),
                PresetsFormat::Json => {
                    let items: Vec<Value> = (list.iter().map(entry))
                        .chain(own.iter().map(own_entry))
                        .collect();
                    format!("{}\n", Value::Array(items))
                }
                PresetsFormat::Markdown => markdown(list),
            });
            exit::GREEN
        }
    }
}

/// The preset files the workspace's quality.yaml names (`preset: ./…`), each read, or why not.
fn own_presets(root: &Path) -> Vec<(String, Result<About, String>)> {
    let Some(file) = config::discover(root) else {
        return Vec::new();
    };
    let Some(base) = local_presets::base_of(&file) else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let doc: Value = serde_saphyr::from_str(&text).unwrap_or(Value::Null);
    let mut names: Vec<String> = (doc["gates"].as_object().into_iter().flatten())
        .filter_map(|(_, g)| g["preset"].as_str())
        .filter(|n| local_presets::is_path(n))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|n| {
            let about = local_presets::read(&base, &n).map(|f| f.about);
            (n, about)
        })
        .collect()
}

fn own_table(own: &[(String, Result<About, String>)]) -> String {
    if own.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nThis workspace's own presets (named in quality.yaml):\n");
    for (name, about) in own {
        match about {
            Ok(a) => {
                let _ = writeln!(
                    out,
                    "{name}  {}  {}  {}",
                    a.tool,
                    a.languages.join(", "),
                    a.install
                );
            }
            Err(why) => {
                let _ = writeln!(out, "{name}  cannot be used: {why}");
            }
        }
    }
    out
}

fn own_entry((name, about): &(String, Result<About, String>)) -> Value {
    match about {
        Ok(a) => json!({
            "name": name,
            "local": true,
            "tool": a.tool,
            "languages": a.languages,
            "install": a.install,
            "homepage": a.homepage,
        }),
        Err(why) => json!({"name": name, "local": true, "error": why}),
    }
}

fn entry(p: &Preset) -> Value {
    json!({
        "name": p.name,
        "tool": p.about.tool,
        "languages": p.about.languages,
        "install": p.about.install,
        "homepage": p.about.homepage,
    })
}

fn table(list: &[Preset]) -> String {
    let rows: Vec<[String; 4]> = list
        .iter()
        .map(|p| {
            [
                p.name.to_string(),
                p.about.tool.clone(),
                p.about.languages.join(", "),
                p.about.install.clone(),
            ]
        })
        .collect();
    let head = ["NAME", "TOOL", "LANGUAGES", "INSTALL"].map(String::from);
    let widths: Vec<usize> = (0..4)
        .map(|i| {
            std::iter::once(&head)
                .chain(&rows)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in std::iter::once(&head).chain(&rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ", w = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let _ = write!(
        out,
        "\n{} presets. Use one in quality.yaml as `gates: {{ lint: {{ preset: NAME }} }}`; `qgates presets show NAME` prints its gate.\n",
        list.len()
    );
    out
}

/// The table of docs/presets.md; the tests check that the file matches it.
pub fn markdown(list: &[Preset]) -> String {
    let mut out = String::from(
        "<!-- Generated by `qgates presets --format markdown`; the tests check that it matches the catalog. -->\n\
         # Presets\n\n\
         A gate that says `preset: NAME` takes every key it does not set itself from the preset.\n\
         `qgates presets show NAME` prints a preset's gate; each is a file under `presets/`, with a\n\
         fixture project under `fixtures/presets/`.\n\n\
         | preset | tool | languages | install |\n|---|---|---|---|\n",
    );
    for p in list {
        let _ = writeln!(
            out,
            "| `{}` | [{}]({}) | {} | `{}` |",
            p.name,
            p.about.tool,
            p.about.homepage,
            p.about.languages.join(", "),
            p.about.install
        );
    }
    out.push_str(OWN_PRESETS);
    out
}

/// docs/presets.md's section on a team's own presets.
const OWN_PRESETS: &str = r#"
## Your own presets

A tool the catalog lacks, or a team's way of running one, can be a preset file kept in the
repository and named by its path:

```yaml
gates:
  lint: { preset: ./tools/qgates/ourlint.yaml }
```

- **The file.** It has the catalog's shape: `about` (`tool`, `languages`, `install`,
  `homepage`) and `gate`, with any key a gate takes. `qgates presets show NAME` prints a
  catalog preset's `gate`, to start from.
- **The path.** It starts with `./` and is taken from the folder of `quality.yaml` (the
  workspace root for `.qgates/quality.yaml`). It stays inside it: no `..`, and no link leading
  out.
- **Checks.** The file is checked as the catalog's are. A mistake in it is a configuration
  error at the gate that names it.
- **Trust.** What it makes the gate run is covered by trust like the rest of the gate: a changed
  command in the file needs trust again.
- **Listing.** `qgates presets` lists the workspace's own presets after the catalog (`"local":
  true` in `--format json`).

### Testing a preset

`qgates presets test PRESET FIXTURE` runs a preset, a file or a catalog name, against a fixture
folder the way the catalog's presets are tested, so a team keeps its own presets honest too:

```
qgates presets test ./tools/qgates/ourlint.yaml tools/qgates/ourlint-fixture
```

The fixture folder holds the files the tool checks (a clean one, and one with findings), the
configuration the tool needs, and `expected.yaml`, what the tool must report there:

```yaml
findings:
  - at: bad.sh:3:25          # file:line:column as qgates reports it: 1-based, column in characters;
                             # leave out :column, or :line:column, where the tool gives none
    code: SC2086             # the code qgates reports
    points_at: $greeting     # the text at that column (required with a column)
    tool_says: '"line":3,"column":25,.*"code":2086'
                             # a regex over the tool's own output (stdout, newline, stderr, and
                             # the report file of a gate with `output_file`) that pins the line
                             # and column in the tool's own unit and base, and the code
  - code: fail-under         # a finding about no file (a verdict on the whole project): no `at`
    tool_says: 'RESULT: FAILED'
fix_in_place: [shfmt, -w]    # the tool's own in-place fix (files appended); required with `fix`
```

On copies of the folder, each a git repository, it checks five things:

- **places**: each `at` holds the text `points_at` names, and one finding comes after non-ASCII
  text on its line (put `é` and `🎉` before it), so a column counted in bytes or UTF-16 would
  land elsewhere;
- **report**: `qgates check --scope project` reports exactly these findings;
- **tool**: the preset's command, run without qgates on the files qgates gives it, prints what
  each `tool_says` pins;
- **clean**: the folder without its files that have findings passes;
- **fix**: with a `fix`, `qgates check --fix` leaves every file as `fix_in_place` does.

It exits 0 when all pass, 1 when one fails (with what differed), 3 when the tool is not on PATH.

### Offering one to the catalog

Add it as `presets/NAME.yaml`, with a header saying the tool's version it was verified with and
what its output looks like, and a fixture folder `fixtures/presets/NAME/` that passes
`qgates presets test`; `tests/tools/presets_real_tools.rs` runs every one against its pinned
tool. A `detect` section says what tells `qgates init` that a repository uses the tool:

```yaml
detect:
  config_files: [.stylelintrc.json]   # files at a project's root
  pyproject_tools: [isort]            # [tool.isort] in pyproject.toml
  setup_cfg_sections: [isort]         # [isort] in setup.cfg
  python_packages: [isort]            # a Python dependency
  npm_packages: [stylelint]           # a package.json dependency
  package_json_keys: [stylelint]      # a package.json key that configures the tool
  scripts: [stylelint]                # a program package.json scripts run
  pre_commit_hooks: [isort]           # a hook id of .pre-commit-config.yaml
  go_mod_requires: [honnef.co/go/tools]
  gems: [rubocop]                     # a gem of a Gemfile, or a gemspec's dependency
  composer_packages: [squizlabs/php_codesniffer]   # composer.json require or require-dev
  maven_artifacts: [maven-checkstyle-plugin]       # a pom.xml plugin's or dependency's artifactId
```
"#;

fn show(name: &str) -> i32 {
    let Some(preset) = presets::find(name) else {
        let names: Vec<&str> = presets::names().collect();
        let hint = match crate::core::config::closest(name, names.iter().copied()) {
            Some(best) => format!("did you mean `{best}`?"),
            None => "`qgates presets` lists them.".to_string(),
        };
        return usage(&format!("there is no preset `{name}` — {hint}"));
    };
    let mut gate = serde_json::to_value(&preset.gate).unwrap_or(Value::Null);
    presets::drop_nulls(&mut gate);
    if let Value::Object(map) = &mut gate {
        map.remove("preset");
    }
    let yaml = serde_saphyr::to_string(&json!({ name: gate })).unwrap_or_default();
    let about = &preset.about;
    print_stdout(&format!(
        "# preset {name}: {} ({}), for {}.\n# Install: {}\n# Any key set beside `preset: {name}` in a gate wins over these.\n{yaml}",
        about.tool,
        about.homepage,
        about.languages.join(", "),
        about.install
    ));
    exit::GREEN
}
