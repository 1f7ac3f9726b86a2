//! Borrowed JSON navigation shared by the JSON and SARIF strategies.
//!
//! A tool's output can hold hundreds of thousands of violations, so it is never parsed into one
//! `serde_json::Value` tree. Containers on the way to the violations are read *shallowly* (their
//! children stay unparsed `&RawValue` slices of the output), and each violation item is parsed on
//! its own into a [`Node`] that borrows every string without escapes from the output and is
//! dropped as soon as the item has been read.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// One parsed JSON value that borrows from the output where it can.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// Only for integers above `i64::MAX`.
    UInt(u64),
    Float(f64),
    Str(Cow<'a, str>),
    Arr(Vec<Node<'a>>),
    /// Keys in document order; objects in tool output are small, so a linear search beats hashing.
    Obj(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// Parses one JSON text (usually a `RawValue` slice of the output).
    pub(super) fn parse(text: &'a str) -> Result<Node<'a>, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// A member of an object, or an element of an array when `key` is all digits.
    pub(super) fn get(&self, key: &str) -> Option<&Node<'a>> {
        match self {
            // The last duplicate wins, as in serde_json's own `Value`.
            Node::Obj(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            Node::Arr(items) => items.get(index_key(key)?),
            _ => None,
        }
    }

    /// Follows `keys` from this node.
    pub(super) fn at<S: AsRef<str>>(&self, keys: &[S]) -> Option<&Node<'a>> {
        keys.iter().try_fold(self, |node, k| node.get(k.as_ref()))
    }

    /// The text of a string, or a number or boolean written out; `None` for null and containers.
    pub(super) fn to_text(&self) -> Option<Cow<'_, str>> {
        match self {
            Node::Str(s) => Some(Cow::Borrowed(s.as_ref())),
            Node::Int(i) => Some(Cow::Owned(i.to_string())),
            Node::UInt(u) => Some(Cow::Owned(u.to_string())),
            Node::Float(f) => Some(Cow::Owned(f.to_string())),
            Node::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
            Node::Null | Node::Arr(_) | Node::Obj(_) => None,
        }
    }

    /// A whole number, from a JSON number or a numeric string (some tools quote their numbers).
    pub(super) fn to_int(&self) -> Option<i64> {
        match self {
            Node::Int(i) => Some(*i),
            Node::UInt(u) => i64::try_from(*u).ok(),
            Node::Float(f) => float_to_int(*f),
            Node::Str(s) => {
                let s = s.trim();
                s.parse::<i64>()
                    .ok()
                    .or_else(|| s.parse::<f64>().ok().and_then(float_to_int))
            }
            _ => None,
        }
    }

    /// Whether the value, in its string form, equals `value`. A missing value or null equals
    /// `''` and `'null'`; numbers also compare numerically (`1` equals `'1.0'`); an array or an
    /// object equals nothing, so `fix != null` holds for any fix object.
    pub(super) fn equals_text(node: Option<&Node<'_>>, value: &str) -> bool {
        match node {
            None | Some(Node::Null) => value.is_empty() || value == "null",
            Some(Node::Arr(_) | Node::Obj(_)) => false,
            Some(n @ (Node::Int(_) | Node::UInt(_) | Node::Float(_))) => {
                n.to_text().is_some_and(|t| t == value)
                    || match (n, value.trim().parse::<f64>()) {
                        (Node::Int(i), Ok(v)) => (*i as f64) == v,
                        (Node::UInt(u), Ok(v)) => (*u as f64) == v,
                        (Node::Float(f), Ok(v)) => *f == v,
                        _ => false,
                    }
            }
            Some(n) => n.to_text().is_some_and(|t| t == value),
        }
    }
}

fn float_to_int(f: f64) -> Option<i64> {
    // `as` saturates, so the range check keeps 1e300 from turning into i64::MAX.
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

/// An all-digit key used as an array index.
pub(super) fn index_key(key: &str) -> Option<usize> {
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse().ok()
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node<'de>, E> {
        Ok(Node::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node<'de>, E> {
        Ok(i64::try_from(v).map(Node::Int).unwrap_or(Node::UInt(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node<'de>, E> {
        Ok(Node::Float(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(n) = seq.next_element()? {
            items.push(n);
        }
        Ok(Node::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        // The parser gives no size; room for a tool's usual handful of keys saves regrowing.
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(8).min(64));
        while let Some(Key(k)) = map.next_key()? {
            entries.push((k, map.next_value()?));
        }
        Ok(Node::Obj(entries))
    }
}

/// An object key, borrowed unless it holds escapes.
#[derive(serde::Deserialize)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

/// What kind of JSON value a (trimmed, valid) JSON text holds, from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Object,
    Array,
    Null,
    Scalar,
}

pub(super) fn kind_of(text: &str) -> Kind {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => Kind::Object,
        Some(b'[') => Kind::Array,
        Some(b'n') => Kind::Null,
        _ => Kind::Scalar,
    }
}

/// A container whose children are left unparsed.
#[derive(Debug)]
pub(super) enum Shallow<'a> {
    Arr(Vec<&'a RawValue>),
    Obj(Vec<(Cow<'a, str>, &'a RawValue)>),
}

impl<'a> Shallow<'a> {
    /// Reads an object or an array one level deep; `None` for anything else. Parsing the text
    /// also checks that it is complete JSON (nothing trails it).
    pub(super) fn parse(text: &'a str) -> Option<Result<Shallow<'a>, serde_json::Error>> {
        match kind_of(text) {
            Kind::Object | Kind::Array => Some(serde_json::from_str(text)),
            Kind::Null | Kind::Scalar => None,
        }
    }

    /// The unparsed child under `key` (an all-digit key indexes an array).
    pub(super) fn get(&self, key: &str) -> Option<&'a RawValue> {
        match self {
            Shallow::Obj(entries) => entries
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| *v),
            Shallow::Arr(items) => items.get(index_key(key)?).copied(),
        }
    }

    /// Every child: the elements of an array, the values of an object.
    pub(super) fn children(&self) -> Vec<&'a RawValue> {
        match self {
            Shallow::Arr(items) => items.clone(),
            Shallow::Obj(entries) => entries.iter().map(|(_, v)| *v).collect(),
        }
    }
}

impl<'de> Deserialize<'de> for Shallow<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ShallowVisitor;
        impl<'de> Visitor<'de> for ShallowVisitor {
            type Value = Shallow<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object or array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shallow<'de>, A::Error> {
                let mut items = Vec::new();
                while let Some(raw) = seq.next_element::<&'de RawValue>()? {
                    items.push(raw);
                }
                Ok(Shallow::Arr(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shallow<'de>, A::Error> {
                let mut entries = Vec::new();
                while let Some(Key(k)) = map.next_key()? {
                    entries.push((k, map.next_value::<&'de RawValue>()?));
                }
                Ok(Shallow::Obj(entries))
            }
        }
        d.deserialize_any(ShallowVisitor)
    }
}

/// The output as text, borrowed when it is valid UTF-8 (checked by `str::from_utf8`, whose
/// check is cheaper than the lossy decoder's): invalid bytes become U+FFFD rather than costing
/// every violation after them. Terminal colour and hyperlink codes are removed: many tools
/// colour their output whenever they see `CI` or `FORCE_COLOR` in the environment, even into a
/// pipe, and a pattern written against what the tool prints must still match.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    if !text.contains('\x1b') {
        return text;
    }
    Cow::Owned(TERMINAL_CODES.replace_all(&text, "").into_owned())
}

/// ECMA-48 control sequences (`ESC [ … final`: colours, cursor moves) and operating system
/// commands (`ESC ] … BEL` or `ESC ] … ESC \\`: hyperlinks, titles).
static TERMINAL_CODES: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
        .expect("a valid pattern")
});

