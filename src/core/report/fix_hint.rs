//! A gate's fix hint as the report shows it: `{files}` filled in with the files to fix.

use crate::core::violation::Violation;

/// Fills `{files}` in a gate's fix hint with the files that have violations (shell-quoted), or
/// with the checked files when the violations name none.
pub fn render_fix_hint(hint: &str, violations: &[Violation], checked: &[String]) -> String {
    const MAX: usize = 20;
    let mut files: Vec<&str> = violations
        .iter()
        .filter_map(|v| v.file.as_deref())
        .collect();
    files.sort_unstable();
    files.dedup();
    if files.is_empty() {
        files = checked.iter().map(String::as_str).collect();
    }
    let mut list: Vec<String> = files.iter().take(MAX).map(|f| shell_quote(f)).collect();
    if files.len() > MAX {
        list.push(format!("… ({} more)", files.len() - MAX));
    }
    hint.replace("{files}", &list.join(" "))
        .replace("{file}", &list.join(" "))
}

/// Quotes a path for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@%,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("src/a.py"), "src/a.py");
        assert_eq!(shell_quote("my file.py"), "'my file.py'");
        assert_eq!(shell_quote("it's.py"), "'it'\\''s.py'");
    }
}
