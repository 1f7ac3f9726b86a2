//! Reading the items array of a large JSON document in pieces, one per thread, when
//! `violations_path` is a list of object keys (or empty: the document is the array).
//!
//! serde_json tells no position inside a visitor, so threads cannot hand work to each other as
//! they go, and handing each item over costs a skip of it (see `json_parallel`). Instead the
//! array is cut beforehand, by guess, at likely item starts ([`cut_guesses`]), and each thread
//! reads one piece with the ordinary streaming reader:
//!
//! - the first piece is the document up to the first cut, read as it is (the text ends there);
//! - every other piece is the text from its cut up to the next cut, or to the end, behind a
//!   stand-in for the way to the array ([`lead`]: `{"key":[`), so it is read inside the same
//!   objects and array at the same depth, and the last piece reads the rest of the document as
//!   one pass would. A worker copies its piece behind that stand-in a chunk at a time
//!   ([`read_in_chunks`]), each chunk cut like a piece.
//!
//! A piece that ends at a cut proves the cut: its reading must run out of input in the items
//! array just after a `,`, before entering an item (`Reader::document` checks this). Anything
//! else (a guess that was wrong, a syntax error, a shape problem) makes the caller read the
//! whole document again in one pass, so results and messages are exactly those of one pass; only
//! well-formed output goes the fast way.

use std::sync::atomic::{AtomicBool, Ordering};

use super::Normalizer;
use super::parallel::Sink;

/// How far past each guessed position the cut is looked for.
const GUESS_WINDOW: usize = 64 << 10;

/// Likely item starts that cut the array at `text` into `pieces` about equal parts (fewer when
/// none is found near a part's start). A guess is the first byte of a line whose line before
/// ends with `,`, at the smallest indentation met near the position: in pretty-printed output,
/// that is an element of the outermost array there. A raw line feed cannot occur inside a JSON
/// string, so a line start is outside strings in valid JSON. Compact one-line JSON gives none.
pub(super) fn cut_guesses(text: &str, pieces: usize) -> Vec<usize> {
    let b = text.as_bytes();
    let mut cuts: Vec<usize> = Vec::new();
    for k in 1..pieces {
        let from = text.len() / pieces * k;
        let to = (from + GUESS_WINDOW).min(b.len());
        let mut best: Option<(usize, usize)> = None;
        let mut at = from;
        while let Some(off) = b[at..to].iter().position(|&c| c == b'\n') {
            let line = at + off + 1;
            at = line;
            let indent = b[line..]
                .iter()
                .take_while(|c| matches!(c, b' ' | b'\t'))
                .count();
            let start = line + indent;
            if best.is_some_and(|(_, i)| i <= indent) || !is_cut(b, start) {
                continue;
            }
            best = Some((start, indent));
        }
        if let Some((start, _)) = best
            && cuts.last().is_none_or(|&last| last < start)
        {
            cuts.push(start);
        }
    }
    cuts
}

/// The first position from `from` (before `limit`, within [`GUESS_WINDOW`]) that starts a line
/// the way the item at `like` does: after a `,`, at the same indentation, with the same first
/// byte. In pretty-printed output, that is the next item of the same array.
fn cut_like(b: &[u8], from: usize, limit: usize, like: usize) -> Option<usize> {
    let indent = b[..like]
        .iter()
        .rev()
        .take_while(|c| matches!(c, b' ' | b'\t'))
        .count();
    if like < indent + 1 || b[like - indent - 1] != b'\n' {
        return None;
    }
    let to = (from + GUESS_WINDOW).min(limit).max(from);
    let mut at = from;
    while let Some(off) = b[at..to].iter().position(|&c| c == b'\n') {
        let line = at + off + 1;
        at = line;
        let start = line + indent;
        if b.get(start) == b.get(like)
            && b[line..start] == b[like - indent..like]
            && start < limit
            && is_cut(b, start)
        {
            return Some(start);
        }
    }
    None
}

