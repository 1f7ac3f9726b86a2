//! The text-synchronization notifications (`didOpen`, `didChange`, `didSave`, `didClose`),
//! applied by the input guard as it reads them rather than by the protocol library.
//!
//! An editor restoring its tabs writes a few hundred `didOpen` messages at once, each with a
//! whole file, and the gates start only when the last one is in. The library reads each message
//! three times (into a generic message, its parameters into a JSON value, that value into the
//! typed parameters) and passes it through its service: 200 opens were all handled 1.5 ms after
//! the first byte, and the tool started at 2.2 ms. Here each is parsed into its typed parameters
//! once: 0.7 and 1.5 ms.
//!
//! Order: they take effect in the order the client sent them, each before the guard reads the next
//! message. A request sent before one of them (a code action, a command) may be answered after it
//! took effect, as the library's concurrent handlers already allowed. So may a notification the
//! library handles: a folder added just before an open may be added after it (the new folder then
//! checks the files already open in it), and a configuration file changed just before a save may be
//! reloaded after it (a reload runs the open files again). They are taken only between `initialize`
//! and `shutdown` (see `Session::takes_text_sync`); outside that window they go to the library,
//! which answers them as the protocol says. Work that waits on the client (publishing a
//! configuration's problems, reloading it) runs in a task of its own: the guard never waits on the
//! client, whose answers it is the one to read.

use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams,
};

use super::Session;
use super::documents::{Document, uri_to_path};
use super::publish::publish_config_problems;
use super::scheduler::Job;

/// Which text-synchronization notification a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Open,
    Change,
    Save,
    Close,
}

impl Kind {
    pub fn of(method: &str) -> Option<Kind> {
        match method {
            "textDocument/didOpen" => Some(Kind::Open),
            "textDocument/didChange" => Some(Kind::Change),
            "textDocument/didSave" => Some(Kind::Save),
            "textDocument/didClose" => Some(Kind::Close),
            _ => None,
        }
    }

    fn method(self) -> &'static str {
        match self {
            Kind::Open => "textDocument/didOpen",
            Kind::Change => "textDocument/didChange",
            Kind::Save => "textDocument/didSave",
            Kind::Close => "textDocument/didClose",
        }
    }
}

/// Applies a notification's body when the session takes them now; `false`: it was not taken and
/// goes to the library. A body whose parameters are not the protocol's is logged and dropped,
/// as the library drops it.
pub fn take(session: &Arc<Session>, kind: Kind, body: &[u8]) -> bool {
    if !session.takes_text_sync() {
        return false;
    }
    match kind {
        Kind::Open => apply(kind, body, |p| open(session, p)),
        Kind::Change => apply(kind, body, |p| change(session, p)),
        Kind::Save => apply(kind, body, |p| save(session, p)),
        Kind::Close => apply(kind, body, |p| close(session, p)),
    }
    true
}

/// Reads a notification's typed parameters and hands them to `handle`.
fn apply<P: DeserializeOwned>(kind: Kind, body: &[u8], handle: impl FnOnce(P)) {
    #[derive(Deserialize)]
    struct Notification<P> {
        params: P,
    }
    match serde_json::from_slice::<Notification<P>>(body) {
        Ok(n) => handle(n.params),
        Err(e) => tracing::warn!(
            "a {} whose parameters are not the protocol's was dropped: {e}",
            kind.method()
        ),
    }
}

/// A document opened: kept, and checked unless it is a configuration file.
pub fn open(session: &Arc<Session>, params: DidOpenTextDocumentParams) {
    let doc = params.text_document;
    let Some(path) = uri_to_path(&doc.uri) else {
        return;
    };
    session.docs.open(
        path.clone(),
        Document {
            uri: doc.uri,
            version: doc.version,
            text: Arc::from(doc.text),
        },
    );
    let Some(folder) = session.folder_for(&path) else {
        tracing::debug!("{} is outside every workspace folder", path.display());
        return;
    };
    if folder.is_config_file(&path) {
        let session = session.clone();
        tokio::spawn(async move { publish_config_problems(&session, &folder).await });
    } else {
        // Always asked for: a file reopened with other content must be checked again, and one
        // whose content the cache knows costs no process (the cache is keyed by content).
        folder.send(Job::Open(vec![path]));
    }
}

/// Full sync: the last change holds the whole text.
pub fn change(session: &Session, params: DidChangeTextDocumentParams) {
    let Some(path) = uri_to_path(&params.text_document.uri) else {
        return;
    };
    if let Some(change) = params.content_changes.into_iter().last() {
        session.docs.change(
            path,
            params.text_document.uri,
            params.text_document.version,
            change.text,
        );
    }
}

/// A save runs the gates (or reloads the configuration, when it is the file saved).
pub fn save(session: &Arc<Session>, params: DidSaveTextDocumentParams) {
    let Some(path) = uri_to_path(&params.text_document.uri) else {
        return;
    };
    let Some(folder) = session.folder_for(&path) else {
        return;
    };
    if folder.is_config_file(&path) {
        let session = session.clone();
        tokio::spawn(async move { session.reload_folder(&folder).await });
    } else {
        folder.send(Job::Save(path));
    }
}

pub fn close(session: &Session, params: DidCloseTextDocumentParams) {
    if let Some(path) = uri_to_path(&params.text_document.uri) {
        session.docs.close(&path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_notifications_are_known_by_their_methods() {
        for kind in [Kind::Open, Kind::Change, Kind::Save, Kind::Close] {
            assert_eq!(Kind::of(kind.method()), Some(kind));
        }
        assert_eq!(Kind::of("textDocument/willSave"), None);
        assert_eq!(Kind::of("textDocument/codeAction"), None);
    }

    #[test]
    fn parameters_are_read_typed_and_bad_ones_are_refused() {
        fn params<P: DeserializeOwned>(kind: Kind, body: &[u8]) -> Option<P> {
            let mut got = None;
            apply(kind, body, |p| got = Some(p));
            got
        }
        let body = br#"{"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"file:///a.py"}}}"#;
        let p: Option<DidCloseTextDocumentParams> = params(Kind::Close, body);
        assert_eq!(p.unwrap().text_document.uri.as_str(), "file:///a.py");
        let bad = br#"{"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":7}}}"#;
        assert!(params::<DidCloseTextDocumentParams>(Kind::Close, bad).is_none());
        let none = br#"{"jsonrpc":"2.0","method":"textDocument/didClose"}"#;
        assert!(params::<DidCloseTextDocumentParams>(Kind::Close, none).is_none());
    }
}
