//! `qgates init --agent claude|cursor|gemini` (docs/agents.md): the hook and MCP server entries
//! merged into the agent's settings files, the project's own entries kept, nothing written to a
//! file it cannot read.

use crate::common;

use std::path::Path;

use common::{qgates, write};
use serde_json::{Value, json};

fn init(root: &Path, agent: &str) -> (i32, String, String) {
    let out = qgates(root)
        .args(["init", "--agent", agent])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A workspace with a quality.yaml of its own.
fn configured() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        "quality.yaml",
        "version: 1\ngates:\n  ruff: { preset: ruff-lint }\n",
    );
    ws
}

fn json_at(root: &Path, rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join(rel)).unwrap()).unwrap()
}

#[test]
fn claude_gets_its_hooks_and_mcp_server_beside_the_projects_own() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(root, "app.py", "x = 1\n");
    write(root, "pyproject.toml", "[tool.ruff]\nline-length = 100\n");
    // The project's own hook and MCP server, in its own formatting.
    let own = json!({
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}]}
    });
    write(
        root,
        ".claude/settings.json",
        &serde_json::to_string_pretty(&own).unwrap(),
    );
    write(
        root,
        ".mcp.json",
        r#"{"mcpServers": {"db": {"command": "db-mcp"}}}"#,
    );

    let (code, stdout, stderr) = init(root, "claude");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(root.join("quality.yaml").is_file(), "the configuration too");
    for line in [
        ".claude/settings.json: added the PostToolUse hook (qgates hook claude)",
        ".claude/settings.json: added the Stop hook (qgates hook claude)",
        ".mcp.json: added the MCP server `qgates` (qgates mcp)",
    ] {
        assert!(stdout.contains(line), "{line} in:\n{stdout}");
    }
    let settings = json_at(root, ".claude/settings.json");
    assert_eq!(settings["permissions"], own["permissions"]);
    let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(
        post[0], own["hooks"]["PostToolUse"][0],
        "the project's first"
    );
    assert_eq!(post[1]["matcher"], "Edit|MultiEdit|Write");
    assert_eq!(post[1]["hooks"][0]["command"], "qgates hook claude");
    assert_eq!(
        settings["hooks"]["Stop"][0]["hooks"][0]["command"],
        "qgates hook claude"
    );
    let mcp = json_at(root, ".mcp.json");
    assert_eq!(mcp["mcpServers"]["db"]["command"], "db-mcp");
    assert_eq!(
        mcp["mcpServers"]["qgates"],
        json!({"command": "qgates", "args": ["mcp"]})
    );

    // Again: everything is there, nothing changes.
    let before = std::fs::read_to_string(root.join(".claude/settings.json")).unwrap();
    let (code, stdout, _) = init(root, "claude");
    assert_eq!(code, 0);
    assert!(stdout.starts_with("Kept "), "{stdout}");
    assert!(
        stdout.contains("the Stop hook runs qgates already; left as it is"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(),
        before
    );
}

#[test]
fn a_settings_file_that_is_not_json_is_left_alone_and_nothing_is_written() {
    let ws = configured();
    let root = ws.path();
    let broken = "{\n  // a comment\n  \"hooks\": {}\n}\n";
    write(root, ".claude/settings.json", broken);
    let (code, _, stderr) = init(root, "claude");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(".claude/settings.json is not JSON that qgates can read"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".claude/settings.json")).unwrap(),
        broken
    );
    assert!(!root.join(".mcp.json").exists(), "no file written");

    write(root, ".claude/settings.json", r#"{"hooks": {"Stop": "x"}}"#);
    let (code, _, stderr) = init(root, "claude");
    assert_eq!(code, 2);
    assert!(stderr.contains("`hooks.Stop` in"), "{stderr}");
}

#[test]
fn cursor_and_gemini_get_their_own_files_and_shapes() {
    let ws = configured();
    let root = ws.path();
    let (code, stdout, stderr) = init(root, "cursor");
    assert_eq!(code, 0, "{stdout}{stderr}");
    let hooks = json_at(root, ".cursor/hooks.json");
    assert_eq!(hooks["version"], 1);
    assert_eq!(
        hooks["hooks"]["afterFileEdit"][0]["command"],
        "qgates hook cursor"
    );
    assert_eq!(hooks["hooks"]["stop"][0]["command"], "qgates hook cursor");
    assert_eq!(
        json_at(root, ".cursor/mcp.json")["mcpServers"]["qgates"]["args"],
        json!(["mcp"])
    );

    let (code, stdout, stderr) = init(root, "gemini");
    assert_eq!(code, 0, "{stdout}{stderr}");
    let settings = json_at(root, ".gemini/settings.json");
    assert_eq!(
        settings["hooks"]["AfterTool"][0]["matcher"],
        "write_file|replace"
    );
    assert_eq!(
        settings["hooks"]["AfterTool"][0]["hooks"][0]["command"],
        "qgates hook gemini"
    );
    assert_eq!(
        settings["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"],
        120000
    );
    assert_eq!(settings["mcpServers"]["qgates"]["command"], "qgates");
}

/// The Claude Code plugin in `editors/claude` carries the same hooks and server that
/// `init --agent claude` writes, and its skill names what the answers hold.
#[test]
fn the_claude_plugin_has_what_init_writes() {
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/claude");
    let manifest = json_at(&plugin, ".claude-plugin/plugin.json");
    assert_eq!(manifest["name"], "qgates");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));

    let ws = configured();
    let root = ws.path();
    let (code, _, stderr) = init(root, "claude");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        json_at(&plugin, "hooks/hooks.json")["hooks"],
        json_at(root, ".claude/settings.json")["hooks"]
    );
    assert_eq!(json_at(&plugin, ".mcp.json"), json_at(root, ".mcp.json"));

    let skill = std::fs::read_to_string(plugin.join("skills/qgates/SKILL.md")).unwrap();
    assert!(
        skill.starts_with("---\nname: qgates\ndescription: "),
        "{skill}"
    );
    for said in [
        "as checked: blob",
        "fix: delete 3:1-4:1",
        "run_quality_gates",
        "still running",
    ] {
        assert!(skill.contains(said), "{said}");
    }
}
