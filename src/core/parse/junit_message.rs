//! The one line that says why a test failed. Runners wrap it differently: pytest and
//! cargo-nextest put a `message` attribute, jest-junit none (the text's first line is the
//! assertion's), Go's converters the word `Failed` on every failure with the real line inside
//! `=== RUN` / `--- FAIL` lines, and a Rust panic's first line is only where it happened.

use std::sync::LazyLock;

use regex::Regex;

/// Why a test failed, when its report says more than that it failed.
pub(super) fn failure_message(attribute: Option<&str>, text: &str) -> Option<String> {
    let line = attribute
        // gotestsum and go-junit-report write `message="Failed"` on every failure: it says
        // nothing the outcome does not, and the text holds the test's own words.
        .filter(|m| m.trim() != "Failed")
        .and_then(first_line)
        .or_else(|| first_line(text))?;
    if let Some(header) = PANIC_HEADER.captures(&line) {
        // The panic's own message is the line after `panicked at file:line:col:`; without one
        // (Rust before 1.73 put it on the same line), the header less its thread id, which
        // changes with every run and would make the violation look new each time.
        return Some(
            panic_message(text).unwrap_or_else(|| format!("{}{}", &header[1], &header[2])),
        );
    }
    // `shop_test.go:12: got 6, want 5`: the place is the violation's own already.
    match PLACED_LINE.captures(&line) {
        Some(c) => Some(c[1].to_string()),
        None => Some(line),
    }
}

/// The first line that says something: Go's framing lines (`=== RUN   TestX`, `--- FAIL:
/// TestX (0.00s)`) are the runner's, not the test's.
fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !GO_FRAMING.is_match(l))
        .map(str::to_string)
}

static GO_FRAMING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:=== (?:RUN|PAUSE|CONT|NAME)\s|--- (?:FAIL|PASS|SKIP): )")
        .expect("the Go framing pattern is valid")
});

/// `thread 'tests::taxes' (28595) panicked at src/lib.rs:16:28:`, the thread id since Rust 1.89.
static PANIC_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(thread '[^']*')(?: \(\d+\))?( panicked at .*)$")
        .expect("the panic header pattern is valid")
});

/// The first line after the panic header in `text`.
fn panic_message(text: &str) -> Option<String> {
    let mut lines = text.lines().map(str::trim);
    lines.find(|l| PANIC_HEADER.is_match(l) && l.ends_with(':'))?;
    lines.find(|l| !l.is_empty()).map(str::to_string)
}

/// `path:LINE: rest`, the way Go's testing package and pytest print a line at its place.
static PLACED_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[^\s:]+:\d+: (\S.*)$").expect("the placed line pattern is valid")
});

#[cfg(test)]
mod tests {
    use super::failure_message;

    #[test]
    fn messages_of_each_runners_shape() {
        // pytest: the attribute's first line.
        assert_eq!(
            failure_message(
                Some("AssertionError: x\nassert 1 == 2"),
                "tests/t.py:3: AssertionError"
            )
            .as_deref(),
            Some("AssertionError: x")
        );
        // jest-junit: no attribute, the text's first line.
        assert_eq!(
            failure_message(
                None,
                "\nError: expect(received).toBe(expected)\n    at x (/a.js:1:2)"
            )
            .as_deref(),
            Some("Error: expect(received).toBe(expected)")
        );
        // gotestsum: `Failed`, framing lines, then the test's own line at its place.
        assert_eq!(
            failure_message(
                Some("Failed"),
                "=== RUN   TestTax\n    shop_test.go:12: café: got 6\n--- FAIL: TestTax (0.00s)\n"
            )
            .as_deref(),
            Some("café: got 6")
        );
        // A parent test that failed only through its subtests says nothing of its own.
        assert_eq!(
            failure_message(
                Some("Failed"),
                "=== RUN   TestRates\n--- FAIL: TestRates (0.00s)\n"
            ),
            None
        );
        // nextest: the panic's message, not its header with a thread id.
        let panic = "thread 'tests::taxes' (28595) panicked at src/lib.rs:16:28:\nassertion `left == right` failed: wrong tax\n  left: 6";
        assert_eq!(
            failure_message(
                Some("thread 'tests::taxes' (28595) panicked at src/lib.rs:16:28"),
                panic
            )
            .as_deref(),
            Some("assertion `left == right` failed: wrong tax")
        );
        // Rust before 1.73: the message is in the header, which has no thread id to drop.
        let old = "thread 'tests::taxes' panicked at 'wrong tax', src/lib.rs:16:9";
        assert_eq!(failure_message(None, old).as_deref(), Some(old));
        let with_id = "thread 'main' (7) panicked at 'boom', src/main.rs:2:5";
        assert_eq!(
            failure_message(Some(with_id), with_id).as_deref(),
            Some("thread 'main' panicked at 'boom', src/main.rs:2:5")
        );
    }
}
