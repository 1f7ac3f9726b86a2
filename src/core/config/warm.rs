//! A gate's `warm` key: the tool's own daemon, kept by qgates (`core::warm`). Checked here so a
//! mistake is reported with the rest of the configuration, not at the first save.

use super::error::Problems;
use super::model::{RawGate, RawWarm, RawWarmSetting};
use super::spec::{DaemonProtocol, Template, WarmSpec};

/// The placeholders a warm command knows.
const FIELDS: [&str; 2] = ["state", "args"];

/// The gate's warm process as configured (after the preset's merge), or `None`: off, or none.
pub(super) fn compile_warm(id: &str, g: &RawGate, p: &mut Problems) -> Option<WarmSpec> {
    let spec = match g.warm.as_ref()? {
        RawWarmSetting::Switch(false) => return None,
        RawWarmSetting::Switch(true) => {
            let at = p.value(&["gates", id, "warm"]);
            p.at(at, format!("gate `{id}`: `warm: true` needs a warm process, and its preset has none (or the gate runs another program than the preset's). Give one: warm: {{ serve: [...], check: [...] }} or warm: {{ language_server: [...] }}, or remove `warm`."));
            return None;
        }
        RawWarmSetting::Spec(spec) => spec,
    };
    let commands = match (&spec.serve, &spec.check, &spec.language_server) {
        (Some(serve), Some(check), None) => vec![("serve", serve), ("check", check)],
        (None, None, Some(server)) => vec![("language_server", server)],
        _ => {
            let at = p.value(&["gates", id, "warm"]);
            p.at(at, format!("gate `{id}`: warm needs either `serve` and `check` (the tool's daemon and what asks it) or `language_server` (the tool's language server over stdio), e.g. warm: {{ language_server: [pyright-langserver, --stdio] }}."));
            return None;
        }
    };
    if spec.settings.is_some() && spec.language_server.is_none() {
        let at = p.value(&["gates", id, "warm", "settings"]);
        p.at(at, format!("gate `{id}`: warm.settings are a language server's; this warm process is a daemon. Remove `settings`, or give `language_server`."));
        return None;
    }
    let before = p.count();
    for (key, argv) in &commands {
        check_argv(id, key, argv, p);
    }
    if p.count() > before {
        return None;
    }
    Some(match &spec.language_server {
        Some(command) => WarmSpec::LanguageServer {
            command: command.clone(),
            settings: spec.settings.clone(),
        },
        None => WarmSpec::Daemon {
            serve: spec.serve.clone().unwrap_or_default(),
            check: spec.check.clone().unwrap_or_default(),
            ready_file: spec.ready_file.clone(),
            protocol: protocol(id, spec, p)?,
        },
    })
}

/// `protocol`: one qgates speaks, with the file that names the daemon's connection.
fn protocol(id: &str, spec: &RawWarm, p: &mut Problems) -> Option<Option<DaemonProtocol>> {
    let at = || p.value(&["gates", id, "warm", "protocol"]);
    match spec.protocol.as_deref() {
        None => Some(None),
        Some("dmypy") if spec.ready_file.is_some() => Some(Some(DaemonProtocol::Dmypy)),
        Some("dmypy") => {
            let at = at();
            p.at(at, format!("gate `{id}`: warm.protocol dmypy reads the daemon's connection from its status file; give it as warm.ready_file, e.g. \"{{state}}/dmypy.json\"."));
            None
        }
        Some(other) => {
            let at = at();
            p.at(at, format!("gate `{id}`: warm.protocol `{other}` is not one qgates speaks; the one known is dmypy. Without `protocol`, `check` is run for every check."));
            None
        }
    }
}

/// A warm command: not empty, and only `{state}` and `{args}` (an item of its own) in it.
fn check_argv(id: &str, key: &str, argv: &[String], p: &mut Problems) {
    if argv.is_empty() {
        let at = p.value(&["gates", id, "warm", key]);
        p.at(at, format!("gate `{id}`: warm.{key} is empty. Give an argv, e.g. [dmypy, --status-file, \"{{state}}/dmypy.json\", {key}]."));
        return;
    }
    for arg in argv {
        let unknown = Template::parse(arg)
            .fields()
            .find(|f| !FIELDS.contains(f))
            .map(str::to_string);
        let args_inside = arg != "{args}" && arg.contains("{args}");
        if unknown.is_none() && !args_inside {
            continue;
        }
        let at = p.item(&["gates", id, "warm", key], arg);
        let message = match unknown {
            Some(field) => format!(
                "gate `{id}`: warm.{key} uses `{{{field}}}`; only `{{state}}` (the warm process's folder) and `{{args}}` (the gate's arguments) are known there."
            ),
            None => format!(
                "gate `{id}`: in warm.{key}, `{{args}}` stands for several arguments and must be an item of its own, e.g. [dmypy, daemon, --, \"{{args}}\"]."
            ),
        };
        p.at(at, message);
    }
}

/// The gate's `warm` after merging with its preset's: the gate's own spec or `false` wins; the
/// preset's applies only while the gate runs the preset's program (a gate that runs
/// `python -m mypy` does not hand dmypy the right arguments).
pub(super) fn merged(gate: &RawGate, preset: &RawGate) -> Option<RawWarmSetting> {
    match &gate.warm {
        Some(RawWarmSetting::Spec(_)) | Some(RawWarmSetting::Switch(false)) => gate.warm.clone(),
        _ => {
            let program = |g: &RawGate| g.command.as_ref().and_then(|c| c.value.first().cloned());
            let same = gate.command.is_none() || program(gate) == program(preset);
            match (&preset.warm, same) {
                (Some(RawWarmSetting::Spec(_)), true) => preset.warm.clone(),
                _ => gate.warm.clone(),
            }
        }
    }
}
