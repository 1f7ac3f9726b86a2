//! The agent server (`qgates mcp`): on the wire, driven by the official Python SDK
//! (client.py here), workspace trust, and clean-room runs asked for by an agent or an editor.
//! One test binary: each file below is a module.

#[path = "../common/mod.rs"]
mod common;

mod answer_size;
mod clean_room_servers;
mod mcp_protocol;
mod mcp_server;
mod trust_mcp;
