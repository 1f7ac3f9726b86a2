//! Splitting a long file list into batches that respect `max_files_per_run` and the operating
//! system's limit on the size of a command line.

use std::ffi::OsString;

/// Bytes a batch's arguments may take: half the system's `ARG_MAX` (the environment shares it),
/// less what the environment itself uses.
pub fn argument_budget() -> usize {
    let arg_max = crate::core::platform::argument_max().unwrap_or(128 * 1024);
    let env: usize = std::env::vars_os()
        .map(|(k, v)| k.len() + v.len() + 2 + size_of::<usize>())
        .sum();
    (arg_max / 2).saturating_sub(env).max(16 * 1024)
}

/// Splits `files` into batches: each at most `max_files` long (if set) and, together with the
/// fixed arguments, at most `budget` bytes (each argument costs its bytes, a NUL and a pointer).
/// Every batch holds at least one file, and no file is lost or repeated.
pub fn split(
    files: &[OsString],
    fixed_args_bytes: usize,
    max_files: Option<usize>,
    budget: usize,
) -> Vec<Vec<OsString>> {
    let cost = |f: &OsString| f.len() + 1 + size_of::<usize>();
    let max_files = max_files.unwrap_or(usize::MAX).max(1);
    let mut batches: Vec<Vec<OsString>> = Vec::new();
    let mut current: Vec<OsString> = Vec::new();
    let mut used = fixed_args_bytes;
    for f in files {
        let c = cost(f);
        if !current.is_empty() && (current.len() >= max_files || used + c > budget) {
            batches.push(std::mem::take(&mut current));
            used = fixed_args_bytes;
        }
        used += c;
        current.push(f.clone());
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize, len: usize) -> Vec<OsString> {
        (0..n)
            .map(|i| OsString::from(format!("{i:0len$}.py")))
            .collect()
    }

    #[test]
    fn respects_max_files_and_keeps_every_file_once() {
        let files = names(25, 4);
        let b = split(&files, 10, Some(10), usize::MAX);
        assert_eq!(b.iter().map(Vec::len).collect::<Vec<_>>(), vec![10, 10, 5]);
        assert_eq!(b.concat(), files);
    }

    #[test]
    fn respects_the_byte_budget() {
        let files = names(20_000, 60);
        let budget = 200_000;
        let b = split(&files, 100, None, budget);
        assert!(b.len() > 1);
        for batch in &b {
            let bytes: usize = 100
                + batch
                    .iter()
                    .map(|f| f.len() + 1 + size_of::<usize>())
                    .sum::<usize>();
            assert!(bytes <= budget, "batch of {bytes} bytes exceeds {budget}");
        }
        assert_eq!(b.concat(), files);
    }

    #[test]
    fn a_file_larger_than_the_budget_still_gets_its_own_batch() {
        let files = vec![OsString::from("a".repeat(500)), OsString::from("b.py")];
        let b = split(&files, 0, None, 100);
        assert_eq!(b.len(), 2);
    }

    #[test]
    fn budget_is_positive() {
        assert!(argument_budget() >= 16 * 1024);
    }
}
