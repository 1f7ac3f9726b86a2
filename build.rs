//! Embeds the preset catalog: every `presets/*.yaml` becomes an entry of `PRESET_FILES`, so a
//! preset is added by adding its file.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Paths are said relative to the package (cargo resolves them against the package being
    // built): cargo reuses this script's output for another checkout that shares its target
    // directory (pre-commit, pip and cargo install building clones), and an absolute path would
    // name the first checkout's files, and make every other checkout build the crate again.
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest_dir).join("presets");
    println!("cargo:rerun-if-changed=presets");
    let mut files: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                .filter_map(|p| Some((p.file_stem()?.to_str()?.to_string(), p)))
                .collect()
        })
        .unwrap_or_else(|e| panic!("cannot read the preset catalog {}: {e}", dir.display()));
    files.sort();
    let mut out = String::from(
        "/// Every preset file, by name, sorted.\npub static PRESET_FILES: &[(&str, &str)] = &[\n",
    );
    for (name, path) in &files {
        let file = path
            .file_name()
            .and_then(|f| f.to_str())
            .expect("a preset's file name is its name plus .yaml");
        println!("cargo:rerun-if-changed=presets/{file}");
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {:?}))),",
            format!("/presets/{file}")
        );
    }
    out.push_str("];\n");
    let target =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("presets.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}
