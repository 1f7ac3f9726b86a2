//! The configuration file as a plain tree of YAML nodes, each with its place in the file.
//!
//! serde says *that* a value is wrong and *where*, not *which key* it belongs to. This untyped
//! tree of the same text lets a message name the key and the gate, and a check point at a key
//! rather than at its value.
//!
//! A broken file may have thousands of problems, each asking for a place, so no question walks
//! the whole file: mappings index their keys, `at` uses an index of every place built once, and
//! lines come from a `LineIndex`.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::options::{DuplicateKeyPolicy, NonFiniteFloatPolicy};
use serde_saphyr::{Location, Spanned};

use crate::core::parse::columns::LineIndex;

/// A 1-based place in the file, in characters. `line == 0` means "no place".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(super) struct Pos {
    pub line: u32,
    pub column: u32,
}

impl Pos {
    pub const NONE: Pos = Pos { line: 0, column: 0 };

    pub fn is_known(self) -> bool {
        self.line > 0
    }
}

impl From<Location> for Pos {
    fn from(l: Location) -> Self {
        Pos {
            line: u32::try_from(l.line()).unwrap_or(u32::MAX),
            column: u32::try_from(l.column()).unwrap_or(u32::MAX),
        }
    }
}

/// One YAML node. Scalars keep their text so a message can quote or split them.
#[derive(Debug)]
pub(super) enum Node {
    Map(Entries),
    Seq(Vec<Spanned<Node>>),
    /// A scalar's text; `None` for null (`~`, `null` or nothing).
    Scalar(Option<String>),
}

/// A mapping's entries in file order, and where each key's first entry is.
#[derive(Debug, Default)]
pub(super) struct Entries {
    pub list: Vec<(Spanned<String>, Spanned<Node>)>,
    first: HashMap<String, usize>,
}

impl Entries {
    fn push(&mut self, key: Spanned<String>, value: Spanned<Node>) {
        self.first
            .entry(key.value.clone())
            .or_insert(self.list.len());
        self.list.push((key, value));
    }

    /// The first entry with this key (a duplicate key is reported at its second place).
    fn get(&self, key: &str) -> Option<&(Spanned<String>, Spanned<Node>)> {
        self.first.get(key).map(|i| &self.list[*i])
    }
}

/// One step from a mapping to a value or from a list to an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

impl Seg {
    pub fn key(&self) -> Option<&str> {
        match self {
            Seg::Key(k) => Some(k),
            Seg::Index(_) => None,
        }
    }
}

/// What sits at a place in the file: the path to it, and whether the place is a key or a value.
#[derive(Debug, Clone)]
pub(super) struct Found<'a> {
    pub path: Vec<Seg>,
    /// The place is the key itself (e.g. an unknown key), not the value under it.
    pub is_key: bool,
    pub node: &'a Node,
}

impl Found<'_> {
    /// The last key on the path (for a list item, the key of the list).
    pub fn key(&self) -> Option<&str> {
        self.path.iter().rev().find_map(Seg::key)
    }

    /// Whether the place is an item of a list rather than the value of a key.
    pub fn in_list(&self) -> bool {
        matches!(self.path.last(), Some(Seg::Index(_)))
    }

    /// The scalar text at the place, if it is a scalar.
    pub fn scalar(&self) -> Option<&str> {
        match self.node {
            Node::Scalar(Some(s)) => Some(s),
            _ => None,
        }
    }
}

/// The `Tree` of a text that the typed pass already read without error, built only when a
/// problem needs a place: a valid configuration is then read once, not twice.
pub(super) struct LazyTree<'t> {
    text: &'t str,
    tree: OnceCell<Result<Option<Tree>, serde_saphyr::Error>>,
}

impl<'t> LazyTree<'t> {
    pub fn new(text: &'t str) -> Self {
        LazyTree {
            text,
            tree: OnceCell::new(),
        }
    }

