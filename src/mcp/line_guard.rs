//! A guard between the client's lines and the MCP library. rmcp drops a line it cannot parse
//! (not JSON, not UTF-8, nested past serde_json's depth limit) without a word, and answers one
//! that is JSON but not a message it knows with `-32600` and no id: either way the client waits
//! forever for its answer. So each line is decoded here first, into rmcp's own message type, as
//! rmcp will decode it; one that does not decode gets its JSON-RPC error (`-32700 Parse error`,
//! `-32602 Invalid params`, `-32600 Invalid Request`) with the request's id whenever it can be
//! read, a notification only a log line, and reading goes on.

use crate::jsonrpc::Head;
use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;
use serde_json::error::Category;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, duplex};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Room in each pipe between the guard and the library.
const PIPE: usize = 64 * 1024;

/// The ends the library reads from and writes to, and the task that writes to `output`: it
/// ends once both the library and the guard are done, so awaiting it flushes every answer.
pub fn guard<R, W>(
    input: R,
    output: W,
) -> (
    impl AsyncRead + Send + Unpin + 'static,
    impl AsyncWrite + Send + Unpin + 'static,
    JoinHandle<()>,
)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (mut to_library, library_in) = duplex(PIPE);
    let (library_out, from_library) = duplex(PIPE);
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();

    let answers = tx.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(input).split(b'\n');
        while let Ok(Some(line)) = lines.next_segment().await {
            if line.trim_ascii().is_empty() {
                continue;
            }
            match check_line(&line) {
                None => {
                    let sent = to_library.write_all(&line).await;
                    if sent.is_err() || to_library.write_all(b"\n").await.is_err() {
                        break;
                    }
                }
                Some(Refused::Notification(why)) => {
                    tracing::warn!("qgates mcp: a malformed notification was dropped: {why}");
                }
                Some(Refused::Answer(answer)) => {
                    tracing::warn!(
                        "qgates mcp: a malformed message was answered with an error: {}",
                        answer["error"]["message"]
                    );
                    let mut line = answer.to_string().into_bytes();
                    line.push(b'\n');
                    if answers.send(line).is_err() {
                        break;
                    }
                }
            }
        }
        // Dropping `to_library` ends the library's input: it stops as at the end of stdin.
    });

    tokio::spawn(async move {
        let mut lines = BufReader::new(from_library).split(b'\n');
        while let Ok(Some(mut line)) = lines.next_segment().await {
            line.push(b'\n');
            if tx.send(line).is_err() {
                break;
            }
        }
    });

    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = rx.recv().await {
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    (library_in, library_out, writer)
}

/// A line the library would not decode.
#[derive(Debug)]
enum Refused {
    /// The error answer the client is owed.
    Answer(Value),
    /// A notification: nothing to answer; says what was wrong, for the log.
    Notification(String),
}

/// `None` when the library will decode the line; else what to do instead.
fn check_line(line: &[u8]) -> Option<Refused> {
    // rmcp skips a UTF-8 byte order mark (RFC 8259 allows one).
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let e = serde_json::from_slice::<ClientJsonRpcMessage>(line).err()?;
    let head = Head::of(line);
    let id_fits = head.id_fits();
    let (code, message) = match (e.classify(), &head.method, &head.jsonrpc) {
        (Category::Data, Some(Value::String(method)), Some(Value::String(v)))
            if v == "2.0" && id_fits =>
        {
            (-32602, format!("`{method}` does not take these params"))
        }
        (Category::Data, ..) => (
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response".to_string(),
        ),
        _ => (-32700, format!("Parse error: the line is not JSON ({e})")),
    };
    Some(match head.answer(code, &message) {
        Some(answer) => Refused::Answer(answer),
        None => Refused::Notification(message),
    })
}
