//! What the message guards (`lsp::framing`, `mcp::line_guard`) need to answer a message their
//! protocol library would not take: its id read leniently, its JSON-RPC error answer, and the
//! largest message either takes.

use serde::Deserialize;
use serde_json::{Value, json};

/// The largest message (an LSP body, an MCP line) the guards take: 64 MiB, far above a large
/// file in `didOpen`. A message over it is discarded as it is read, so a huge or endless one
/// cannot make the server swallow memory until the system kills it.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// What the guards say of a message over `MAX_MESSAGE_BYTES`.
pub fn too_large(size: impl std::fmt::Display) -> String {
    format!(
        "a {size}-byte message is over the limit of {MAX_MESSAGE_BYTES} bytes (64 MiB); it was discarded"
    )
}

/// The `id`, `method` and `jsonrpc` of a message, read leniently: the params are skipped
/// unchecked, so a message too deep or not UTF-8 throughout still has them.
#[derive(Deserialize, Default)]
pub struct Head {
    /// `None` when there is no `id` (a notification), `Some(Null)` for `"id": null`.
    #[serde(default, deserialize_with = "present")]
    pub id: Option<Value>,
    #[serde(default)]
    pub method: Option<Value>,
    #[serde(default)]
    pub jsonrpc: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl Head {
    /// The head of a message; an empty one when it has none (only an object has an id, though
    /// serde would read a struct from an array too).
    pub fn of(message: &[u8]) -> Head {
        match message.trim_ascii_start().first() {
            Some(b'{') => serde_json::from_slice(message).unwrap_or_default(),
            _ => Head::default(),
        }
    }

    /// Whether the id is one JSON-RPC allows (or absent).
    pub fn id_fits(&self) -> bool {
        matches!(self.id, None | Some(Value::Number(_) | Value::String(_)))
    }

    /// The error answer the message is owed, with its id when it has a valid one; `None` for a
    /// notification (a string method and no id), which gets no answer.
    pub fn answer(self, code: i64, message: &str) -> Option<Value> {
        match self.id {
            None if matches!(self.method, Some(Value::String(_))) => None,
            id => {
                let id = match id {
                    Some(id @ (Value::Number(_) | Value::String(_))) => id,
                    _ => Value::Null,
                };
                Some(error_answer(id, code, message))
            }
        }
    }
}

/// A JSON-RPC error answer.
pub fn error_answer(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id})
}
