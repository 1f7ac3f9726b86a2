//! How large a configuration may be: far above what a hand-written `quality.yaml` needs, low
//! enough that a generated, damaged or hostile file is refused (docs/design.md, "Limits").

/// The largest `quality.yaml` read; the file is read no further.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// The most gates one configuration defines.
pub const MAX_GATES: usize = 200;

/// The longest regex (`parsing.pattern`) or glob, in characters.
pub const MAX_PATTERN_CHARS: usize = 10_000;

/// The most globs in one `include_globs` or `exclude_globs` list.
pub const MAX_GLOBS_PER_LIST: usize = 1_000;

/// The most memory a compiled `parsing.pattern` may take (the regex crate's `size_limit`); a
/// pattern that needs more (`(\w{100}){100}`) is refused while it is compiled.
pub const MAX_REGEX_BYTES: usize = 10 << 20;

/// The most memory the lazy DFA of one pattern may use while it reads a tool's output (the
/// regex crate's `dfa_size_limit`; past it, matching goes on more slowly, never fails).
pub const MAX_REGEX_DFA_BYTES: usize = 2 << 20;

/// The most problems reported for one file; one more line says how many were left out.
pub const MAX_REPORTED_PROBLEMS: usize = 100;

/// "1 MiB", "10 000 characters": a limit as a sentence can say it.
pub(super) fn size_text(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

pub(super) fn file_too_large(size: u64) -> String {
    format!(
        "the file is over {} ({size} bytes or more), the most qgates reads as a configuration. A hand-written quality.yaml is a few KiB: check that this is the right file, and replace generated lists with fewer, broader globs.",
        size_text(MAX_CONFIG_BYTES)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_text(MAX_CONFIG_BYTES), "1 MiB");
        assert_eq!(size_text(1000), "1000 bytes");
    }
}
