//! A language server as a gate's warm process (`warm: { language_server: [...] }`): the keeper
//! runs the server as its client (`client`) and answers on a Unix socket in the process's
//! folder. A face asks with the files to check (one JSON line: `{"files": [...]}`, absolute
//! paths) and gets their violations back (`{"violations": [...]}` or `{"error": "..."}`),
//! positions already in characters (`convert`). The keeper also watches the workspace and
//! tells the server of every change, as an editor does: a language server does not read the
//! disk again by itself.

mod client;
mod convert;
mod wire;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use super::state::{self, KeeperSpec, KeeperState};
use crate::core::platform;
use crate::core::scope::watcher::{FolderWatch, Observed};
use crate::core::violation::Violation;
use crate::core::workspace::safe_fs;
use client::Client;

/// How often the keeper looks at its idle time.
const LOOK_EVERY: Duration = Duration::from_secs(2);

#[derive(Serialize, Deserialize)]
struct Question {
    files: Vec<PathBuf>,
}

#[derive(Serialize, Deserialize)]
struct Answer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    violations: Option<Vec<Violation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

type Asked = (
    Vec<PathBuf>,
    oneshot::Sender<Result<Vec<Violation>, String>>,
);

/// The violations the keeper behind `socket` finds in `files`, within `limit`.
pub async fn ask(
    socket: &Path,
    files: Vec<PathBuf>,
    limit: Duration,
) -> Result<Vec<Violation>, String> {
    let socket = socket.to_path_buf();
    let work = tokio::task::spawn_blocking(move || -> Result<Vec<Violation>, String> {
        let mut stream = platform::connect_local(&socket)
            .map_err(|e| format!("cannot reach the language server's keeper ({e})"))?;
        let _ = stream.set_read_timeout(Some(limit));
        let question = serde_json::to_string(&Question { files }).map_err(|e| e.to_string())?;
        stream
            .write_all(format!("{question}\n").as_bytes())
            .map_err(|e| format!("cannot ask the keeper ({e})"))?;
        let mut line = String::new();
        BufReader::new(stream)
            .read_line(&mut line)
            .map_err(|e| format!("no answer from the keeper ({e})"))?;
        let answer: Answer = serde_json::from_str(&line)
            .map_err(|_| "the keeper ended before it answered".to_string())?;
        match (answer.violations, answer.error) {
            (_, Some(e)) => Err(e),
            (Some(v), None) => Ok(v),
            (None, None) => Err("the keeper's answer was empty".into()),
        }
    });
    work.await
        .map_err(|e| format!("asking stopped unexpectedly ({e})"))?
}

/// The keeper's work for a language server: start it, answer on the socket, keep it in step
/// with the disk, until idle, stopped or gone. Says `ready` (or why not) first. Exit code 0.
pub fn serve(spec: &KeeperSpec, dir: &Path, say: fn(&str)) -> i32 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            say(&format!("failed: cannot start the runtime ({e})"));
            return 1;
        }
    };
    runtime.block_on(keep(spec, dir, say))
}

/// What a started keeper holds: the server, the questions from the socket, the watch's news.
struct Running {
    client: Client,
    asks: mpsc::UnboundedReceiver<Asked>,
    changes: mpsc::UnboundedReceiver<Result<Vec<PathBuf>, String>>,
    _watch: FolderWatch,
}

