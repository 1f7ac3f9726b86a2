//! The LSP client of the tests and of the benchmark: speaks JSON-RPC with Content-Length framing
//! to the real `qgates lsp` process (or to the server running in this process over pipes, or to
//! another language server), answers the server's own requests the way an editor would, and keeps
//! every message, stamped with when it was read, for assertions and timings. A frame that is not
//! JSON is kept too (as `{"unparsed": …}`), and `shutdown` fails on it.
#![allow(dead_code, reason = "each test file uses a different subset")]

use std::collections::VecDeque;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use super::lsp_wire::file_uri;
use super::lsp_wire::{frame, read_frame};

pub const WAIT: Duration = Duration::from_secs(60);

/// How the fake editor answers `window/showMessageRequest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustAnswer {
    Trust,
    NotNow,
    /// Leaves the question open: the test takes it with `wait_for` and answers it with
    /// `LspClient::answer` when it chooses (to act while the question is on screen).
    Hold,
}

pub struct LspClient {
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    incoming: Receiver<(Instant, Value)>,
    /// Messages received but not consumed yet, with when they were read.
    backlog: VecDeque<(Instant, Value)>,
    /// Every message the server sent, in order (for snapshots and "nothing stale" checks).
    pub log: Arc<Mutex<Vec<Value>>>,
    next_id: i64,
    /// The id and method of every request sent (to tell what each response answers).
    pub requests: Vec<(i64, String)>,
    pub child: Option<Child>,
    pub root: PathBuf,
    /// Whether `initialize` declares that the client watches files for the server
    /// (`workspace/didChangeWatchedFiles` with dynamic registration), as VS Code does; a test
    /// that changes files behind the editor's back then reports them (`files_changed`), as the
    /// editor's watcher would. Neovim on Linux declares no watching.
    pub watches_files: bool,
    /// Answers `client/registerCapability` with an error, as a client that declared dynamic
    /// registration but refuses it does.
    pub refuses_registration: Arc<AtomicBool>,
}

/// Frames one message.
fn send_raw(w: &Mutex<Box<dyn Write + Send>>, msg: &Value) {
    let mut w = w.lock().expect("writer");
    let _ = w.write_all(&frame(msg));
    let _ = w.flush();
}

/// Reads framed messages until the stream ends. Answers to the server's requests are written by
/// a thread of their own: a large write of the test under way never holds up the reading.
fn read_loop(
    reader: Box<dyn Read + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    tx: Sender<(Instant, Value)>,
    log: Arc<Mutex<Vec<Value>>>,
    answer: TrustAnswer,
    refuses_registration: Arc<AtomicBool>,
) {
    let (answers, to_answer) = channel::<Value>();
    std::thread::spawn(move || {
        for msg in to_answer {
            send_raw(&writer, &msg);
        }
    });
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let mut line = String::new();
    while let Some(frame) = read_frame(&mut reader, &mut line) {
        let at = Instant::now();
        let msg = match frame {
            Ok(body) => serde_json::from_slice::<Value>(&body)
                .unwrap_or_else(|_| json!({"unparsed": String::from_utf8_lossy(&body)})),
            Err(why) => json!({"unparsed": why}),
        };
        log.lock().expect("log").push(msg.clone());
        // A request from the server: answer it as an editor would.
        let held = msg["method"] == "window/showMessageRequest" && answer == TrustAnswer::Hold;
        if let (Some(id), Some(method), false) = (msg.get("id"), msg["method"].as_str(), held) {
            let result = match method {
                "window/showMessageRequest" => match answer {
                    TrustAnswer::Trust => json!({"title": "Trust"}),
                    TrustAnswer::NotNow | TrustAnswer::Hold => json!({"title": "Not now"}),
                },
                "workspace/applyEdit" => json!({"applied": true}),
                "workspace/configuration" => {
                    let n = msg["params"]["items"].as_array().map_or(0, Vec::len);
                    Value::Array(vec![Value::Null; n])
                }
                _ => Value::Null,
            };
            let refused = method == "client/registerCapability"
                && refuses_registration.load(Ordering::SeqCst);
            let reply = if refused {
                let refusal = json!({"code": -32603, "message": "registration refused"});
                json!({"jsonrpc": "2.0", "id": id, "error": refusal})
            } else {
                json!({"jsonrpc": "2.0", "id": id, "result": result})
            };
            let _ = answers.send(reply);
        }
        if tx.send((at, msg)).is_err() {
            return;
        }
    }
}

