//! qgates as a language server's client, inside the keeper: it starts the server, answers the
//! server's own requests (configuration: the server's defaults and its configuration files),
//! keeps the documents it asked about in sync with the disk, tells the server of other files'
//! changes (`workspace/didChangeWatchedFiles`, from the keeper's watch), and gets a file's
//! diagnostics: pulled (`textDocument/diagnostic`) where the server answers that, else the ones
//! it publishes for the version sent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{Mutex as AsyncMutex, Notify, oneshot};

use super::super::state::KeeperSpec;
use super::wire;
use crate::core::parse::sarif::uri_to_path;
use crate::core::platform;
use crate::core::report::sarif::encode_uri_path;

/// How long one answer of the server may take.
const ANSWER_LIMIT: Duration = Duration::from_secs(120);
/// How long a server that only publishes stays quiet before its last publication is taken as
/// its answer.
const SETTLE: Duration = Duration::from_millis(300);

/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

/// What the reader task shares with the asks.
#[derive(Default)]
struct Shared {
    pending: HashMap<i64, oneshot::Sender<Value>>,
    /// Per URI, the last published version (if the server says) and diagnostics.
    published: HashMap<String, (Option<i64>, Vec<Value>)>,
    ended: bool,
}

pub struct Client {
    child: Child,
    stdin: Arc<AsyncMutex<ChildStdin>>,
    shared: Arc<Mutex<Shared>>,
    changed: Arc<Notify>,
    next_id: i64,
    /// Documents opened in the server: version and text sent.
    open: HashMap<PathBuf, (i64, String)>,
    /// `None` until known: whether the server answers pulls.
    pulls: Option<bool>,
    /// Files the server was told exist (created or changed): a file it was not told of is
    /// reported created, so it enters the server's module resolution.
    told: std::collections::HashSet<PathBuf>,
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", encode_uri_path(&path.to_string_lossy()))
}

