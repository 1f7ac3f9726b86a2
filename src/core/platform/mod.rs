//! What qgates asks of the operating system beyond the standard library: process groups,
//! signals, opens that refuse a symbolic link, private folders, file owners, limits. The rest
//! of the engine calls these functions and has no `libc` or `std::os::unix` of its own, so a
//! port to another system is this module (see docs/platforms.md for the table).
//!
//! Only Unix is implemented (`unix.rs`; Linux x86_64 is built and tested, macOS is Unix and
//! expected to build). Each function names its Windows counterpart and any difference on
//! macOS. Without a compiler for Windows those counterparts cannot be written and tested
//! honestly, so another target stops at compile time with a message instead of building a
//! qgates that quietly runs tools without their process groups or follows links it must refuse.

pub(crate) mod background;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;

#[cfg(not(unix))]
compile_error!(
    "qgates builds on Unix only for now (Linux, macOS): its process groups, signals and \
     link-refusing opens have no Windows implementation yet. docs/platforms.md lists each \
     part and its Windows counterpart (src/core/platform/mod.rs)."
);

use std::fs::{File, Metadata, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

// ---- Files: no link followed, modes, owners ----

/// Opens `path` with `options`, refusing a symbolic link at `path` itself (`O_NOFOLLOW`: the
/// open fails, see [`is_link_refusal`]) instead of following it out of the workspace.
/// Windows: `FILE_FLAG_OPEN_REPARSE_POINT` through `OpenOptionsExt::custom_flags`, then a
/// check that the handle is not a reparse point (`GetFileInformationByHandleEx`), since that
/// flag opens the link itself rather than failing. macOS: the same `O_NOFOLLOW`.
pub fn open_no_follow(options: &OpenOptions, path: &Path) -> std::io::Result<File> {
    imp::open_no_follow(options, path)
}

/// Opens `path` for reading, refusing a symbolic link (as [`open_no_follow`]) and without
/// waiting for a writer when it is a named pipe (`O_NONBLOCK`): a report or manifest that is a
/// FIFO is then seen as not a plain file instead of hanging the run. Windows: named pipes live
/// in their own namespace (`\\.\pipe\`), so only the reparse-point check applies. macOS: same.
pub fn open_read_no_follow_no_wait(path: &Path) -> std::io::Result<File> {
    imp::open_read_no_follow_no_wait(path)
}

/// Whether an open failed because [`open_no_follow`] met a symbolic link (`ELOOP`). Windows:
/// the reparse-point check's own error. macOS: `ELOOP` as on Linux.
pub fn is_link_refusal(e: &std::io::Error) -> bool {
    imp::is_link_refusal(e)
}

/// Gives a file that `options` creates the permission bits `mode` (before the umask).
/// Windows: no mode bits; the file inherits its folder's ACL, so privacy comes from the
/// private folder ([`make_dir`] with 0o700) and this is a no-op. macOS: same as Linux.
pub fn new_file_mode(options: &mut OpenOptions, mode: u32) -> &mut OpenOptions {
    imp::new_file_mode(options, mode)
}

/// Makes the folder `path` (its parent must exist; an existing one is an error, so a folder
/// made here is this process's own) with the permission bits `mode`; 0o700 makes it private.
/// Windows: `CreateDirectoryW` with a security descriptor granting only the current user
/// (0o700) or inheriting (anything else). macOS: same as Linux.
pub fn make_dir(path: &Path, mode: u32) -> std::io::Result<()> {
    imp::make_dir(path, mode)
}

/// Makes `path` and its missing parents with the permission bits `mode`. Windows: as
/// [`make_dir`], folder by folder. macOS: same as Linux.
pub fn make_dir_all(path: &Path, mode: u32) -> std::io::Result<()> {
    imp::make_dir_all(path, mode)
}

/// Makes a new private folder (mode 0o700) at `template`, whose final `XXXXXX` becomes random
/// (`mkdtemp(3)`), so no other user can have made it first. Windows: no `mkdtemp`; random
/// names from `BCryptGenRandom` tried with `CreateDirectoryW` (which fails on an existing name)
/// and an owner-only security descriptor. macOS: `mkdtemp` as on Linux.
pub fn make_private_temp_dir(template: &Path) -> std::io::Result<PathBuf> {
    imp::make_private_temp_dir(template)
}

/// This process's effective user id, the owner that qgates' own folders must have.
/// Windows: the user's SID from `GetTokenInformation(TokenUser)`, compared as a SID rather than
/// a number. macOS: `geteuid` as on Linux.
pub fn effective_user_id() -> u32 {
    imp::effective_user_id()
}

/// The user id owning a file. Windows: `GetSecurityInfo(OWNER_SECURITY_INFORMATION)`, a SID.
/// macOS: `st_uid` as on Linux.
pub fn owner_user_id(meta: &Metadata) -> u32 {
    imp::owner_user_id(meta)
}

/// Whether a file's permissions give its group and other users no access at all (`mode &
/// 0o077 == 0`). Windows: a DACL whose only allowed entries name the owner (and SYSTEM).
/// macOS: same as Linux.
pub fn closed_to_others(meta: &Metadata) -> bool {
    imp::closed_to_others(meta)
}

/// Whether this user may write `path`, by its permissions and the mount (read-only file
/// systems included), as the kernel would decide for the effective user (`faccessat` with
/// `AT_EACCESS`). Windows: `GetFileAttributesW` (read-only attribute) and
/// `AccessCheck` on its security descriptor. macOS: `faccessat` exists there too.
pub fn can_write(path: &Path) -> bool {
    imp::can_write(path)
}

/// Whether a file may be run as a program (any execute bit). Windows: no execute bits; an
/// extension listed in `PATHEXT` (`.exe`, `.cmd`, `.bat`...) makes a program, and a bare name
/// is looked up with those extensions. macOS: same as Linux.
pub fn is_executable(meta: &Metadata) -> bool {
    imp::is_executable(meta)
}

/// What identifies a file's content on disk without reading it: modification and change times
/// (seconds, nanoseconds) and the inode, in the order `(mtime s, mtime ns, ctime s, ctime ns,
/// inode)`. Windows: no change time; `LastWriteTime` and `ChangeTime` from
/// `GetFileInformationByHandleEx(FileBasicInfo)` and the file index for the inode. macOS: the
/// same fields (APFS has nanosecond times).
pub fn file_identity(meta: &Metadata) -> (i64, i64, i64, i64, u64) {
    imp::file_identity(meta)
}

/// The user and the group that own a file, as git's index records them (a tracked file whose
/// owners changed is read again). Windows: none; git records 0 for both, so `(0, 0)`. macOS:
/// the same fields.
pub fn owner_ids(meta: &Metadata) -> (u32, u32) {
    imp::owner_ids(meta)
}

// ---- Processes: groups, reaping, exit signals ----

/// Makes the command's process lead a new process group (`setpgid(0, 0)` in the child), so
/// that [`kill_process_group`] ends the tool with every helper it started, and a Ctrl-C meant
/// for qgates does not reach it. Windows: start it suspended in a Job Object
/// (`CreateJobObjectW`, `AssignProcessToJobObject` with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`)
/// and `CREATE_NEW_PROCESS_GROUP` for the console. macOS: same as Linux.
pub fn lead_new_process_group(cmd: &mut Command) -> &mut Command {
    imp::lead_new_process_group(cmd)
}

/// Kills the whole process group `pgid` (`killpg` with SIGKILL); a group already gone is
/// fine. Windows: `TerminateJobObject` on the tool's job. macOS: same as Linux.
pub fn kill_process_group(pgid: i32) {
    imp::kill_process_group(pgid)
}

/// Collects the exit status of our child `pid` if it has ended, without waiting
/// (`waitpid(WNOHANG)`). `true`: collected, or nothing to collect (not our child, already
/// collected); `false`: still running, or the call was interrupted: try again. Windows: no
/// zombies; `WaitForSingleObject(handle, 0)` and `CloseHandle`. macOS: same as Linux.
pub fn try_reap(pid: i32) -> bool {
    imp::try_reap(pid)
}

/// Whether a process with this id exists (`kill(pid, 0)`; one of another user counts as
/// existing). Windows: `OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION)` and
/// `GetExitCodeProcess` giving `STILL_ACTIVE`. macOS: same as Linux.
pub fn process_exists(pid: i32) -> bool {
    imp::process_exists(pid)
}

/// The signal that ended a process, when one did. Windows: none; a killed process has an exit
/// code (`TerminateProcess`'s, 1 from `TerminateJobObject` here). macOS: same as Linux.
pub fn exit_signal(status: &ExitStatus) -> Option<i32> {
    imp::exit_signal(status)
}

/// What a signal that ended a tool tells the user. Windows: not needed (see [`exit_signal`]);
/// a crash there is an exit code such as `0xC0000005`. macOS: the same names (numbers differ
/// from Linux, e.g. SIGBUS is 10, which is why they are looked up here).
pub fn describe_exit_signal(sig: i32) -> &'static str {
    imp::describe_exit_signal(sig)
}

