//! Reading a stream in pieces cut at line feeds, so a text gate's large output is never held
//! whole: each piece ends just before a line feed (which is left out, as
//! [`cut_at_line_feeds`](super::parallel::cut_at_line_feeds) leaves it out), and the text after
//! the last line feed (empty when the stream ends with one) is the last piece.

use std::io::{self, Read};

/// Hands out the pieces of one stream in order, numbered from 0.
pub(super) struct LineFeedReader<R> {
    reader: R,
    /// About how many bytes a piece holds; a longer line makes a longer piece.
    size: usize,
    /// What followed the last piece's line feed: the start of the next piece.
    carry: Vec<u8>,
    next: usize,
    done: bool,
    error: Option<io::Error>,
}

impl<R: Read> LineFeedReader<R> {
    pub(super) fn new(reader: R, size: usize) -> Self {
        LineFeedReader {
            reader,
            size: size.max(1),
            carry: Vec::new(),
            next: 0,
            done: false,
            error: None,
        }
    }

    /// The next piece and its number, or `None` once the stream has ended or failed (see
    /// [`LineFeedReader::into_error`]).
    pub(super) fn next_piece(&mut self) -> Option<(usize, Vec<u8>)> {
        if self.done {
            return None;
        }
        // A piece of its own for every read, not one buffer reused: workers parse the pieces
        // while this reads the next ones.
        let mut piece = Vec::with_capacity(self.size + self.carry.len());
        piece.append(&mut self.carry);
        // Where the search for a line feed resumes: the carried text has none.
        let mut searched = piece.len();
        loop {
            // Up to a piece's size; past it (a line longer than a piece), a quarter more at a time.
            let want = self
                .size
                .saturating_sub(piece.len())
                .max(self.size / 4)
                .max(1);
            let read = match Read::take(&mut self.reader, want as u64).read_to_end(&mut piece) {
                Ok(read) => read,
                Err(e) => {
                    self.error = Some(e);
                    self.done = true;
                    return None;
                }
            };
            if read < want {
                // The stream has ended: the rest is the last piece.
                self.done = true;
                return Some(self.number(piece));
            }
            if piece.len() >= self.size
                && let Some(lf) = piece[searched..].iter().rposition(|&b| b == b'\n')
            {
                let lf = searched + lf;
                self.carry.extend_from_slice(&piece[lf + 1..]);
                piece.truncate(lf);
                return Some(self.number(piece));
            }
            searched = piece.len();
        }
    }

    fn number(&mut self, piece: Vec<u8>) -> (usize, Vec<u8>) {
        self.next += 1;
        (self.next - 1, piece)
    }

    /// The error that ended the reading, if one did.
    pub(super) fn into_error(self) -> Option<io::Error> {
        self.error
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::parse::parallel::cut_at_line_feeds;

    fn pieces(bytes: &[u8], size: usize) -> Vec<Vec<u8>> {
        let mut reader = LineFeedReader::new(bytes, size);
        let mut out = Vec::new();
        while let Some((i, piece)) = reader.next_piece() {
            assert_eq!(i, out.len(), "pieces are numbered in order");
            out.push(piece);
        }
        assert!(reader.into_error().is_none());
        out
    }

    #[test]
    fn pieces_are_the_lines_between_line_feeds_joined_again() {
        let text = "a\n\nbb\nccc\nlast without a line feed".repeat(50);
        for size in [1, 2, 3, 7, 64, 1 << 20] {
            for text in [text.as_str(), "", "\n", "x", "x\n", "\n\nx\n"] {
                let got = pieces(text.as_bytes(), size);
                let joined = got.join(&b'\n');
                assert_eq!(joined, text.as_bytes(), "size {size}, {text:?}");
                assert!(got.len() <= text.matches('\n').count() + 1, "size {size}");
            }
        }
    }

    #[test]
    fn a_large_size_gives_the_in_memory_cut() {
        let text: String = (0..5_000)
            .map(|i| format!("line {i} {}\n", "é".repeat(i % 13)))
            .collect();
        let want: Vec<&[u8]> = cut_at_line_feeds(&text, 4096)
            .into_iter()
            .map(str::as_bytes)
            .collect();
        let got = pieces(text.as_bytes(), 4096);
        // The cuts may fall elsewhere; the lines and their order are the same.
        assert_eq!(got.join(&b'\n'), want.join(&b'\n'));
        assert!(got.len() > 10);
    }
}
