//! A guard between the client's bytes and the protocol library.
//!
//! tower-lsp-server reads its input through tokio-util's `FramedRead`, which ends the stream at
//! the first message it cannot decode: one malformed message (bad JSON, a missing
//! `Content-Length`, a body that is not JSON-RPC) would leave the server deaf to everything after
//! it. So the client's bytes are framed here first: every well-formed message is passed on as
//! it came, and anything else is answered with the JSON-RPC error a server owes it (`-32700 Parse
//! error`, or `-32600 Invalid Request` with the message's id when one can be read), logged, and
//! dropped. Answers are put between the library's own messages on the way out, never inside one.

use std::borrow::Cow;
use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Id, Request, Response};

use super::input::{InputActivity, ShortReads};
use super::text_sync::Kind;

/// A header line longer than this is not a header: the rest of the block is skipped.
const MAX_HEADER_LINE: usize = 8 << 10;

/// One unit read off a stream.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// A message body, as its `Content-Length` said.
    Body(Vec<u8>),
    /// Bytes that were not a message; says what was wrong.
    Garbage(String),
}

/// Reads the next frame; `None` at the end of the stream.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> io::Result<Option<Frame>> {
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
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !saw_any {
                // Blank lines between messages are tolerated.
                continue;
            }
            break;
        }
        saw_any = true;
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                length = Some(
                    value
                        .trim()
                        .parse::<usize>()
                        .map_err(|_| format!("Content-Length `{}` is not a number", value.trim())),
                );
            }
            Some(_) => {} // Content-Type and the like: the body is read as UTF-8 JSON regardless.
            None => {
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

/// A request or notification as the library's `Request` reads one, without building its
/// parameters (a `didOpen` carries the whole file): what this accepts, `Request` accepts.
#[derive(Deserialize)]
struct RequestShape<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(default, borrow)]
    method: Cow<'a, str>,
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "read to check it is JSON, as the library reads it"
    )]
    params: Option<IgnoredAny>,
    #[serde(default)]
    id: Option<Id>,
}

/// The error answer a malformed body is owed, or `None` when the library can take it.
#[cfg(test)]
fn check_body(body: &[u8]) -> Option<Value> {
    inspect(body).err()
}

/// Whether the library can take a body (and whether it is a text-synchronization
/// notification), or the error answer it is owed.
fn inspect(body: &[u8]) -> Result<Option<Kind>, Value> {
    if let Ok(shape) = serde_json::from_slice::<RequestShape>(body)
        && shape.jsonrpc == "2.0"
    {
        // A request (with an id) of the same name is not the notification.
        return Ok(if shape.id.is_none() {
            Kind::of(&shape.method)
        } else {
            None
        });
    }
    if serde_json::from_slice::<Request>(body).is_ok()
        || serde_json::from_slice::<Response>(body).is_ok()
    {
        return Ok(None);
    }
    Err(match serde_json::from_slice::<Value>(body) {
        Err(e) => error_answer(Value::Null, -32700, format!("Parse error: {e}")),
        Ok(v) => {
            let id = match v.get("id") {
                Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
                _ => Value::Null,
            };
            error_answer(
                id,
                -32600,
                "Invalid Request: not a JSON-RPC 2.0 request, notification or response".into(),
            )
        }
    })
}

fn error_answer(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id})
}

fn frame_bytes(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Copies the client's well-formed messages to `to_server`; answers the rest through `answers`.
/// A text-synchronization notification goes to `take` first, which applies it or declines it
/// (see `text_sync`); a declined one is passed on. Ends when the client's input ends (closing
/// `to_server`, which ends the server). Counts the opens it passes on, and says when it has
/// read and passed on or applied everything the client wrote (`input`).
pub async fn guard_input<R, W, T>(
    from_client: R,
    mut to_server: W,
    answers: mpsc::UnboundedSender<Vec<u8>>,
    activity: Arc<InputActivity>,
    take: T,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    T: Fn(Kind, &[u8]) -> bool,
{
    let (from_client, short) = ShortReads::new(from_client);
    let mut reader = BufReader::with_capacity(64 << 10, from_client);
    loop {
        // Everything read so far has been passed on: drained if that read emptied the stream.
        activity.set_drained(reader.buffer().is_empty() && short.load(Ordering::SeqCst));
        let frame = match read_frame(&mut reader).await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("reading the client's input failed: {e}");
                break;
            }
        };
        match frame {
            Frame::Body(body) => match inspect(&body) {
                Ok(kind) => {
                    // Applied here before the next message is read: nothing to count.
                    if kind.is_some_and(|kind| take(kind, &body)) {
                        continue;
                    }
                    if kind == Some(Kind::Open) {
                        activity.open_read();
                    }
                    if to_server.write_all(&frame_bytes(&body)).await.is_err() {
                        break;
                    }
                }
                Err(answer) => {
                    tracing::warn!(
                        "a malformed message from the client was dropped: {}",
                        answer["error"]["message"]
                    );
                    let _ = answers.send(answer.to_string().into_bytes());
                }
            },
            Frame::Garbage(why) => {
                tracing::warn!("bytes from the client that are not a message were skipped: {why}");
                let answer = error_answer(Value::Null, -32700, format!("Parse error: {why}"));
                let _ = answers.send(answer.to_string().into_bytes());
            }
        }
    }
    let _ = to_server.shutdown().await;
}

