//! JSON with comments (JSONC), as pyright's and TypeScript's configuration files are written,
//! made plain JSON for serde_json, which reads neither comments nor trailing commas (and no
//! dependency of ours reads JSONC).

/// JSON with `//` and `/* */` comments and trailing commas, as pyright and TypeScript read it,
/// made plain JSON (strings left as they are).
pub(super) fn plain_json(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    // Where the last comma outside a string went, while only spaces and comments follow it.
    let mut comma: Option<usize> = None;
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
                if !c.is_whitespace()
                    && let Some(at) = comma.take()
                    && matches!(c, ']' | '}')
                {
                    plain.remove(at);
                }
                if c == ',' {
                    comma = Some(plain.len());
                }
                in_string = c == '"';
                plain.push(c);
            }
        }
    }
    plain
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
