//! Writing to the terminal. A report that cannot be written (a full disk, a file-size limit) is
//! an error that `finish` turns into a message and a non-zero exit; a closed pipe
//! (`qgates check | head`) is not: the reader chose to stop, and the exit code stays the gates'.

use std::io::Write;
use std::sync::Mutex;

/// The first failure to write stdout, as its message.
static STDOUT_FAILED: Mutex<Option<String>> = Mutex::new(None);

pub fn print_stdout(s: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(s.as_bytes()).and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        let mut failed = STDOUT_FAILED.lock().unwrap_or_else(|e| e.into_inner());
        failed.get_or_insert_with(|| e.to_string());
    }
}

pub fn print_stderr(s: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(s.as_bytes());
    let _ = err.flush();
}

/// Says an error on stderr (`qgates: ` and the message); returns `code`.
pub fn fail(code: i32, message: &str) -> i32 {
    print_stderr(&format!("qgates: {message}\n"));
    code
}

/// `fail` with the exit code of a usage error.
pub fn usage(message: &str) -> i32 {
    fail(crate::core::report::exit::USAGE, message)
}

/// The command's exit code, unless its output could not be written: then a message on stderr
/// and `GATE_ERROR` (qgates could not finish its work).
pub fn finish(code: i32) -> i32 {
    let failed = STDOUT_FAILED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    match failed {
        Some(why) => {
            print_stderr(&format!(
                "qgates: the output could not be written to stdout ({why}); it is incomplete.\n"
            ));
            crate::core::report::exit::GATE_ERROR
        }
        None => code,
    }
}
