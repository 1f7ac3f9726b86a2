//! `workspace/executeCommand`: `qgates.summary`, `qgates.run`, `qgates.fixAll`, `qgates.trust`,
//! and `qgates.applyEdit` (the code actions of a client that takes no literals). Arguments are
//! one JSON object checked against the command's schema; a wrong one is an `InvalidParams`
//! error that names the field. A command that edits sends the edit through
//! `workspace/applyEdit`, or returns it in its result to a client that does not declare that.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::{TextEdit, Uri, WorkspaceEdit};

use super::actions::{APPLY_EDIT, fix_all_edits};
use super::documents::uri_to_path;
use super::folder::{Consent, Folder};
use super::jobs::Job;
use super::locks::lock;
use super::session::Session;
use crate::core::api::clean_room::{DEFAULT_REV, ServerRunError, run_for_server, runs_as_trusted};
use crate::core::api::{RunRequest, ScopeChoice, ScopeChoiceError, ScopeRequest, scope_request};
use crate::core::config::Trigger;
use crate::core::report::page::{PageRequest, deserialize_max_violations, deserialize_offset};
use crate::core::report::{Report, agent, contents};
use crate::core::trust::{Manifest, TrustStore};

pub const SUMMARY: &str = "qgates.summary";
pub const RUN: &str = "qgates.run";
pub const FIX_ALL: &str = "qgates.fixAll";
pub const TRUST: &str = "qgates.trust";
pub const ALL: [&str; 5] = [SUMMARY, RUN, FIX_ALL, TRUST, APPLY_EDIT];

/// `qgates.summary` and `qgates.run`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    scope: Option<ScopeChoice>,
    gates: Option<Vec<String>>,
    /// Paths (absolute, or relative to the folder) or `file:` URIs.
    files: Option<Vec<String>>,
    /// `qgates.summary` only: run now instead of returning the last result.
    run: Option<bool>,
    /// The workspace folder (path or URI); default: the one holding `files`, else the first.
    folder: Option<String>,
    /// `qgates.run` only: run in a fresh git checkout of `rev` (default HEAD), with the
    /// configuration committed there; its diagnostics are not published (they are about the
    /// commit, not the files open).
    #[serde(default)]
    clean_room: bool,
    /// The commit a clean-room run checks out.
    rev: Option<String>,
    /// How many violations the answer shows (default 50, errors first; 0: the counts only).
    #[serde(default, deserialize_with = "deserialize_max_violations")]
    max_violations: Option<usize>,
    /// Where the shown violations start in that order (default 0): a `next_offset`.
    #[serde(default, deserialize_with = "deserialize_offset")]
    offset: Option<usize>,
    /// Pre-existing violations are shown too (default: counted, not shown).
    include_existing: Option<bool>,
}

