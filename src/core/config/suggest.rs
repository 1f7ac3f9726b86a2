//! "Did you mean …?" for misspelled keys and values.

/// The candidate closest to `word`, if it is close enough to be a likely typo: at most a third of
/// the word's length in edits (one for short words; none below three characters, where every
/// word is "close"), or the start of the candidate (`warn` → `warning`). Compared without case
/// and with `-` read as `_`.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let norm = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let w = norm(word);
    let len = w.chars().count();
    let limit = if len < 3 { 0 } else { (len / 3).max(1) };
    candidates
        .into_iter()
        .filter_map(|c| {
            let n = norm(c);
            let d = distance(&w, &n);
            let prefix = len >= 3 && n.starts_with(&w);
            (d <= limit || prefix).then_some((if prefix { 0 } else { d }, c))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbouring characters each cost one (`comand` → `command`, `stategy` → `strategy`,
/// `lnit` → `lint`).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_word() {
        let keys = ["name", "kind", "command", "file_types", "parsing"];
        assert_eq!(closest("comand", keys), Some("command"));
        assert_eq!(closest("file-types", keys), Some("file_types"));
        assert_eq!(closest("filetypes", keys), Some("file_types"));
        assert_eq!(closest("Parsing", keys), Some("parsing"));
        assert_eq!(closest("knid", keys), Some("kind"));
        assert_eq!(
            closest("json_violation", ["json_violations", "sarif"]),
            Some("json_violations")
        );
        assert_eq!(
            closest("warn", ["error", "warning", "info", "hint"]),
            Some("warning")
        );
    }

    #[test]
    fn unrelated_words_get_no_suggestion() {
        assert_eq!(closest("bogus", ["name", "kind", "command"]), None);
        assert_eq!(closest("x", ["ab", "cd"]), None);
        assert_eq!(closest("b", ["a", "bb"]), None);
    }
}
