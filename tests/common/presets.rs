//! The preset catalog's test data: a preset's fixture folder (`fixtures/presets/<name>/`) and
//! what its tool must report there (`expected.yaml`, described in fixtures/presets/README.md),
//! read as `qgates presets test` reads them.

use std::path::Path;

use qgates::cli::preset_test::fixture::Fixture;

use super::{git, write};

/// One catalog preset's fixture.
pub struct Preset {
    pub name: String,
    pub fixture: Fixture,
}

impl Preset {
    pub fn load(name: &str) -> Result<Preset, String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/presets")
            .join(name);
        Ok(Preset {
            name: name.to_string(),
            fixture: Fixture::load(&dir)?,
        })
    }
}

/// A copy of the fixture as a git repository whose configuration runs the preset alone, as gate
/// `g`, without `leave_out`. The configuration is `.qgates/quality.yaml`, which no tool checks.
pub fn project(p: &Preset, leave_out: &[String]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for rel in p.fixture.files() {
        if !leave_out.contains(&rel) {
            let text = std::fs::read(p.fixture.dir.join(&rel)).expect("read the fixture");
            let to = dir.path().join(&rel);
            std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            std::fs::write(to, text).expect("copy");
        }
    }
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "fixture"]);
    write(
        dir.path(),
        ".qgates/quality.yaml",
        &format!("version: 1\ngates:\n  g: {{ preset: {} }}\n", p.name),
    );
    dir
}
