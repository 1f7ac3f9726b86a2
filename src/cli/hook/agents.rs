//! Each agent's hook contract (docs/agents.md): what its payload on stdin says happened, and how
//! an answer is given so that the agent (or the person) reads it.
//!
//! - Claude Code: `PostToolUse` after `Edit`, `MultiEdit` or `Write` (`tool_input.file_path`),
//!   and `Stop`/`SubagentStop` (`stop_hook_active`). `{"decision": "block", "reason": …}` puts
//!   the reason before the model after an edit and keeps it working at the end of a turn;
//!   `systemMessage` is shown to the person only.
//! - Cursor: `afterFileEdit` (`file_path`) takes no answer, so its check only gets the results
//!   ready for the turn's end; `stop` (`loop_count`) answers with `followup_message`, sent as the
//!   next message.
//! - Gemini CLI: `AfterTool` after `write_file` or `replace` (`tool_input.file_path`) answers with
//!   `hookSpecificOutput.additionalContext`, appended to the tool's result; `AfterAgent`
//!   (`stop_hook_active`) with `{"decision": "block", "reason": …}`, which retries the turn.

use std::path::PathBuf;

use clap::ValueEnum;
use serde_json::{Value, json};

/// The agents whose hooks qgates answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Agent {
    Claude,
    Cursor,
    Gemini,
}

/// What the payload says happened.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// The agent wrote these files (absolute, or relative to `cwd`).
    Edited(Vec<PathBuf>),
    /// The agent is ending its turn; `again`: a hook already kept it going once.
    TurnEnd { again: bool },
    /// An event qgates has nothing to do with (another tool, an aborted turn).
    Other,
}

/// A payload read: the event, and where the agent works.
#[derive(Debug)]
pub struct Payload {
    pub event: Event,
    /// The agent's project folder: from its environment, else the payload's `cwd`.
    pub folder: Option<PathBuf>,
}

/// What to answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// Nothing to say.
    Silent,
    /// For the agent: findings after an edit, or why the turn must go on.
    Agent(String),
    /// For the person, not the agent: why nothing was checked.
    Person(String),
}

