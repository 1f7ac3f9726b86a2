//! `qgates status [DIR]`: what an editor's health check needs to know about a workspace — the
//! configuration in use and whether it is valid, whether the language server may run it
//! (trust), and whether each gate's tool can be found — without running any gate.

use std::path::Path;

use serde_json::{Value, json};

use super::args::StatusArgs;
use super::output::print_stdout;
use super::workspace::{config_file, given_workspace};
use crate::core::api::resolve_program;
use crate::core::api::shared_cache::{self as remote_cache, Store};
use crate::core::config::{self, ConfigSource};
use crate::core::report::exit;
use crate::core::trust::{FileHashes, Manifest, TrustStore};
use crate::core::workspace::qgates_dir::timestamp;
use crate::core::workspace::watch_notes;

pub fn status(a: StatusArgs) -> i32 {
    let root = match given_workspace(a.dir.as_deref(), "to inspect") {
        Ok(root) => root,
        Err(code) => return code,
    };
    let config_path = config_file(a.config.as_deref());
    let report = inspect(&root, config_path.as_deref());
    let ok = report["config_ok"] == Value::Bool(true);
    if a.json {
        print_stdout(&format!("{report}\n"));
    } else {
        print_stdout(&human(&report));
    }
    if ok { exit::GREEN } else { exit::USAGE }
}

fn inspect(root: &Path, explicit: Option<&Path>) -> Value {
    let mut out = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "root": root.display().to_string(),
    });
    let config = match config::load_for_workspace(root, explicit) {
        Ok(c) => c,
        Err(e) => {
            // The file that failed is named in the message; name it in the field too.
            let file = explicit
                .map(Path::to_path_buf)
                .or_else(|| config::discover(root));
            out["config"] = json!(file.map(|p| p.display().to_string()));
            out["config_ok"] = json!(false);
            out["config_errors"] = json!(e.to_string());
            out["trusted"] = json!(false);
            return out;
        }
    };
    let file = match &config.source {
        ConfigSource::File(p) => Some(p.display().to_string()),
        ConfigSource::Embedded => None,
    };
    out["config"] = json!(file);
    out["config_label"] = json!(file.unwrap_or_else(|| config::embedded_label(&config).into()));
    out["config_ok"] = json!(true);
    let manifest = Manifest::of(&config, root, &FileHashes::default());
    out["trusted"] =
        json!(TrustStore::for_user().is_some_and(|s| s.is_trusted(root, &manifest.hash)));
    out["runs"] = json!(manifest.describe());
    let gates: Vec<Value> = config
        .gates
        .iter()
        .map(|g| {
            let program = g.command.first().map(String::as_str).unwrap_or("");
            let cwd = g.cwd_in(root);
            let mut gate = json!({"id": g.id, "command": program, "optional": g.optional});
            match resolve_program(program, root, &cwd) {
                Ok(p) => {
                    gate["found"] = json!(true);
                    gate["path"] = json!(p.display().to_string());
                }
                Err(why) => {
                    gate["found"] = json!(false);
                    gate["problem"] = json!(why);
                    gate["install"] = json!(g.install);
                }
            }
            gate
        })
        .collect();
    out["gates"] = Value::Array(gates);
    if let Some(remote) = shared_cache(&config.cache) {
        out["remote_cache"] = remote;
    }
    let lost: Vec<Value> = watch_notes::live(root)
        .into_iter()
        .map(|n| json!({"pid": n.pid, "since": timestamp(n.since), "problem": n.problem}))
        .collect();
    if !lost.is_empty() {
        out["file_watch_lost"] = Value::Array(lost);
    }
    let warm: Vec<Value> = (crate::core::warm::list(root).iter())
        .map(|p| {
            json!({
                "gate": p.gate, "pid": p.pid, "age_s": p.age.as_secs(), "memory_bytes": p.memory,
                "idle_left_s": p.idle_left.map(|d| d.as_secs()), "ready": p.ready,
                "command": p.command, "line": super::daemon::describe(p),
            })
        })
        .collect();
    out["warm"] = Value::Array(warm);
    out
}

/// The shared cache in force (URL without credentials) and whether it answered a read.
fn shared_cache(settings: &config::CacheSettings) -> Option<Value> {
    let effective = match remote_cache::effective(settings)? {
        Ok(e) => e,
        Err(why) => return Some(json!({"answered": false, "problem": why})),
    };
    let mut out = json!({"url": effective.url.to_string(), "read_only": effective.read_only});
    let answer = Store::open(&effective.url).and_then(|store| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the runtime: {e}"))?;
        let probe = async { tokio::time::timeout(effective.timeout, store.probe()).await };
        match runtime.block_on(probe) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(failure)) => Err(failure.to_string()),
            Err(_) => Err(format!(
                "did not answer within {} ms",
                effective.timeout.as_millis()
            )),
        }
    });
    out["answered"] = json!(answer.is_ok());
    if let Err(why) = answer {
        out["problem"] = json!(why);
    }
    Some(out)
}

fn human(r: &Value) -> String {
    let mut s = format!(
        "qgates {}\nworkspace: {}\nconfiguration: {}\n",
        r["version"].as_str().unwrap_or(""),
        r["root"].as_str().unwrap_or(""),
        r["config_label"]
            .as_str()
            .or(r["config"].as_str())
            .unwrap_or("quality.yaml"),
    );
    if r["config_ok"] != Value::Bool(true) {
        s.push_str(&format!(
            "configuration errors:\n{}\n",
            r["config_errors"].as_str().unwrap_or("")
        ));
        return s;
    }
    s.push_str(if r["trusted"] == Value::Bool(true) {
        "trusted: yes (the language server and `qgates mcp` run its gates)\n"
    } else {
        "trusted: no (the language server asks first; `qgates trust` records it)\n"
    });
    s.push_str(&format!("runs:\n{}", r["runs"].as_str().unwrap_or("")));
    let remote = &r["remote_cache"];
    if !remote.is_null() {
        let url = remote["url"].as_str().unwrap_or("(not usable)");
        let mode = if remote["read_only"] == Value::Bool(true) {
            ", read only"
        } else {
            ""
        };
        match remote["problem"].as_str() {
            None => s.push_str(&format!("shared cache: {url}{mode}: answered\n")),
            Some(why) => s.push_str(&format!("shared cache: {url}{mode}: no answer ({why})\n")),
        }
    }
    for n in r["file_watch_lost"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "file watch: the language server (pid {}) lost it at {} UTC: {}; each save takes a whole git status until it restarts\n",
            n["pid"],
            n["since"].as_str().unwrap_or(""),
            n["problem"].as_str().unwrap_or(""),
        ));
    }
    for w in r["warm"].as_array().into_iter().flatten() {
        s.push_str(&format!("warm: {}\n", w["line"].as_str().unwrap_or("")));
    }
    for g in r["gates"].as_array().into_iter().flatten() {
        let id = g["id"].as_str().unwrap_or("");
        match g["path"].as_str() {
            Some(p) => s.push_str(&format!("gate {id}: {p}\n")),
            None => s.push_str(&format!(
                "gate {id}: {}{}{}\n",
                g["problem"].as_str().unwrap_or("not found"),
                match g["install"].as_str() {
                    Some(how) => format!(". Install it: {how}"),
                    None => String::new(),
                },
                if g["optional"] == Value::Bool(true) {
                    " (optional: skipped when missing)"
                } else {
                    ""
                }
            )),
        }
    }
    s
}
