//! A team's own presets: `preset: ./tools/qgates/ourlint.yaml` names a preset file kept in the
//! repository, read and checked as the catalog's are (docs/presets.md, "Your own presets").
//!
//! The path is taken from the folder of the configuration file, the workspace root for
//! `.qgates/quality.yaml`, and must stay inside it: no `..`, no absolute path, no link followed
//! out. What the preset makes the gate run is covered by trust like the rest of the gate: it is
//! part of the merged gate the trust manifest lists.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::limits::MAX_CONFIG_BYTES;
use super::presets::{PresetFile, read_preset};
use crate::core::platform;

/// Whether a gate's `preset` names a file rather than a catalog entry.
pub fn is_path(name: &str) -> bool {
    name.starts_with("./")
}

/// The folder local preset paths are taken from, for the configuration file at `file`.
pub fn base_of(file: &Path) -> Option<PathBuf> {
    let dir = file.parent()?;
    match dir.file_name() {
        Some(n) if n == ".qgates" => dir.parent().map(Path::to_path_buf),
        _ => Some(dir.to_path_buf()),
    }
}

/// Reads the preset file `name` under `base`; the error says what is wrong and how to fix it.
pub fn read(base: &Path, name: &str) -> Result<PresetFile, String> {
    let relative = Path::new(name);
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "a preset file must be inside the repository: give a path like `./tools/qgates/{}` without `..`",
            relative
                .file_name()
                .map_or("lint.yaml".into(), |f| f.to_string_lossy())
        ));
    }
    let path = base.join(relative);
    let inside = |p: &Path| {
        let (real, root) = (p.canonicalize(), base.canonicalize());
        matches!((real, root), (Ok(real), Ok(root)) if real.starts_with(&root))
    };
    if path.exists() && !inside(&path) {
        return Err(format!(
            "{} leads outside the repository (a link); keep the preset file itself in the repository",
            path.display()
        ));
    }
    let mut text = String::new();
    platform::open_read_no_follow_no_wait(&path)
        .and_then(|f| f.take(MAX_CONFIG_BYTES as u64).read_to_string(&mut text))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "{} does not exist; the path is taken from the folder of quality.yaml ({})",
                path.display(),
                base.display()
            ),
            _ => format!("{} cannot be read: {e}", path.display()),
        })?;
    read_preset(&text).map_err(|e| {
        format!(
            "{} is not a preset file: {e}. A preset file has `about` (tool, languages, install, homepage) and `gate`, as the catalog's presets/*.yaml do",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRESET: &str = "about:\n  tool: Ours\n  languages: [python]\n  install: \"pip install ours\"\n  homepage: https://example.org\ngate:\n  name: Ours\n  command: [ours]\n  parsing: { strategy: exit_code }\n";

    #[test]
    fn a_preset_file_in_the_repository_is_read_and_one_outside_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("repo");
        std::fs::create_dir_all(base.join("tools")).unwrap();
        std::fs::write(base.join("tools/ours.yaml"), PRESET).unwrap();
        let file = read(&base, "./tools/ours.yaml").unwrap();
        assert_eq!(file.about.tool, "Ours");

        let e = read(&base, "./../x.yaml").unwrap_err();
        assert!(e.contains("without `..`"), "{e}");
        let e = read(&base, "./tools/missing.yaml").unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        std::fs::write(base.join("tools/bad.yaml"), "gate: {}\n").unwrap();
        let e = read(&base, "./tools/bad.yaml").unwrap_err();
        assert!(e.contains("is not a preset file"), "{e}");

        std::fs::write(dir.path().join("outside.yaml"), PRESET).unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("outside.yaml"),
            base.join("tools/link.yaml"),
        )
        .unwrap();
        let e = read(&base, "./tools/link.yaml").unwrap_err();
        assert!(e.contains("leads outside the repository"), "{e}");

        assert_eq!(
            base_of(&base.join(".qgates/quality.yaml")).unwrap(),
            base,
            "`.qgates/quality.yaml` is the root's"
        );
    }
}