// ---- Signals to qgates itself ----

/// The first of SIGINT, SIGTERM and SIGHUP this process receives, as its number. Listening
/// starts at the call (inside a runtime), before the returned future is first polled. `None`
/// if the signals cannot be listened to. Windows: `SetConsoleCtrlHandler` through tokio's
/// `signal::windows::{ctrl_c, ctrl_break, ctrl_close}`. macOS: same as Linux.
pub fn termination_signal() -> impl Future<Output = Option<i32>> {
    imp::termination_signal()
}

/// Lets a write past the file-size limit (`ulimit -f`) fail with `EFBIG` instead of killing
/// the process (SIGXFSZ ignored; the tools inherit it). Call before any thread starts.
/// Windows: no file-size limit nor signal; nothing to do. macOS: same as Linux.
pub fn ignore_file_size_signal() {
    imp::ignore_file_size_signal()
}

/// Ignores SIGINT and SIGHUP in this process (the reaper, whose end is the end of its input,
/// not a Ctrl-C or a closed terminal). Call before any thread starts. Windows: the reaper is
/// not needed there (a Job Object with kill-on-close ends the tools with qgates). macOS: same.
pub fn ignore_interrupt_and_hangup() {
    imp::ignore_interrupt_and_hangup()
}

/// Runs `f` when the process exits normally (`atexit(3)`). `f` must not unwind. Windows: the
/// C runtime's `atexit` too. macOS: same.
pub fn at_exit(f: extern "C" fn()) {
    imp::at_exit(f)
}

