//! A guard between the client's lines and the MCP library: rmcp drops a line that is not JSON
//! without a word, so a client that sent one would wait forever for its answer. Each line is
//! checked here first; one that is not JSON gets JSON-RPC's `-32700 Parse error` (with a null id,
//! as JSON-RPC 2.0 asks when no id can be read), and reading goes on.

use serde_json::value::RawValue;
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
            match serde_json::from_slice::<&RawValue>(&line) {
                Ok(_) => {
                    let sent = to_library.write_all(&line).await;
                    if sent.is_err() || to_library.write_all(b"\n").await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(
                        "qgates mcp: a line that is not JSON was answered with -32700: {e}"
                    );
                    if answers.send(parse_error(&e)).is_err() {
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

fn parse_error(e: &serde_json::Error) -> Vec<u8> {
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32700, "message": format!("Parse error: the line is not JSON ({e})") },
    });
    let mut line = answer.to_string().into_bytes();
    line.push(b'\n');
    line
}
