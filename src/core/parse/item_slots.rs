//! Reading a violation item straight into slots, one per value the configuration reads, instead
//! of into a tree of the item.
//!
//! The paths of the configuration inside an item (`filename`, `location/row`, `fix/edits`…) form
//! a tree, compiled once per parse. Each path ends at a node whose value is kept whole in a slot,
//! as a [`Node`] (a number or a string borrowed from the output, usually); the objects and arrays
//! on the way only route the parser and are never built, and everything else is skipped. A
//! value is then found by its slot, with no search by key. The slots are reused from item to
//! item.
//!
//! One path may instead lead to a list of records (a fix's edits), each read into slots of its
//! own by a plan of the paths inside a record: an array's elements are the records, and an
//! object is one record.
//!
//! What the slots hold is what looking the paths up in the parsed item gives: when a key occurs
//! twice in an object the last one wins (entering a value clears the slots below it first), an
//! array's element is reached by a key of its index, and a value that is not an object where a
//! path goes on leaves the slots below empty.

use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::pointer::{Key, Node, index_key};

/// The tree of the paths read inside each item.
#[derive(Debug, Default)]
pub(super) struct ItemPlan {
    root: PlanNode,
    slots: usize,
    /// The plan inside each record of the list, when a path leads to one.
    record: Option<Box<ItemPlan>>,
}

#[derive(Debug, Default)]
struct PlanNode {
    /// The slot that keeps this node's value whole, when some path ends here.
    slot: Option<usize>,
    children: Vec<(String, PlanNode)>,
    /// The slots of this node and every node below it.
    range: Range<usize>,
    /// The highest array index a child names (elements past it are skipped).
    max_index: Option<usize>,
    /// This node's value is the list of records.
    list: bool,
    /// The list is this node or below it.
    holds_list: bool,
}

/// Where a path's value is: a slot, and the keys left to follow inside the slot's value (when a
/// shorter path already keeps an ancestor whole).
#[derive(Debug, Clone)]
pub(super) struct SlotPath {
    slot: usize,
    rest: Vec<String>,
}

/// The values of one item.
#[derive(Debug, Default)]
pub(super) struct Slots<'a> {
    values: Vec<Option<Node<'a>>>,
    /// The records of the list, one after another, each with the record plan's slots.
    records: Vec<Option<Node<'a>>>,
    /// Whether the value at the list's path was an array or an object (else there is no list).
    listed: bool,
}