// ---- Limits and resources ----

/// The system's limit on the bytes of a new process's arguments and environment together
/// (`sysconf(_SC_ARG_MAX)`), or `None` when it cannot tell. Windows: a command line of at most
/// 32,767 UTF-16 units (`CreateProcessW`), the environment not counted. macOS: `ARG_MAX` is
/// 1 MiB there (256 KiB on older releases).
pub fn argument_max() -> Option<usize> {
    imp::argument_max()
}

/// The file-size limit this process and its tools have (`RLIMIT_FSIZE`, `ulimit -f`) in bytes;
/// `None` when unlimited. Windows: no such limit (`None`). macOS: same as Linux.
pub fn file_size_limit() -> Option<u64> {
    imp::file_size_limit()
}

/// Whether the disk holding `path` has no block left for this user (root may use the blocks
/// reserved for it); `None` when it cannot tell (`statvfs`). Windows: `GetDiskFreeSpaceExW`
/// (its free bytes available to the caller). macOS: `statvfs` as on Linux.
pub fn disk_full(path: &Path) -> Option<bool> {
    imp::disk_full(path)
}

/// A local wall-clock time as seconds since the epoch, by the C library's time zone rules (`TZ`,
/// /etc/localtime; `mktime`), daylight saving time worked out. Windows: `_mkgmtime64` is UTC
/// only; `TzSpecificLocalTimeToSystemTime` converts a local `SYSTEMTIME`. macOS: `mktime` as on
/// Linux.
pub fn local_time_to_epoch(
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
) -> Option<i64> {
    imp::local_time_to_epoch(year, month, day, hour, minute, second)
}

/// Lowers the calling thread's priority to nice 10, or leaves it where it is when it is lower
/// already (a server started with `nice -n 15` must not have threads raised to 10). Only on
/// Linux, where the value belongs to the thread; on macOS `setpriority` would lower the whole
/// process (a thread's QoS class, `pthread_set_qos_class_self_np`, would be the counterpart),
/// so it does nothing there. Windows: `SetThreadPriority(THREAD_PRIORITY_BELOW_NORMAL)`.
pub fn lower_thread_priority() {
    imp::lower_thread_priority()
}
