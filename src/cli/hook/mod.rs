//! `qgates hook <agent>`: an agent's hook (docs/agents.md). It reads the hook's payload on
//! stdin, checks what the agent did (`check`), and answers in the agent's own contract
//! (`agents`). A hook never stops the agent by mistake: a payload it cannot read, or a problem
//! of qgates' own, exits 1, which each agent takes as a hook's error and goes on.

mod agents;
mod check;

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

pub use agents::Agent;
use agents::{Answer, Event};

use super::output;
use super::workspace;
use crate::core::report::exit;

/// The most a payload takes (a written file's whole content comes with it).
const PAYLOAD_BYTES: u64 = 64 << 20;

/// How long a check may take when the hook's entry does not say: a few seconds after an edit,
/// so the agent is not held up; a minute at the end of a turn.
const EDIT_BUDGET: Duration = Duration::from_secs(5);
const TURN_BUDGET: Duration = Duration::from_secs(60);

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent whose hook runs this.
    #[arg(value_enum)]
    pub agent: Agent,
    /// Seconds the check may take before it answers; gates still running then are stopped
    /// (default: 5 after an edit, 60 at the end of a turn).
    #[arg(long, value_name = "SECONDS", value_parser = budget)]
    pub budget: Option<f64>,
    /// The configuration file (default: quality.yaml or .qgates/quality.yaml in the workspace).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The workspace root (default: found from the agent's project folder).
    #[arg(long)]
    pub root: Option<PathBuf>,
}

fn budget(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() && n <= 3600.0 => Ok(n),
        _ => Err(format!(
            "`{s}`: seconds, more than 0 and at most 3600, e.g. 5 or 0.5"
        )),
    }
}

pub fn hook(a: HookArgs) -> i32 {
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().take(PAYLOAD_BYTES).read_to_end(&mut bytes) {
        return problem(a.agent, &format!("cannot read the payload on stdin: {e}"));
    }
    let payload: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return problem(
                a.agent,
                &format!(
                    "the payload on stdin is not JSON ({e}); `qgates hook {}` is run by {} as a hook, which sends it",
                    a.agent.arg(),
                    a.agent.name()
                ),
            );
        }
    };
    let payload = match a.agent.read(&payload) {
        Ok(p) => p,
        Err(e) => return problem(a.agent, &e),
    };
    let folder = payload.folder.clone().unwrap_or_else(|| PathBuf::from("."));
    let root = workspace::find_root(a.root.as_deref(), &folder);
    let config = workspace::config_file(a.config.as_deref());
    let budget = a.budget.map_or(
        match payload.event {
            Event::TurnEnd { .. } => TURN_BUDGET,
            _ => EDIT_BUDGET,
        },
        Duration::from_secs_f64,
    );
    let check = check::Check {
        root: &root,
        config_path: config.as_deref(),
        folder: &folder,
        budget,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return problem(a.agent, &format!("cannot start the runtime: {e}")),
    };
    let answer = runtime.block_on(check.answer(&payload.event));
    if let Answer::Person(text) = &answer {
        // Also where a person looks when the agent shows nothing (Cursor's hooks channel).
        output::print_stderr(&format!("{text}\n"));
    }
    if let Some(json) = a.agent.answer(&payload.event, &answer) {
        output::print_stdout(&format!("{json}\n"));
    }
    exit::GREEN
}

/// A hook's own problem: said on stderr, exit 1, which every agent takes as a hook's error
/// that does not stop it.
fn problem(agent: Agent, what: &str) -> i32 {
    output::print_stderr(&format!("qgates hook {}: {what}\n", agent.arg()));
    1
}
