//! How far the server is with the client's input, so a run of opened files can start as soon as
//! the batch that brought them has been read and handled, instead of after a fixed quiet time.
//!
//! An editor restoring its tabs writes all its `didOpen` messages at once. The guard applies each
//! open itself before it reads the next message (see `text_sync`), and notes when it has read
//! everything the client had written (a read came back shorter than asked: the pipe was empty).
//! An open it passes on to the protocol library instead (outside `initialize`..`shutdown`) is
//! counted, and counted again when the library's handler has handed it to a scheduler. When both
//! counts agree and the input is drained, no open of that batch is still on its way. A client
//! that writes more afterwards (a pipe that was momentarily empty mid-write) only cancels the
//! run, whose files go into the next one: nothing is dropped.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::Notify;

#[derive(Debug, Default)]
pub struct InputActivity {
    opens_read: AtomicU64,
    opens_handled: AtomicU64,
    /// The last read of the client's stream came back shorter than asked and the guard has
    /// passed on all of it.
    drained: AtomicBool,
    changed: Notify,
}

impl InputActivity {
    /// The guard passes on a `didOpen`.
    pub fn open_read(&self) {
        self.opens_read.fetch_add(1, Ordering::SeqCst);
    }

    /// An open has handed its file to a scheduler (or had nothing to hand over).
    pub fn open_handled(&self) {
        self.opens_handled.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// The guard has passed on everything it read; `drained` says whether that read emptied
    /// the client's stream.
    pub fn set_drained(&self, drained: bool) {
        if self.drained.swap(drained, Ordering::SeqCst) != drained && drained {
            self.changed.notify_waiters();
        }
    }

    /// Every open the client has written so far has reached a scheduler.
    pub fn opens_settled(&self) -> bool {
        self.drained.load(Ordering::SeqCst)
            && self.opens_handled.load(Ordering::SeqCst) == self.opens_read.load(Ordering::SeqCst)
    }

    /// Completes on the next change of the counts or of `drained` (see `Notify::notified`:
    /// enable it before checking `opens_settled`, so no change is missed).
    pub fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }
}

/// A reader that notes whether its last read filled all the room it was given: a shorter read
/// of a pipe took everything that was in it.
pub struct ShortReads<R> {
    inner: R,
    short: Arc<AtomicBool>,
}

impl<R> ShortReads<R> {
    pub fn new(inner: R) -> (ShortReads<R>, Arc<AtomicBool>) {
        let short = Arc::new(AtomicBool::new(false));
        (
            ShortReads {
                inner,
                short: short.clone(),
            },
            short,
        )
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for ShortReads<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let room = buf.remaining();
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let got = buf.filled().len() - before;
            self.short.store(got < room, Ordering::SeqCst);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_read_that_empties_the_stream_is_short() {
        let (mut client, server) = tokio::io::duplex(1 << 10);
        let (mut reader, short) = ShortReads::new(server);
        client.write_all(&[1; 100]).await.unwrap();
        let mut buf = [0; 50];
        reader.read_exact(&mut buf).await.unwrap();
        assert!(
            !short.load(Ordering::SeqCst),
            "50 of 100 bytes: more were there"
        );
        let mut buf = [0; 200];
        let n = reader.read(&mut buf).await.unwrap();
        assert_eq!(n, 50);
        assert!(short.load(Ordering::SeqCst), "the rest, and nothing more");
    }

    #[test]
    fn opens_are_settled_when_all_read_ones_were_handled_and_the_input_is_drained() {
        let a = InputActivity::default();
        assert!(!a.opens_settled(), "nothing read yet");
        a.set_drained(true);
        assert!(a.opens_settled());
        a.open_read();
        a.open_read();
        a.open_handled();
        assert!(!a.opens_settled(), "one open still on its way");
        a.open_handled();
        assert!(a.opens_settled());
        a.set_drained(false);
        assert!(!a.opens_settled(), "more input is being read");
    }
}
