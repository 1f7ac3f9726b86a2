//! What detection adds to loading the configuration of a workspace without `quality.yaml`, on a
//! generated repository of 5 000 files in 250 folders (plus 1 000 ignored ones): (a) detecting
//! (one bounded walk, the manifests read), (b) loading the embedded default when the remembered
//! detection still holds (one `lstat` per folder), against (c) loading the same configuration
//! from a `quality.yaml`. Targets: (a) ≤ 50 ms, (b) ≤ (c) + 2 ms.
//!
//! `cargo bench --bench detect`; `QGATES_BENCH_RUNS` sets the number of timed runs (default 15).
#![expect(
    clippy::print_stdout,
    reason = "a benchmark reports its numbers on stdout"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use qgates::core::config::{DEFAULT_CONFIG, load_file, load_for_workspace};
use qgates::core::detect::detect;

const FOLDERS: usize = 250;
const PER_FOLDER: usize = 20;
const IGNORED: usize = 1_000;

fn write(root: &Path, rel: &str, text: &str) -> std::io::Result<()> {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap_or(root))?;
    std::fs::write(p, text)
}

fn generate(root: &Path) -> std::io::Result<()> {
    write(
        root,
        "pyproject.toml",
        "[project]\nname = \"bench\"\n[tool.ruff]\n",
    )?;
    write(
        root,
        "package.json",
        r#"{"devDependencies": {"eslint": "9"}}"#,
    )?;
    write(root, ".gitignore", "build/\n")?;
    let kinds = ["py", "ts", "md", "sh", "txt"];
    for d in 0..FOLDERS {
        for f in 0..PER_FOLDER {
            let ext = kinds[(d + f) % kinds.len()];
            write(root, &format!("pkg{}/mod{d}/file{f}.{ext}", d % 10), "x\n")?;
        }
    }
    for i in 0..IGNORED {
        write(root, &format!("build/out{}/{i}.py", i % 20), "")?;
    }
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs: usize = std::env::var("QGATES_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().join("repo");
    generate(&root)?;
    let with_file = tmp.path().join("quality.yaml");
    std::fs::write(&with_file, DEFAULT_CONFIG)?;
    // A detection is remembered only once the files it read are older than the file systems'
    // coarsest tick (2 s): wait that out, as a repository at rest would be.
    std::thread::sleep(Duration::from_millis(2_100));

    let found = detect(&root);
    println!(
        "{} files seen; proposes {:?}",
        found.files_seen,
        found.proposals.iter().map(|p| p.preset).collect::<Vec<_>>()
    );
    if found.files_seen != FOLDERS * PER_FOLDER + 3 || found.truncated {
        return Err("the walk did not see exactly the files that are not ignored".into());
    }

    let (mut miss, mut hit, mut file) = (Vec::new(), Vec::new(), Vec::new());
    load_for_workspace(&root, None)?; // remembers the detection
    // The two loads alternate, so a busy machine slows both alike; a full detection between
    // them would leave the second one a cold cache.
    for _ in 0..=runs {
        let t = Instant::now();
        std::hint::black_box(load_for_workspace(&root, None)?);
        hit.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(load_file(&with_file)?);
        file.push(t.elapsed());
    }
    for _ in 0..=runs {
        let t = Instant::now();
        std::hint::black_box(detect(&root));
        miss.push(t.elapsed());
    }
    let (miss, hit, file) = (median(miss), median(hit), median(file));
    println!("== Results ==");
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "(a) detect, not remembered: {miss:.2?} (target ≤ 50 ms: {})",
        met(miss <= Duration::from_millis(50))
    );
    println!(
        "(b) load without quality.yaml, detection remembered: {hit:.2?}; (c) load from quality.yaml: {file:.2?} (target (b) ≤ (c) + 2 ms: {})",
        met(hit <= file + Duration::from_millis(2))
    );
    Ok(())
}