impl Agent {
    /// As the command line names it: `qgates hook claude`.
    pub fn arg(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Cursor => "cursor",
            Agent::Gemini => "gemini",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Cursor => "Cursor",
            Agent::Gemini => "Gemini CLI",
        }
    }

    /// The event a payload describes.
    pub fn read(self, payload: &Value) -> Result<Payload, String> {
        let event_name = payload["hook_event_name"].as_str().unwrap_or("");
        let file = || -> Result<Vec<PathBuf>, String> {
            let input = match self {
                Agent::Cursor => payload,
                Agent::Claude | Agent::Gemini => &payload["tool_input"],
            };
            match input["file_path"].as_str() {
                Some(path) if !path.is_empty() => Ok(vec![PathBuf::from(path)]),
                _ => Err(format!(
                    "a {event_name} payload without `file_path`, which {} documents",
                    self.name()
                )),
            }
        };
        let tool = payload["tool_name"].as_str().unwrap_or("");
        let event = match (self, event_name) {
            (Agent::Claude, "PostToolUse") => match tool {
                "Edit" | "MultiEdit" | "Write" => Event::Edited(file()?),
                _ => Event::Other,
            },
            (Agent::Claude, "Stop" | "SubagentStop") => Event::TurnEnd {
                again: payload["stop_hook_active"] == true,
            },
            (Agent::Cursor, "afterFileEdit") => Event::Edited(file()?),
            (Agent::Cursor, "stop") => match payload["status"].as_str() {
                // An aborted or failed turn is the person's to look at.
                Some("completed") | None => Event::TurnEnd {
                    again: payload["loop_count"].as_u64().is_some_and(|n| n > 0),
                },
                Some(_) => Event::Other,
            },
            (Agent::Gemini, "AfterTool") => match tool {
                "write_file" | "replace" => Event::Edited(file()?),
                _ => Event::Other,
            },
            (Agent::Gemini, "AfterAgent") => Event::TurnEnd {
                again: payload["stop_hook_active"] == true,
            },
            (_, "") => {
                return Err(format!(
                    "no `hook_event_name`: this is not a {} hook payload",
                    self.name()
                ));
            }
            _ => Event::Other,
        };
        Ok(Payload {
            event,
            folder: self.folder(payload),
        })
    }

    /// The project folder the agent names, in the order its documentation gives.
    fn folder(self, payload: &Value) -> Option<PathBuf> {
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let from_payload = match self {
            Agent::Cursor => payload["workspace_roots"][0].as_str(),
            Agent::Claude | Agent::Gemini => payload["cwd"].as_str(),
        };
        let variable = match self {
            Agent::Claude => "CLAUDE_PROJECT_DIR",
            Agent::Cursor => "CURSOR_PROJECT_DIR",
            Agent::Gemini => "GEMINI_PROJECT_DIR",
        };
        env(variable)
            .map(PathBuf::from)
            .or_else(|| from_payload.filter(|p| !p.is_empty()).map(PathBuf::from))
    }

    /// The answer as this agent reads it: what to print on stdout (nothing when silent).
    pub fn answer(self, event: &Event, answer: &Answer) -> Option<Value> {
        let turn_end = matches!(event, Event::TurnEnd { .. });
        match (self, answer) {
            (_, Answer::Silent) => None,
            (Agent::Claude | Agent::Gemini, Answer::Person(text)) => {
                Some(json!({"systemMessage": text}))
            }
            // Cursor shows a person nothing from these hooks; its hooks channel logs stderr.
            (Agent::Cursor, Answer::Person(_)) => None,
            (Agent::Claude, Answer::Agent(text)) => {
                Some(json!({"decision": "block", "reason": text}))
            }
            (Agent::Gemini, Answer::Agent(text)) if turn_end => {
                Some(json!({"decision": "block", "reason": text}))
            }
            (Agent::Gemini, Answer::Agent(text)) => Some(json!({
                "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": text}
            })),
            (Agent::Cursor, Answer::Agent(text)) if turn_end => {
                Some(json!({"followup_message": text}))
            }
            // `afterFileEdit` takes no answer.
            (Agent::Cursor, Answer::Agent(_)) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_payload_is_read_as_its_documentation_describes_it() {
        let claude = |v: Value| Agent::Claude.read(&v).map(|p| p.event);
        assert_eq!(
            claude(
                json!({"hook_event_name": "PostToolUse", "tool_name": "Edit", "cwd": "/w",
                          "tool_input": {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"}})
            ),
            Ok(Event::Edited(vec![PathBuf::from("/w/a.py")]))
        );
        assert_eq!(
            claude(
                json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "ls"}})
            ),
            Ok(Event::Other)
        );
        assert_eq!(
            claude(json!({"hook_event_name": "Stop", "stop_hook_active": true})),
            Ok(Event::TurnEnd { again: true })
        );
        let e = claude(
            json!({"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {}}),
        )
        .unwrap_err();
        assert!(e.contains("without `file_path`"), "{e}");
        assert!(
            claude(json!({"tool_name": "Write"}))
                .unwrap_err()
                .contains("not a Claude Code hook payload")
        );

        let cursor = |v: Value| Agent::Cursor.read(&v).map(|p| p.event);
        assert_eq!(
            cursor(
                json!({"hook_event_name": "afterFileEdit", "file_path": "/w/a.ts",
                          "edits": [{"old_string": "a", "new_string": "b"}], "workspace_roots": ["/w"]})
            ),
            Ok(Event::Edited(vec![PathBuf::from("/w/a.ts")]))
        );
        assert_eq!(
            cursor(json!({"hook_event_name": "stop", "status": "completed", "loop_count": 1})),
            Ok(Event::TurnEnd { again: true })
        );
        assert_eq!(
            cursor(json!({"hook_event_name": "stop", "status": "aborted", "loop_count": 0})),
            Ok(Event::Other)
        );

        let gemini = |v: Value| Agent::Gemini.read(&v).map(|p| p.event);
        assert_eq!(
            gemini(
                json!({"hook_event_name": "AfterTool", "tool_name": "replace",
                          "tool_input": {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}})
            ),
            Ok(Event::Edited(vec![PathBuf::from("src/a.py")]))
        );
        assert_eq!(
            gemini(json!({"hook_event_name": "AfterAgent", "stop_hook_active": false})),
            Ok(Event::TurnEnd { again: false })
        );
    }

    #[test]
    fn each_agent_is_answered_in_its_own_shape() {
        let edit = Event::Edited(vec![]);
        let end = Event::TurnEnd { again: false };
        let say = Answer::Agent("1 new violation".into());
        assert_eq!(
            Agent::Claude.answer(&edit, &say),
            Some(json!({"decision": "block", "reason": "1 new violation"}))
        );
        assert_eq!(
            Agent::Gemini.answer(&edit, &say),
            Some(
                json!({"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "1 new violation"}})
            )
        );
        assert_eq!(
            Agent::Gemini.answer(&end, &say),
            Some(json!({"decision": "block", "reason": "1 new violation"}))
        );
        assert_eq!(Agent::Cursor.answer(&edit, &say), None);
        assert_eq!(
            Agent::Cursor.answer(&end, &say),
            Some(json!({"followup_message": "1 new violation"}))
        );
        assert_eq!(
            Agent::Claude.answer(&end, &Answer::Person("trust it".into())),
            Some(json!({"systemMessage": "trust it"}))
        );
        assert_eq!(Agent::Claude.answer(&end, &Answer::Silent), None);
    }
}
