//! Reading the items of a large JSON document, or large JSON Lines, on worker threads.
//!
//! The thread that streams the document still walks it whole (so every syntax error and shape
//! problem is found exactly as in one pass), but at the end of `violations_path` it only skips
//! each item, noting where its text lies, and hands the items to workers in batches. The workers
//! parse the wanted keys of each item and normalize the violation, which is most of the cost;
//! their parts are appended in document order (see [`InOrder`]), so the result equals that of one
//! pass.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Mutex, PoisonError};

use super::item_slots::{ItemPlan, Slots};
use super::parallel::{InOrder, PIECE_BYTES, Sink, cut_at_line_feeds};
use super::{Normalizer, ParseError, Parsed};

/// One batch of items: its number and the byte ranges of its items in the document.
type Job = (usize, Vec<(usize, usize)>);
/// What a worker hands back: the batch's number, its violations (or the error of an item), and
/// how many bytes of the document it covered.
type Done = (usize, Result<Parsed, serde_json::Error>, usize);

/// The streaming thread's end of the pool: collects items into batches, sends them, and appends
/// the workers' results in order.
pub(super) struct Feeder {
    /// Where the document starts in memory, to turn an item's text into a range of it.
    base: usize,
    len: usize,
    batch: Vec<(usize, usize)>,
    batch_bytes: usize,
    sent: usize,
    received: usize,
    work: Option<SyncSender<Job>>,
    done: Receiver<Done>,
    in_order: InOrder<Parsed>,
    error: Option<serde_json::Error>,
}

impl Feeder {
    /// Takes an item, a slice of the document; `false` (and nothing taken) for text that is not
    /// one, which the streaming reader never produces.
    pub(super) fn push(&mut self, item: &str, norm: &mut Normalizer) -> bool {
        let Some(start) = (item.as_ptr() as usize)
            .checked_sub(self.base)
            .filter(|start| start + item.len() <= self.len)
        else {
            return false;
        };
        self.batch.push((start, start + item.len()));
        self.batch_bytes += item.len();
        if self.batch_bytes >= PIECE_BYTES {
            self.send(norm);
        }
        true
    }

