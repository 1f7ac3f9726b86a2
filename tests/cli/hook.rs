//! `qgates hook claude|cursor|gemini` (docs/agents.md): each agent's payloads as its
//! documentation shows them, answered in its contract. Real ruff, real git repositories in
//! temporary folders, the workspace trusted through a trust file of the test's own.

use crate::common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use common::{git, write};
use serde_json::{Value, json};

const RUFF: &str = "version: 1\ngates:\n  ruff: { preset: ruff-lint }\n";

/// A repository with a pre-existing finding (`os` unused in a.py), committed.
struct Repo {
    ws: tempfile::TempDir,
    _trust: Option<tempfile::TempDir>,
    store: PathBuf,
}

impl Repo {
    fn new(config: &str, trusted: bool) -> Repo {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        write(root, "quality.yaml", config);
        write(root, "a.py", "import os\n\nx = 1\n");
        write(root, "b.py", "y = 2\n");
        write(root, "README.md", "# notes\n");
        write(root, ".gitignore", ".qgates/\n");
        git(root, &["init", "-q", "-b", "main"]);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "start"]);
        let (trust, store) = match trusted {
            true => {
                let (dir, store) = common::trusted(root);
                (Some(dir), store)
            }
            false => (None, root.join("..").join("no-trust.json")),
        };
        Repo {
            ws,
            _trust: trust,
            store,
        }
    }

    fn root(&self) -> &Path {
        self.ws.path()
    }

    fn path(&self, rel: &str) -> String {
        self.root().join(rel).display().to_string()
    }

    fn command(&self, agent: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_qgates"));
        cmd.current_dir(self.root())
            .env("PATH", common::path_with_tools())
            .env_remove("QGATES_LOG")
            .env("QGATES_TRUST_FILE", &self.store)
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("CURSOR_PROJECT_DIR")
            .env_remove("GEMINI_PROJECT_DIR")
            .args(["hook", agent])
            .args(args);
        cmd
    }

    /// Starts the hook with this payload on stdin.
    fn spawn(&self, agent: &str, payload: &str, args: &[&str]) -> Child {
        let mut child = self
            .command(agent, args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        child
    }

    /// Runs the hook with this payload on stdin.
    fn hook(&self, agent: &str, payload: &str, args: &[&str]) -> Output {
        self.spawn(agent, payload, args).wait_with_output().unwrap()
    }

    /// The answer on stdout (`None` when silent), after checking the hook exited 0.
    fn answer(&self, agent: &str, payload: Value) -> Option<Value> {
        let out = self.hook(agent, &payload.to_string(), &[]);
        answer_of(&out)
    }

    /// Claude Code's payload after its Edit tool changed `rel`.
    fn claude_edit(&self, rel: &str) -> Value {
        json!({
            "session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": self.root(),
            "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": self.path(rel), "old_string": "x", "new_string": "y"},
            "tool_response": {"filePath": self.path(rel), "success": true},
            "tool_use_id": "toolu_01", "duration_ms": 12
        })
    }

    fn claude_stop(&self, again: bool) -> Value {
        json!({
            "session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": self.root(),
            "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": again,
            "last_assistant_message": "Done."
        })
    }
}

fn answer_of(out: &Output) -> Option<Value> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (!stdout.trim().is_empty()).then(|| {
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
    })
}

fn reason(answer: &Option<Value>) -> &str {
    let a = answer.as_ref().expect("an answer");
    assert_eq!(a["decision"], "block", "{a}");
    a["reason"].as_str().unwrap()
}

#[test]
fn after_an_edit_claude_is_told_what_the_edit_made_and_nothing_else() {
    let repo = Repo::new(RUFF, true);
    write(repo.root(), "a.py", "import os\nimport sys\n\nx = 1\n");
    let answer = repo.answer("claude", repo.claude_edit("a.py"));
    let text = reason(&answer);
    assert!(
        text.starts_with("❌ 1/1 gates failed — 1 new violation (1 pre-existing; 2 auto-fixable)"),
        "{text}"
    );
    assert!(text.contains("\na.py (as checked: blob "), "{text}");
    assert!(
        text.contains("  2:8 error F401 `sys` imported but unused (ruff)\n    fix: delete 2:1-3:1"),
        "{text}"
    );
    assert!(
        !text.contains("`os`"),
        "the pre-existing finding is not said: {text}"
    );
    assert!(text.len() < 2000, "{} bytes", text.len());

    // The edit undone: nothing new, nothing said.
    write(repo.root(), "a.py", "import os\n\nx = 1\n");
    assert_eq!(repo.answer("claude", repo.claude_edit("a.py")), None);
}