/// serde_json's message without its " at line L column C" tail (the caller places it).
pub(super) fn error_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_codes_are_not_part_of_the_text() {
        let coloured = "[\x1b[31merror\x1b[39m] a.js: SyntaxError (2:23)\n\
                        \x1b]8;;https://example.com\x07link\x1b]8;;\x1b\\ \x1b[1;4mbold\x1b[0m";
        assert_eq!(
            decode(coloured.as_bytes()),
            "[error] a.js: SyntaxError (2:23)\nlink bold"
        );
        assert!(matches!(decode(b"plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn strings_borrow_unless_escaped() {
        let n = Node::parse(r#"{"a": "plain", "b": "tab\there \u00e9"}"#).expect("valid");
        assert!(matches!(
            n.get("a"),
            Some(Node::Str(Cow::Borrowed("plain")))
        ));
        assert_eq!(
            n.get("b").and_then(Node::to_text).as_deref(),
            Some("tab\there é")
        );
    }

    #[test]
    fn numbers_and_numeric_strings() {
        let n = Node::parse(r#"[3, " 7 ", "4.0", 5.0, 5.5, "x", 18446744073709551615, 1e300]"#)
            .expect("valid");
        let ints: Vec<Option<i64>> = (0..8)
            .map(|i| n.get(&i.to_string()).and_then(Node::to_int))
            .collect();
        assert_eq!(
            ints,
            [Some(3), Some(7), Some(4), Some(5), None, None, None, None]
        );
    }

    #[test]
    fn equals_text_rules() {
        let n = Node::parse(r#"{"s": "safe", "n": 1, "z": null, "o": {}}"#).expect("valid");
        assert!(Node::equals_text(n.get("s"), "safe"));
        assert!(Node::equals_text(n.get("n"), "1"));
        assert!(Node::equals_text(n.get("n"), "1.0"));
        assert!(Node::equals_text(n.get("z"), ""));
        assert!(Node::equals_text(n.get("missing"), "null"));
        assert!(!Node::equals_text(n.get("o"), "null"));
        assert!(!Node::equals_text(n.get("o"), ""));
    }

    #[test]
    fn shallow_leaves_children_raw() {
        let text = r#" { "a" : [1, 2] , "b\n": {"c": 3} } "#;
        let s = Shallow::parse(text).expect("container").expect("valid");
        assert_eq!(s.get("a").map(RawValue::get), Some("[1, 2]"));
        assert_eq!(s.get("b\n").map(RawValue::get), Some(r#"{"c": 3}"#));
        assert!(Shallow::parse("5").is_none());
        assert!(Shallow::parse("[1] x").expect("container").is_err());
    }
}
