//! Cache keys: what sets them apart, and that they are portable.

use super::*;

/// A workspace with the default configuration and one Python file, `a.py`.
fn workspace_with_a_py() -> (tempfile::TempDir, Config) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(
        root.join("quality.yaml"),
        crate::core::config::DEFAULT_CONFIG,
    )
    .unwrap();
    std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
    let config = crate::core::config::load_for_workspace(root, None).unwrap();
    (tmp, config)
}

/// Prepared on several threads (past a thousand files) as one at a time: each file's stat
/// and identity, a vanished file known as such.
#[test]
fn files_prepared_together_are_known_as_one_by_one() {
    let (tmp, config) = workspace_with_a_py();
    let root = tmp.path();
    let mut files: Vec<String> = (0..2500).map(|i| format!("m{i}.py")).collect();
    for (i, f) in files.iter().enumerate() {
        std::fs::write(root.join(f), format!("x = {i}\n")).unwrap();
    }
    files.push("gone.py".to_string());
    let keys = KeyMaker::new(root, &config);
    keys.prepare(&files, &|f| !f.starts_with("m1"));
    assert!(!keys.is_file("gone.py"));
    for (i, f) in files.iter().take(2500).enumerate() {
        assert!(keys.is_file(f), "{f}");
        let expected = blob_id(format!("x = {i}\n").as_bytes());
        assert_eq!(keys.file_hash(f), expected, "{f}");
    }
}

/// In a repository, many files as git recorded them take the index's identity and are not
/// remembered (the index answers again next time); a file edited since is read, and its
/// identity remembered under its stamp. A save's few files are read without the index.
#[test]
fn the_index_answers_for_many_files_and_a_read_is_remembered() {
    let (tmp, config) = workspace_with_a_py();
    let root = tmp.path();
    let files: Vec<String> = (0..READ_FILES + 1).map(|i| format!("m{i}.py")).collect();
    for f in &files {
        std::fs::write(root.join(f), format!("{f}\n")).unwrap();
    }
    crate::core::workspace::content_id::tests::git(root, &["init", "-q"]);
    crate::core::workspace::content_id::tests::git(root, &["add", "-A"]);
    crate::core::workspace::content_id::tests::git(root, &["commit", "-q", "-m", "files"]);
    std::fs::write(root.join("m0.py"), "edited\n").unwrap();
    let cache = ResultCache::in_memory();
    let mut keys = KeyMaker::new(root, &config).with_stamps(Some(&cache));
    keys.reference = SystemTime::now() + std::time::Duration::from_millis(50);
    keys.prepare(&files, &|_| true);
    assert!(keys.index.get().is_some(), "the index was read");
    let stamp = |f: &str| Stamp::of(&std::fs::metadata(root.join(f)).unwrap());
    assert_eq!(keys.file_hash("m0.py"), blob_id(b"edited\n"));
    assert_eq!(
        cache.known_hash("m0.py", &stamp("m0.py")),
        blob_id(b"edited\n")
    );
    assert_eq!(keys.file_hash("m1.py"), blob_id(b"m1.py\n"));
    assert_eq!(cache.known_hash("m1.py", &stamp("m1.py")), None);

    // A workspace gate's key identifies every project file, together.
    let workspace = KeyMaker::new(root, &config);
    assert!(
        workspace
            .key(config.gate("mypy").unwrap(), "m1.py")
            .is_some()
    );
    assert!(
        workspace.index.get().is_some(),
        "the project was read file by file"
    );

    let few = KeyMaker::new(root, &config);
    few.prepare(&files[..3], &|_| true);
    assert!(
        few.index.get().is_none(),
        "a few files were matched against the index"
    );
    assert_eq!(few.file_hash("m1.py"), blob_id(b"m1.py\n"));
}

/// Keys are shared between machines and versions: their text is fixed (`qgates key 3`).
#[test]
fn a_key_is_the_hash_of_its_documented_text() {
    let (tmp, config) = workspace_with_a_py();
    let root = tmp.path();
    let gate = config.gate("ruff_lint").unwrap();
    let keys = KeyMaker::new(root, &config);
    let content = blob_id(b"x = 1\n").unwrap();
    let tool = keys.tool_fingerprint(gate);
    let text = format!(
        "qgates key 3\0{}\0{content}\0{}\0\0{tool}",
        gate.definition_hash,
        gate.cache_inputs
            .iter()
            .map(|_| "-")
            .collect::<Vec<_>>()
            .join(",")
    );
    assert_eq!(keys.key(gate, "a.py"), Some(sha256_hex(text.as_bytes())));
}

#[test]
fn a_recorded_hash_is_reused_only_while_the_stamp_holds() {
    let (tmp, config) = workspace_with_a_py();
    let root = tmp.path();
    let gate = config.gate("ruff_lint").unwrap();
    let cache = ResultCache::in_memory();
    let stamp = Stamp::of(&std::fs::metadata(root.join("a.py")).unwrap());
    // An identity no read would give: a key built from it proves the file was not read.
    cache.remember_hash("a.py", stamp, "feedfeedfeedfeed");
    let keys = |c| {
        KeyMaker::new(root, &config)
            .with_stamps(c)
            .key(gate, "a.py")
    };
    let (shortcut, read) = (keys(Some(&cache)), keys(None));
    assert_ne!(shortcut, read);
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(root.join("a.py"), "x = 2\n").unwrap();
    assert_eq!(
        keys(Some(&cache)),
        keys(None),
        "a same-size rewrite was not read"
    );
    assert_ne!(keys(None), read);
}

