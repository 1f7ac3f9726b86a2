//! The generated monorepo of the scale benchmarks (`scope`, `scale`): 50 000 tracked Python files
//! in 500 folders, and 20 000 ignored ones. Each bench names an environment variable that keeps
//! it in a folder (generated there if it is not yet, reused when it is).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

pub const TRACKED: usize = 50_000;
pub const PER_DIR: usize = 100;
pub const IGNORED: usize = 20_000;

pub type Error = Box<dyn std::error::Error>;

/// The root-relative path of tracked file `i`.
pub fn tracked(i: usize) -> String {
    format!("d{:03}/f{:05}.py", i / PER_DIR, i)
}

/// Commits `TRACKED` files (plus `extra`, root-relative path and content) and writes `IGNORED`
/// ignored ones; returns HEAD.
pub fn generate(root: &Path, extra: &[(&str, &str)]) -> Result<String, Error> {
    git(root, &["init", "-q", "-b", "main"])?;
    git(root, &["config", "user.name", "Bench"])?;
    git(root, &["config", "user.email", "bench@example.com"])?;
    write(root, ".gitignore", "ignored/\n.qgates/\n")?;
    for i in 0..TRACKED {
        write(root, &tracked(i), &format!("value_{i} = {i}\n"))?;
    }
    for (rel, text) in extra {
        write(root, rel, text)?;
    }
    // Files older than the index are clean by their stat alone; without the pause, files written
    // in the same instant as the index would be hashed on every run by both sides ("racy git").
    std::thread::sleep(Duration::from_millis(1100));
    git(root, &["add", "-A"])?;
    git(root, &["commit", "-q", "-m", "initial"])?;
    for i in 0..IGNORED {
        write(
            root,
            &format!("ignored/d{:03}/cache_{i}.bin", i / 200),
            "ignored\n",
        )?;
    }
    Ok(git(root, &["rev-parse", "HEAD"])?.trim().to_owned())
}

/// The repository in the folder `keep_in` (an environment variable) names, generated there if it
/// is not yet, or else in `tmp`.
pub fn at(
    tmp: &Path,
    keep_in: &str,
    extra: &[(&str, &str)],
) -> Result<(std::path::PathBuf, String), Error> {
    let kept = std::env::var_os(keep_in).map(std::path::PathBuf::from);
    let root = kept.unwrap_or_else(|| tmp.to_path_buf());
    if root.join(".git").is_dir() {
        #[allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]
        {
            println!("reusing {}", root.display());
        }
        let head = git(&root, &["rev-parse", "HEAD"])?.trim().to_owned();
        return Ok((root, head));
    }
    std::fs::create_dir_all(&root)?;
    let head = generate(&root, extra)?;
    Ok((root, head))
}

pub fn write(root: &Path, rel: &str, content: &str) -> std::io::Result<()> {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, content)
}

/// `git` in `root`, without the user's or the system's configuration (an fsmonitor or an untracked
/// cache there would time something else).
pub fn git(root: &Path, args: &[&str]) -> Result<String, Error> {
    let out = Command::new("git")
        .current_dir(root)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()?;
    if !out.status.success() {
        return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8(out.stdout)?)
}
