//! A gate's program by content, so two machines that run the same tool from different places
//! give the same cache keys, and an upgrade gives new ones, without starting the tool.
//!
//! The identity hashes the program's bytes, links followed, without a leading `#!` line (a
//! virtual environment's scripts name their interpreter by absolute path). A launcher script is
//! the same for every version of its package, so where the version lives is added: for a script
//! of a Python virtual environment the `*.dist-info` names of its site-packages and pyvenv.cfg's
//! `version`; for an entry of `node_modules/.bin` its package's name and version.
//!
//! An identity is remembered with the stamps of every file and folder it read (`inputs`), and
//! reused while they all hold: hashing a 30 MB binary on every run would cost what it saves.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::core::workspace::stamp::{Stamp, stamp_of};

/// A program's identity and what it was made of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolId {
    /// SHA-256, hex.
    pub id: String,
    /// Each file or folder read, with its stamp when read.
    pub inputs: Vec<(PathBuf, Stamp)>,
}

impl ToolId {
    /// Whether every input still has the stamp it had.
    pub fn holds(&self) -> bool {
        self.inputs
            .iter()
            .all(|(path, stamp)| stamp_of(path).as_ref() == Some(stamp))
    }

    /// Whether every input's stamp lies before `reference` (see `Stamp::trustworthy`).
    pub fn trustworthy(&self, reference: std::time::SystemTime) -> bool {
        self.inputs.iter().all(|(_, s)| s.trustworthy(reference))
    }
}

/// The identity of the program at `program` (as the gate resolves it); `None` when it cannot be
/// read.
pub fn identify(program: &Path) -> Option<ToolId> {
    let mut inputs = vec![(program.to_path_buf(), stamp_of(program)?)];
    let mut hasher = Sha256::new();
    hasher.update(b"qgates tool 1\0");
    let script = hash_body(program, &mut hasher)?;
    let mut extra = Vec::new();
    if script && let Some(venv) = virtual_environment(program) {
        python_packages(&venv, &mut extra, &mut inputs);
    }
    node_package(program, &mut extra, &mut inputs);
    for line in extra {
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
    }
    Some(ToolId {
        id: hex::encode(hasher.finalize()),
        inputs,
    })
}

/// Hashes the program's length and bytes after any `#!` line into `hasher`; says whether it is a
/// script. A binary is hashed as it is read, without holding tens of megabytes; one that
/// changes while it is read (its length no longer its stat's) has no identity.
fn hash_body(program: &Path, hasher: &mut Sha256) -> Option<bool> {
    use std::io::Read;
    let file = std::fs::File::open(program).ok()?;
    let len = file.metadata().ok()?.len();
    let mut chunk = Vec::new();
    let next = |chunk: &mut Vec<u8>| (&file).take(1 << 16).read_to_end(chunk).ok();
    next(&mut chunk)?;
    if chunk.starts_with(b"#!") {
        (&file).read_to_end(&mut chunk).ok()?;
        let body = chunk
            .iter()
            .position(|&b| b == b'\n')
            .map_or(&[][..], |nl| &chunk[nl + 1..]);
        hasher.update((body.len() as u64).to_le_bytes());
        hasher.update(body);
        return Some(true);
    }
    hasher.update(len.to_le_bytes());
    let mut read = 0;
    while !chunk.is_empty() {
        hasher.update(&chunk);
        read += chunk.len() as u64;
        chunk.clear();
        next(&mut chunk)?;
    }
    (read == len).then_some(false)
}

/// `<venv>` for a program at `<venv>/bin/NAME` (`Scripts` on Windows) with a `pyvenv.cfg`.
fn virtual_environment(program: &Path) -> Option<PathBuf> {
    let bin = program.parent()?;
    let name = bin.file_name()?.to_str()?;
    if name != "bin" && name != "Scripts" {
        return None;
    }
    let venv = bin.parent()?;
    venv.join("pyvenv.cfg")
        .is_file()
        .then(|| venv.to_path_buf())
}

/// pyvenv.cfg's version lines and the site-packages' `*.dist-info` names, sorted.
fn python_packages(venv: &Path, extra: &mut Vec<String>, inputs: &mut Vec<(PathBuf, Stamp)>) {
    let cfg = venv.join("pyvenv.cfg");
    if let (Ok(text), Some(stamp)) = (std::fs::read_to_string(&cfg), stamp_of(&cfg)) {
        inputs.push((cfg, stamp));
        for line in text.lines() {
            let key = line.split('=').next().unwrap_or("").trim();
            // `version` (venv, virtualenv) or `version_info` (uv).
            if key == "version" || key == "version_info" {
                extra.push(format!("pyvenv {}", line.trim()));
            }
        }
    }
    let mut site_packages: Vec<PathBuf> = std::fs::read_dir(venv.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|python| python.path().join("site-packages"))
        .chain([venv.join("Lib").join("site-packages")])
        .filter(|p| p.is_dir())
        .collect();
    site_packages.sort();
    for dir in site_packages {
        let Some(stamp) = stamp_of(&dir) else {
            continue;
        };
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".dist-info"))
            .collect();
        names.sort();
        extra.extend(names.into_iter().map(|n| format!("python {n}")));
        // A folder's stamp changes when an entry is added, removed or renamed: an upgrade.
        inputs.push((dir, stamp));
    }
}