impl ItemPlan {
    /// The plan for `paths` (each a list of keys inside the item) and, when `list` is given, a
    /// path to a list of records and the paths inside each record.
    ///
    /// The list is read record by record only when no other path ends at it or goes through it
    /// and no path inside a record is empty; otherwise its value is kept whole like any other,
    /// and [`ItemPlan::lists`] says so.
    pub(super) fn new<'k>(
        paths: impl IntoIterator<Item = &'k [String]>,
        list: Option<(&'k [String], Vec<&'k [String]>)>,
    ) -> Self {
        let mut root = PlanNode::default();
        for keys in paths {
            root.add(keys);
        }
        let mut record = None;
        if let Some((keys, inside)) = list {
            let plan = ItemPlan::new(inside, None);
            if plan.root.slot.is_none() && root.add_list(keys) {
                record = Some(Box::new(plan));
            } else {
                root.add(keys);
            }
        }
        let mut slots = 0;
        root.number(&mut slots);
        ItemPlan {
            root,
            slots,
            record,
        }
    }

    /// Whether the list is read record by record.
    pub(super) fn lists(&self) -> bool {
        self.record.is_some()
    }

    /// Where the value of a path given to [`ItemPlan::new`] is kept.
    pub(super) fn locate(&self, keys: &[String]) -> Option<SlotPath> {
        let mut node = &self.root;
        for (i, key) in keys.iter().enumerate() {
            if let Some(slot) = node.slot {
                return Some(SlotPath {
                    slot,
                    rest: keys[i..].to_vec(),
                });
            }
            node = node.child(key)?;
        }
        node.slot.map(|slot| SlotPath {
            slot,
            rest: Vec::new(),
        })
    }

    /// Where the value of a path inside a record is kept, in the record's slots.
    pub(super) fn locate_in_record(&self, keys: &[String]) -> Option<SlotPath> {
        self.record.as_ref()?.locate(keys)
    }

    /// The records of the list in `slots`, each as its slots; `None` when the item has no list
    /// there (missing, or neither an array nor an object).
    pub(super) fn records<'s, 'a>(
        &self,
        slots: &'s Slots<'a>,
    ) -> Option<impl Iterator<Item = &'s [Option<Node<'a>>]>> {
        let width = self.record.as_ref()?.slots.max(1);
        slots.listed.then(|| slots.records.chunks(width))
    }

    /// Empty slots, for one item at a time.
    pub(super) fn slots<'a>(&self) -> Slots<'a> {
        Slots {
            values: vec![None; self.slots],
            records: Vec::new(),
            listed: false,
        }
    }

    /// A seed that reads one item into `slots` (emptied first); it yields whether the item was
    /// `null`.
    pub(super) fn item<'p, 's, 'a>(&'p self, slots: &'s mut Slots<'a>) -> Fill<'p, 's, 'a> {
        slots.values.iter_mut().for_each(|s| *s = None);
        slots.records.clear();
        slots.listed = false;
        Fill {
            plan: self,
            node: &self.root,
            slots,
            record: None,
        }
    }

    /// Reads an item that is a scalar (already parsed) into `slots`.
    pub(super) fn scalar<'a>(&self, node: Node<'a>, slots: &mut Slots<'a>) {
        let fill = self.item(slots);
        if let Some(slot) = fill.node.slot {
            fill.slots.values[slot] = Some(node);
        }
    }

    /// Parses one item's text into `slots`; whether it was `null`.
    pub(super) fn read<'a>(
        &self,
        text: &'a str,
        slots: &mut Slots<'a>,
    ) -> Result<bool, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let null = self.item(slots).deserialize(&mut de)?;
        de.end()?;
        Ok(null)
    }
}

impl SlotPath {
    /// The value in `slots` (an item's values, or a record's), if there is one.
    pub(super) fn get<'n, 'a>(&self, slots: &'n [Option<Node<'a>>]) -> Option<&'n Node<'a>> {
        slots.get(self.slot)?.as_ref()?.at(&self.rest)
    }
}

impl<'a> Slots<'a> {
    /// The item's values, by slot.
    pub(super) fn values(&self) -> &[Option<Node<'a>>] {
        &self.values
    }
}

impl PlanNode {
    fn add(&mut self, keys: &[String]) {
        let Some((first, rest)) = keys.split_first() else {
            self.slot = Some(0);
            return;
        };
        self.child_or_new(first).add(rest);
    }

    /// Marks the node at `keys` as the list; `false` (and nothing marked) when a value on the way
    /// is kept whole or the node already has a use.
    fn add_list(&mut self, keys: &[String]) -> bool {
        if self.slot.is_some() {
            return false;
        }
        let Some((first, rest)) = keys.split_first() else {
            if self.children.is_empty() && !self.list {
                self.list = true;
                self.holds_list = true;
                return true;
            }
            return false;
        };
        let added = self.child_or_new(first).add_list(rest);
        if added {
            self.holds_list = true;
        } else if self
            .child(first)
            .is_some_and(|c| c.slot.is_none() && c.children.is_empty() && !c.list)
        {
            // Undo a child created for nothing.
            self.children.retain(|(k, _)| k != first);
        }
        added
    }

    fn child_or_new(&mut self, key: &str) -> &mut PlanNode {
        let i = match self.children.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                self.children.push((key.to_string(), PlanNode::default()));
                self.children.len() - 1
            }
        };
        &mut self.children[i].1
    }

    /// Numbers the slots depth first, so each node's slots and those below it are one range.
    fn number(&mut self, next: &mut usize) {
        let start = *next;
        if self.slot.is_some() {
            // A value kept whole holds everything below it: the children are never read.
            self.slot = Some(start);
            self.children.clear();
            *next += 1;
        }
        for (_, child) in &mut self.children {
            child.number(next);
        }
        self.range = start..*next;
        self.max_index = self.children.iter().filter_map(|(k, _)| index_key(k)).max();
    }

    fn child(&self, key: &str) -> Option<&PlanNode> {
        self.child_at(key).map(|(_, n)| n)
    }

    /// The child under `key`, and its position among the children.
    fn child_at(&self, key: &str) -> Option<(usize, &PlanNode)> {
        self.children
            .iter()
            .enumerate()
            .find(|(_, (k, _))| k == key)
            .map(|(i, (_, n))| (i, n))
    }
}