    /// The tree; `None` when the text, read untyped, is empty or not YAML (see `error`).
    pub fn get(&self) -> Option<&Tree> {
        self.tree
            .get_or_init(|| Tree::parse(self.text))
            .as_ref()
            .ok()?
            .as_ref()
    }

    /// The untyped read's error, if it was needed and failed.
    pub fn error(&self) -> Option<&serde_saphyr::Error> {
        self.tree.get()?.as_ref().err()
    }

    pub fn key(&self, path: &[&str]) -> Option<Pos> {
        self.get()?.key(path)
    }

    pub fn value(&self, path: &[&str]) -> Option<Pos> {
        self.get()?.value(path)
    }

    pub fn item(&self, path: &[&str], text: &str) -> Option<Pos> {
        self.get()?.item(path, text)
    }

    pub fn place_in_scalar(&self, start: Pos, value: &str, offset: usize) -> Option<Pos> {
        self.get()?.place_in_scalar(start, value, offset)
    }
}

pub(super) struct Tree {
    root: Spanned<Node>,
    text: String,
    line_index: LineIndex,
    /// What `at` finds at each place, built on its first use.
    places: OnceCell<HashMap<Pos, Place>>,
}

/// Where a node or key is: the index of each entry or item on the way from the root.
#[derive(Debug)]
struct Place {
    steps: Vec<usize>,
    is_key: bool,
}

impl Tree {
    /// Reads `text` as YAML. `Ok(None)`: the document is empty (blank or only comments).
    /// Duplicate keys are let through here: the typed pass reports them, and this tree must still
    /// be able to say where the second one sits.
    pub fn parse(text: &str) -> Result<Option<Tree>, serde_saphyr::Error> {
        // `.inf` is a valid YAML float; whether a key may hold it is for the typed pass to say.
        let options = serde_saphyr::options! {
            duplicate_keys: DuplicateKeyPolicy::PassThrough,
            non_finite_float_policy: NonFiniteFloatPolicy::PassThrough,
        };
        let root: Option<Spanned<Node>> = serde_saphyr::from_str_with_options(text, options)?;
        Ok(root.and_then(|root| match root.value {
            Node::Scalar(None) => None,
            _ => Some(Tree {
                root,
                text: text.to_string(),
                line_index: LineIndex::new(text),
                places: OnceCell::new(),
            }),
        }))
    }

    /// The node at the end of `path` (keys, and in a list the item's index), with its place.
    fn node(&self, path: &[&str]) -> Option<&Spanned<Node>> {
        let mut node = &self.root;
        for key in path {
            node = match &node.value {
                Node::Map(entries) => &entries.get(key)?.1,
                Node::Seq(items) => items.get(key.parse::<usize>().ok()?)?,
                Node::Scalar(_) => return None,
            };
        }
        Some(node)
    }

    /// Where the last key of `path` is written, e.g. `["gates", "a", "parsing", "pattern"]`; a
    /// list item, which has no key, is where the item starts (`[…, "also", "0"]`).
    pub fn key(&self, path: &[&str]) -> Option<Pos> {
        let (last, parent) = path.split_last()?;
        match &self.node(parent)?.value {
            Node::Map(entries) => entries.get(last).map(|(k, _)| k.referenced.into()),
            _ => self.value(path),
        }
    }

    /// Where the value under `path` starts.
    pub fn value(&self, path: &[&str]) -> Option<Pos> {
        self.node(path).map(|n| n.referenced.into())
    }

    /// Where the first item of the list under `path` that reads `text` is.
    pub fn item(&self, path: &[&str], text: &str) -> Option<Pos> {
        match &self.node(path)?.value {
            Node::Seq(items) => items
                .iter()
                .find(|i| matches!(&i.value, Node::Scalar(Some(s)) if s == text))
                .map(|i| i.referenced.into()),
            _ => None,
        }
    }

