//! A guard between the client's bytes and the protocol library. tower-lsp-server's `FramedRead`
//! ends the stream at the first message it cannot decode (bad JSON or UTF-8, nesting past
//! serde_json's limit, no `Content-Length`, not JSON-RPC), leaving the server deaf. So messages
//! are framed and decoded here, into the library's own `Request` and `Response`, and the library
//! gets them re-encoded. Anything else gets the JSON-RPC error it is owed (`-32700`, `-32600`,
//! with its id when one can be read), or for a notification a log line, and reading goes on. A
//! `$/` request with an id is answered `-32601` here: the library drops its own answer to those.
//!
//! A body over `MAX_MESSAGE_BYTES` is discarded as it arrives, and the next message is framed.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};

use crate::jsonrpc::{Head, MAX_MESSAGE_BYTES, error_answer, too_large};

/// A header line longer than this is not a header: the rest of the block is skipped.
const MAX_HEADER_LINE: usize = 8 << 10;

/// One unit read off a stream.
#[derive(Debug, PartialEq)]
enum Frame {
    /// A message body, as its `Content-Length` said.
    Body(Vec<u8>),
    /// Bytes that were not a message; says what was wrong.
    Garbage(String),
    /// A message over `MAX_MESSAGE_BYTES`, of this many bytes, discarded unread.
    TooLarge(usize),
}

/// Reads the next frame; `None` at the end of the stream.
async fn read_frame<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> io::Result<Option<Frame>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut problem: Option<String> = None;
    let mut saw_any = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut *r)
            .take(MAX_HEADER_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Ok(saw_any.then(|| Frame::Garbage("the input ended inside a header".into())));
        }
        if n > MAX_HEADER_LINE {
            problem.get_or_insert_with(|| "a header line is too long".into());
            saw_any = true;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let mut text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !saw_any {
                // Blank lines between messages are tolerated.
                continue;
            }
            break;
        }
        saw_any = true;
        // A `Content-Length` anywhere on a line starts a new message: what came before it (the
        // rest of a body whose length was short, stray bytes) is logged and skipped.
        if let Some(at) = text.to_ascii_lowercase().find("content-length:")
            && (at > 0 || problem.is_some())
        {
            tracing::warn!("bytes before a Content-Length header were not a message: skipped");
            problem = None;
            text = &text[at..];
        }
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                length = Some(
                    value
                        .trim()
                        .parse::<usize>()
                        .map_err(|_| format!("Content-Length `{}` is not a number", value.trim())),
                );
            }
            // Content-Type and the like: the body is read as UTF-8 JSON regardless.
            Some((name, _)) if is_header_name(name.trim()) => {}
            _ => {
                problem.get_or_insert_with(|| {
                    format!(
                        "`{}` is not a header",
                        text.chars().take(40).collect::<String>()
                    )
                });
            }
        }
    }
    if let Some(p) = problem {
        return Ok(Some(Frame::Garbage(p)));
    }
    match length {
        None => Ok(Some(Frame::Garbage(
            "a message without a Content-Length header".into(),
        ))),
        Some(Err(e)) => Ok(Some(Frame::Garbage(e))),
        Some(Ok(len)) if len > MAX_MESSAGE_BYTES => {
            // Copied to nowhere through the reader's buffer: nothing of the body is kept.
            let mut body = (&mut *r).take(len as u64);
            let skipped = tokio::io::copy_buf(&mut body, &mut tokio::io::sink()).await?;
            if skipped < len as u64 {
                tracing::warn!(
                    "the input ended {skipped} bytes into a {len}-byte message that was being discarded: {}",
                    too_large(len)
                );
                return Ok(None);
            }
            Ok(Some(Frame::TooLarge(len)))
        }
        Some(Ok(len)) => {
            // Not sized up front: a lying Content-Length must not reserve gigabytes.
            let mut body = Vec::with_capacity(len.min(1 << 20));
            let got = (&mut *r).take(len as u64).read_to_end(&mut body).await?;
            if got < len {
                return Ok(Some(Frame::Garbage(format!(
                    "the input ended {} bytes into a {len}-byte message",
                    got
                ))));
            }
            Ok(Some(Frame::Body(body)))
        }
    }
}

/// What becomes of a message body.
#[derive(Debug)]
enum Checked {
    /// The message, re-encoded from what the guard decoded, for the library.
    Pass(Vec<u8>),
    /// The error answer the client is owed instead.
    Answer(Value),
    /// A malformed notification: nothing to answer; says what was wrong, for the log.
    Ignore(String),
}

