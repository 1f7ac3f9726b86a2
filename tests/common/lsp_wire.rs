//! The LSP wire format as the test client speaks it: Content-Length framing and `file:` URIs.

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

/// One message, framed.
pub fn frame(msg: &Value) -> Vec<u8> {
    let body = serde_json::to_string(msg).expect("a message serializes");
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// The body of the next framed message, or what was wrong with the bytes read instead (a header
/// block without a `Content-Length`); `None` when the stream ends or breaks off. `line` is a
/// buffer reused between calls.
pub fn read_frame(reader: &mut impl BufRead, line: &mut String) -> Option<Result<Vec<u8>, String>> {
    let mut length = None;
    let mut headers = String::new();
    loop {
        line.clear();
        match reader.read_line(line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        headers.push_str(l);
        if let Some(v) = l.strip_prefix("Content-Length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let Some(length) = length else {
        return Some(Err(format!(
            "a header block without Content-Length: {headers:?}"
        )));
    };
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Ok(body))
}

/// A path as a `file:` URI, the way editors spell it (spaces and non-ASCII percent-encoded).
pub fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().as_bytes() {
        match *b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => {
                out.push(*b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
