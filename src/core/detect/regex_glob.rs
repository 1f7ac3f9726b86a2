//! pre-commit's `files` and `exclude` are Python regexes searched in a root-relative path; a
//! gate's `scope` takes globs (case kept, `*` crossing folders). Only simple shapes translate
//! exactly: literal characters, `.` (any one character: `?`), `.*` (`*`), the anchors `^` and
//! `$` (without them the search matches anywhere: a `*` before or after), alternatives at the
//! top or in one group (`(?x)^(a/.*|b/.*)$`), and verbose mode's spaces and comments. Anything
//! else (classes, `\d`, `+`, `?`, nested groups, look-arounds) is refused, never approximated:
//! a wrong exclude would check files the project leaves out, or skip files it checks.

/// The globs matching exactly the paths `re.search(regex, path)` matches; `None` when the regex
/// has a shape that does not translate. An empty list: it matches no path (`^$`).
pub fn to_globs(regex: &str) -> Option<Vec<String>> {
    let text = match regex.trim_end_matches('\n').strip_prefix("(?x)") {
        Some(verbose) => strip_verbose(verbose),
        None => regex.trim_end_matches('\n').to_string(),
    };
    let (start, body, end) = anchors(&text);
    let alternatives: Vec<(bool, &str, bool)> = match group(body) {
        Some(inner) => inner
            .split('|')
            .map(|a| {
                let (s, a, e) = anchors(a);
                (start || s, a, end || e)
            })
            .collect(),
        None if !body.contains(['(', ')']) => text.split('|').map(anchors).collect(),
        None => return None,
    };
    let mut globs = Vec::new();
    for (start, alternative, end) in alternatives {
        let glob = glob_of(start, alternative, end)?;
        if !glob.is_empty() && !globs.contains(&glob) {
            globs.push(glob);
        }
    }
    Some(globs)
}

/// Verbose mode (`(?x)`): whitespace is no part of the pattern and `#` starts a comment, unless
/// escaped (a class could hold them too, but classes are refused anyway).
fn strip_verbose(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '#' => {
                chars.by_ref().find(|&skipped| skipped == '\n');
            }
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

/// `^` at the start and an unescaped `$` at the end, taken off.
fn anchors(text: &str) -> (bool, &str, bool) {
    let (start, text) = match text.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let escaped = text.ends_with("\\$") && !text.ends_with("\\\\$");
    match text.strip_suffix('$') {
        Some(rest) if !escaped => (start, rest, true),
        _ => (start, text, false),
    }
}

/// The inside of one group that is the whole text: `(a|b)` or `(?:a|b)`, with no other group.
fn group(text: &str) -> Option<&str> {
    let inner = text
        .strip_prefix("(?:")
        .or_else(|| text.strip_prefix('('))?;
    let inner = inner.strip_suffix(')')?;
    (!inner.contains(['(', ')']) && !inner.ends_with('\\')).then_some(inner)
}

enum Token {
    Literal(char),
    /// `.`: one character.
    One,
    /// `.*`: any run of characters, `/` included.
    Any,
}

/// The glob of one alternative, `None` when it holds more than literals, `.` and `.*`.
fn glob_of(start: bool, text: &str, end: bool) -> Option<String> {
    let mut tokens = Vec::new();
    if !start {
        tokens.push(Token::Any);
    }
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let token = match c {
            '\\' => match chars.next()? {
                e if e.is_ascii_alphanumeric() => return None,
                e => Token::Literal(e),
            },
            '.' if chars.peek() == Some(&'*') => {
                chars.next();
                Token::Any
            }
            '.' => Token::One,
            '^' | '$' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' => return None,
            c => Token::Literal(c),
        };
        // `.*?` and `.*+` would be lazy and possessive forms; refused with `?` and `+` above.
        tokens.push(token);
    }
    if !end {
        tokens.push(Token::Any);
    }
    // One `*` for a run of them.
    tokens.dedup_by(|a, b| matches!((a, b), (Token::Any, Token::Any)));
    let mut glob = String::new();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Literal(c) if "*?[]{}\\".contains(*c) => return None,
            Token::Literal(c) => glob.push(*c),
            Token::One => glob.push('?'),
            // `**` only as the last component (`dir/**`), which reads as "everything under", and
            // matches as `*` does there.
            Token::Any if i + 1 == tokens.len() && glob.ends_with('/') => glob.push_str("**"),
            Token::Any => glob.push('*'),
        }
    }
    if glob == "*" {
        // Unanchored and empty: pre-commit's default `files: ''`, every path.
        return Some("**".to_string());
    }
    Some(glob)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every translation is checked against the regex on the same paths: the glob must match
    /// exactly the paths the regex finds.
    fn same_matches(regex: &str, globs: &[String]) {
        let re = regex::Regex::new(regex).unwrap();
        let mut set = globset::GlobSetBuilder::new();
        for g in globs {
            set.add(
                globset::GlobBuilder::new(g)
                    .literal_separator(false)
                    .build()
                    .unwrap(),
            );
        }
        let set = set.build().unwrap();
        for path in [
            "frontend/src/client/a.ts",
            "frontend/src/client/deep/b.ts",
            "frontend/src/clients.ts",
            "frontend/src/client",
            "backend/app/email-templates/x.html",
            "backend/app/main.py",
            "x/frontend/src/client/a.ts",
            "logo.svg",
            "docs/img/logo.svg",
            "logo.svgz",
            "docs/a.md",
            "docs/deep/b.md",
            "docs/amd",
            "src/docs/a.md",
            "setup.py",
            "setupxpy",
            "a/setup.py",
            "migrations/0001.py",
            "app/migrations/0001.py",
        ] {
            assert_eq!(
                re.is_match(path),
                set.is_match(path),
                "{regex} → {globs:?} on {path}"
            );
        }
    }

    #[test]
    fn simple_shapes_translate_exactly() {
        let cases: [(&str, &[&str]); 9] = [
            ("^frontend/src/client/.*", &["frontend/src/client/**"]),
            (
                "(?x)^(\n    frontend/src/client/.*|\n    backend/app/email-templates/.*\n)$\n",
                &["frontend/src/client/**", "backend/app/email-templates/**"],
            ),
            (r"\.svg$", &["*.svg"]),
            (r"^docs/.*\.md$", &["docs/*.md"]),
            ("^setup.py$", &["setup?py"]),
            (r"^(?:setup\.py|docs/.*)$", &["setup.py", "docs/**"]),
            ("migrations/", &["*migrations/**"]),
            (r"^a/b\.py$|\.svg$", &["a/b.py", "*.svg"]),
            ("^$", &[]),
        ];
        for (regex, globs) in cases {
            let got = to_globs(regex).unwrap_or_else(|| panic!("{regex} did not translate"));
            assert_eq!(got, globs, "{regex}");
            // The regex crate reads these shapes, `(?x)` included, as Python's `re` does.
            same_matches(regex, &got);
        }
    }

    #[test]
    fn other_shapes_are_refused() {
        for regex in [
            r"^tests/fixtures/\d+\.py$",
            "^(a|(b|c))$",
            "^[ab]/.*",
            "^a/.+",
            "^(?!vendor/).*",
            "x?y",
            r"^a/\w*",
            "^a/.*?b$",
        ] {
            assert_eq!(to_globs(regex), None, "{regex}");
        }
    }
}