#[test]
fn another_version_of_the_tool_gives_other_keys() {
    let (tmp, config) = workspace_with_a_py();
    let root = tmp.path();
    let gate = config.gate("ruff_lint").unwrap();
    let key = || KeyMaker::new(root, &config).key(gate, "a.py").unwrap();
    let tool = root.join(".venv/bin/ruff");
    std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
    let install = |script: &str| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&tool, script).unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    install("#!/bin/sh\necho 0.1\n");
    let first = key();
    assert_eq!(key(), first, "the same tool gives the same key");
    install("#!/bin/sh\necho 0.2.0\n");
    assert_ne!(key(), first, "an upgraded tool reused the old results");
}

#[test]
fn a_fresh_file_gets_no_stamp() {
    let (tmp, config) = workspace_with_a_py();
    let root = tmp.path();
    let gate = config.gate("ruff_lint").unwrap();
    let cache = ResultCache::in_memory();
    // The default reference is `now - RACY_MARGIN`: the file was written after it.
    KeyMaker::new(root, &config)
        .with_stamps(Some(&cache))
        .key(gate, "a.py");
    let stamp = Stamp::of(&std::fs::metadata(root.join("a.py")).unwrap());
    assert_eq!(cache.known_hash("a.py", &stamp), None);
    let mut keys = KeyMaker::new(root, &config).with_stamps(Some(&cache));
    keys.reference = SystemTime::now() + std::time::Duration::from_millis(50);
    keys.key(gate, "a.py");
    assert!(cache.known_hash("a.py", &stamp).is_some());
}

#[test]
fn a_remembered_tool_identity_is_reused_while_what_it_read_holds() {
    let (tmp, config) = workspace_with_a_py();
    let root = tmp.path();
    let gate = config.gate("ruff_lint").unwrap();
    let tool = root.join(".venv/bin/ruff");
    std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
    std::fs::write(&tool, "#!/bin/sh\necho 0.1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cache = ResultCache::in_memory();
    let key = |reference: Option<SystemTime>| {
        let mut keys = KeyMaker::new(root, &config).with_stamps(Some(&cache));
        if let Some(r) = reference {
            keys.reference = r;
        }
        keys.key(gate, "a.py").unwrap()
    };
    let later = SystemTime::now() + std::time::Duration::from_millis(50);
    let first = key(Some(later));
    let path = tool.display().to_string();
    let mut remembered = identify(&tool).unwrap();
    assert_eq!(cache.known_tool(&path), Some(remembered.id.clone()));
    // An identity no hashing would give: a key built from it proves nothing was read.
    remembered.id = "feed".into();
    cache.remember_tool(&path, remembered);
    assert_ne!(key(None), first, "the remembered identity was used");
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&tool, "#!/bin/sh\necho 0.1\n").unwrap();
    assert_eq!(cache.known_tool(&path), None, "a rewrite changed its stamp");
    assert_eq!(key(None), first, "the same content, hashed again");
}

/// Every preset of the catalog, configured in two folders: the same definition hashes
/// (nothing of the folder is in what is hashed).
#[test]
fn a_gate_definition_names_no_folder_of_the_machine() {
    let names: Vec<&str> = crate::core::config::presets::names().collect();
    let config: String = names
        .iter()
        .enumerate()
        .map(|(i, name)| format!("  g{i}: {{ preset: {name} }}\n"))
        .collect();
    let load = || {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("quality.yaml");
        std::fs::write(&path, format!("version: 1\ngates:\n{config}")).unwrap();
        let loaded = crate::core::config::load_file(&path).unwrap();
        (tmp, loaded)
    };
    let ((_a, a), (_b, b)) = (load(), load());
    assert_eq!(a.gates.len(), names.len());
    for (ga, gb) in a.gates.iter().zip(&b.gates) {
        assert_eq!(ga.definition_hash, gb.definition_hash, "{}", ga.id);
    }
}

/// Two workspaces with the same files and tools in other folders, created at other times:
/// every gate of the default configuration (per file, workspace and whole-workspace alike)
/// gives the same keys.
#[test]
fn keys_are_the_same_on_two_machines() {
    let make = || {
        let (tmp, config) = workspace_with_a_py();
        std::fs::create_dir(tmp.path().join("pkg")).unwrap();
        std::fs::write(tmp.path().join("pkg/b.py"), "y = 2\n").unwrap();
        let tool = tmp.path().join("venv/bin/ruff");
        std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
        std::fs::write(&tool, format!("#!{}/python\nrun()\n", tmp.path().display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        (tmp, config)
    };
    let (a, config_a) = make();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (b, config_b) = make();
    for (ga, gb) in config_a.gates.iter().zip(&config_b.gates) {
        assert_eq!(ga.definition_hash, gb.definition_hash, "{}", ga.id);
        for file in ["a.py", "pkg/b.py"] {
            let ka = KeyMaker::new(a.path(), &config_a).key(ga, file);
            let kb = KeyMaker::new(b.path(), &config_b).key(gb, file);
            assert!(ka.is_some());
            assert_eq!(ka, kb, "{} {file}", ga.id);
        }
    }
}