/// The error answer of a body the library would not take, or a log line for a notification.
fn refuse(body: &[u8], code: i64, message: String) -> Checked {
    match Head::of(body).answer(code, &message) {
        Some(answer) => Checked::Answer(answer),
        None => Checked::Ignore(message),
    }
}

/// Decodes a body as the library would, into its own types.
fn check_body(body: &[u8]) -> Checked {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return refuse(body, -32700, format!("Parse error: {e}")),
    };
    // In the library's order: a response first (a request's fields are all optional).
    let encoded = match Response::deserialize(&value) {
        Ok(response) => serde_json::to_vec(&response),
        Err(_) => match Request::deserialize(&value) {
            Ok(request) if request.method().starts_with("$/") && request.id().is_some() => {
                let message = format!("Method not found: `{}` is not a request", request.method());
                return refuse(body, -32601, message);
            }
            Ok(request) => serde_json::to_vec(&request),
            Err(e) => {
                let message = format!("Invalid Request: not a JSON-RPC 2.0 message ({e})");
                return refuse(body, -32600, message);
            }
        },
    };
    match encoded {
        Ok(bytes) => Checked::Pass(bytes),
        Err(e) => refuse(body, -32603, format!("Internal error: {e}")),
    }
}

/// A header name as HTTP spells one (letters, digits, `-`), which a line of a body is not.
fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn frame_bytes(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Copies the client's well-formed messages to `to_server` and sends the answers to the rest to
/// `out`. Ends when the client's input ends, closing `to_server`, which ends the server.
pub async fn guard_input<R, W>(
    from_client: R,
    mut to_server: W,
    out: mpsc::UnboundedSender<Vec<u8>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(64 << 10, from_client);
    loop {
        let answer = match read_frame(&mut reader).await {
            Ok(Some(Frame::Body(body))) => match check_body(&body) {
                Checked::Pass(message) => {
                    if to_server.write_all(&frame_bytes(&message)).await.is_err() {
                        break;
                    }
                    continue;
                }
                Checked::Answer(answer) => answer,
                Checked::Ignore(why) => {
                    tracing::warn!("a malformed notification from the client was dropped: {why}");
                    continue;
                }
            },
            Ok(Some(Frame::Garbage(why))) => {
                error_answer(Value::Null, -32700, &format!("Parse error: {why}"))
            }
            Ok(Some(Frame::TooLarge(len))) => {
                // Not answered: its id is in the unread body, and an answer without it settles
                // no request.
                tracing::warn!("a message from the client was dropped: {}", too_large(len));
                continue;
            }
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("reading the client's input failed: {e}");
                break;
            }
        };
        tracing::warn!(
            "a message from the client was answered with an error: {}",
            answer["error"]["message"]
        );
        let _ = out.send(frame_bytes(answer.to_string().as_bytes()));
    }
    let _ = to_server.shutdown().await;
}

/// The library's output, queued for the client between the guard's answers (its `FramedWrite`
/// hands whole messages to a writer that takes everything, as this one does).
pub struct Outbox(pub mpsc::UnboundedSender<Vec<u8>>);

