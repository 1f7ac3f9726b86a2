//! A quicker way to run a text gate's pattern when every match starts at a line start and stays
//! on its line (mypy's, pyright's and most linters' `file:line:col: message` patterns): one
//! anchored search per line instead of a search for the next match anywhere, and, on lines of
//! pure ASCII, a copy of the pattern whose classes are cut down to ASCII.
//!
//! Both give exactly the matches and groups of the pattern itself:
//!
//! - When every match begins where `^` (or `\A`) holds and none contains a line feed, the match
//!   found from any position is the one anchored at the next line start where the pattern
//!   matches, and it ends on that line; so trying each line start in turn finds the same matches.
//!   The searches run over the whole text, limited to the line, so `^`, `$`, `\b` and `\A` see
//!   the same neighbours as in one pass.
//! - On a line of pure ASCII, a class can only ever match its ASCII members and a literal with a
//!   non-ASCII byte never matches, so the ASCII twin (same structure, same groups, same
//!   assertions) matches exactly as the pattern does. Its automaton is far smaller than the
//!   Unicode one (`\w` alone is hundreds of states), which is what makes the capture search
//!   cheaper.

use std::ops::Range;

use regex_automata::meta::{self, Regex};
use regex_automata::util::captures::Captures;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, PatternID};
use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
    Literal, Look, Repetition,
};

/// Below this many bytes of output the pattern is run as it is: compiling the two automata
/// costs about as much as reading a few hundred lines.
pub(super) const MIN_BYTES: usize = 64 << 10;

pub(super) struct LinePattern {
    full: Regex,
    /// `None` when the pattern has no class or literal that ASCII would cut down.
    ascii: Option<Regex>,
}

/// One thread's search state.
pub(super) struct LineSearch {
    full: meta::Cache,
    ascii: Option<meta::Cache>,
    caps: Captures,
}

impl LinePattern {
    /// `None` when the pattern does not qualify (a match may start inside a line, or cross one)
    /// or does not compile here; the caller then runs the pattern as it is.
    pub(super) fn new(pattern: &str, line_local: bool) -> Option<Self> {
        if !line_local {
            return None;
        }
        // The same syntax options `regex` is given when the gate's pattern is compiled.
        let hir = syntax::parse_with(pattern, &syntax::Config::new().multi_line(true)).ok()?;
        let prefix = hir.properties().look_set_prefix();
        if !(prefix.contains(Look::StartLF) || prefix.contains(Look::Start)) {
            return None;
        }
        let build = |hir: &Hir| {
            Regex::builder()
                .configure(
                    meta::Config::new()
                        .match_kind(regex_automata::MatchKind::LeftmostFirst)
                        .utf8_empty(true)
                        .nfa_size_limit(Some(50 << 20)),
                )
                .build_from_hir(hir)
                .ok()
        };
        let full = build(&hir)?;
        let twin = ascii_twin(hir.clone());
        let ascii = if twin == hir { None } else { build(&twin) };
        Some(LinePattern { full, ascii })
    }

    /// The pattern's group names, by group index (the twin's are the same).
    pub(super) fn group_names(&self) -> impl Iterator<Item = Option<&str>> + Clone {
        self.full.group_info().pattern_names(PatternID::ZERO)
    }

    pub(super) fn search(&self) -> LineSearch {
        LineSearch {
            full: self.full.create_cache(),
            ascii: self.ascii.as_ref().map(Regex::create_cache),
            caps: self.full.create_captures(),
        }
    }

    /// Calls `found` with the groups of each match in `text[range]`, in order; `range` starts at
    /// a line start and ends at a line feed or the end of the text.
    pub(super) fn read(
        &self,
        search: &mut LineSearch,
        text: &str,
        range: Range<usize>,
        found: &mut impl FnMut(&Captures),
    ) {
        let mut at = range.start;
        loop {
            let end = text.as_bytes()[at..range.end]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(range.end, |i| at + i);
            let input = Input::new(text).range(at..end).anchored(Anchored::Yes);
            match (&self.ascii, &mut search.ascii) {
                (Some(ascii), Some(cache)) if text.as_bytes()[at..end].is_ascii() => {
                    ascii.search_captures_with(cache, &input, &mut search.caps)
                }
                _ => self
                    .full
                    .search_captures_with(&mut search.full, &input, &mut search.caps),
            }
            if search.caps.is_match() {
                found(&search.caps);
            }
            if end == range.end {
                return;
            }
            at = end + 1;
        }
    }
}

/// The pattern with every class cut down to its ASCII members and every literal with a
/// non-ASCII byte made unmatchable; everything else (groups, repetitions and their greed,
/// alternation order, assertions) as it was.
fn ascii_twin(hir: Hir) -> Hir {
    match hir.into_kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(Literal(bytes)) if bytes.is_ascii() => Hir::literal(bytes),
        HirKind::Literal(_) => Hir::fail(),
        HirKind::Class(Class::Unicode(mut class)) => {
            class.intersect(&ClassUnicode::new([ClassUnicodeRange::new('\0', '\x7f')]));
            Hir::class(Class::Unicode(class))
        }
        HirKind::Class(Class::Bytes(mut class)) => {
            class.intersect(&ClassBytes::new([ClassBytesRange::new(0, 0x7f)]));
            Hir::class(Class::Bytes(class))
        }
        HirKind::Look(look) => Hir::look(look),
        HirKind::Repetition(rep) => Hir::repetition(Repetition {
            sub: Box::new(ascii_twin(*rep.sub)),
            ..rep
        }),
        HirKind::Capture(cap) => Hir::capture(Capture {
            sub: Box::new(ascii_twin(*cap.sub)),
            ..cap
        }),
        HirKind::Concat(subs) => Hir::concat(subs.into_iter().map(ascii_twin).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.into_iter().map(ascii_twin).collect()),
    }
}
