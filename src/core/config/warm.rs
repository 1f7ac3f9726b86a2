//! A gate's `warm` key: the tool's own daemon, kept by qgates (`core::warm`). Checked here so a
//! mistake is reported with the rest of the configuration, not at the first save.

use super::error::Problems;
use super::model::{RawGate, RawWarmSetting};
use super::spec::{Template, WarmSpec};

/// The placeholders a warm command knows.
const FIELDS: [&str; 2] = ["state", "args"];

/// The gate's warm process as configured (after the preset's merge), or `None`: off, or none.
pub(super) fn compile_warm(id: &str, g: &RawGate, p: &mut Problems) -> Option<WarmSpec> {
    let spec = match g.warm.as_ref()? {
        RawWarmSetting::Switch(false) => return None,
        RawWarmSetting::Switch(true) => {
            let at = p.value(&["gates", id, "warm"]);
            p.at(at, format!("gate `{id}`: `warm: true` needs a warm process, and its preset has none (or the gate runs another program than the preset's). Give one: warm: {{ serve: [...], check: [...] }}, or remove `warm`."));
            return None;
        }
        RawWarmSetting::Spec(spec) => spec,
    };
    for (key, argv) in [("serve", &spec.serve), ("check", &spec.check)] {
        if argv.is_empty() {
            let at = p.value(&["gates", id, "warm", key]);
            p.at(at, format!("gate `{id}`: warm.{key} is empty. Give an argv, e.g. [dmypy, --status-file, \"{{state}}/dmypy.json\", {key}]."));
            continue;
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
    Some(WarmSpec {
        serve: spec.serve.clone(),
        check: spec.check.clone(),
        ready_file: spec.ready_file.clone(),
    })
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
