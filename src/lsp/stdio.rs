//! The server's standard input and output, read and written on the runtime's own event loop.
//!
//! tokio's `stdin()`/`stdout()` do every read and write on a thread of the blocking pool and
//! wake the task when it is done: two thread hand-offs per message in, two per answer out, each
//! a wake-up of an idle core (tens to hundreds of microseconds on a virtual machine), on the
//! path from a save to its diagnostics. Editors connect a language server through pipes or
//! socket pairs, which the kernel can poll; those are switched to non-blocking mode and served
//! by the reactor directly. Anything else (a terminal, a file, `/dev/null`) keeps tokio's
//! streams. The descriptors' original flags are restored when the streams are dropped, so a
//! pipe shared with another process is left as it was found.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

pub type Input = Pin<Box<dyn AsyncRead + Send>>;
pub type Output = Pin<Box<dyn AsyncWrite + Send>>;

/// Standard input and output as async streams (call inside the runtime).
pub fn streams() -> (Input, Output) {
    let input: Input = match Polled::new(io::stdin().as_fd(), Interest::READABLE) {
        Some(p) => Box::pin(p),
        None => Box::pin(tokio::io::stdin()),
    };
    let output: Output = match Polled::new(io::stdout().as_fd(), Interest::WRITABLE) {
        Some(p) => Box::pin(p),
        None => Box::pin(tokio::io::stdout()),
    };
    (input, output)
}

/// A pipe or socket in non-blocking mode, registered with the reactor.
struct Polled {
    fd: AsyncFd<File>,
    /// The file status flags it had, restored on drop.
    flags: libc::c_int,
}

impl Polled {
    /// `None` when the descriptor is not a pipe or socket, or cannot be made non-blocking or
    /// registered: the caller falls back to the blocking pool.
    fn new(fd: BorrowedFd<'_>, interest: Interest) -> Option<Polled> {
        use std::os::unix::fs::FileTypeExt;
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let kind = file.metadata().ok()?.file_type();
        if !(kind.is_fifo() || kind.is_socket()) {
            return None;
        }
        let raw = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own a duplicate of; F_GETFL/F_SETFL only read and
        // set its status flags.
        let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
        if flags < 0 {
            return None;
        }
        // SAFETY: as above.
        if unsafe { libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return None;
        }
        // SAFETY: the `File` owns its descriptor, which stays open and the same for as long as
        // the `AsyncFd` holds it.
        match unsafe { AsyncFd::register_with_interest(file, interest) } {
            Ok(fd) => Some(Polled { fd, flags }),
            Err(e) => {
                tracing::debug!("standard streams stay on the blocking pool: {e}");
                // SAFETY: as above; the descriptor is still open (dropped after this).
                unsafe { libc::fcntl(raw, libc::F_SETFL, flags) };
                None
            }
        }
    }
}

impl Drop for Polled {
    fn drop(&mut self) {
        // SAFETY: restores the status flags read in `new` on the descriptor we still own.
        unsafe { libc::fcntl(self.fd.get_ref().as_raw_fd(), libc::F_SETFL, self.flags) };
    }
}

impl AsyncRead for Polled {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match guard.try_io(|f| {
                let mut file: &File = f.get_ref();
                file.read(unfilled)
            }) {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                // Not ready after all: readiness was cleared, poll again.
                Err(_would_block) => {}
            }
        }
    }
}

impl AsyncWrite for Polled {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            match guard.try_io(|f| {
                let mut file: &File = f.get_ref();
                file.write(buf)
            }) {
                Ok(r) => return Poll::Ready(r),
                Err(_would_block) => {}
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Written straight to the descriptor: nothing is buffered here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A pipe is served by the reactor, in both directions, and gets its flags back.
    #[tokio::test]
    async fn a_pipe_is_polled_and_restored() {
        let (r, w) = std::io::pipe().unwrap();
        let (r, w) = (std::os::fd::OwnedFd::from(r), std::os::fd::OwnedFd::from(w));
        // SAFETY: F_GETFL only reads the flags of a descriptor the test owns.
        let flags =
            |fd: &std::os::fd::OwnedFd| unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        let (r_before, w_before) = (flags(&r), flags(&w));
        {
            let mut reader =
                Polled::new(r.as_fd(), Interest::READABLE).expect("a pipe can be polled");
            let mut writer =
                Polled::new(w.as_fd(), Interest::WRITABLE).expect("a pipe can be polled");
            assert_ne!(flags(&r) & libc::O_NONBLOCK, 0);
            // More than a pipe holds: the writer must wait for the reader, not fail.
            let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
            let sent = data.clone();
            let write = tokio::spawn(async move {
                writer.write_all(&sent).await.unwrap();
            });
            let mut got = vec![0; data.len()];
            reader.read_exact(&mut got).await.unwrap();
            write.await.unwrap();
            assert_eq!(got, data);
        }
        assert_eq!(flags(&r), r_before);
        assert_eq!(flags(&w), w_before);
    }

    #[test]
    fn a_regular_file_is_left_to_the_blocking_pool() {
        let f = tempfile::tempfile().unwrap();
        assert!(Polled::new(f.as_fd(), Interest::READABLE).is_none());
    }
}
