//! JSON with comments (JSONC), as pyright's and TypeScript's configuration files are written,
//! made plain JSON for serde_json, which reads neither comments nor trailing commas (and no
//! dependency of ours reads JSONC).

/// JSON with `//` and `/* */` comments and trailing commas, as pyright and TypeScript read it,
/// made plain JSON (strings left as they are).
pub(super) fn plain_json(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            plain.push(c);
            match c {
                '\\' => plain.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        plain.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => {
                in_string = c == '"';
                plain.push(c);
            }
        }
    }
    without_trailing_commas(&plain)
}

/// A comma before a closing bracket dropped; commas inside strings stay.
fn without_trailing_commas(plain: &str) -> String {
    let mut out = String::with_capacity(plain.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in plain.char_indices() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if c == ',' && matches!(plain[i + 1..].trim_start().chars().next(), Some(']' | '}'))
        {
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_go() {
        let jsonc = "{\n  // the sources\n  \"include\": [\"src\", 2,], /* done */\n}\n";
        assert_eq!(
            plain_json(jsonc),
            "{\n  \n  \"include\": [\"src\", 2] \n}\n"
        );
        assert_eq!(plain_json("[1 /* never closed"), "[1 ");
        assert_eq!(plain_json("[1] // last line"), "[1] ");
    }

    #[test]
    fn strings_stay_as_they_are() {
        let json = r#"{"url": "http://x/*y*/", "s": "a,]", "q": "say \"hi\", // no"}"#;
        assert_eq!(plain_json(json), json);
        assert_eq!(plain_json(r#"["a\\", "b",]"#), r#"["a\\", "b"]"#);
        assert_eq!(plain_json(r#"{"a\"": 1,}"#), r#"{"a\"": 1}"#);
    }
}