/// For `…/node_modules/.bin/NAME`, the package its link leads into: `node NAME@VERSION`.
fn node_package(program: &Path, extra: &mut Vec<String>, inputs: &mut Vec<(PathBuf, Stamp)>) {
    let bin = program.parent();
    if bin.and_then(Path::file_name).is_none_or(|n| n != ".bin")
        || bin
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_none_or(|n| n != "node_modules")
    {
        return;
    }
    let Ok(target) = program.canonicalize() else {
        return;
    };
    // The package folder: the first ancestor of the target whose parent is `node_modules`
    // (or `node_modules/@scope`) and that holds a package.json.
    let package = target.ancestors().skip(1).find(|dir| {
        let parent = dir.parent();
        let under = |p: Option<&Path>| {
            p.and_then(Path::file_name)
                .is_some_and(|n| n == "node_modules")
        };
        let scoped = parent
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('@'))
            && under(parent.and_then(Path::parent));
        (under(parent) || scoped) && dir.join("package.json").is_file()
    });
    let Some(manifest) = package.map(|dir| dir.join("package.json")) else {
        return;
    };
    let (Ok(text), Some(stamp)) = (std::fs::read_to_string(&manifest), stamp_of(&manifest)) else {
        return;
    };
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let field = |k: &str| json[k].as_str().unwrap_or("").to_string();
    extra.push(format!("node {}@{}", field("name"), field("version")));
    inputs.push((manifest, stamp));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn id(program: &Path) -> String {
        identify(program).unwrap().id
    }

    /// Identities are shared between machines and versions: the hash of a fixed text.
    #[test]
    fn an_identity_is_the_hash_of_its_documented_text() {
        let tmp = tempfile::tempdir().unwrap();
        let expected = |body: &[u8]| {
            let mut text = b"qgates tool 1\0".to_vec();
            text.extend((body.len() as u64).to_le_bytes());
            text.extend(body);
            hex::encode(Sha256::digest(&text))
        };
        // A binary longer than one read, and one shorter.
        let big: Vec<u8> = (0..200_003u32).map(|i| (i % 251) as u8).collect();
        for bytes in [&big[..], b"\x7fELF tiny"] {
            let path = tmp.path().join("bin");
            std::fs::write(&path, bytes).unwrap();
            assert_eq!(id(&path), expected(bytes));
        }
        // A script, without its interpreter line, however long.
        let mut script = b"#!/usr/bin/env python3\n".to_vec();
        script.extend(std::iter::repeat_n(b'x', 70_000));
        let path = tmp.path().join("script");
        std::fs::write(&path, &script).unwrap();
        assert_eq!(id(&path), expected(&script[23..]));
    }

    #[test]
    fn the_same_program_elsewhere_is_the_same_tool() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        // The interpreter line names each machine's own path; the rest is the same.
        write(&a.path().join("x"), "#!/home/a/.venv/bin/python\nrun()\n");
        write(&b.path().join("x"), "#!/opt/b/.venv/bin/python3\nrun()\n");
        assert_eq!(id(&a.path().join("x")), id(&b.path().join("x")));
        write(&b.path().join("x"), "#!/opt/b/.venv/bin/python3\nrun(2)\n");
        assert_ne!(id(&a.path().join("x")), id(&b.path().join("x")));
    }

    #[test]
    fn a_venv_script_is_known_by_its_packages_and_python() {
        let tmp = tempfile::tempdir().unwrap();
        let venv = tmp.path().join(".venv");
        let mypy = venv.join("bin/mypy");
        write(
            &mypy,
            "#!/x/.venv/bin/python\nfrom mypy.__main__ import console_entry\n",
        );
        write(
            &venv.join("pyvenv.cfg"),
            "home = /usr/bin\nversion = 3.11.2\n",
        );
        let site = venv.join("lib/python3.11/site-packages");
        std::fs::create_dir_all(site.join("mypy-1.0.0.dist-info")).unwrap();
        let first = identify(&mypy).unwrap();
        assert!(first.holds());
        std::fs::rename(
            site.join("mypy-1.0.0.dist-info"),
            site.join("mypy-1.1.0.dist-info"),
        )
        .unwrap();
        assert!(!first.holds(), "the upgrade changed site-packages");
        let upgraded = id(&mypy);
        assert_ne!(first.id, upgraded, "same launcher, other version");
        write(
            &venv.join("pyvenv.cfg"),
            "home = /usr/bin\nversion = 3.12.1\n",
        );
        assert_ne!(id(&mypy), upgraded, "another Python");
    }

    #[test]
    fn a_node_bin_entry_is_known_by_its_package_version() {
        let tmp = tempfile::tempdir().unwrap();
        let nm = tmp.path().join("node_modules");
        write(
            &nm.join("@scope/tool/bin/tool.js"),
            "#!/usr/bin/env node\nrequire('../lib')\n",
        );
        write(
            &nm.join("@scope/tool/package.json"),
            r#"{"name":"@scope/tool","version":"1.0.0"}"#,
        );
        std::fs::create_dir_all(nm.join(".bin")).unwrap();
        std::os::unix::fs::symlink("../@scope/tool/bin/tool.js", nm.join(".bin/tool")).unwrap();
        let first = id(&nm.join(".bin/tool"));
        write(
            &nm.join("@scope/tool/package.json"),
            r#"{"name":"@scope/tool","version":"1.0.1"}"#,
        );
        assert_ne!(id(&nm.join(".bin/tool")), first);
    }
}