/// Reads one value at a node of the plan into the slots: the item's, or those of the record
/// that starts at `record` in the list.
pub(super) struct Fill<'p, 's, 'a> {
    plan: &'p ItemPlan,
    node: &'p PlanNode,
    slots: &'s mut Slots<'a>,
    record: Option<usize>,
}

impl<'p, 'a> Fill<'p, '_, 'a> {
    fn values(&mut self) -> &mut [Option<Node<'a>>] {
        match self.record {
            Some(start) => &mut self.slots.records[start..],
            None => &mut self.slots.values,
        }
    }

    /// The seed for a child's value. `again`: the child was entered before in this object, so
    /// the slots below it are emptied first (the key seen last replaces what the earlier value
    /// left); otherwise they are still empty, as the item's slots are emptied when it starts.
    fn enter<'s>(&'s mut self, child: &'p PlanNode, again: bool) -> Fill<'p, 's, 'a> {
        if again {
            self.values()[child.range.clone()]
                .iter_mut()
                .for_each(|s| *s = None);
            if child.holds_list {
                self.slots.records.clear();
                self.slots.listed = false;
            }
        }
        Fill {
            plan: self.plan,
            node: child,
            slots: &mut *self.slots,
            record: self.record,
        }
    }

    /// The seed for one more record of the list.
    fn new_record(&mut self) -> Fill<'p, '_, 'a> {
        let record = self
            .plan
            .record
            .as_deref()
            .expect("only a list node reads records");
        let start = self.slots.records.len();
        // A record with no slots still counts: it takes one empty slot.
        let width = record.slots.max(1);
        self.slots.records.resize(start + width, None);
        Fill {
            plan: record,
            node: &record.root,
            slots: &mut *self.slots,
            record: Some(start),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Fill<'_, '_, 'de> {
    /// Whether the value was `null`.
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(mut self, d: D) -> Result<bool, D::Error> {
        match self.node.slot {
            Some(slot) => {
                let node = Node::deserialize(d)?;
                let null = node == Node::Null;
                self.values()[slot] = Some(node);
                Ok(null)
            }
            None => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Fill<'_, '_, 'de> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(true)
    }
    fn visit_none<E>(self) -> Result<bool, E> {
        Ok(true)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<bool, A::Error> {
        if self.node.list {
            self.slots.listed = true;
            while seq.next_element_seed(self.new_record())?.is_some() {}
            // The seed for the element after the last made room for a record that is not there.
            let width = self.plan.record.as_ref().map_or(1, |r| r.slots.max(1));
            let len = self.slots.records.len() - width;
            self.slots.records.truncate(len);
            return Ok(false);
        }
        let mut i = 0;
        loop {
            let child = self
                .node
                .max_index
                .filter(|last| i <= *last)
                .and_then(|_| self.node.child(&i.to_string()));
            let more = match child {
                // Each index comes once in an array.
                Some(child) => seq.next_element_seed(self.enter(child, false))?.is_some(),
                None => seq.next_element::<de::IgnoredAny>()?.is_some(),
            };
            if !more {
                return Ok(false);
            }
            i += 1;
        }
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<bool, A::Error> {
        if self.node.list {
            self.slots.listed = true;
            return self.new_record().visit_map(map);
        }
        // The children met so far in this object, by position (past 63 every child counts as
        // met again, which is always right, only slower).
        let mut met = 0u64;
        while let Some(Key(k)) = map.next_key()? {
            match self.node.child_at(&k) {
                Some((i, child)) => {
                    let bit = 1u64 << i.min(63);
                    let again = i >= 63 || met & bit != 0;
                    met |= bit;
                    map.next_value_seed(self.enter(child, again))?;
                }
                None => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(path: &str) -> Vec<String> {
        path.split('/')
            .filter(|k| !k.is_empty())
            .map(String::from)
            .collect()
    }

    /// What each path finds in `text` through the slots, and in the whole parsed item.
    fn both(
        paths: &[&str],
        text: &str,
    ) -> (Vec<Option<Node<'static>>>, Vec<Option<Node<'static>>>) {
        let paths: Vec<Vec<String>> = paths.iter().map(|p| keys(p)).collect();
        let plan = ItemPlan::new(paths.iter().map(Vec::as_slice), None);
        let mut slots = plan.slots();
        plan.read(text, &mut slots).expect("valid JSON");
        let tree: Node = serde_json::from_str(text).expect("valid JSON");
        let owned = |n: Option<&Node>| {
            n.map(|n| {
                serde_json::from_str::<Node>(&to_json(n))
                    .map(own)
                    .expect("JSON")
            })
        };
        let via_slots = paths
            .iter()
            .map(|p| owned(plan.locate(p).and_then(|at| at.get(slots.values()))))
            .collect();
        let via_tree = paths.iter().map(|p| owned(tree.at(p))).collect();
        (via_slots, via_tree)
    }

    fn own(n: Node<'_>) -> Node<'static> {
        use std::borrow::Cow;
        match n {
            Node::Null => Node::Null,
            Node::Bool(b) => Node::Bool(b),
            Node::Int(i) => Node::Int(i),
            Node::UInt(u) => Node::UInt(u),
            Node::Float(f) => Node::Float(f),
            Node::Str(s) => Node::Str(Cow::Owned(s.into_owned())),
            Node::Arr(items) => Node::Arr(items.into_iter().map(own).collect()),
            Node::Obj(entries) => Node::Obj(
                entries
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), own(v)))
                    .collect(),
            ),
        }
    }

    fn to_json(n: &Node) -> String {
        match n {
            Node::Null => "null".into(),
            Node::Bool(b) => b.to_string(),
            Node::Int(i) => i.to_string(),
            Node::UInt(u) => u.to_string(),
            Node::Float(f) => format!("{f:?}"),
            Node::Str(s) => serde_json::to_string(s).expect("a string"),
            Node::Arr(items) => format!(
                "[{}]",
                items.iter().map(to_json).collect::<Vec<_>>().join(",")
            ),
            Node::Obj(entries) => format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!(
                        "{}:{}",
                        serde_json::to_string(k).expect("a key"),
                        to_json(v)
                    ))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }

    #[test]
    fn slots_find_what_the_parsed_item_holds() {
        let paths = [
            "filename",
            "location/row",
            "location/column",
            "end_location",
            "end_location/row",
            "fix/applicability",
            "fix/edits",
            "fix/edits/0/content",
            "list/1/name",
            "list/00",
            "",
        ];
        for text in [
            r#"{"filename":"a.py","location":{"row":3,"column":"4"},"end_location":{"row":3},"fix":{"applicability":"safe","edits":[{"content":"x"}]}}"#,
            // The last of a duplicated key wins, even when it lacks what the first had.
            r#"{"location":{"row":3,"column":4},"location":{"column":5},"filename":"a","filename":"b"}"#,
            r#"{"location":{"row":3},"location":7,"fix":null,"end_location":[1,2]}"#,
            r#"{"list":[{"name":"zero"},{"name":"one","x":[1]},{"name":"two"}]}"#,
            r#"{"list":{"1":{"name":"key"}},"location":[{"row":1}]}"#,
            r#"{"fix":{"edits":{"0":{"content":"obj"}}},"escaped\u0041":1,"filename":"\u00e9"}"#,
            r#"[1,2,3]"#,
            r#""a string item""#,
            r#"null"#,
            r#"{}"#,
        ] {
            let (slots, tree) = both(&paths, text);
            assert_eq!(slots, tree, "{text}");
        }
    }

    #[test]
    fn null_items_are_told_apart() {
        let paths = [keys("a/b")];
        let plan = ItemPlan::new(paths.iter().map(Vec::as_slice), None);
        let mut slots = plan.slots();
        assert_eq!(plan.read("null", &mut slots).ok(), Some(true));
        assert_eq!(plan.read(r#"{"a":null}"#, &mut slots).ok(), Some(false));
        assert!(plan.read(r#"{"a":}"#, &mut slots).is_err());
    }

    /// Each record's values, written as JSON.
    type Records = Vec<Vec<Option<String>>>;

    /// The records of the list as the slots give them, and as looking each path up in the
    /// elements of the list's value gives them.
    fn records_both(
        paths: &[&str],
        list: &str,
        inside: &[&str],
        text: &str,
    ) -> (Option<Records>, Option<Records>) {
        let paths: Vec<Vec<String>> = paths.iter().map(|p| keys(p)).collect();
        let list = keys(list);
        let inside: Vec<Vec<String>> = inside.iter().map(|p| keys(p)).collect();
        let plan = ItemPlan::new(
            paths.iter().map(Vec::as_slice),
            Some((list.as_slice(), inside.iter().map(Vec::as_slice).collect())),
        );
        assert!(plan.lists(), "{paths:?}");
        let mut slots = plan.slots();
        plan.read(text, &mut slots).expect("valid JSON");
        let show = |n: Option<&Node>| n.map(to_json);
        let via_slots = plan.records(&slots).map(|records| {
            records
                .map(|rec| {
                    inside
                        .iter()
                        .map(|p| show(plan.locate_in_record(p).and_then(|at| at.get(rec))))
                        .collect()
                })
                .collect()
        });
        let tree: Node = serde_json::from_str(text).expect("valid JSON");
        let via_tree = match tree.at(&list) {
            Some(n @ Node::Obj(_)) => Some(std::slice::from_ref(n)),
            Some(Node::Arr(items)) => Some(items.as_slice()),
            _ => None,
        }
        .map(|elements| {
            elements
                .iter()
                .map(|e| inside.iter().map(|p| show(e.at(p))).collect())
                .collect()
        });
        (via_slots, via_tree)
    }

    #[test]
    fn records_hold_what_the_list_elements_hold() {
        let paths = ["fix/applicability", "fix/message", "location/row"];
        let inside = [
            "content",
            "location/row",
            "location/column",
            "end_location/row",
            "0",
        ];
        for text in [
            r#"{"fix":{"applicability":"safe","edits":[{"content":"a","location":{"row":1,"column":2},"end_location":{"row":1}},{"content":null,"location":{"row":3}}],"message":"m"}}"#,
            r#"{"fix":{"edits":{"content":"one","location":{"row":5},"location":{"column":6}}}}"#,
            r#"{"fix":{"edits":[null,3,"x",[7,8],{"0":"key"}]}}"#,
            r#"{"fix":{"edits":[]}}"#,
            r#"{"fix":{"edits":null}}"#,
            r#"{"fix":{"edits":"text"}}"#,
            r#"{"fix":{"edits":[{"content":"first"}],"edits":[{"content":"second"},{"content":"third"}]}}"#,
            r#"{"fix":{"edits":[{"content":"gone"}]},"fix":{"applicability":"unsafe"}}"#,
            r#"{"fix":null}"#,
            r#"{}"#,
        ] {
            let (slots, tree) = records_both(&paths, "fix/edits", &inside, text);
            assert_eq!(slots, tree, "{text}");
        }
    }

    #[test]
    fn a_list_that_another_path_uses_is_kept_whole() {
        let list = keys("fix/edits");
        let inside = [keys("content")];
        let inside: Vec<&[String]> = inside.iter().map(Vec::as_slice).collect();
        for other in ["fix", "fix/edits", "fix/edits/0/content", ""] {
            let paths = [keys(other)];
            let plan = ItemPlan::new(
                paths.iter().map(Vec::as_slice),
                Some((list.as_slice(), inside.clone())),
            );
            assert!(!plan.lists(), "{other}");
            assert!(plan.locate(&list).is_some(), "{other}");
        }
        let plan = ItemPlan::new([], Some((list.as_slice(), vec![&[][..]])));
        assert!(!plan.lists(), "an empty path inside a record");
    }
}