    /// Sends the current batch, appending whatever results are ready meanwhile.
    fn send(&mut self, norm: &mut Normalizer) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        if let Some(work) = &self.work {
            // Blocks while the workers are a few batches behind, which bounds the memory held.
            if work.send((self.sent, batch)).is_ok() {
                self.sent += 1;
            }
        }
        while let Ok(done) = self.done.try_recv() {
            self.receive(done, norm);
        }
    }

    fn receive(&mut self, (i, result, bytes): Done, norm: &mut Normalizer) {
        self.received += 1;
        match result {
            Ok(part) => self.in_order.receive(norm, i, part, bytes),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    /// Sends what is collected and waits until every violation sent so far is in `norm`, so the
    /// caller may push one of its own and keep the document's order.
    pub(super) fn settle(&mut self, norm: &mut Normalizer) {
        self.send(norm);
        while self.received < self.sent {
            match self.done.recv() {
                Ok(done) => self.receive(done, norm),
                // Every worker is gone (one panicked); the scope carries the panic on.
                Err(_) => break,
            }
        }
    }

    /// Settles and lets the workers stop.
    pub(super) fn finish(mut self, norm: &mut Normalizer) -> Result<(), serde_json::Error> {
        self.settle(norm);
        self.work = None;
        match self.error {
            Some(e) => Err(e),
            None => {
                debug_assert!(self.in_order.is_idle());
                Ok(())
            }
        }
    }
}

/// Runs `stream` with a pool of `threads` workers reading the items of `text` that it hands to
/// the feeder; returns what `stream` returned, or the first error of an item.
/// `push` turns one item, read into slots by `plan`, into a violation.
pub(super) fn with_pool<'t, R>(
    plan: &ItemPlan,
    text: &'t str,
    norm: &mut Normalizer,
    threads: usize,
    stream: impl FnOnce(&mut Feeder, &mut Normalizer) -> R,
    push: impl Fn(&Slots<'t>, &mut Normalizer) + Sync,
) -> (R, Result<(), serde_json::Error>) {
    let (work_tx, work_rx) = mpsc::sync_channel::<Job>(threads * 2);
    let (done_tx, done_rx) = mpsc::channel::<Done>();
    let work_rx = Mutex::new(work_rx);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (work_rx, done_tx, push) = (&work_rx, done_tx.clone(), &push);
            let mut worker = norm.sibling();
            scope.spawn(move || {
                loop {
                    let job = work_rx
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .recv();
                    let Ok((i, items)) = job else { break };
                    let done = read_batch(plan, text, &items, &mut worker, push);
                    if done_tx.send((i, done.0, done.1)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        let mut feeder = Feeder {
            base: text.as_ptr() as usize,
            len: text.len(),
            batch: Vec::new(),
            batch_bytes: 0,
            sent: 0,
            received: 0,
            work: Some(work_tx),
            done: done_rx,
            in_order: InOrder::new(text.len()),
            error: None,
        };
        let streamed = stream(&mut feeder, norm);
        // Also after an error, so that no worker is left waiting for work.
        let finished = feeder.finish(norm);
        (streamed, finished)
    })
}

/// Parses and normalizes one batch of items; returns the violations and the bytes covered.
fn read_batch<'t>(
    plan: &ItemPlan,
    text: &'t str,
    items: &[(usize, usize)],
    norm: &mut Normalizer,
    push: &impl Fn(&Slots<'t>, &mut Normalizer),
) -> (Result<Parsed, serde_json::Error>, usize) {
    let mut bytes = 0;
    let mut slots = plan.slots();
    for &(start, end) in items {
        bytes += end - start;
        match plan.read(&text[start..end], &mut slots) {
            Ok(true) => {}
            Ok(false) => push(&slots, norm),
            Err(e) => {
                norm.take();
                return (Err(e), bytes);
            }
        }
    }
    (Ok(Sink::take(norm)), bytes)
}

/// Reads JSON Lines on `threads` workers: the text is cut just before line feeds into pieces,
/// `read` reads one piece (given the number of lines of the output before it) into a worker's
/// normalizer, and the pieces' violations are appended in order. The error returned is the one
/// of the earliest piece, as one pass would have stopped there.
pub(super) fn lines<F>(
    text: &str,
    line_base: usize,
    threads: usize,
    norm: &mut Normalizer,
    read: F,
) -> Result<(), ParseError>
where
    F: Fn(&str, usize, &mut Normalizer) -> Result<(), ParseError> + Sync,
{
    let pieces = cut_at_line_feeds(text, PIECE_BYTES);
    // The line number before each piece: the cut line feeds count too.
    let mut firsts = Vec::with_capacity(pieces.len());
    let mut before = line_base;
    for piece in &pieces {
        firsts.push(before);
        before += piece.bytes().filter(|&b| b == b'\n').count() + 1;
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Result<Parsed, ParseError>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (tx, next, pieces, firsts, read) = (tx.clone(), &next, &pieces, &firsts, &read);
            let mut worker = norm.sibling();
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(piece) = pieces.get(i) else { break };
                    let part = match read(piece, firsts[i], &mut worker) {
                        Ok(()) => Ok(Sink::take(&mut worker)),
                        Err(e) => {
                            worker.take();
                            // Later pieces cannot matter: one pass would have stopped here.
                            next.fetch_max(pieces.len(), Ordering::Relaxed);
                            Err(e)
                        }
                    };
                    if tx.send((i, part)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut in_order = InOrder::new(text.len());
        let mut first_error: Option<(usize, ParseError)> = None;
        for (i, part) in rx {
            match part {
                Ok(part) => in_order.receive(norm, i, part, pieces[i].len() + 1),
                Err(e) => {
                    if first_error.as_ref().is_none_or(|(at, _)| i < *at) {
                        first_error = Some((i, e));
                    }
                }
            }
        }
        match first_error {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    })
}
