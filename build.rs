//! Lays out the functions that start-up and everyday use run next to each other in the `qgates`
//! binary, when the linker can.
//!
//! Linux maps a binary's code into a process in blocks of 64 KiB or more around each page it
//! first touches. Left where the crates put them, the few megabytes of code a language-server
//! start runs are spread over the whole 12 MB of text, so nearly all of it became resident: the
//! server held about 12 MB of its binary after `initialize`. `link/startup-symbols.txt` lists those
//! functions (recorded by `scripts/order-symbols.sh`), and lld's `--symbol-ordering-file` puts
//! them first. Names missing from the binary (after a toolchain or dependency update) are skipped
//! silently, so a stale list costs memory, never a build.
//!
//! Only some linkers take the option (lld, Rust's default on x86_64 Linux, does; the GNU and
//! Apple linkers do not), so a tiny program is linked with it first, with the same compiler,
//! target, flags and linker as the real build; if that fails, the binary is linked as usual.
//! Packed relative relocations are probed the same way, and the probe must also run.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ORDER_FILE: &str = "link/startup-symbols.txt";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed={ORDER_FILE}");
    let order = Path::new(&env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join(ORDER_FILE);
    if !order.is_file() {
        return;
    }
    let args = [
        format!("-Wl,--symbol-ordering-file={}", order.display()),
        "-Wl,--no-warn-symbol-ordering".to_owned(),
    ];
    if linked_with(&args).is_some() {
        for arg in args {
            println!("cargo::rustc-link-arg-bins={arg}");
        }
    }
    // Relative relocations packed into a bitmap (DT_RELR, glibc 2.36 and later): the loader
    // reads a few kilobytes instead of the 800 KiB table of one entry per pointer, which it
    // would otherwise map whole at every start. Only when the probe also runs where it is built.
    let packed = ["-Wl,-z,pack-relative-relocs".to_owned()];
    if linked_with(&packed).is_some_and(|program| runs_here(&program)) {
        println!("cargo::rustc-link-arg-bins={}", packed[0]);
    }
}

/// Whether `program` runs, on a build for this machine.
fn runs_here(program: &Path) -> bool {
    env::var("TARGET").is_ok_and(|target| env::var("HOST").is_ok_and(|host| host == target))
        && succeeds(&mut Command::new(program))
}

/// An empty program linked for the build's target with these extra linker arguments, or
/// `None` when it does not link.
fn linked_with(link_args: &[String]) -> Option<PathBuf> {
    let rustc = env::var_os("RUSTC")?;
    let out_dir = PathBuf::from(env::var_os("OUT_DIR")?);
    let target = env::var_os("TARGET")?;
    let source = out_dir.join("link_probe.rs");
    std::fs::write(&source, "fn main() {}\n").ok()?;
    let program = out_dir.join("link_probe");
    let mut probe = Command::new(rustc);
    probe
        .arg("--crate-name=link_probe")
        .arg("--crate-type=bin")
        .arg("--target")
        .arg(target)
        .arg("-o")
        .arg(&program)
        .arg(&source);
    // The flags and linker the real build uses (from RUSTFLAGS, `.cargo/config.toml`…).
    if let Ok(flags) = env::var("CARGO_ENCODED_RUSTFLAGS") {
        probe.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    }
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        probe.arg("-C").arg({
            let mut arg = std::ffi::OsString::from("linker=");
            arg.push(linker);
            arg
        });
    }
    for arg in link_args {
        probe.arg("-C").arg(format!("link-arg={arg}"));
    }
    succeeds(&mut probe).then_some(program)
}

/// Runs `command` quietly; whether it exited with success.
fn succeeds(command: &mut Command) -> bool {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