/// Copies the server's messages to the client, whole, with the messages sent past the library
/// (`direct`: the guard's answers, published diagnostics) between them. A direct message goes
/// before any of the library's read after it was sent: a command's answer never overtakes the
/// diagnostics published before it.
pub async fn merge_output<R, W>(
    from_server: R,
    mut to_client: W,
    mut direct: mpsc::UnboundedReceiver<Vec<u8>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(64 << 10, from_server);
    let mut direct_open = true;
    loop {
        let mut bytes = tokio::select! {
            biased;
            body = direct.recv(), if direct_open => match body {
                Some(body) => frame_bytes(&body),
                None => {
                    direct_open = false;
                    continue;
                }
            },
            frame = read_frame(&mut reader) => match frame {
                Ok(Some(Frame::Body(body))) => frame_bytes(&body),
                // The library writes well-formed frames; anything else would be our bug.
                Ok(Some(Frame::Garbage(why))) => {
                    tracing::error!("the server wrote a malformed frame: {why}");
                    continue;
                }
                Ok(None) | Err(_) => break,
            },
        };
        // Whole messages already there go out in the same write: a run's 200 publications cost a
        // few writes to the client, not 200 (each a hand-off to the runtime's blocking pool).
        while bytes.len() < MAX_BATCH {
            if let Ok(body) = direct.try_recv() {
                bytes.extend(frame_bytes(&body));
                continue;
            }
            if !holds_a_frame(reader.buffer()) {
                break;
            }
            match read_frame(&mut reader).await {
                Ok(Some(Frame::Body(body))) => bytes.extend(frame_bytes(&body)),
                Ok(Some(Frame::Garbage(why))) => {
                    tracing::error!("the server wrote a malformed frame: {why}");
                }
                Ok(None) | Err(_) => break,
            }
        }
        if to_client.write_all(&bytes).await.is_err() || to_client.flush().await.is_err() {
            break;
        }
    }
}

/// The most bytes `merge_output` gathers into one write (the client's pipe holds 64 KiB).
const MAX_BATCH: usize = 128 << 10;

/// Whether `buf` starts with a whole frame as the library writes them (`Content-Length` header,
/// blank line, body), so reading it cannot wait for more input.
fn holds_a_frame(buf: &[u8]) -> bool {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let Ok(headers) = std::str::from_utf8(&buf[..end]) else {
        return false;
    };
    headers
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())
                .flatten()
        })
        .is_some_and(|len| buf.len() >= end + 4 + len)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_whole_frame_is_told_from_a_partial_one() {
        assert!(holds_a_frame(b"Content-Length: 2\r\n\r\n{}"));
        assert!(holds_a_frame(b"Content-Length: 2\r\n\r\n{}Content-Le"));
        assert!(!holds_a_frame(b"Content-Length: 3\r\n\r\n{}"));
        assert!(!holds_a_frame(b"Content-Length: 2\r\n"));
        assert!(!holds_a_frame(b""));
    }

    #[tokio::test]
    async fn messages_read_together_are_written_together_and_whole() {
        let (mut server, from_server) = tokio::io::duplex(1 << 16);
        let (to_client, mut client) = tokio::io::duplex(1 << 20);
        let (answers_tx, answers_rx) = mpsc::unbounded_channel();
        let merge = tokio::spawn(merge_output(from_server, to_client, answers_rx));
        let mut sent = Vec::new();
        for i in 0..50 {
            sent.extend(frame_bytes(
                format!(r#"{{"jsonrpc":"2.0","id":{i},"result":null}}"#).as_bytes(),
            ));
        }
        server.write_all(&sent).await.unwrap();
        drop(server);
        drop(answers_tx);
        merge.await.unwrap();
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, sent);
    }

    #[test]
    fn bodies_are_checked_as_the_library_reads_them() {
        assert_eq!(
            check_body(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#),
            None
        );
        assert_eq!(
            check_body(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#),
            None
        );
        assert_eq!(
            check_body(br#"{"jsonrpc":"2.0","id":0,"result":null}"#),
            None
        );
        let parse = check_body(b"{not json").unwrap();
        assert_eq!(parse["error"]["code"], -32700);
        assert_eq!(parse["id"], Value::Null);
        let invalid = check_body(br#"{"id":7,"method":3}"#).unwrap();
        assert_eq!(invalid["error"]["code"], -32600);
        assert_eq!(invalid["id"], 7);
        assert_eq!(check_body(&[0xff, 0xfe]).unwrap()["error"]["code"], -32700);
        // The quick check that skips the parameters agrees with the library's own reading.
        for body in [
            &br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"text":"x = \"\u00e9\"\n"}}}"#[..],
            br#"{"jsonrpc":"2.0","method":"a","params":null,"id":null}"#,
            br#"{"jsonrpc":"2.0","method":"a","params":[1,{"b":[]}],"id":"x","extra":1}"#,
            br#"{"jsonrpc":"1.0","method":"a"}"#,
            br#"{"jsonrpc":"2.0","method":"a","params":{"unclosed":[}}"#,
            br#"{"jsonrpc":"2.0","method":7}"#,
            br#"{"jsonrpc":"2.0","method":"a","id":1.5}"#,
        ] {
            let library = serde_json::from_slice::<Request>(body).is_ok()
                || serde_json::from_slice::<Response>(body).is_ok();
            assert_eq!(
                check_body(body).is_none(),
                library,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
