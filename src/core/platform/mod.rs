//! What qgates asks of the operating system beyond the standard library: process groups,
//! signals, opens that refuse a symbolic link, private folders, file owners, limits. The rest
//! of the engine calls these functions and has no `libc` or `std::os::unix` of its own, so a
//! port to another system is this module (docs/platforms.md has the table).
//!
//! Only Unix is implemented (`unix.rs`). Each function names its Windows counterpart and any
//! difference on macOS. Without a compiler for Windows those counterparts cannot be written and
//! tested honestly, so another target stops at compile time instead of building a qgates that
//! quietly runs tools without their process groups or follows links it must refuse.

pub(crate) mod background;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;
pub use unix::{LocalListener, LocalStream};

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

/// Opens `path` with `options`, refusing a symbolic link at `path` itself (`O_NOFOLLOW`).
/// Windows: `FILE_FLAG_OPEN_REPARSE_POINT`, then refusing a reparse point. macOS: same.
pub fn open_no_follow(options: &OpenOptions, path: &Path) -> std::io::Result<File> {
    imp::open_no_follow(options, path)
}

/// Opens `path` for reading as [`open_no_follow`] does, without waiting for a writer of a named
/// pipe (`O_NONBLOCK`), so a FIFO cannot hang a run. Windows: the reparse check. macOS: same.
pub fn open_read_no_follow_no_wait(path: &Path) -> std::io::Result<File> {
    imp::open_read_no_follow_no_wait(path)
}

/// Whether an open failed because [`open_no_follow`] met a symbolic link (`ELOOP`). Windows:
/// the reparse-point check's own error. macOS: same.
pub fn is_link_refusal(e: &std::io::Error) -> bool {
    imp::is_link_refusal(e)
}

/// Gives a file that `options` creates the permission bits `mode` (before the umask).
/// Windows: a no-op; privacy comes from the private folder's ACL. macOS: same.
pub fn new_file_mode(options: &mut OpenOptions, mode: u32) -> &mut OpenOptions {
    imp::new_file_mode(options, mode)
}

/// Makes the folder `path` with the permission bits `mode` (0o700: private), failing if it exists.
/// Windows: `CreateDirectoryW` with an owner-only security descriptor. macOS: same.
pub fn make_dir(path: &Path, mode: u32) -> std::io::Result<()> {
    imp::make_dir(path, mode)
}

/// Makes `path` and its missing parents with the permission bits `mode`. Windows: as
/// [`make_dir`], folder by folder. macOS: same.
pub fn make_dir_all(path: &Path, mode: u32) -> std::io::Result<()> {
    imp::make_dir_all(path, mode)
}

/// Makes a new private folder at `template`, its final `XXXXXX` made random (`mkdtemp`). Windows:
/// random names tried with `CreateDirectoryW` and an owner-only descriptor. macOS: same.
pub fn make_private_temp_dir(template: &Path) -> std::io::Result<PathBuf> {
    imp::make_private_temp_dir(template)
}

/// This process's effective user id, the owner qgates' own folders must have. Windows: the
/// user's SID (`GetTokenInformation(TokenUser)`). macOS: same.
pub fn effective_user_id() -> u32 {
    imp::effective_user_id()
}

/// The user id owning a file. Windows: a SID (`GetSecurityInfo`). macOS: same.
pub fn owner_user_id(meta: &Metadata) -> u32 {
    imp::owner_user_id(meta)
}

/// Whether a file's group and other users have no access at all (`mode & 0o077 == 0`).
/// Windows: a DACL allowing only the owner (and SYSTEM). macOS: same.
pub fn closed_to_others(meta: &Metadata) -> bool {
    imp::closed_to_others(meta)
}

/// Whether this user may write `path`, by its permissions and the mount (`faccessat` with
/// `AT_EACCESS`). Windows: `GetFileAttributesW` and `AccessCheck`. macOS: same.
pub fn can_write(path: &Path) -> bool {
    imp::can_write(path)
}

/// Whether a file may be run as a program (any execute bit). Windows: an extension listed in
/// `PATHEXT`. macOS: same.
pub fn is_executable(meta: &Metadata) -> bool {
    imp::is_executable(meta)
}

/// A file's `(mtime s, mtime ns, ctime s, ctime ns, inode)`, to know its content unchanged unread.
/// Windows: `LastWriteTime`, `ChangeTime` and the file index. macOS: the same fields.
pub fn file_identity(meta: &Metadata) -> (i64, i64, i64, i64, u64) {
    imp::file_identity(meta)
}

/// The user and the group that own a file, as git's index records them. Windows: `(0, 0)`, as
/// git records there. macOS: same.
pub fn owner_ids(meta: &Metadata) -> (u32, u32) {
    imp::owner_ids(meta)
}

// ---- Processes: groups, reaping, exit signals ----

/// Makes the command's process lead a new process group, so [`kill_process_group`] ends the
/// tool with its helpers and a Ctrl-C meant for qgates does not reach it. Windows: a Job Object
/// (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`) and `CREATE_NEW_PROCESS_GROUP`. macOS: same.
pub fn lead_new_process_group(cmd: &mut Command) -> &mut Command {
    imp::lead_new_process_group(cmd)
}

/// Kills the whole process group `pgid` (SIGKILL); a group already gone is fine. Windows:
/// `TerminateJobObject`. macOS: same.
pub fn kill_process_group(pgid: i32) {
    imp::kill_process_group(pgid)
}

