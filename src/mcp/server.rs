//! The MCP server: answers `tools/list` and `tools/call` by driving the engine exactly as
//! `qgates check` does (same configuration, baseline state and result cache on disk), and keeps
//! the last report for `last_summary`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    ErrorCode, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use super::schema::{LastArgs, RunArgs, parse_args};
use super::tools::{self, LAST, LAST_ACCEPTS, RUN, RUN_ACCEPTS, error_result, report_result};
use crate::core::api::ResultCache;
use crate::core::api::ScopeRequest;
use crate::core::api::clean_room::{DEFAULT_REV, ServerRunError, run_for_server, runs_as_trusted};
use crate::core::api::{KindFilter, KindFilterError};
use crate::core::api::{NewFindings, RunRequest, novelty};
use crate::core::api::{ScopeChoice, scope_request};
use crate::core::config::{Config, Trigger};
use crate::core::report::page::PageRequest;
use crate::core::report::{Report, contents};
use crate::core::trust::{self, FileHashes, Manifest, Refusal};
use crate::core::workspace::paths::{lexical_clean, relative_posix};

const INSTRUCTIONS: &str = "qgates runs this repository's quality gates (quality.yaml). Call run_quality_gates after changing code: with no arguments it checks what changed since the last green run. Read the summary line first; fix the violations listed under it, by file (the most serious first; last_summary with offset pages through the rest), then call it again until overall_pass is true.";

pub struct QgatesServer {
    /// The workspace root (absolute); relative `files` are taken from here.
    root: PathBuf,
    /// `--config`, else the workspace's quality.yaml, read anew for every run so an edit to it
    /// counts without restarting the server.
    config_path: Option<PathBuf>,
    tools: Vec<Tool>,
    last: Mutex<Option<Report>>,
    /// The run in progress, if any: one run at a time, because two runs over the same files would
    /// race on the baseline state and (with `fix`) on the files themselves.
    running: Arc<Mutex<Option<InFlight>>>,
    /// Content hashes of the scripts the configuration runs (see `Manifest`).
    hashes: FileHashes,
}

#[derive(Debug, Clone)]
struct InFlight {
    what: String,
    started: Instant,
}

/// Frees the run slot when the run ends, however it ends (finished, failed, or cancelled).
struct SlotGuard(Arc<Mutex<Option<InFlight>>>);

impl Drop for SlotGuard {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = None;
        }
    }
}

impl QgatesServer {
    pub fn new(root: PathBuf, config_path: Option<PathBuf>) -> Result<Self, String> {
        Ok(QgatesServer {
            root,
            config_path,
            tools: tools::tools()?,
            last: Mutex::new(None),
            running: Arc::new(Mutex::new(None)),
            hashes: FileHashes::default(),
        })
    }

    /// Takes the run slot, or says what is running.
    fn claim(&self, what: String) -> Result<SlotGuard, String> {
        let mut slot = self
            .running
            .lock()
            .map_err(|_| "qgates: internal error (the run slot is poisoned)".to_string())?;
        if let Some(busy) = slot.as_ref() {
            return Err(format!(
                "A quality-gate run ({}) is already in progress, started {:.1} s ago; runs do not overlap, because they share the baseline state and the files. Wait for its result, then call run_quality_gates again (or last_summary for the result it leaves).",
                busy.what,
                busy.started.elapsed().as_secs_f64()
            ));
        }
        *slot = Some(InFlight {
            what,
            started: Instant::now(),
        });
        Ok(SlotGuard(self.running.clone()))
    }