impl AsyncWrite for Outbox {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(match self.0.send(buf.to_vec()) {
            Ok(()) => Ok(buf.len()),
            Err(_) => Err(io::ErrorKind::BrokenPipe.into()),
        })
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Writes every message sent to `messages` to the client, until every sender is gone.
pub async fn write_out<W: AsyncWrite + Unpin>(
    mut messages: mpsc::UnboundedReceiver<Vec<u8>>,
    mut to_client: W,
) {
    while let Some(mut bytes) = messages.recv().await {
        // The messages already queued go out in the same write.
        while let Ok(more) = messages.try_recv() {
            bytes.extend(more);
        }
        if to_client.write_all(&bytes).await.is_err() || to_client.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn frames(input: &[u8]) -> Vec<Frame> {
        let mut r = BufReader::new(input);
        let mut out = Vec::new();
        while let Some(f) = read_frame(&mut r).await.unwrap() {
            out.push(f);
        }
        out
    }

    #[tokio::test]
    async fn frames_garbage_and_resynchronises() {
        let input = b"Content-Length: 2\r\n\r\n{}garbage line\r\n\r\nContent-Length: 3\r\nContent-Type: application/vscode-jsonrpc; charset=latin1\r\n\r\n[1]Content-Length: x\r\n\r\nContent-Length: 10\r\n\r\n{}";
        let got = frames(input).await;
        assert_eq!(got[0], Frame::Body(b"{}".to_vec()));
        assert!(
            matches!(&got[1], Frame::Garbage(w) if w.contains("not a header")),
            "{got:?}"
        );
        assert_eq!(got[2], Frame::Body(b"[1]".to_vec()));
        assert!(
            matches!(&got[3], Frame::Garbage(w) if w.contains("not a number")),
            "{got:?}"
        );
        assert!(
            matches!(&got[4], Frame::Garbage(w) if w.contains("ended 2 bytes into a 10-byte")),
            "{got:?}"
        );
        assert_eq!(got.len(), 5);
    }

    #[tokio::test]
    async fn a_content_length_header_anywhere_starts_the_next_message() {
        // Five bytes short: the rest of the body runs into the next header.
        let got = frames(b"Content-Length: 5\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}").await;
        assert_eq!(
            got,
            [
                Frame::Body(b"{\"a\":".to_vec()),
                Frame::Body(b"{}".to_vec())
            ]
        );
        // A line of a body where a header was expected (it has a colon, but no header name).
        let got = frames(b"{\"x\": 1}\r\nContent-Length: 2\r\n\r\n{}").await;
        assert_eq!(got, [Frame::Body(b"{}".to_vec())]);
        let got = frames(b"{\"x\": 1}\r\n\r\n").await;
        assert!(
            matches!(&got[..], [Frame::Garbage(w)] if w.contains("not a header")),
            "{got:?}"
        );
    }

    #[tokio::test]
    async fn a_message_over_the_limit_is_skipped_and_the_next_one_is_framed() {
        let len = MAX_MESSAGE_BYTES + 1;
        // The body is made as it is read, so the test holds none of it either.
        let header = format!("Content-Length: {len}\r\n\r\n");
        let input = header
            .as_bytes()
            .chain(tokio::io::repeat(b'x').take(len as u64))
            .chain(&b"Content-Length: 2\r\n\r\n{}"[..]);
        let mut r = BufReader::new(input);
        assert_eq!(
            read_frame(&mut r).await.unwrap(),
            Some(Frame::TooLarge(len))
        );
        assert_eq!(
            read_frame(&mut r).await.unwrap(),
            Some(Frame::Body(b"{}".to_vec()))
        );
        assert_eq!(read_frame(&mut r).await.unwrap(), None);

        // The input ends inside the body being skipped: the end of the input, nothing to answer.
        let input = header.as_bytes().chain(tokio::io::repeat(b'x').take(1000));
        assert_eq!(read_frame(&mut BufReader::new(input)).await.unwrap(), None);
    }

    fn answer(body: &[u8]) -> Value {
        match check_body(body) {
            Checked::Answer(a) => a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bodies_are_checked_as_the_library_reads_them() {
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#,
            r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":null}"#,
        ] {
            let Checked::Pass(bytes) = check_body(ok.as_bytes()) else {
                panic!("{ok}");
            };
            let sent: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(sent, serde_json::from_str::<Value>(ok).unwrap());
        }
        let parse = answer(b"{not json");
        assert_eq!(parse["error"]["code"], -32700);
        assert_eq!(parse["id"], Value::Null);
        let invalid = answer(br#"{"id":7,"method":3}"#);
        assert_eq!(invalid["error"]["code"], -32600);
        assert_eq!(invalid["id"], 7);
        assert_eq!(answer(&[0xff, 0xfe])["error"]["code"], -32700);
        assert_eq!(answer(b"[1, 2]")["id"], Value::Null);
        assert_eq!(answer(b"[1, \"x\", ")["id"], Value::Null);
        assert_eq!(
            answer(br#"{"jsonrpc":"2.0","method":7}"#)["id"],
            Value::Null
        );
    }

    #[test]
    fn the_id_is_read_past_what_cannot_be_decoded() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let not_utf8: &[u8] = b"\"\xff\"";
        for (id, tail) in [("5", deep.as_bytes()), (r#""h1""#, not_utf8)] {
            let body = [
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m","params":{{"p":"#).as_bytes(),
                tail,
                b"}}",
            ]
            .concat();
            let a = answer(&body);
            assert_eq!(a["id"], serde_json::from_str::<Value>(id).unwrap(), "{a}");
        }
        let notification = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{deep}}}"#);
        assert!(matches!(
            check_body(notification.as_bytes()),
            Checked::Ignore(_)
        ));
    }

    #[test]
    fn dollar_requests_are_answered_and_dollar_notifications_pass() {
        let a = answer(br#"{"jsonrpc":"2.0","id":3,"method":"$/setTrace","params":{}}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(3), json!(-32601))
        );
        assert!(matches!(
            check_body(br#"{"jsonrpc":"2.0","method":"$/setTrace","params":{}}"#),
            Checked::Pass(_)
        ));
    }
}
