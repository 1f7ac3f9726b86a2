//! `qgates init --agent claude|cursor|gemini`: the agent's hook entries (`qgates hook …`) and
//! its MCP server entry (`qgates mcp`), merged into the agent's own settings files
//! (docs/agents.md). What is there stays: entries are added beside the project's own, an entry
//! already there is left as it is, and a file that is not a JSON object is not touched.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::hook::Agent;

/// One settings file and the entries qgates puts in it.
struct Settings {
    file: &'static str,
    /// (path of keys to an array, the entry added to it)
    hooks: Vec<(&'static [&'static str], Value)>,
    /// The `mcpServers` entry, for the file that holds the agent's MCP servers.
    mcp: bool,
}

/// The files each agent reads, and what goes in them. Time limits are the agent's, in its unit:
/// more than the hook's own budget (5 s after an edit, 60 s at the end of a turn).
fn settings(agent: Agent) -> Vec<Settings> {
    match agent {
        Agent::Claude => vec![
            Settings {
                file: ".claude/settings.json",
                hooks: vec![
                    (
                        &["hooks", "PostToolUse"],
                        json!({"matcher": "Edit|MultiEdit|Write",
                               "hooks": [{"type": "command", "command": "qgates hook claude", "timeout": 30}]}),
                    ),
                    (
                        &["hooks", "Stop"],
                        json!({"hooks": [{"type": "command", "command": "qgates hook claude", "timeout": 120}]}),
                    ),
                ],
                mcp: false,
            },
            Settings {
                file: ".mcp.json",
                hooks: Vec::new(),
                mcp: true,
            },
        ],
        Agent::Cursor => vec![
            Settings {
                file: ".cursor/hooks.json",
                hooks: vec![
                    (
                        &["hooks", "afterFileEdit"],
                        json!({"command": "qgates hook cursor", "timeout": 30}),
                    ),
                    (
                        &["hooks", "stop"],
                        json!({"command": "qgates hook cursor", "timeout": 120}),
                    ),
                ],
                mcp: false,
            },
            Settings {
                file: ".cursor/mcp.json",
                hooks: Vec::new(),
                mcp: true,
            },
        ],
        Agent::Gemini => vec![Settings {
            file: ".gemini/settings.json",
            hooks: vec![
                (
                    &["hooks", "AfterTool"],
                    json!({"matcher": "write_file|replace",
                           "hooks": [{"name": "qgates", "type": "command", "command": "qgates hook gemini", "timeout": 30000}]}),
                ),
                (
                    &["hooks", "AfterAgent"],
                    json!({"hooks": [{"name": "qgates-turn", "type": "command", "command": "qgates hook gemini", "timeout": 120000}]}),
                ),
            ],
            mcp: true,
        }],
    }
}

/// Writes the agent's entries into the files under `root`; returns a line per change (or per
/// entry that was there already). Nothing is written to a file that cannot be read as a JSON
/// object.
pub fn set_up(agent: Agent, root: &Path) -> Result<Vec<String>, String> {
    let mut said = Vec::new();
    // Every file is read first, so a bad one leaves all of them as they were.
    let mut planned: Vec<(PathBuf, Value, Vec<String>)> = Vec::new();
    for s in settings(agent) {
        let path = root.join(s.file);
        let mut doc = read(&path)?;
        let mut changes = Vec::new();
        let top = (doc.as_object_mut())
            .ok_or_else(|| format!("{} is not a JSON object", path.display()))?;
        if top.is_empty() && s.file.ends_with("hooks.json") {
            top.insert("version".into(), json!(1));
        }
        for (keys, entry) in &s.hooks {
            let list = array_at(top, keys, &path)?;
            let event = keys[keys.len() - 1];
            if list.iter().any(mentions_qgates) {
                said.push(format!(
                    "{}: the {event} hook runs qgates already; left as it is",
                    s.file
                ));
            } else {
                list.push(entry.clone());
                changes.push(format!(
                    "{}: added the {event} hook ({})",
                    s.file,
                    command_of(entry)
                ));
            }
        }
        if s.mcp {
            let servers = object_at(top, "mcpServers", &path)?;
            if servers.contains_key("qgates") {
                said.push(format!(
                    "{}: the MCP server `qgates` is there already; left as it is",
                    s.file
                ));
            } else {
                servers.insert(
                    "qgates".into(),
                    json!({"command": "qgates", "args": ["mcp"]}),
                );
                changes.push(format!(
                    "{}: added the MCP server `qgates` (qgates mcp)",
                    s.file
                ));
            }
        }
        if !changes.is_empty() {
            planned.push((path, doc, changes));
        }
    }
    for (path, doc, changes) in planned {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        said.extend(changes);
    }
    Ok(said)
}

/// The file's JSON object; an empty one when there is no file.
fn read(path: &Path) -> Result<Value, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(json!({})),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err(format!(
            "{} is not a JSON object; nothing was written",
            path.display()
        )),
        Err(e) => Err(format!(
            "{} is not JSON that qgates can read ({e}); nothing was written. Fix it (comments are not JSON), or add the entries of docs/agents.md by hand",
            path.display()
        )),
    }
}

/// The array at `keys` (made when missing); an error when something else is there.
fn array_at<'a>(
    top: &'a mut Map<String, Value>,
    keys: &[&str],
    path: &Path,
) -> Result<&'a mut Vec<Value>, String> {
    let (last, parents) = keys.split_last().expect("a key");
    let mut at = top;
    for key in parents {
        at = object_at(at, key, path)?;
    }
    at.entry(*last)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| {
            format!(
                "`{}` in {} is not a list; nothing was written",
                keys.join("."),
                path.display()
            )
        })
}

fn object_at<'a>(
    at: &'a mut Map<String, Value>,
    key: &str,
    path: &Path,
) -> Result<&'a mut Map<String, Value>, String> {
    at.entry(key)
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| {
            format!(
                "`{key}` in {} is not an object; nothing was written",
                path.display()
            )
        })
}

/// Whether an entry runs `qgates hook` (directly or in its group's hooks).
fn mentions_qgates(entry: &Value) -> bool {
    let runs = |h: &Value| {
        h["command"]
            .as_str()
            .is_some_and(|c| c.contains("qgates hook"))
    };
    runs(entry)
        || entry["hooks"]
            .as_array()
            .is_some_and(|hs| hs.iter().any(runs))
}

fn command_of(entry: &Value) -> String {
    let command = entry["command"]
        .as_str()
        .or_else(|| entry["hooks"][0]["command"].as_str());
    command.unwrap_or("qgates hook").to_string()
}
