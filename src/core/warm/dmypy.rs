//! mypy's daemon asked in its own protocol (`warm.protocol: dmypy`): each message is a 4-byte
//! big-endian length and that much UTF-8 JSON, over the connection the daemon's status file
//! names. A check sends `{"command": "check", "files": [...]}` and reads messages until one
//! says `final`; it holds what `dmypy check` would print (`out`, `err`) and its exit code
//! (`status`). Speaking it saves starting dmypy's Python client for every check, about 80 ms
//! (docs/benchmarks.md).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::core::platform;

/// A message larger than this ends the conversation (mypy's output for a whole project is
/// megabytes, not gigabytes).
const MAX_MESSAGE: usize = 1 << 30;

/// What `dmypy check FILES` would print and exit with.
pub struct Checked {
    pub out: String,
    pub err: String,
    pub status: i32,
}

/// Asks the daemon whose status file is `status_file` to check `files` (as its client would
/// name them), within `limit`.
pub fn check(status_file: &Path, files: &[OsString], limit: Duration) -> Result<Checked, String> {
    let status: Value = std::fs::read(status_file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| format!("no readable status file {}", status_file.display()))?;
    let connection = status["connection_name"]
        .as_str()
        .ok_or("the status file names no connection")?;
    let mut stream = platform::connect_local(Path::new(connection))
        .map_err(|e| format!("the daemon cannot be reached ({e})"))?;
    let _ = stream.set_read_timeout(Some(limit));
    let files: Vec<String> = files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let request = json!({"command": "check", "files": files, "export_types": false,
                         "is_tty": false, "terminal_width": 80});
    let body = request.to_string().into_bytes();
    let mut message = u32::try_from(body.len())
        .map_err(|e| e.to_string())?
        .to_be_bytes()
        .to_vec();
    message.extend(body);
    stream
        .write_all(&message)
        .map_err(|e| format!("the daemon did not take the check ({e})"))?;
    loop {
        let answer = read_message(&mut stream)?;
        if let Some(error) = answer["error"].as_str() {
            return Err(format!("the daemon said: {error}"));
        }
        if answer["final"] == true {
            let text = |key: &str| answer[key].as_str().unwrap_or_default().to_string();
            let status = answer["status"]
                .as_i64()
                .ok_or("the daemon's answer has no status")?;
            return Ok(Checked {
                out: text("out"),
                err: text("err"),
                status: i32::try_from(status).unwrap_or(2),
            });
        }
    }
}

fn read_message(stream: &mut impl Read) -> Result<Value, String> {
    let mut header = [0u8; 4];
    stream
        .read_exact(&mut header)
        .map_err(|e| format!("the daemon ended the conversation ({e})"))?;
    let size = u32::from_be_bytes(header) as usize;
    if size > MAX_MESSAGE {
        return Err(format!("the daemon sent a message of {size} bytes"));
    }
    let mut body = vec![0; size];
    stream
        .read_exact(&mut body)
        .map_err(|e| format!("the daemon's answer was cut ({e})"))?;
    serde_json::from_slice(&body).map_err(|e| format!("the daemon's answer is not JSON ({e})"))
}