#[test]
fn events_with_nothing_to_check_are_answered_with_silence() {
    let repo = Repo::new(RUFF, true);
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), "import sys\n").unwrap();
    let edit_of = |path: String| {
        let mut p = repo.claude_edit("a.py");
        p["tool_input"]["file_path"] = path.into();
        p
    };
    // A file outside the workspace, a deleted file, a file no gate checks.
    assert_eq!(
        repo.answer("claude", edit_of(outside.path().display().to_string())),
        None
    );
    assert_eq!(repo.answer("claude", edit_of(repo.path("gone.py"))), None);
    write(repo.root(), "README.md", "import sys\n");
    assert_eq!(repo.answer("claude", repo.claude_edit("README.md")), None);
    // Another tool.
    let bash = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": repo.root(),
                      "tool_input": {"command": "ls"}});
    assert_eq!(repo.answer("claude", bash), None);
    // MultiEdit of a clean file; Write of a new clean file, then of a new one with a finding.
    let mut multi = repo.claude_edit("b.py");
    multi["tool_name"] = "MultiEdit".into();
    multi["tool_input"] = json!({"file_path": repo.path("b.py"),
                                 "edits": [{"old_string": "y", "new_string": "z"}]});
    assert_eq!(repo.answer("claude", multi), None);
    let write_payload = |rel: &str, content: &str| {
        write(repo.root(), rel, content);
        json!({"hook_event_name": "PostToolUse", "tool_name": "Write", "cwd": repo.root(),
               "tool_input": {"file_path": repo.path(rel), "content": content},
               "tool_response": {"filePath": repo.path(rel), "success": true}})
    };
    assert_eq!(
        repo.answer("claude", write_payload("new_clean.py", "z = 3\n")),
        None
    );
    let answer = repo.answer("claude", write_payload("pkg/new.py", "import json\n"));
    assert!(
        reason(&answer).contains("pkg/new.py (as checked: blob "),
        "{answer:?}"
    );
}

