//! What the strategies share to read a large output on several threads: where the violations go
//! (a [`Sink`]), how many threads, and putting the workers' parts back in order ([`InOrder`]).

use std::collections::BTreeMap;

use super::{Normalizer, Parsed, RawViolation};

/// Below this size a single thread is quicker than starting others.
pub(super) const PARALLEL_MIN_BYTES: usize = 2 << 20;

/// The size of the pieces workers take in turn: small enough that the pieces read but not yet
/// appended in order hold little memory.
pub(super) const PIECE_BYTES: usize = 256 << 10;

/// How many worker threads a large output gets.
pub(super) fn threads() -> usize {
    crate::core::cores().min(8)
}

/// Where the violations of an output go as they are read: the parse's normalizer, or a list in
/// tests.
pub(super) trait Sink: Send {
    /// What one worker hands back for one piece of the output.
    type Part: Send;
    fn push(&mut self, v: RawViolation<'_>);
    /// An empty sink for a worker thread.
    fn sibling(&self) -> Self;
    /// Everything pushed since the last take.
    fn take(&mut self) -> Self::Part;
    fn part_len(part: &Self::Part) -> usize;
    /// Appends a part; when the list must grow, it makes room for `room` more in one step.
    fn append(&mut self, part: Self::Part, room: usize);
}

impl Sink for Normalizer<'_> {
    type Part = Parsed;
    fn push(&mut self, v: RawViolation<'_>) {
        Normalizer::push(self, v);
    }
    fn sibling(&self) -> Self {
        Normalizer::sibling(self)
    }
    fn take(&mut self) -> Parsed {
        Normalizer::take(self)
    }
    fn part_len(part: &Parsed) -> usize {
        part.violations.len()
    }
    fn append(&mut self, part: Parsed, room: usize) {
        if self.len() + part.violations.len() > self.capacity() {
            self.reserve(room.max(part.violations.len()));
        }
        Normalizer::append(self, part);
    }
}

/// Appends the parts numbered 0, 1, 2… to a sink in that order, whatever order the workers
/// finish them in. Parts that arrive early wait here; the sink's list is sized from the rate of
/// violations per byte seen so far instead of growing by doubling (which briefly holds the old
/// and the new list).
pub(super) struct InOrder<P> {
    pending: BTreeMap<usize, (P, usize)>,
    want: usize,
    total_bytes: usize,
    read_bytes: usize,
    found: usize,
}

impl<P> InOrder<P> {
    /// For an output of `total_bytes` bytes.
    pub(super) fn new(total_bytes: usize) -> Self {
        InOrder {
            pending: BTreeMap::new(),
            want: 0,
            total_bytes,
            read_bytes: 0,
            found: 0,
        }
    }

    /// Part `i`, read from `bytes` bytes of the output; appends every part that is now next.
    pub(super) fn receive<S: Sink<Part = P>>(
        &mut self,
        sink: &mut S,
        i: usize,
        part: P,
        bytes: usize,
    ) {
        self.pending.insert(i, (part, bytes));
        while let Some((part, bytes)) = self.pending.remove(&self.want) {
            self.read_bytes += bytes;
            let before = self.found;
            self.found += S::part_len(&part);
            // The whole output at the rate seen so far, plus a sixteenth.
            let expected =
                (self.found as f64 * self.total_bytes as f64 / self.read_bytes.max(1) as f64 * 17.0
                    / 16.0) as usize;
            sink.append(part, expected.saturating_sub(before));
            self.want += 1;
        }
    }

    /// Whether every part received so far has been appended.
    pub(super) fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }
}

/// Cuts `text` into pieces of about `size` bytes, each ending just before a line feed (which is
/// left out), or at the end of the text.
pub(super) fn cut_at_line_feeds(text: &str, size: usize) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(text.len() / size + 1);
    let mut start = 0;
    loop {
        let target = start + size;
        match text.get(target..).and_then(|rest| rest.find('\n')) {
            Some(off) if target < text.len() => {
                pieces.push(&text[start..target + off]);
                start = target + off + 1;
            }
            _ => {
                pieces.push(&text[start..]);
                return pieces;
            }
        }
    }
}