/// PATH with the pinned tools first.
fn path_env() -> std::ffi::OsString {
    super::path_with_tools()
}

/// Where the server's log goes: QGATES_TEST_SERVER_LOG=1 shows it while debugging a test.
fn server_log() -> Stdio {
    if std::env::var_os("QGATES_TEST_SERVER_LOG").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

impl LspClient {
    /// Starts the real binary over stdio, with its trust store in `trust_file`.
    pub fn spawn(root: &Path, trust_file: &Path, answer: TrustAnswer) -> LspClient {
        LspClient::spawn_with_stderr(root, trust_file, answer, server_log())
    }

    /// Starts any language server over stdio.
    pub fn spawn_command(cmd: Command, root: &Path, answer: TrustAnswer) -> LspClient {
        LspClient::spawn_command_with_stderr(cmd, root, answer, server_log())
    }

    /// `spawn`, with the server's standard error going to `stderr` (to look for panics).
    pub fn spawn_with_stderr(
        root: &Path,
        trust_file: &Path,
        answer: TrustAnswer,
        stderr: Stdio,
    ) -> LspClient {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_qgates"));
        cmd.arg("lsp")
            .current_dir(root)
            .env("PATH", path_env())
            .env("QGATES_TRUST_FILE", trust_file)
            .env_remove("QGATES_LOG");
        LspClient::spawn_command_with_stderr(cmd, root, answer, stderr)
    }

    pub fn spawn_command_with_stderr(
        mut cmd: Command,
        root: &Path,
        answer: TrustAnswer,
        stderr: Stdio,
    ) -> LspClient {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start the language server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let mut c = LspClient::over(Box::new(stdout), Box::new(stdin), root, answer);
        c.child = Some(child);
        c
    }

    /// A client over any pair of streams (the in-process harness uses pipes).
    pub fn over(
        reader: Box<dyn Read + Send>,
        writer: Box<dyn Write + Send>,
        root: &Path,
        answer: TrustAnswer,
    ) -> LspClient {
        let writer = Arc::new(Mutex::new(writer));
        let (tx, rx) = channel();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (w, l) = (writer.clone(), log.clone());
        let refuses_registration = Arc::new(AtomicBool::new(false));
        let refuses = refuses_registration.clone();
        std::thread::spawn(move || read_loop(reader, w, tx, l, answer, refuses));
        LspClient {
            writer,
            incoming: rx,
            backlog: VecDeque::new(),
            log,
            next_id: 1,
            requests: Vec::new(),
            child: None,
            root: root.to_path_buf(),
            watches_files: true,
            refuses_registration,
        }
    }

    /// The server running in this process (`qgates::lsp::serve`) on a runtime thread of its
    /// own, over OS pipes: protocol behaviour that needs no tool process, checked quickly.
    pub fn in_process(root: &Path, answer: TrustAnswer) -> LspClient {
        use std::os::fd::OwnedFd;
        let (server_in, client_out) = std::io::pipe().expect("pipe");
        let (client_in, server_out) = std::io::pipe().expect("pipe");
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let file = |fd: OwnedFd| tokio::fs::File::from_std(std::fs::File::from(fd));
                qgates::lsp::serve(file(server_in.into()), file(server_out.into())).await;
            });
        });
        LspClient::over(Box::new(client_in), Box::new(client_out), root, answer)
    }

    pub fn uri(&self, rel: &str) -> String {
        file_uri(&self.root.join(rel))
    }

    /// `initialize` + `initialized` with an editor's usual capabilities.
    pub fn initialize(&mut self, options: Value) -> Value {
        self.initialize_with(options, json!(["utf-16"]))
    }

    pub fn initialize_with(&mut self, options: Value, encodings: Value) -> Value {
        let root = self.root.clone();
        self.initialize_folders_with(&[root.as_path()], options, encodings)
    }

    /// `initialize` + `initialized` with several workspace folders (the first is the root).
    pub fn initialize_folders(&mut self, roots: &[&Path], options: Value) -> Value {
        self.initialize_folders_with(roots, options, json!(["utf-16"]))
    }

    fn initialize_folders_with(
        &mut self,
        roots: &[&Path],
        options: Value,
        encodings: Value,
    ) -> Value {
        let folders: Vec<Value> = roots
            .iter()
            .map(|r| {
                let name = r.file_name().map_or("ws".into(), |n| n.to_string_lossy());
                json!({"uri": file_uri(r), "name": name})
            })
            .collect();
        let root_uri = roots.first().map(|r| file_uri(r));
        let result = self
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": root_uri,
                    "workspaceFolders": folders,
                    "initializationOptions": options,
                    "capabilities": {
                        "general": {"positionEncodings": encodings},
                        "window": {"workDoneProgress": true},
                        "workspace": {
                            "didChangeWatchedFiles": {"dynamicRegistration": self.watches_files},
                            "applyEdit": true,
                            "workspaceFolders": true
                        },
                        "textDocument": {
                            "publishDiagnostics": {"versionSupport": true, "codeDescriptionSupport": true, "dataSupport": true},
                            "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source.fixAll"]}}, "isPreferredSupport": true}
                        }
                    }
                }),
            )
            .expect("initialize succeeds");
        self.notify("initialized", json!({}));
        result
    }

    /// `initialize` + `initialized` as a real editor: `profile` is `{clientInfo, capabilities}`
    /// (either may be missing: a client that declares nothing sends no `capabilities`).
    /// Workspace folders are sent only by a client that declares them; the root URI always.
    /// Returns the answer to `initialize`, result or error.
    pub fn initialize_as(&mut self, profile: &Value, options: Value) -> Result<Value, Value> {
        let root_uri = file_uri(&self.root);
        let mut params = json!({
            "processId": null,
            "rootUri": root_uri,
            "initializationOptions": options,
        });
        for key in ["clientInfo", "capabilities"] {
            if let Some(v) = profile.get(key) {
                params[key] = v.clone();
            }
        }
        if profile["capabilities"]["workspace"]["workspaceFolders"] == true {
            params["workspaceFolders"] = json!([{"uri": root_uri, "name": "ws"}]);
        }
        let answer = self.request("initialize", params);
        if answer.is_ok() {
            self.notify("initialized", json!({}));
        }
        answer
    }

    /// What the editor's file watcher reports: `(path, kind)` with kind 1 created, 2 changed,
    /// 3 deleted (`FileChangeType`).
    pub fn files_changed(&mut self, changes: &[(&str, u32)]) {
        let changes: Vec<Value> = changes
            .iter()
            .map(|(rel, kind)| json!({"uri": self.uri(rel), "type": kind}))
            .collect();
        self.notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": changes }),
        );
    }

    /// The method of the request a response answers.
    pub fn method_of(&self, response: &Value) -> Option<&str> {
        let id = response["id"].as_i64()?;
        self.requests
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, m)| m.as_str())
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        send_raw(
            &self.writer,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        );
    }

    /// Answers a request of the server (one `TrustAnswer::Hold` left open) with `result`.
    pub fn answer(&self, id: &Value, result: Value) {
        send_raw(
            &self.writer,
            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
    }

    /// Sends raw bytes (for malformed input tests).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let mut w = self.writer.lock().expect("writer");
        let _ = w.write_all(bytes);
        let _ = w.flush();
    }

    /// `qgates.summary`'s `file_events`, once the server's own watch (if it is the source) has
    /// walked the folder.
    pub fn file_events(&mut self) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let answer = self
                .request(
                    "workspace/executeCommand",
                    json!({"command": "qgates.summary", "arguments": []}),
                )
                .expect("qgates.summary answers");
            let events = answer["file_events"].as_str().unwrap_or("").to_owned();
            if !events.contains("starting") || Instant::now() > deadline {
                return events;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's open inotify instances (its own file watches).
    pub fn inotify_descriptors(&self) -> usize {
        let pid = self.child.as_ref().expect("a server process").id();
        super::inotify_descriptors(&pid.to_string())
    }

    /// Sends a request and waits for its response: `Ok(result)` or `Err(error)`.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.requests.push((id, method.to_string()));
        send_raw(
            &self.writer,
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        self.response(id)
    }

    pub fn response(&mut self, id: i64) -> Result<Value, Value> {
        let msg = self.wait_for(|m| m["id"] == id && m.get("method").is_none(), WAIT);
        match msg.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(msg["result"].clone()),
        }
    }

    /// The next message matching `pred` (earlier unmatched messages are kept for later).
    pub fn wait_for(&mut self, pred: impl Fn(&Value) -> bool, timeout: Duration) -> Value {
        self.wait_for_timed(pred, timeout).1
    }

    /// `wait_for`, with when the message was read.
    pub fn wait_for_timed(
        &mut self,
        pred: impl Fn(&Value) -> bool,
        timeout: Duration,
    ) -> (Instant, Value) {
        self.try_wait_for(&pred, timeout).unwrap_or_else(|| {
            panic!(
                "no matching message within {timeout:?}; the last ones: {:#?}",
                self.backlog.iter().rev().take(10).collect::<Vec<_>>()
            )
        })
    }

    fn try_wait_for(
        &mut self,
        pred: &impl Fn(&Value) -> bool,
        timeout: Duration,
    ) -> Option<(Instant, Value)> {
        if let Some(i) = self.backlog.iter().position(|(_, m)| pred(m)) {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok((at, m)) if pred(&m) => return Some((at, m)),
                Ok(other) => self.backlog.push_back(other),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    return None;
                }
            }
        }
    }

    /// Forgets the messages not consumed yet (the log keeps them).
    pub fn drain(&mut self) {
        self.backlog.clear();
        while self.incoming.try_recv().is_ok() {}
    }

    /// The parameters (uri, version, diagnostics) of the next `publishDiagnostics` for a file.
    pub fn publication(&mut self, rel: &str) -> Value {
        let uri = self.uri(rel);
        let msg = self.wait_for(
            |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri,
            WAIT,
        );
        msg["params"].clone()
    }

    /// The parameters of the first `publishDiagnostics` for a file whose diagnostics `holds`
    /// accepts; the file's earlier ones are consumed.
    pub fn publication_where(&mut self, rel: &str, holds: impl Fn(&[Value]) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let p = self.publication(rel);
            if p["diagnostics"].as_array().is_some_and(|d| holds(d)) {
                return p;
            }
            assert!(Instant::now() < deadline, "no publication as wanted: {p}");
        }
    }

    /// The `publishDiagnostics` message for a file's document version.
    pub fn publication_of_version(&mut self, rel: &str, version: i32) -> Value {
        let uri = self.uri(rel);
        self.wait_for(
            |m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri
                    && m["params"]["version"] == version
            },
            WAIT,
        )
    }

    /// The next `publishDiagnostics` for a file.
    pub fn diagnostics(&mut self, rel: &str) -> Vec<Value> {
        self.publication(rel)["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    pub fn open(&mut self, rel: &str) {
        let text = std::fs::read_to_string(self.root.join(rel)).expect("read file to open");
        let uri = self.uri(rel);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
        );
    }

    /// Types new content (didChange) and saves it (the file on disk, then didSave).
    pub fn edit_and_save(&mut self, rel: &str, version: i32, text: &str) {
        let uri = self.uri(rel);
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
        std::fs::write(self.root.join(rel), text).expect("write");
        self.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri}}),
        );
    }

    /// An editor's save of new content, timed: `didChange` (the whole text) and `didSave` in
    /// one write, until that version's `publishDiagnostics` is read. The time, and the
    /// diagnostics.
    pub fn change_and_save_timed(
        &mut self,
        rel: &str,
        text: &str,
        version: i32,
        timeout: Duration,
    ) -> (Duration, Vec<Value>) {
        let uri = self.uri(rel);
        let message = |method: &str, params: Value| {
            frame(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
        };
        let mut bytes = message(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
        bytes.extend(message(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri}}),
        ));
        let start = Instant::now();
        self.send_bytes(&bytes);
        let (at, m) = self.wait_for_timed(
            |m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri.as_str()
                    && m["params"]["version"] == version
            },
            timeout,
        );
        let diags = m["params"]["diagnostics"].as_array().cloned();
        (at - start, diags.unwrap_or_default())
    }

    /// Closes the server's input, as a client that vanishes does.
    pub fn close_input(&self) {
        *self.writer.lock().expect("writer") = Box::new(std::io::sink());
    }

    /// Every message received so far, consumed or not.
    pub fn all_messages(&self) -> Vec<Value> {
        self.log.lock().expect("log").clone()
    }

    /// The frames received that were not JSON-RPC messages.
    pub fn unparsed(&self) -> Vec<Value> {
        self.all_messages()
            .into_iter()
            .filter(|m| m.get("unparsed").is_some())
            .collect()
    }

    /// `shutdown` + `exit`; waits for the process to end. Fails if the server sent anything
    /// that was not a JSON-RPC message.
    pub fn shutdown(mut self) -> Option<std::process::ExitStatus> {
        let _ = self.request("shutdown", Value::Null);
        let unparsed = self.unparsed();
        assert!(unparsed.is_empty(), "not JSON-RPC: {unparsed:?}");
        self.notify("exit", Value::Null);
        let mut child = self.child.take()?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the server did not exit after shutdown + exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