#[test]
fn a_payload_that_cannot_be_read_is_a_hook_error_that_does_not_stop_the_agent() {
    let repo = Repo::new(RUFF, true);
    for (payload, says) in [
        ("not json", "the payload on stdin is not JSON"),
        (
            "{}",
            "no `hook_event_name`: this is not a Claude Code hook payload",
        ),
        (
            r#"{"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {}}"#,
            "without `file_path`",
        ),
    ] {
        let out = repo.hook("claude", payload, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{payload}: {stderr}");
        assert!(out.stdout.is_empty(), "{payload}");
        assert!(
            stderr.starts_with("qgates hook claude: ") && stderr.contains(says),
            "{stderr}"
        );
    }
    let out = repo.command("claude", &["--budget=0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("more than 0"));
}

#[test]
fn an_untrusted_workspace_runs_nothing_and_the_person_is_told_how_to_trust_it() {
    let config = "version: 1\ngates:\n  marker:\n    command: [touch, ran]\n    file_types: [.py]\n    parsing: { strategy: exit_code }\n";
    let repo = Repo::new(config, false);
    write(repo.root(), "a.py", "import sys\n");
    let answer = repo.answer("claude", repo.claude_edit("a.py")).unwrap();
    let message = answer["systemMessage"].as_str().unwrap();
    assert!(
        message.contains(&format!("`qgates trust {}`", repo.root().display())),
        "{message}"
    );
    assert!(
        answer.get("decision").is_none(),
        "the agent is not stopped: {answer}"
    );
    assert!(!repo.root().join("ran").exists(), "nothing ran");
}

#[test]
fn the_end_of_a_turn_is_held_for_new_findings_and_never_twice_for_the_same() {
    let repo = Repo::new(RUFF, true);
    // Nothing changed: the turn ends.
    assert_eq!(repo.answer("claude", repo.claude_stop(false)), None);

    write(repo.root(), "b.py", "import sys\n\ny = 2\n");
    let first = repo.answer("claude", repo.claude_stop(false));
    let text = reason(&first);
    assert!(text.contains("b.py (as checked: blob "), "{text}");
    assert!(text.contains("`sys` imported but unused"), "{text}");
    assert!(!text.contains("`os`"), "{text}");
    assert!(text.ends_with("fix them before ending the turn."), "{text}");

    // Kept going once, and the same finding is still there: the turn may end; the person hears.
    let again = repo.answer("claude", repo.claude_stop(true)).unwrap();
    assert!(again.get("decision").is_none(), "{again}");
    assert!(
        again["systemMessage"]
            .as_str()
            .unwrap()
            .contains("the same 1 new finding"),
        "{again}"
    );
    // Another finding after that is held again.
    write(repo.root(), "b.py", "import json\n\ny = 2\n");
    let other = repo.answer("claude", repo.claude_stop(true));
    assert!(
        reason(&other).contains("`json` imported but unused"),
        "{other:?}"
    );
    // Fixed: the turn ends.
    write(repo.root(), "b.py", "y = 2\n");
    assert_eq!(repo.answer("claude", repo.claude_stop(true)), None);
}

#[test]
fn gates_past_the_time_budget_are_stopped_and_left_to_the_end_of_the_turn() {
    let config = format!(
        "{RUFF}  slow:\n    command: [python3, -c, \"import time; time.sleep(300)\"]\n    kind: lint\n    pass_files: false\n    file_types: [.py]\n    parsing: {{ strategy: exit_code }}\n"
    );
    let repo = Repo::new(&config, true);
    write(repo.root(), "a.py", "import os\nimport sys\n\nx = 1\n");
    let out = repo.hook(
        "claude",
        &repo.claude_edit("a.py").to_string(),
        &["--budget", "3"],
    );
    let answer = answer_of(&out);
    let text = reason(&answer);
    assert!(text.contains("`sys` imported but unused"), "{text}");
    assert!(
        text.ends_with(
            "still running when this answer was due, so checked at the end of the turn: slow"
        ),
        "{text}"
    );
    let sleeping = Command::new("pgrep")
        .args(["-f", "time.sleep\\(300\\)"])
        .output()
        .unwrap();
    assert!(sleeping.stdout.is_empty(), "the slow gate was stopped");
}

#[test]
fn cursor_and_gemini_are_answered_in_their_own_contracts() {
    let repo = Repo::new(RUFF, true);
    write(repo.root(), "b.py", "import sys\n\ny = 2\n");
    // Cursor: afterFileEdit takes no answer; stop answers with a follow-up message, once.
    let base = json!({"conversation_id": "c1", "generation_id": "g1", "model": "m",
                      "cursor_version": "1.7", "workspace_roots": [repo.root()],
                      "user_email": null, "transcript_path": null});
    let mut edit = base.clone();
    edit["hook_event_name"] = "afterFileEdit".into();
    edit["file_path"] = repo.path("b.py").into();
    edit["edits"] = json!([{"old_string": "y = 2", "new_string": "import sys\n\ny = 2"}]);
    assert_eq!(repo.answer("cursor", edit), None);
    let stop = |loop_count: u64| {
        let mut s = base.clone();
        s["hook_event_name"] = "stop".into();
        s["status"] = "completed".into();
        s["loop_count"] = loop_count.into();
        s
    };
    let follow = repo.answer("cursor", stop(0)).unwrap();
    assert!(
        follow["followup_message"]
            .as_str()
            .unwrap()
            .contains("`sys` imported but unused"),
        "{follow}"
    );
    assert_eq!(
        repo.answer("cursor", stop(1)),
        None,
        "not twice for the same"
    );

    // Gemini CLI: AfterTool appends to the tool's result; AfterAgent retries the turn.
    let after_tool = json!({"session_id": "s", "transcript_path": "/tmp/t", "cwd": repo.root(),
                            "hook_event_name": "AfterTool", "timestamp": "2026-11-28T10:00:00Z",
                            "tool_name": "replace",
                            "tool_input": {"file_path": "b.py", "old_string": "y", "new_string": "y"},
                            "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}});
    let told = repo.answer("gemini", after_tool).unwrap();
    assert_eq!(told["hookSpecificOutput"]["hookEventName"], "AfterTool");
    assert!(
        told["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("`sys` imported but unused"),
        "{told}"
    );
    let after_agent = json!({"session_id": "s", "transcript_path": "/tmp/t", "cwd": repo.root(),
                             "hook_event_name": "AfterAgent", "timestamp": "2026-11-28T10:00:01Z",
                             "prompt": "fix it", "prompt_response": "Done.", "stop_hook_active": false});
    assert!(reason(&repo.answer("gemini", after_agent)).contains("`sys` imported but unused"));
}

#[test]
fn two_hook_events_at_once_are_both_answered() {
    let repo = Repo::new(RUFF, true);
    write(repo.root(), "a.py", "import os\nimport sys\n\nx = 1\n");
    write(repo.root(), "b.py", "import json\n\ny = 2\n");
    let spawn = |rel: &str| repo.spawn("claude", &repo.claude_edit(rel).to_string(), &[]);
    let (a, b) = (spawn("a.py"), spawn("b.py"));
    let a = answer_of(&a.wait_with_output().unwrap());
    let b = answer_of(&b.wait_with_output().unwrap());
    assert!(reason(&a).contains("`sys` imported but unused"), "{a:?}");
    assert!(reason(&b).contains("`json` imported but unused"), "{b:?}");
}