    /// `run_quality_gates`; every error is a tool error whose message the agent can act on.
    async fn run_tool(
        &self,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, String> {
        let args: RunArgs = parse_args(RUN, arguments, RUN_ACCEPTS)?;
        let request = self.request(&args)?;
        // An unsafe `.qgates/` (a link, another user's folder): nothing runs or is written.
        crate::core::workspace::qgates_dir::check(&self.root).map_err(|e| e.to_string())?;
        let _slot = self.claim(describe(&args))?;
        if args.clean_room {
            return self.clean_room_tool(&args, request, context).await;
        }
        let (config, _) = self.trusted_config()?;
        let cache = Arc::new(ResultCache::load(&self.root));
        let request = RunRequest {
            cache: Some(cache.clone()),
            warm: true,
            new_findings: if config.new_only {
                NewFindings::Only
            } else {
                NewFindings::Mark
            },
            ..request
        };
        let fix = args.fix;
        let reference = Arc::new(ResultCache::load_reference(&self.root));
        let kept = reference.clone();
        let work =
            tokio::spawn(async move { novelty::run(&config, &request, fix, Some(&kept)).await });
        let crashed = "qgates stopped unexpectedly during the run (a bug in qgates; its stderr log has the details). The server keeps running: call run_quality_gates again, or run `qgates check` in a terminal to see more.";
        let why = |e| format!("{e} Nothing was run.");
        let report = outcome(work, context, ("run", crashed), why).await?;
        cache.save();
        reference.save();
        Ok(self.keep(report, args.page()))
    }

    /// One page of a report as the tool's result; the report is kept for `last_summary`.
    fn keep(&self, report: Report, page: PageRequest) -> CallToolResult {
        let result = report_result(&report, page, &[]);
        if let Ok(mut last) = self.last.lock() {
            *last = Some(report);
        }
        result
    }

    /// The workspace's configuration and what it runs, when a person trusted that; else why
    /// nothing runs.
    fn trusted_config(&self) -> Result<(Config, Manifest), String> {
        trust::trusted_config(&self.root, self.config_path.as_deref(), &self.hashes).map_err(|r| match r {
            Refusal::Config(e) => format!("{e}\nThe configuration has errors (above), so nothing was run. Fix quality.yaml, then call {RUN} again."),
            Refusal::Untrusted(manifest) => untrusted(&self.root, self.config_path.as_deref(), &manifest),
        })
    }

    /// A run in a clean checkout of `rev` (see `core::clean_room`): the working tree's own runs
    /// must be trusted, and the checkout must run the same. Nothing is cached or recorded.
    async fn clean_room_tool(
        &self,
        args: &RunArgs,
        request: RunRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, String> {
        let rev = args.rev.clone().unwrap_or_else(|| DEFAULT_REV.to_string());
        let scope = match (args.scope, &args.files) {
            (None, None) => ScopeRequest::Project,
            _ => request.scope,
        };
        let request = RunRequest {
            root: self.root.clone(),
            scope,
            ..request
        };
        let (_, trusted) = self
            .trusted_config()
            .map_err(|e| format!("Clean room at `{rev}`: {e}"))?;
        let (at, config_path) = (rev.clone(), self.config_path.clone());
        let work = tokio::spawn(run_for_server(
            request,
            at,
            config_path,
            move |config, checkout| runs_as_trusted(config, checkout, &trusted),
        ));
        let crashed = "qgates stopped unexpectedly during the clean-room run (a bug in qgates; its stderr log has the details).";
        let why = |e| match e {
            ServerRunError::Untrusted(differences) => format!(
                "Clean room at `{rev}`: nothing was run: the configuration and scripts committed there run something other than what was trusted for the working tree. A clean-room run may only run what the working tree runs (programs installed in .venv or node_modules aside): commit the working tree's configuration and scripts, or ask the user to trust what is committed. What differs:\n{differences}"
            ),
            ServerRunError::Config(e) => format!(
                "{e}\nThe configuration committed at `{rev}` has errors (above), so nothing was run."
            ),
            ServerRunError::CleanRoom(e) => format!("{e} Nothing was run."),
            ServerRunError::Run(e) => format!("{e} Nothing was run."),
        };
        let report = outcome(work, context, ("clean-room run", crashed), why).await?;
        Ok(self.keep(report, args.page()))
    }

    /// The engine request for the arguments (cache and configuration aside).
    fn request(&self, args: &RunArgs) -> Result<RunRequest, String> {
        if args.rev.is_some() && !args.clean_room {
            return Err(format!(
                "{RUN}: argument `rev` names the commit of a clean-room run; add \"clean_room\": true, or leave `rev` out."
            ));
        }
        if args.clean_room && args.fix {
            return Err(format!(
                "{RUN}: `fix` and `clean_room` do not go together: a clean room is removed after the run, with anything fixed in it. Fix in the workspace, commit, then check the commit."
            ));
        }
        if args.gates.as_ref().is_some_and(Vec::is_empty) {
            return Err(format!(
                "{RUN}: argument `gates` is empty. Leave it out to run every active gate, or name at least one gate id."
            ));
        }
        // Agents name files relative to the workspace they work in, not to this process's folder.
        let paths = args
            .files
            .iter()
            .flatten()
            .map(|f| self.workspace_path(f))
            .collect::<Result<Vec<PathBuf>, String>>()?;
        if args.files.as_ref().is_some_and(Vec::is_empty) && args.scope != Some(ScopeChoice::Files)
        {
            return Err(format!(
                "{RUN}: argument `files` is empty. Leave it out to let the scope choose the files, or give paths relative to the workspace root."
            ));
        }
        let kinds = KindFilter::from_names(args.skip_kinds.as_deref(), args.only_kinds.as_deref())
            .map_err(|e| {
                let what = match e {
                    KindFilterError::Both => String::new(),
                    _ if args.skip_kinds.is_some() => "argument `skip_kinds`: ".to_string(),
                    _ => "argument `only_kinds`: ".to_string(),
                };
                format!("{RUN}: {what}{e}. Example: {{\"skip_kinds\": [\"test\", \"e2e\"]}} or {{\"only_kinds\": [\"lint\"]}}.")
            })?;
        let scope = scope_request(args.scope, paths).map_err(|e| {
            format!("{RUN}: {e}. Example: {{\"scope\": \"files\", \"files\": [\"src/app.py\"]}}, or {{\"scope\": \"project\"}}.")
        })?;
        let mut request = RunRequest::new(self.root.clone(), scope, Trigger::Command);
        request.gates = args.gates.clone();
        request.kinds = kinds;
        Ok(request)
    }

    /// A path from the agent, inside the workspace and existing, as an absolute path. The engine
    /// checks again; this check words the error for paths taken from the workspace root.
    fn workspace_path(&self, given: &str) -> Result<PathBuf, String> {
        let path = lexical_clean(&self.root.join(given));
        if relative_posix(&self.root, &path).is_none() && path != self.root {
            return Err(format!(
                "{RUN}: `{given}` is outside the workspace {}. Give paths inside it, relative to the workspace root (e.g. \"src/app.py\"); for another project, start qgates mcp there (or with --root).",
                self.root.display()
            ));
        }
        if !path.exists() {
            return Err(format!(
                "{RUN}: `{given}` does not exist in the workspace {}. Paths are taken relative to the workspace root; check the spelling, or leave `files` out to let the scope choose the files.",
                self.root.display()
            ));
        }
        Ok(path)
    }

    fn last_tool(
        &self,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<CallToolResult, String> {
        let args = parse_args::<LastArgs>(LAST, arguments, LAST_ACCEPTS)?;
        let last = self.last.lock().ok().and_then(|l| l.clone());
        match last {
            Some(report) => {
                let changed = contents::changed_since(&report, &self.root);
                Ok(report_result(&report, args.page(), &changed))
            }
            None => Err(format!(
                "No run yet in this session, so there is no summary to show. Call {RUN} (e.g. with {{}} to check what changed)."
            )),
        }
    }
}

/// What a run is, for the "already in progress" message.
fn describe(args: &RunArgs) -> String {
    let scope = match (args.scope, &args.files) {
        (Some(s), _) => s.as_str(),
        (None, Some(_)) => "files",
        (None, None) => "auto",
    };
    let mut what = format!("scope {scope}");
    if args.fix {
        what.push_str(", with fix");
    }
    if args.clean_room {
        what.push_str(", in a clean room");
    }
    what
}

impl ServerHandler for QgatesServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("qgates", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    /// rmcp hands a request of a method it knows over as a custom request when its params do not
    /// decode: for the methods served here, that is an `Invalid params`, not a missing method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let method = request.method;
        if ["initialize", "ping", "tools/list", "tools/call"].contains(&method.as_str()) {
            return Err(McpError::invalid_params(
                format!("`{method}` does not take these params"),
                None,
            ));
        }
        Err(McpError::new(ErrorCode::METHOD_NOT_FOUND, method, None))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let result = match request.name.as_ref() {
            RUN => self.run_tool(request.arguments, &context).await,
            LAST => self.last_tool(request.arguments),
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown tool `{other}`: this server has {RUN} and {LAST}"),
                    None,
                ));
            }
        };
        Ok(result.unwrap_or_else(error_result).into())
    }
}