async fn keep(spec: &KeeperSpec, dir: &Path, say: fn(&str)) -> i32 {
    let Running {
        mut client,
        mut asks,
        mut changes,
        _watch,
    } = match start(spec, dir).await {
        Ok(running) => running,
        Err(why) => {
            say(&format!("failed: {why}"));
            return 1;
        }
    };
    let kept = KeeperState::of(spec, client.pid().unwrap_or(0), true);
    let _ = state::write_json(&state::state_file(dir), &kept);
    state::touch_used(dir);
    say("ready");
    let idle = Duration::from_secs_f64(spec.idle_s);
    let signal = crate::core::platform::termination_signal();
    tokio::pin!(signal);
    loop {
        tokio::select! {
            _ = &mut signal => break,
            changed = changes.recv() => match changed {
                Some(Ok(paths)) => {
                    if client.files_changed(&paths).await.is_err() {
                        break;
                    }
                }
                // A watch that misses changes would leave the server's view stale.
                Some(Err(_)) | None => break,
            },
            asked = asks.recv() => {
                let Some((files, reply)) = asked else { break };
                // Changes seen before the question count for its answer.
                while let Ok(Ok(paths)) = changes.try_recv() {
                    let _ = client.files_changed(&paths).await;
                }
                let _ = reply.send(answer(&mut client, &spec.root, &files).await);
                state::touch_used(dir);
            }
            _ = tokio::time::sleep(LOOK_EVERY.min(idle)) => {}
        }
        if client.ended() || state::keeper_done(dir, idle) {
            break;
        }
    }
    client.stop().await;
    let _ = std::fs::remove_file(state::socket_file(dir));
    state::clear_if_ours(dir);
    0
}

/// Starts the server, the socket's thread and the watch; on failure nothing is left running.
async fn start(spec: &KeeperSpec, dir: &Path) -> Result<Running, String> {
    let log_path = state::daemon_log(dir);
    let log = safe_fs::create_nofollow(&log_path)
        .map_err(|e| format!("cannot write {}: {e}", log_path.display()))?;
    let client = Client::start(spec, log)
        .await
        .map_err(|why| format!("{why}; see {}", log_path.display()))?;
    let (asks_tx, asks) = mpsc::unbounded_channel::<Asked>();
    let socket = state::socket_file(dir);
    let _ = std::fs::remove_file(&socket);
    let listener = match platform::listen_local(&socket) {
        Ok(l) => l,
        Err(e) => {
            client.stop().await;
            return Err(format!("cannot listen on {} ({e})", socket.display()));
        }
    };
    std::thread::spawn(move || answer_on(&listener, &asks_tx));
    let (changes_tx, changes) = mpsc::unbounded_channel::<Result<Vec<PathBuf>, String>>();
    let watch = FolderWatch::start(&spec.cwd, usize::MAX, move |seen| {
        let _ = changes_tx.send(match seen {
            Observed::Changed(paths) => Ok(paths.to_vec()),
            Observed::Lost(why) => Err(why),
        });
    });
    match watch {
        Ok(watch) => Ok(Running {
            client,
            asks,
            changes,
            _watch: watch,
        }),
        Err(why) => {
            client.stop().await;
            Err(format!("the workspace cannot be watched ({why})"))
        }
    }
}

/// The violations of `files`, each as its text on disk stands now.
async fn answer(
    client: &mut Client,
    root: &Path,
    files: &[PathBuf],
) -> Result<Vec<Violation>, String> {
    let mut found = Vec::new();
    for file in files {
        if !file.is_file() {
            continue;
        }
        let (text, diagnostics) = client.diagnostics(file).await?;
        found.extend(convert::violations(root, file, &text, &diagnostics));
    }
    Ok(found)
}

/// Takes questions on the socket, one connection at a time, and passes each to the keeper.
fn answer_on(listener: &platform::LocalListener, asks: &mpsc::UnboundedSender<Asked>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let Ok(reader) = stream.try_clone() else {
            continue;
        };
        let mut line = String::new();
        if BufReader::new(reader).read_line(&mut line).is_err() {
            continue;
        }
        let answer = match serde_json::from_str::<Question>(&line) {
            Err(e) => Answer {
                violations: None,
                error: Some(format!("a question the keeper cannot read ({e})")),
            },
            Ok(q) => {
                let (tx, rx) = oneshot::channel();
                if asks.send((q.files, tx)).is_err() {
                    return;
                }
                match rx.blocking_recv() {
                    Ok(Ok(v)) => Answer {
                        violations: Some(v),
                        error: None,
                    },
                    Ok(Err(e)) => Answer {
                        violations: None,
                        error: Some(e),
                    },
                    Err(_) => return,
                }
            }
        };
        let mut stream = stream;
        let text = serde_json::to_string(&answer).unwrap_or_default();
        let _ = stream.write_all(format!("{text}\n").as_bytes());
    }
}