    /// Where the `offset`-th character of a scalar that starts at `start` is, when the scalar is
    /// written on one line exactly as it reads (plain, or quoted without escapes); else `None`.
    pub fn place_in_scalar(&self, start: Pos, value: &str, offset: usize) -> Option<Pos> {
        let line = self.line_index.line(start.line)?;
        let rest: String = line
            .chars()
            .skip(usize::try_from(start.column).ok()?.checked_sub(1)?)
            .collect();
        let quoted = rest.starts_with('\'') || rest.starts_with('"');
        let body = if quoted { &rest[1..] } else { rest.as_str() };
        if !body.starts_with(value) {
            return None;
        }
        let column = start.column + u32::from(quoted) + u32::try_from(offset).ok()?;
        Some(Pos {
            line: start.line,
            column,
        })
    }

    /// Appends the 1-based lines `first..=last` to `out`, each with a newline.
    pub fn push_lines(&self, first: u32, last: u32, out: &mut String) {
        for line in (first..=last).map_while(|n| self.line_index.line(n)) {
            out.push_str(line);
            out.push('\n');
        }
    }

    /// The lines each gate spans, `(first, last)`, from its id to the line before the next gate
    /// or top-level key. `None` when gates are written in flow style (`gates: { a: …, b: … }`),
    /// where a line may hold more than one gate.
    pub fn gate_lines(&self) -> Option<Vec<(u32, u32)>> {
        let (top, gates_key, entries) = self.gates()?;
        let gates_line = Pos::from(gates_key.referenced).line;
        let starts: Vec<u32> = entries
            .list
            .iter()
            .map(|(k, _)| Pos::from(k.referenced).line)
            .collect();
        if starts.first().is_none_or(|first| *first <= gates_line)
            || starts.windows(2).any(|w| w[0] >= w[1])
        {
            return None;
        }
        // The gates end where the next top-level key starts, or at the end of the file.
        let end = top
            .list
            .iter()
            .map(|(k, _)| Pos::from(k.referenced).line)
            .filter(|l| *l > gates_line)
            .min()
            .map_or(
                u32::try_from(self.text.lines().count()).unwrap_or(u32::MAX),
                |l| l - 1,
            );
        let lasts = starts.iter().skip(1).map(|next| next - 1).chain([end]);
        Some(starts.iter().copied().zip(lasts).collect())
    }

    /// The place and id of each gate whose id was already used by a gate above it.
    pub fn repeated_gates(&self) -> Vec<(Pos, &str)> {
        let Some((_, _, entries)) = self.gates() else {
            return Vec::new();
        };
        entries
            .list
            .iter()
            .enumerate()
            .filter(|(i, (k, _))| entries.first.get(&k.value) != Some(i))
            .map(|(_, (k, _))| (Pos::from(k.referenced), k.value.as_str()))
            .collect()
    }

    /// The top-level mapping, the `gates` key and the gates, when both are mappings.
    fn gates(&self) -> Option<(&Entries, &Spanned<String>, &Entries)> {
        let Node::Map(top) = &self.root.value else {
            return None;
        };
        let (key, gates) = top.get("gates")?;
        match &gates.value {
            Node::Map(entries) => Some((top, key, entries)),
            _ => None,
        }
    }

    /// What is at `pos`: the innermost node or key that starts exactly there.
    pub fn at(&self, pos: Pos) -> Option<Found<'_>> {
        let place = self
            .places
            .get_or_init(|| index_places(&self.root))
            .get(&pos)?;
        let mut path = Vec::with_capacity(place.steps.len());
        let mut node = &self.root;
        for &i in &place.steps {
            node = match &node.value {
                Node::Map(entries) => {
                    let (k, v) = &entries.list[i];
                    path.push(Seg::Key(k.value.clone()));
                    v
                }
                Node::Seq(items) => {
                    path.push(Seg::Index(i));
                    &items[i]
                }
                Node::Scalar(_) => return None,
            };
        }
        Some(Found {
            path,
            is_key: place.is_key,
            node: &node.value,
        })
    }
}

