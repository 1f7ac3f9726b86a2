//! The Unix implementation of `platform` (Linux, and macOS where noted). What each function is
//! for, and its counterparts elsewhere, is documented in `mod.rs`.

use std::ffi::{CString, OsString};
use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

pub fn open_no_follow(options: &OpenOptions, path: &Path) -> std::io::Result<File> {
    options.clone().custom_flags(libc::O_NOFOLLOW).open(path)
}

pub fn open_read_no_follow_no_wait(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

pub fn is_link_refusal(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

pub fn new_file_mode(options: &mut OpenOptions, mode: u32) -> &mut OpenOptions {
    options.mode(mode)
}

pub fn make_dir(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::DirBuilder::new().mode(mode).create(path)
}

pub fn make_dir_all(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(path)
}

pub fn make_private_temp_dir(template: &Path) -> std::io::Result<PathBuf> {
    let mut bytes = CString::new(template.as_os_str().as_bytes())
        .map_err(std::io::Error::other)?
        .into_bytes_with_nul();
    // SAFETY: `bytes` is a writable, NUL-terminated buffer that mkdtemp fills in place.
    let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    bytes.pop();
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

pub fn effective_user_id() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

pub fn owner_user_id(meta: &Metadata) -> u32 {
    meta.uid()
}

pub fn closed_to_others(meta: &Metadata) -> bool {
    meta.mode() & 0o077 == 0
}

pub fn can_write(path: &Path) -> bool {
    let Ok(path) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is NUL-terminated; faccessat only checks permissions.
    unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

pub fn is_executable(meta: &Metadata) -> bool {
    meta.permissions().mode() & 0o111 != 0
}

pub fn file_identity(meta: &Metadata) -> (i64, i64, i64, i64, u64) {
    (
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.ino(),
    )
}

pub fn owner_ids(meta: &Metadata) -> (u32, u32) {
    (meta.uid(), meta.gid())
}

pub fn lead_new_process_group(cmd: &mut Command) -> &mut Command {
    cmd.process_group(0)
}

pub fn kill_process_group(pgid: i32) {
    if pgid > 0 {
        // SAFETY: killpg only sends a signal; a group that is already gone gives ESRCH, ignored.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

pub fn try_reap(pid: i32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid on our own child; `status` is a valid out-pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    let interrupted = r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR);
    r != 0 && !interrupted
}

pub fn process_exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

pub type LocalListener = std::os::unix::net::UnixListener;
pub type LocalStream = std::os::unix::net::UnixStream;

pub fn listen_local(path: &Path) -> std::io::Result<LocalListener> {
    LocalListener::bind(path)
}

pub fn connect_local(path: &Path) -> std::io::Result<LocalStream> {
    LocalStream::connect(path)
}

pub fn terminate(pid: i32) {
    if pid > 0 {
        // SAFETY: kill only sends a signal; a process already gone gives ESRCH, ignored.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}

#[cfg(target_os = "linux")]
pub fn command_line(pid: i32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = (raw.split(|b| *b == 0))
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    (!args.is_empty()).then(|| args.join(" "))
}

#[cfg(not(target_os = "linux"))]
pub fn command_line(pid: i32) -> Option<String> {
    ps(pid, "command=")
}

#[cfg(target_os = "linux")]
pub fn group_resident_bytes(pgid: i32) -> Option<u64> {
    let rss = |pid: &str| -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
        kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok()
    };
    // The group: field 5 of `stat`, after the name in parentheses (which may hold spaces).
    let in_group = |pid: &str| -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            after.split_whitespace().nth(2) == Some(&pgid.to_string())
        })
    };
    let kib: u64 = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.bytes().all(|b| b.is_ascii_digit()) && in_group(name))
        .filter_map(|pid| rss(&pid))
        .sum();
    (kib > 0).then_some(kib * 1024)
}

#[cfg(not(target_os = "linux"))]
pub fn group_resident_bytes(pgid: i32) -> Option<u64> {
    let out = std::process::Command::new("ps")
        .args(["-o", "rss=", "-g", &pgid.to_string()])
        .output()
        .ok()?;
    let kib: u64 = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse::<u64>().ok())
        .sum();
    (kib > 0).then_some(kib * 1024)
}

#[cfg(not(target_os = "linux"))]
fn ps(pid: i32, field: &str) -> Option<String> {
    let out = std::process::Command::new("ps")
        .args(["-o", field, "-p", &pid.to_string()])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

pub fn exit_signal(status: &ExitStatus) -> Option<i32> {
    status.signal()
}

pub fn describe_exit_signal(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL: killed, perhaps out of memory",
        libc::SIGSEGV => "SIGSEGV: the tool crashed",
        libc::SIGABRT => "SIGABRT: the tool aborted",
        libc::SIGTERM => "SIGTERM: terminated",
        libc::SIGINT => "SIGINT: interrupted",
        libc::SIGBUS => "SIGBUS: the tool crashed",
        libc::SIGXFSZ => "SIGXFSZ: its output reached the file-size limit, `ulimit -f`",
        _ => "unexpected signal",
    }
}

pub fn termination_signal() -> impl Future<Output = Option<i32>> {
    use tokio::signal::unix::{SignalKind, signal};
    let listen = |kind: SignalKind| signal(kind).ok();
    let (int, term, hup) = (
        listen(SignalKind::interrupt()),
        listen(SignalKind::terminate()),
        listen(SignalKind::hangup()),
    );
    async move {
        let (mut int, mut term, mut hup) = (int?, term?, hup?);
        tokio::select! {
            _ = int.recv() => Some(libc::SIGINT),
            _ = term.recv() => Some(libc::SIGTERM),
            _ = hup.recv() => Some(libc::SIGHUP),
        }
    }
}

pub fn ignore_file_size_signal() {
    // SAFETY: sets a signal's disposition; the caller does so before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

pub fn ignore_interrupt_and_hangup() {
    // SAFETY: sets dispositions; the caller does so before any thread starts.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
}

pub fn at_exit(f: extern "C" fn()) {
    // SAFETY: `f` is an `extern "C" fn()`; the caller promises it never unwinds.
    unsafe { libc::atexit(f) };
}

pub fn argument_max() -> Option<usize> {
    // SAFETY: sysconf only reads a system constant.
    let arg_max = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
    (arg_max > 0).then_some(arg_max as usize)
}

pub fn file_size_limit() -> Option<u64> {
    // SAFETY: getrlimit fills the struct we pass.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    (unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY)
        .then_some(limit.rlim_cur as u64)
}

pub fn disk_full(path: &Path) -> Option<bool> {
    let path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the struct we pass; `path` is NUL-terminated.
    let mut fs: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut fs) } != 0 {
        return None;
    }
    // Root may write into the blocks reserved for it.
    let free = if effective_user_id() == 0 {
        fs.f_bfree
    } else {
        fs.f_bavail
    };
    Some(free == 0)
}

pub fn local_time_to_epoch(
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
) -> Option<i64> {
    // SAFETY: a zeroed `tm` is a valid value; mktime reads and normalizes the struct we pass.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = i32::try_from(year - 1900).ok()?;
    tm.tm_mon = i32::try_from(month - 1).ok()?;
    tm.tm_mday = i32::try_from(day).ok()?;
    tm.tm_hour = i32::try_from(hour).ok()?;
    tm.tm_min = i32::try_from(minute).ok()?;
    tm.tm_sec = i32::try_from(second).ok()?;
    // Whether daylight saving time applies is for mktime to work out.
    tm.tm_isdst = -1;
    let t = unsafe { libc::mktime(&mut tm) };
    (t != -1).then_some(t as i64)
}

pub fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: getpriority and setpriority take no pointers; `0` names the calling thread on Linux.
    unsafe {
        let now = libc::getpriority(libc::PRIO_PROCESS, 0);
        if now < 10 {
            libc::setpriority(libc::PRIO_PROCESS, 0, 10);
        }
    }
}
