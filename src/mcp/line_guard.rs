//! A guard between the client's lines and the MCP library. rmcp drops a line it cannot parse
//! without a word, and answers JSON that is not a message it knows with `-32600` and no id:
//! either way the client waits forever. So each line is decoded here first, into rmcp's own
//! message type; one that does not decode gets its JSON-RPC error (`-32700`, `-32602`, `-32600`)
//! with its id when it can be read, a notification a log line, and reading goes on.
//!
//! A line over `MAX_MESSAGE_BYTES` is answered `-32600` with a null id (its id was not kept), and
//! is discarded up to its newline as it arrives: at most the limit is ever held.

use crate::jsonrpc::{Head, MAX_MESSAGE_BYTES, error_answer, too_large};
use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;
use serde_json::error::Category;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
    duplex,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Room in each pipe between the guard and the library.
const PIPE: usize = 64 * 1024;

/// How much of a line over the limit is read at a time on the way to its newline.
const DISCARD_PIECE: usize = 64 * 1024;

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
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        while let Ok(Some(read)) = next_line(&mut input, &mut line, MAX_MESSAGE_BYTES).await {
            let checked = match read {
                Line::Whole if line.trim_ascii().is_empty() => continue,
                Line::Whole => check_line(&line),
                Line::TooLong(size) => Some(Refused::Answer(error_answer(
                    Value::Null,
                    -32600,
                    &format!("Invalid Request: {}", too_large(size)),
                ))),
            };
            match checked {
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

/// What `next_line` read.
#[derive(Debug, PartialEq)]
enum Line {
    /// A line, in the buffer, without its newline.
    Whole,
    /// A line of this many bytes, over the limit: discarded, the buffer left empty.
    TooLong(u64),
}

/// Reads the next line into `line` (without its newline; the last line of the input may have
/// none); `None` at the end of the input. A line longer than `limit` is read on to its newline
/// but not kept: the buffer never grows past `limit`.
async fn next_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Option<Line>> {
    line.clear();
    let read = (&mut *input)
        .take(limit as u64 + 1)
        .read_until(b'\n', line)
        .await?;
    if read == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        return Ok(Some(Line::Whole));
    }
    if line.len() <= limit {
        return Ok(Some(Line::Whole)); // the input's last line, without a newline
    }
    // Over the limit: the rest is read a piece at a time to its newline, and nothing kept.
    let mut size = line.len() as u64;
    *line = Vec::new();
    let mut piece = Vec::with_capacity(DISCARD_PIECE);
    loop {
        piece.clear();
        let read = (&mut *input)
            .take(DISCARD_PIECE as u64)
            .read_until(b'\n', &mut piece)
            .await?;
        if piece.last() == Some(&b'\n') {
            size += read as u64 - 1;
            break;
        }
        if read == 0 {
            break;
        }
        size += read as u64;
    }
    Ok(Some(Line::TooLong(size)))
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

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], limit: usize) -> Vec<Result<Vec<u8>, u64>> {
        // A small buffer, so lines span several reads.
        let mut r = BufReader::with_capacity(4, input);
        let mut line = Vec::new();
        let mut out = Vec::new();
        while let Some(read) = next_line(&mut r, &mut line, limit).await.unwrap() {
            out.push(match read {
                Line::Whole => Ok(line.clone()),
                Line::TooLong(size) => {
                    assert!(line.capacity() <= limit, "{} kept", line.capacity());
                    Err(size)
                }
            });
        }
        out
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_dropped_up_to_its_newline() {
        let got = lines(b"{\"a\":1}\n0123456789abcdef\n\n{}\nlast", 10).await;
        assert_eq!(
            got,
            [
                Ok(b"{\"a\":1}".to_vec()),
                Err(16),
                Ok(Vec::new()),
                Ok(b"{}".to_vec()),
                Ok(b"last".to_vec())
            ]
        );
        assert_eq!(lines(b"0123456789abcdef", 10).await, [Err(16)]);
        assert_eq!(
            lines(b"0123456789\n", 10).await,
            [Ok(b"0123456789".to_vec())]
        );
    }

    #[tokio::test]
    async fn a_line_over_the_real_limit_is_never_held() {
        let len = MAX_MESSAGE_BYTES as u64 * 2;
        let input = tokio::io::repeat(b'x').take(len).chain(&b"\n{}\n"[..]);
        let mut r = BufReader::new(input);
        let mut line = Vec::new();
        let read = next_line(&mut r, &mut line, MAX_MESSAGE_BYTES)
            .await
            .unwrap();
        assert_eq!(read, Some(Line::TooLong(len)));
        assert!(line.capacity() <= MAX_MESSAGE_BYTES);
        let read = next_line(&mut r, &mut line, MAX_MESSAGE_BYTES)
            .await
            .unwrap();
        assert_eq!((read, line.as_slice()), (Some(Line::Whole), &b"{}"[..]));
    }
}