/// The place of every node and key, each found as a depth-first search from the root would
/// find it first. A block mapping starts at its first key, so the key is preferred over the
/// mapping only when nothing deeper starts there: callers that want the mapping (a missing key)
/// read the path's parent.
fn index_places(root: &Spanned<Node>) -> HashMap<Pos, Place> {
    fn visit(node: &Spanned<Node>, steps: &mut Vec<usize>, places: &mut HashMap<Pos, Place>) {
        match &node.value {
            Node::Map(entries) => {
                for (i, (k, v)) in entries.list.iter().enumerate() {
                    steps.push(i);
                    visit(v, steps, places);
                    places.entry(k.referenced.into()).or_insert_with(|| Place {
                        steps: steps.clone(),
                        is_key: true,
                    });
                    steps.pop();
                }
            }
            Node::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    steps.push(i);
                    visit(item, steps, places);
                    steps.pop();
                }
            }
            Node::Scalar(_) => {}
        }
        places
            .entry(node.referenced.into())
            .or_insert_with(|| Place {
                steps: steps.clone(),
                is_key: false,
            });
    }
    let mut places = HashMap::new();
    visit(root, &mut Vec::new(), &mut places);
    places
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

/// Visitor methods that keep a scalar as its text.
macro_rules! scalar_as_text {
    ($($method:ident: $ty:ty),*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Node, E> {
            Ok(Node::Scalar(Some(v.to_string())))
        }
    )*};
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Entries::default();
        while let Some(key) = map.next_key::<Spanned<KeyText>>()? {
            let key = Spanned::new(key.value.0, key.referenced, key.defined);
            entries.push(key, map.next_value()?);
        }
        Ok(Node::Map(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    scalar_as_text!(visit_str: &str, visit_i64: i64, visit_u64: u64, visit_i128: i128,
        visit_u128: u128, visit_f64: f64, visit_bool: bool);

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar(None))
    }
    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
}

/// A mapping key of any scalar type, as text (`1: x` has the key "1").
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Node::deserialize(d)? {
            Node::Scalar(s) => Ok(KeyText(s.unwrap_or_default())),
            // A list or mapping as a key is valid YAML but never a qgates key; name it so.
            _ => Ok(KeyText("<complex key>".to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# c\nversion: 1\ngates:\n  a:\n    command: \"ruff check\"\n    parsing: {strategy: exit_code, x: [1, 2]}\n    file_types:\n      - .py\n";

    #[test]
    fn finds_keys_values_and_items() {
        let t = Tree::parse(TEXT).unwrap().unwrap();
        assert_eq!(t.key(&["gates", "a"]), Some(Pos { line: 4, column: 3 }));
        assert_eq!(
            t.value(&["gates", "a", "command"]),
            Some(Pos {
                line: 5,
                column: 14
            })
        );
        assert_eq!(
            t.item(&["gates", "a", "file_types"], ".py"),
            Some(Pos { line: 8, column: 9 })
        );
        let f = t
            .at(Pos {
                line: 6,
                column: 25,
            })
            .unwrap();
        assert_eq!(
            f.path,
            vec![
                Seg::Key("gates".into()),
                Seg::Key("a".into()),
                Seg::Key("parsing".into()),
                Seg::Key("strategy".into())
            ]
        );
        assert!(!f.is_key);
        assert_eq!(f.scalar(), Some("exit_code"));
        let f = t
            .at(Pos {
                line: 6,
                column: 40,
            })
            .unwrap();
        assert!(f.in_list());
        assert_eq!(f.key(), Some("x"));
        let f = t.at(Pos { line: 5, column: 5 }).unwrap();
        assert!(f.is_key);
        assert_eq!(f.key(), Some("command"));
    }

    #[test]
    fn empty_documents_have_no_tree() {
        assert!(Tree::parse("").unwrap().is_none());
        assert!(Tree::parse("# only a comment\n\n").unwrap().is_none());
    }

    #[test]
    fn duplicate_keys_are_kept() {
        let t = Tree::parse("a: 1\na: 2\n").unwrap().unwrap();
        let f = t.at(Pos { line: 2, column: 1 }).unwrap();
        assert!(f.is_key);
    }
}