/// The report of a run on its own task (so that a panic in the engine becomes a tool error, not
/// a call that never gets an answer), or the tool error's message: `why` words the run's own
/// error, `crashed` names the run in the log and says its panic. A call the client cancels drops
/// the run, which kills the gates' process groups (and removes a clean room's checkout).
async fn outcome<E>(
    mut work: tokio::task::JoinHandle<Result<Report, E>>,
    context: &RequestContext<RoleServer>,
    (what, crashed): (&str, &str),
    why: impl FnOnce(E) -> String,
) -> Result<Report, String> {
    let joined = tokio::select! {
        j = &mut work => j,
        () = context.ct.cancelled() => {
            work.abort();
            return Err("The run was cancelled; its result was not recorded.".into());
        }
    };
    match joined {
        Ok(Ok(report)) => Ok(report),
        Ok(Err(e)) => Err(why(e)),
        Err(e) => {
            tracing::error!("a {what} stopped unexpectedly: {e}");
            Err(crashed.into())
        }
    }
}

/// Why an untrusted workspace runs nothing: an agent can write `quality.yaml` or a script it
/// runs, so only a person's trust in exactly what would run lets it run (docs/mcp.md, "Trust").
/// The command named is the one that trusts this server's configuration: with `--config`, the
/// same file.
fn untrusted(
    root: &std::path::Path,
    config: Option<&std::path::Path>,
    manifest: &Manifest,
) -> String {
    let config = config
        .map(|c| format!(" --config {}", c.display()))
        .unwrap_or_default();
    format!(
        "Nothing was run: a person has not trusted what the quality gates of {root} run (or it changed since they did). Ask the user to read the commands below and run `qgates trust {root}{config}` in a terminal; trusting is the user's decision, not an agent's. Then call {RUN} again.\n{} runs:\n{}",
        manifest.source,
        manifest.describe(),
        root = root.display(),
    )
}