impl RunArgs {
    fn page(&self) -> PageRequest {
        PageRequest::new(self.max_violations, self.offset).with_existing(self.include_existing)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FixAllArgs {
    uri: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApplyEditArgs {
    edit: WorkspaceEdit,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustArgs {
    /// The folder to trust (path or URI); default: every workspace folder.
    folder: Option<String>,
}

pub async fn execute(
    session: &Arc<Session>,
    command: &str,
    arguments: Vec<Value>,
) -> Result<Option<Value>> {
    match command {
        SUMMARY => summary(session, parse_args(command, arguments)?).await,
        RUN => run(session, parse_args(command, arguments)?).await,
        FIX_ALL => fix_all(session, parse_args(command, arguments)?).await,
        APPLY_EDIT => {
            let args: ApplyEditArgs = parse_args(command, arguments)?;
            Ok(Some(apply(session, args.edit).await))
        }
        TRUST => trust(session, parse_args(command, arguments)?),
        _ => Err(Error::invalid_params(format!(
            "unknown command `{command}`; the commands are {}",
            ALL.join(", ")
        ))),
    }
}

/// `qgates.summary`: the folder's last report, or a run when the arguments ask for one.
async fn summary(session: &Arc<Session>, args: RunArgs) -> Result<Option<Value>> {
    let run = args.run.unwrap_or(false)
        || args.scope.is_some()
        || args.gates.is_some()
        || args.files.is_some();
    if args.clean_room || args.rev.is_some() {
        return Err(invalid(
            SUMMARY,
            "`clean_room` and `rev` belong to qgates.run (qgates.summary shows the folder's runs)",
        ));
    }
    let folder = pick_folder(session, &args)?;
    if !run && let Some(report) = folder.last_report() {
        return Ok(Some(answer(&folder, &report, args.page())));
    }
    run_now(&folder, args).await
}

/// `qgates.run`: a run now, in the folder or in a clean room.
async fn run(session: &Arc<Session>, args: RunArgs) -> Result<Option<Value>> {
    if args.run.is_some() {
        return Err(invalid(RUN, "unknown field `run` (qgates.run always runs)"));
    }
    let folder = pick_folder(session, &args)?;
    if args.clean_room {
        let (scope, page) = (scope_of(&folder.root, &args, true)?, args.page());
        return run_clean(&folder, args.rev, scope, args.gates, page).await;
    }
    if args.rev.is_some() {
        return Err(invalid(
            RUN,
            "`rev` names the commit of a clean-room run; add \"clean_room\": true",
        ));
    }
    run_now(&folder, args).await
}

/// `qgates.fixAll`: every safe fix of one file, applied through the client.
async fn fix_all(session: &Arc<Session>, args: FixAllArgs) -> Result<Option<Value>> {
    let uri: Uri = args
        .uri
        .parse()
        .map_err(|_| invalid(FIX_ALL, &format!("`uri`: `{}` is not a URI", args.uri)))?;
    let path =
        uri_to_path(&uri).ok_or_else(|| invalid(FIX_ALL, "`uri`: only file: URIs can be fixed"))?;
    let folder = session
        .folder_for(&path)
        .ok_or_else(|| invalid(FIX_ALL, "`uri`: the file is outside every workspace folder"))?;
    let edits: Vec<TextEdit> = fix_all_edits(session, &folder, &path)
        .await
        .ok_or_else(|| failed("the file's folder is not trusted or has no valid configuration"))?;
    let edit = WorkspaceEdit {
        changes: Some(std::collections::HashMap::from([(uri, edits)])),
        ..Default::default()
    };
    Ok(Some(apply(session, edit).await))
}

/// `qgates.trust`: trusts one folder, or every one, and says what each runs.
fn trust(session: &Arc<Session>, args: TrustArgs) -> Result<Option<Value>> {
    let folders = match &args.folder {
        Some(f) => vec![folder_named(session, f).ok_or_else(|| {
            invalid(TRUST, &format!("`folder`: `{f}` is not a workspace folder"))
        })?],
        None => session.folders(),
    };
    let (mut trusted, mut runs) = (Vec::new(), serde_json::Map::new());
    for folder in folders {
        let manifest = session.trust_folder(&folder).map_err(|e| failed(&e))?;
        let root = folder.root.display().to_string();
        runs.insert(root.clone(), json!(manifest.describe()));
        trusted.push(root);
    }
    Ok(Some(json!({ "trusted": trusted, "runs": runs })))
}

/// Applies an edit through the client (`{applied, edits}`), or, for a client that does not
/// declare `workspace.applyEdit`, returns it unapplied (`{applied: false, edits, edit, message}`).
async fn apply(session: &Session, edit: WorkspaceEdit) -> Value {
    let count: usize = edit
        .changes
        .iter()
        .flat_map(|c| c.values())
        .map(Vec::len)
        .sum();
    if count == 0 {
        return json!({ "applied": true, "edits": 0 });
    }
    if !session.caps().apply_edit {
        return json!({
            "applied": false,
            "edits": count,
            "edit": edit,
            "message": "the client does not declare workspace.applyEdit: the edit is returned in `edit`, not applied",
        });
    }
    let applied = session
        .client
        .apply_edit(edit)
        .await
        .map(|r| r.applied)
        .unwrap_or(false);
    json!({ "applied": applied, "edits": count })
}

/// Runs through the folder's scheduler (one run at a time) and waits for the report.
async fn run_now(folder: &Arc<Folder>, args: RunArgs) -> Result<Option<Value>> {
    let scope = scope_of(&folder.root, &args, false)?;
    let (reply, answer_rx) = oneshot::channel();
    folder.send(Job::Run {
        scope,
        gates: args.gates.clone(),
        reply,
    });
    match answer_rx.await {
        Ok(Ok(report)) => Ok(Some(answer(folder, &report, args.page()))),
        Ok(Err(why)) => Err(failed(&why)),
        Err(_) => Err(failed("the server is shutting down")),
    }
}

/// The scope the arguments ask for. A clean room checks the whole commit unless told
/// otherwise, and its `auto` is `branch` (a fresh checkout has no baseline state).
fn scope_of(root: &Path, args: &RunArgs, clean_room: bool) -> Result<ScopeRequest> {
    let files: Vec<PathBuf> = args
        .files
        .iter()
        .flatten()
        .map(|f| file_arg(root, f))
        .collect();
    let choice = match args.scope {
        None if clean_room && files.is_empty() => Some(ScopeChoice::Project),
        s => s,
    };
    let scope = scope_request(choice, files).map_err(|e| {
        let why = match e {
            ScopeChoiceError::FilesNeedPaths => "scope `files` needs a list of files".to_string(),
            ScopeChoiceError::PathsWithOtherScope(_) if clean_room => {
                "only scope `files` takes a list of files".to_string()
            }
            ScopeChoiceError::PathsWithOtherScope(s) => format!(
                "scope `{}` chooses its files itself; drop `files` or use scope `files`",
                s.as_str()
            ),
        };
        invalid(RUN, &format!("`files`: {why}"))
    })?;
    Ok(match scope {
        ScopeRequest::Auto if clean_room => ScopeRequest::Branch,
        scope => scope,
    })
}

/// `qgates.run` with `clean_room`: the folder's gates in a fresh git checkout of a commit (see
/// `core::clean_room`), beside the folder's scheduler: it touches none of the folder's files,
/// cache or state, and its diagnostics are not published (they are about the commit, not the
/// files open). The folder's own runs must be trusted (by the editor or the user), and the
/// configuration committed at the revision must run the same (see `runs_as_trusted`).
async fn run_clean(
    folder: &Arc<Folder>,
    rev: Option<String>,
    scope: ScopeRequest,
    gates: Option<Vec<String>>,
    page: PageRequest,
) -> Result<Option<Value>> {
    let rev = rev.unwrap_or_else(|| DEFAULT_REV.to_string());
    let mut request = RunRequest::new(folder.root.clone(), scope, Trigger::Command);
    request.gates = gates;
    let trusted = match folder.consent() {
        Consent::Editor => None,
        consent => match trusted_manifest(folder, consent) {
            Some(m) => Some(m),
            None => {
                return Err(failed(&format!(
                    "clean room at `{rev}`: nothing was run: the folder's own gates are not trusted. Trust the folder first (answer the trust question, or run `qgates trust {}` in a terminal), then run the clean room again.",
                    folder.root.display()
                )));
            }
        },
    };
    let result = run_for_server(
        request,
        rev.clone(),
        None,
        move |config, checkout| match &trusted {
            None => Ok(()),
            Some(m) => runs_as_trusted(config, checkout, m),
        },
    )
    .await;
    match result {
        Ok(report) => Ok(Some(answer(folder, &report, page))),
        Err(ServerRunError::Untrusted(differences)) => Err(failed(&format!(
            "clean room at `{rev}`: nothing was run: the configuration and scripts committed there run something other than what was trusted for {}. A clean room only runs what the folder runs (programs installed in .venv or node_modules aside): commit the folder's configuration and scripts, or run `qgates trust {}` in a terminal once they are the committed ones. What differs:\n{differences}",
            folder.root.display(),
            folder.root.display(),
        ))),
        Err(ServerRunError::Config(e)) => Err(failed(&format!(
            "clean room at `{rev}`: the configuration committed there has errors, so nothing was run:\n{e}"
        ))),
        Err(ServerRunError::CleanRoom(e)) => Err(failed(&e.to_string())),
        Err(ServerRunError::Run(e)) => Err(failed(&format!("clean room at `{rev}`: {e}"))),
    }
}

/// What the folder runs now, when the user trusted it: in this session (when it could not be
/// recorded) or in the trust store.
fn trusted_manifest(folder: &Folder, consent: Consent) -> Option<Manifest> {
    let manifest = folder.manifest()?;
    let in_session = matches!(&consent, Consent::Manifest(hash) if *hash == manifest.hash);
    let stored =
        || TrustStore::for_user().is_some_and(|s| s.is_trusted(&folder.root, &manifest.hash));
    (in_session || stored()).then_some(manifest)
}

/// A file argument relative to the folder's root unless it is absolute or a `file:` URI.
fn file_arg(root: &Path, f: &str) -> PathBuf {
    absolute_file_arg(f)
        .unwrap_or_else(|| crate::core::workspace::paths::lexical_clean(&root.join(f)))
}

fn absolute_file_arg(f: &str) -> Option<PathBuf> {
    if f.starts_with("file:") {
        return uri_to_path(&f.parse::<Uri>().ok()?);
    }
    Path::new(f)
        .is_absolute()
        .then(|| crate::core::workspace::paths::lexical_clean(Path::new(f)))
}

fn pick_folder(session: &Session, args: &RunArgs) -> Result<Arc<Folder>> {
    if let Some(f) = &args.folder {
        return folder_named(session, f)
            .ok_or_else(|| invalid(RUN, &format!("`folder`: `{f}` is not a workspace folder")));
    }
    let folders = session.folders();
    // An absolute path or a URI says which folder; a relative one means the first folder.
    if let Some(first) = args.files.as_ref().and_then(|f| f.first())
        && let Some(folder) = folders
            .iter()
            .find(|x| absolute_file_arg(first).is_some_and(|p| x.contains(&p)))
    {
        return Ok(folder.clone());
    }
    folders
        .into_iter()
        .next()
        .ok_or_else(|| failed("no workspace folder is open"))
}

fn folder_named(session: &Session, f: &str) -> Option<Arc<Folder>> {
    let path = match f.parse::<Uri>() {
        Ok(uri) if f.starts_with("file:") => uri_to_path(&uri)?,
        _ => PathBuf::from(f),
    };
    let path = crate::core::workspace::paths::lexical_clean(&path);
    session.folders().into_iter().find(|x| x.root == path)
}

/// The one argument object (none or `null`: `{}`).
fn parse_args<T: DeserializeOwned>(command: &str, mut arguments: Vec<Value>) -> Result<T> {
    if arguments.len() > 1 {
        let n = arguments.len();
        let what = format!("takes one argument object, got {n} arguments");
        return Err(invalid(command, &what));
    }
    let value = match arguments.pop() {
        Some(Value::Null) | None => json!({}),
        Some(v) => v,
    };
    if !value.is_object() {
        return Err(invalid(command, "the argument must be a JSON object"));
    }
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            invalid(command, &inner)
        } else {
            invalid(command, &format!("`{path}`: {inner}"))
        }
    })
}

fn invalid(command: &str, what: &str) -> Error {
    Error::invalid_params(format!("{command}: {what}"))
}

/// `{summary_line, report, text}`: the line people read first, one page of the report (the JSON
/// of `qgates check` with at most `max_violations` violations, and where the rest are), and the
/// page as the text an agent reads (`report::agent`; files changed since the run say so).
/// With where the folder's file events come from (`file_events`): saves are slow in a large
/// repository without them.
fn answer(folder: &Folder, report: &Report, page: PageRequest) -> Value {
    let page = report.page(page);
    let changed = contents::changed_since(report, &folder.root);
    json!({
        "summary_line": page.summary_line(),
        "report": serde_json::from_str::<Value>(&page.to_json()).unwrap_or(Value::Null),
        "text": agent::render(&page, &changed),
        "file_events": lock(&folder.events).to_string(),
    })
}

/// LSP's RequestFailed: the request was valid, the work could not be done.
fn failed(why: &str) -> Error {
    Error {
        code: ErrorCode::ServerError(-32803),
        message: why.to_string().into(),
        data: None,
    }
}