impl Client {
    /// Starts the server in `cwd` (its own process group, which `reaper` is told of) and
    /// initializes it with `cwd` as the workspace folder.
    pub async fn start(spec: &KeeperSpec, log: std::fs::File) -> Result<Client, String> {
        let (program, cwd) = (&spec.program, &spec.cwd);
        let mut cmd = Command::new(program);
        cmd.args(&spec.args)
            .current_dir(cwd)
            .envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true);
        platform::lead_new_process_group(cmd.as_std_mut());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("{} could not start: {e}", program.display()))?;
        if let Some(pid) = child.id() {
            crate::core::runner::reaper::watch(pid as i32);
        }
        let stdin = Arc::new(AsyncMutex::new(child.stdin.take().ok_or("no stdin")?));
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let shared = Arc::new(Mutex::new(Shared::default()));
        let changed = Arc::new(Notify::new());
        let settings = (spec.settings.clone()).map(|s| with_folder(s, &uri(cwd)));
        tokio::spawn(read_all(
            Reader {
                out: BufReader::new(stdout),
                stdin: stdin.clone(),
                shared: shared.clone(),
                changed: changed.clone(),
            },
            Arc::new(settings.unwrap_or(Value::Null)),
        ));
        let mut client = Client {
            child,
            stdin,
            shared,
            changed,
            next_id: 0,
            open: HashMap::new(),
            pulls: None,
            told: std::collections::HashSet::new(),
        };
        let folder = uri(cwd);
        let init = json!({
            "processId": std::process::id(),
            "rootUri": folder,
            "workspaceFolders": [{"uri": folder, "name": "workspace"}],
            "capabilities": {
                "textDocument": {
                    "synchronization": {"didSave": true},
                    "publishDiagnostics": {"versionSupport": true, "codeDescriptionSupport": true},
                    "diagnostic": {"dynamicRegistration": false, "relatedDocumentSupport": false},
                },
                "workspace": {
                    "configuration": true,
                    "workspaceFolders": true,
                    "didChangeWatchedFiles": {"dynamicRegistration": true},
                },
                "general": {"positionEncodings": ["utf-16"]},
            },
        });
        let answer = client.request("initialize", init).await?;
        if let Some(e) = answer.get("error") {
            return Err(format!("the server refused to start: {e}"));
        }
        client.notify("initialized", json!({})).await?;
        Ok(client)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Whether the server has ended (its output closed).
    pub fn ended(&self) -> bool {
        self.lock().ended
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn send(&self, message: &Value) -> Result<(), String> {
        let mut stdin = self.stdin.lock().await;
        stdin
            .write_all(&wire::frame(message))
            .await
            .map_err(|e| format!("the server's input closed ({e})"))
    }

    async fn notify(&self, method: &str, params: Value) -> Result<(), String> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    /// The server's whole answer (`result` or `error`).
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let (tx, rx) = oneshot::channel();
        self.lock().pending.insert(id, tx);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        match tokio::time::timeout(ANSWER_LIMIT, rx).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(format!("the server ended before it answered {method}")),
            Err(_) => Err(format!(
                "the server did not answer {method} within {} s",
                ANSWER_LIMIT.as_secs()
            )),
        }
    }

    /// Tells the server that files changed on disk (the keeper's watch); a document it has
    /// open is sent again instead, since the server no longer reads it from disk.
    pub async fn files_changed(&mut self, paths: &[PathBuf]) -> Result<(), String> {
        let mut changes = Vec::new();
        for path in paths {
            if self.open.contains_key(path) {
                self.sync(path).await?;
                continue;
            }
            if path.is_dir() {
                continue;
            }
            // 1 created, 2 changed, 3 deleted.
            let kind = if !path.exists() {
                self.told.remove(path);
                3
            } else if self.told.insert(path.clone()) {
                1
            } else {
                2
            };
            changes.push(json!({"uri": uri(path), "type": kind}));
        }
        if changes.is_empty() {
            return Ok(());
        }
        self.notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": changes }),
        )
        .await
    }

    /// Sends the file's text on disk if the server does not have it; returns the text and
    /// the version the server has.
    async fn sync(&mut self, path: &Path) -> Result<(String, i64), String> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let uri = uri(path);
        if self.open.get(path).is_none_or(|(_, sent)| *sent != text) {
            // What was published is of the text before: a server that does not say versions
            // is waited for until it publishes again.
            self.forget(path);
        }
        match self.open.get(path) {
            Some((version, sent)) if *sent == text => Ok((text, *version)),
            Some((version, _)) => {
                let version = version + 1;
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version},
                           "contentChanges": [{"text": text}]}),
                )
                .await?;
                self.notify(
                    "textDocument/didSave",
                    json!({"textDocument": {"uri": uri}}),
                )
                .await?;
                self.open
                    .insert(path.to_path_buf(), (version, text.clone()));
                Ok((text, version))
            }
            None => {
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language(path),
                           "version": 1, "text": text}}),
                )
                .await?;
                self.open.insert(path.to_path_buf(), (1, text.clone()));
                Ok((text, 1))
            }
        }
    }

    /// The file's diagnostics as its text on disk now stands, and that text.
    pub async fn diagnostics(&mut self, path: &Path) -> Result<(String, Vec<Value>), String> {
        let (text, version) = self.sync(path).await?;
        let uri = uri(path);
        if self.pulls != Some(false) {
            let answer = self
                .request(
                    "textDocument/diagnostic",
                    json!({"textDocument": {"uri": uri}}),
                )
                .await?;
            match answer.get("error") {
                None => {
                    self.pulls = Some(true);
                    let items = answer["result"]["items"].as_array().cloned();
                    return Ok((text, items.unwrap_or_default()));
                }
                Some(e) if e["code"].as_i64() == Some(METHOD_NOT_FOUND) => {
                    self.pulls = Some(false);
                }
                Some(e) => return Err(format!("the server could not give diagnostics: {e}")),
            }
        }
        self.published(&uri, version).await.map(|d| (text, d))
    }

    /// The diagnostics the server publishes for `uri` at `version` (or, from a server that
    /// does not say the version, after being sent the text), once it is idle: a server may
    /// publish a file more than once for one text (Biome's first publication of a file it has
    /// just opened can be empty), so the last publication before `SETTLE` of quiet is the answer.
    async fn published(&self, uri: &str, version: i64) -> Result<Vec<Value>, String> {
        let deadline = tokio::time::Instant::now() + ANSWER_LIMIT;
        // The last publication for `uri`, and when quiet since then makes it the answer (other
        // files' publications do not count).
        let mut found: Option<Vec<Value>> = None;
        let mut settled = deadline;
        loop {
            let notified = self.changed.notified();
            {
                let shared = self.lock();
                if let Some((v, diagnostics)) = shared.published.get(uri)
                    && v.is_none_or(|v| v >= version)
                    && found.as_ref() != Some(diagnostics)
                {
                    found = Some(diagnostics.clone());
                    settled = deadline.min(tokio::time::Instant::now() + SETTLE);
                }
                if shared.ended {
                    return Err("the server ended".into());
                }
            }
            let wait = settled;
            if tokio::time::timeout_at(wait, notified).await.is_err() {
                return found.ok_or_else(|| {
                    format!(
                        "the server published no diagnostics for {uri} within {} s",
                        ANSWER_LIMIT.as_secs()
                    )
                });
            }
        }
    }

    /// Forgets what was published for `path`, so the next wait is for a new publication.
    fn forget(&self, path: &Path) {
        self.lock().published.remove(&uri(path));
    }

    /// Asks the server to shut down and exit, then ends its group.
    pub async fn stop(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            let _ = self.request("shutdown", Value::Null).await;
            let _ = self.notify("exit", Value::Null).await;
        })
        .await;
        if let Some(pid) = self.child.id() {
            platform::kill_process_group(pid as i32);
            let _ = self.child.wait().await;
            crate::core::runner::reaper::unwatch(pid as i32);
        }
    }
}