/// Whether `at` could start an item after another: a byte that can start a value, with `,` as
/// the last byte before it that is not whitespace. Such a position is a char boundary.
pub(super) fn is_cut(b: &[u8], at: usize) -> bool {
    let starts_value = b
        .get(at)
        .is_some_and(|c| !is_ws(*c) && !matches!(c, b',' | b']' | b'}' | b':'));
    starts_value && b[..at].iter().rev().find(|c| !is_ws(**c)) == Some(&b',')
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// The way to the items array, `{"key":{"key":[`, put before a piece's text so that serde_json
/// reads the piece exactly as it reads that part of the document: inside the same objects and
/// array, at the same depth, with the rest of the document (for the last piece) after it.
pub(super) fn lead(keys: &[&str]) -> String {
    let mut lead = String::new();
    for key in keys {
        lead.push('{');
        lead.push_str(&serde_json::Value::from(*key).to_string());
        lead.push(':');
    }
    lead.push('[');
    lead
}

/// Reads the document in pieces: `read` gets the text up to the first cut on this thread, and
/// the text from each cut (behind `lead`, in chunks of about `chunk` bytes, see
/// [`read_in_chunks`]) up to the next cut or to the end on a worker thread of its own, each with its own normalizer, whether the text ends at a cut, and a flag that is set
/// when a piece failed (to stop the others early). `read` says whether its piece was read and,
/// for one that ends at a cut, that the cut is an item start. When every piece was read, their
/// violations are appended to `norm` in order and the result is `true`; else `false`, and what
/// the first piece pushed is still in `norm` for the caller to drop.
pub(super) fn read_pieces(
    text: &str,
    cuts: &[usize],
    lead: &str,
    chunk: usize,
    norm: &mut Normalizer,
    read: impl Fn(&str, bool, &AtomicBool, &mut Normalizer) -> bool + Sync,
) -> bool {
    let Some(&first) = cuts.first() else {
        return false;
    };
    let failed = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let workers: Vec<_> = cuts
            .iter()
            .enumerate()
            .map(|(i, &start)| {
                let end = cuts.get(i + 1).copied();
                let (failed, read) = (&failed, &read);
                let mut worker = norm.sibling();
                scope.spawn(move || {
                    let piece = Piece {
                        text,
                        start,
                        end,
                        lead,
                        chunk,
                    };
                    let ok = read_in_chunks(&piece, failed, read, &mut worker);
                    if !ok {
                        failed.store(true, Ordering::Relaxed);
                    }
                    (ok, Sink::take(&mut worker))
                })
            })
            .collect();
        let mut ok = read(&text[..first], true, &failed, norm);
        if !ok {
            failed.store(true, Ordering::Relaxed);
        }
        let mut parts = Vec::with_capacity(workers.len());
        for worker in workers {
            // A worker that panicked carries its panic on, as a one-pass parse would have.
            let (read, part) = worker
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            ok &= read;
            parts.push(part);
        }
        if ok {
            // Room for all at once: the list grows once instead of once a piece.
            let room = parts.iter().map(|p| p.violations.len()).sum();
            for part in parts {
                Sink::append(norm, part, room);
            }
        }
        ok
    })
}

/// One piece of the document for a worker.
struct Piece<'t> {
    text: &'t str,
    /// Where the piece starts (a cut), and where it ends: the next cut, or the end of the text.
    start: usize,
    end: Option<usize>,
    lead: &'t str,
    chunk: usize,
}

/// Reads a piece copied behind its lead a chunk at a time: each chunk but the last ends at the
/// next item start like the piece's first ([`cut_like`]), about `chunk` bytes on, which reading
/// the chunk proves as it proves a piece's cut. One small buffer serves every chunk, so the copy
/// stays in the cache and takes no fresh memory (a copy of the whole piece cost page faults
/// worth about a tenth of reading it).
fn read_in_chunks(
    piece: &Piece,
    failed: &AtomicBool,
    read: &impl Fn(&str, bool, &AtomicBool, &mut Normalizer) -> bool,
    norm: &mut Normalizer,
) -> bool {
    let b = piece.text.as_bytes();
    let stop = piece.end.unwrap_or(b.len());
    let mut buf = String::new();
    let mut from = piece.start;
    loop {
        let next = (stop - from > 2 * piece.chunk)
            .then(|| cut_like(b, from + piece.chunk, stop, piece.start))
            .flatten();
        buf.clear();
        buf.push_str(piece.lead);
        buf.push_str(&piece.text[from..next.unwrap_or(stop)]);
        if !read(&buf, next.is_some() || piece.end.is_some(), failed, norm) {
            return false;
        }
        match next {
            Some(next) => from = next,
            None => return true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_fall_on_the_outermost_items() {
        let items: Vec<String> = (0..400)
            .map(|i| format!("  {{\n    \"a\": [\n      {i},\n      {{\"x\": 1}}\n    ]\n  }}"))
            .collect();
        let text = format!("[\n{}\n]\n", items.join(",\n"));
        let cuts = cut_guesses(&text, 3);
        assert_eq!(cuts.len(), 2);
        for cut in cuts {
            assert!(text[..cut].ends_with("},\n  "), "{cut}");
            assert!(is_cut(text.as_bytes(), cut));
        }
        assert!(cut_guesses(&text.replace('\n', ""), 2).is_empty());
    }

    #[test]
    fn chunks_end_at_items_like_the_first() {
        let text = "[\n  {\n    \"a\": [\n      {},\n      {}\n    ]\n  },\n  {\n    \"b\": 1\n  },\n  {}\n]";
        let b = text.as_bytes();
        let first = text.find("{\n    \"b\"").expect("the second item");
        let third = text.rfind("{}").expect("the third item");
        // Past the second item, the first line like it is the third item.
        assert_eq!(cut_like(b, first + 1, b.len(), first), Some(third));
        assert_eq!(cut_like(b, first + 1, third, first), None);
        // Before it, the `{}` lines inside the first item are indented deeper.
        assert_eq!(cut_like(b, 0, b.len(), first), Some(first));
        // An item that does not start a line gives no chunks.
        assert_eq!(cut_like(b"[1,2,3]", 0, 7, 3), None);
    }
}