/// Collects the exit status of our child `pid` if it has ended, without waiting. `true`:
/// collected, or nothing to collect; `false`: still running or interrupted, try again.
/// Windows: no zombies; `WaitForSingleObject(handle, 0)` and `CloseHandle`. macOS: same.
pub fn try_reap(pid: i32) -> bool {
    imp::try_reap(pid)
}

/// Whether a process with this id exists (one of another user counts). Windows: `OpenProcess`
/// and `GetExitCodeProcess` giving `STILL_ACTIVE`. macOS: same.
pub fn process_exists(pid: i32) -> bool {
    imp::process_exists(pid)
}

/// A socket at `path` that processes of this machine connect to (a warm language server's
/// keeper answers on it). Windows: a named pipe named after the path (`\\.\pipe\qgates-…`).
/// macOS: same.
pub fn listen_local(path: &Path) -> std::io::Result<LocalListener> {
    imp::listen_local(path)
}

/// A connection to the socket at `path` (`listen_local`). Windows: the named pipe, opened with
/// `CreateFileW`. macOS: same.
pub fn connect_local(path: &Path) -> std::io::Result<LocalStream> {
    imp::connect_local(path)
}

/// Asks a process to end (SIGTERM); one already gone is fine. Windows: a named event the
/// keeper waits on (`TerminateProcess` would not let it stop its daemon). macOS: same.
pub fn terminate(pid: i32) {
    imp::terminate(pid)
}

/// A process's command line, its arguments joined by spaces; `None` when it is gone or cannot
/// be read. Linux: `/proc/<pid>/cmdline`; macOS: `ps`. Windows: the process's PEB through
/// `NtQueryInformationProcess`, or WMI's `Win32_Process.CommandLine`.
pub fn command_line(pid: i32) -> Option<String> {
    imp::command_line(pid)
}

/// The resident memory in bytes of a process group's processes (a language server's wrapper
/// and the server it starts), when it can be read. Linux: `/proc/<pid>/stat` and `status`;
/// macOS: `ps -g`. Windows: the job object's processes, `GetProcessMemoryInfo`
/// (`WorkingSetSize`) of each.
pub fn group_resident_bytes(pgid: i32) -> Option<u64> {
    imp::group_resident_bytes(pgid)
}

/// The signal that ended a process, when one did. Windows: none, a killed process has an exit
/// code. macOS: same.
pub fn exit_signal(status: &ExitStatus) -> Option<i32> {
    imp::exit_signal(status)
}

/// What a signal that ended a tool tells the user. Windows: not needed (see [`exit_signal`]).
/// macOS: the same names under other numbers (SIGBUS is 10), hence the lookup.
pub fn describe_exit_signal(sig: i32) -> &'static str {
    imp::describe_exit_signal(sig)
}

// ---- Signals to qgates itself ----

/// The first of SIGINT, SIGTERM and SIGHUP this process receives, listened to from the call
/// (inside a runtime); `None` if they cannot be. Windows: tokio's `signal::windows::{ctrl_c,
/// ctrl_break, ctrl_close}`. macOS: same.
pub fn termination_signal() -> impl Future<Output = Option<i32>> {
    imp::termination_signal()
}

/// Lets a write past the file-size limit fail with `EFBIG` instead of killing the process
/// (SIGXFSZ ignored, inherited by the tools). Call before any thread starts. Windows: no such
/// limit. macOS: same.
pub fn ignore_file_size_signal() {
    imp::ignore_file_size_signal()
}

/// Ignores SIGINT and SIGHUP in this process (the reaper, which ends with its input). Call
/// before any thread starts. Windows: no reaper needed (a kill-on-close job). macOS: same.
pub fn ignore_interrupt_and_hangup() {
    imp::ignore_interrupt_and_hangup()
}

/// Runs `f` when the process exits normally (`atexit(3)`); `f` must not unwind. Windows: the
/// C runtime's `atexit`. macOS: same.
pub fn at_exit(f: extern "C" fn()) {
    imp::at_exit(f)
}

// ---- Limits and resources ----

/// The system's limit on the bytes of a new process's arguments and environment, if known.
/// Windows: 32,767 UTF-16 units of command line. macOS: 1 MiB (256 KiB on older releases).
pub fn argument_max() -> Option<usize> {
    imp::argument_max()
}

/// The file-size limit (`ulimit -f`) of this process and its tools, in bytes; `None` when
/// unlimited. Windows: `None`, no such limit. macOS: same.
pub fn file_size_limit() -> Option<u64> {
    imp::file_size_limit()
}

/// Whether the disk holding `path` has no block left for this user (root may use the blocks
/// reserved for it); `None` when it cannot tell. Windows: `GetDiskFreeSpaceExW`. macOS: same.
pub fn disk_full(path: &Path) -> Option<bool> {
    imp::disk_full(path)
}

/// A local wall-clock time as seconds since the epoch, by the C library's time zone rules
/// (`mktime`). Windows: `TzSpecificLocalTimeToSystemTime`. macOS: same.
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

/// Lowers the calling thread's priority to nice 10, unless it is lower already. Linux only: on
/// macOS `setpriority` would lower the whole process, so it does nothing there. Windows:
/// `SetThreadPriority(THREAD_PRIORITY_BELOW_NORMAL)`.
pub fn lower_thread_priority() {
    imp::lower_thread_priority()
}