/// Reads the server's messages to the end: answers go to their request, the server's own
/// requests are answered, published diagnostics are kept.
/// What the reader task reads from and tells.
struct Reader {
    out: BufReader<tokio::process::ChildStdout>,
    stdin: Arc<AsyncMutex<ChildStdin>>,
    shared: Arc<Mutex<Shared>>,
    changed: Arc<Notify>,
}

async fn read_all(reader: Reader, settings: Arc<Value>) {
    let Reader {
        mut out,
        stdin,
        shared,
        changed,
    } = reader;
    let lock = || shared.lock().unwrap_or_else(PoisonError::into_inner);
    while let Ok(Some(message)) = wire::read(&mut out).await {
        let method = message["method"].as_str();
        match (message.get("id"), method) {
            (Some(id), Some(method)) => {
                let result = answer_to(method, &message["params"], &settings);
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let _ = stdin.lock().await.write_all(&wire::frame(&answer)).await;
            }
            (Some(id), None) => {
                let sender = id.as_i64().and_then(|id| lock().pending.remove(&id));
                if let Some(sender) = sender {
                    let _ = sender.send(message);
                }
            }
            (None, Some("textDocument/publishDiagnostics")) => {
                let params = &message["params"];
                if let Some(uri) = params["uri"].as_str() {
                    let diagnostics = params["diagnostics"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default();
                    let entry = (params["version"].as_i64(), diagnostics);
                    lock().published.insert(normalized(uri), entry);
                    changed.notify_waiters();
                }
            }
            _ => {}
        }
    }
    let mut shared = lock();
    shared.ended = true;
    // Requests still waiting get no answer: their senders are dropped.
    shared.pending.clear();
    drop(shared);
    changed.notify_waiters();
}

/// A server's URI in the form `uri` makes (servers may encode differently).
fn normalized(u: &str) -> String {
    uri(Path::new(&uri_to_path(u)))
}

/// The answer to a request from the server: its settings (the gate's `warm.settings`, else
/// nothing, so it keeps its defaults and the project's configuration files) for every item
/// asked; everything else is acknowledged.
fn answer_to(method: &str, params: &Value, settings: &Value) -> Value {
    match method {
        "workspace/configuration" => {
            let n = params["items"].as_array().map_or(0, Vec::len);
            Value::Array(vec![settings.clone(); n])
        }
        _ => Value::Null,
    }
}

/// `settings` with `{folder_uri}` in its strings replaced by the workspace folder's URI.
fn with_folder(settings: Value, folder: &str) -> Value {
    match settings {
        Value::String(s) => Value::String(s.replace("{folder_uri}", folder)),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| with_folder(v, folder)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, with_folder(v, folder)))
                .collect(),
        ),
        other => other,
    }
}

/// The language id the server is told, from the file's ending.
fn language(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "vue" => "vue",
        "svelte" => "svelte",
        "json" => "json",
        _ => "plaintext",
    }
}
