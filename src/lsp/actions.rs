//! Code actions: the tool's own quick fixes (ruff's `fix.edits`), whole-file fixes for gates with
//! a `fix` command (the buffer piped through the fixer, the difference as minimal edits), and
//! `source.fixAll.qgates` (every safe tool fix, then every fixer). A client that takes no
//! `CodeAction` literals gets each as a `Command` (`qgates.applyEdit`) carrying the same edit.
//! What a quick fix needs is read from the diagnostics the server published, not from the
//! client's copy: a client that takes no diagnostic `data` gets the same fixes.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Command, Diagnostic,
    Position, Range, TextEdit, Uri, WorkspaceEdit,
};

use super::diagnostics::{DiagnosticData, to_text_edits};
use super::folder::Folder;
use super::locks::lock;
use super::position::{Encoding, Lines};
use super::session::{ClientCaps, Session};
use super::trust;
use crate::core::api::fix::text_diff::{LineEdit, line_edits};
use crate::core::api::fix::{apply_edits, fix_text, in_fix_order};
use crate::core::workspace::paths::relative_posix;

/// The command that applies a code action's edit, for a client that takes no literals.
pub const APPLY_EDIT: &str = "qgates.applyEdit";

/// `source.fixAll.qgates`: the kind editors ask for on save ("fix all on save").
pub fn fix_all_kind() -> CodeActionKind {
    CodeActionKind::new("source.fixAll.qgates")
}

pub async fn code_actions(
    session: &Session,
    folder: &Arc<Folder>,
    path: &Path,
    uri: &Uri,
    params: &CodeActionParams,
) -> Vec<CodeActionOrCommand> {
    let enc = session.encoding();
    let caps = session.caps();
    let Some((text, version)) = current_text(session, path) else {
        return Vec::new();
    };
    let wants = |kind: &CodeActionKind| match &params.context.only {
        None => true,
        Some(only) => only.iter().any(|o| {
            kind.as_str() == o.as_str() || kind.as_str().starts_with(&format!("{}.", o.as_str()))
        }),
    };
    let lines = Lines::new(&text);
    let current = published_matches(folder, path, version);
    let data: Vec<Option<DiagnosticData>> = params
        .context
        .diagnostics
        .iter()
        .map(|d| published_data(folder, path, d))
        .collect();
    let mut out = Vec::new();
    if wants(&CodeActionKind::QUICKFIX) {
        for (d, data) in params.context.diagnostics.iter().zip(&data) {
            let Some(data) = data else { continue };
            if let (Some(fix), true) = (&data.fix, current) {
                out.push(action(
                    caps,
                    &fix.title,
                    CodeActionKind::QUICKFIX,
                    vec![d.clone()],
                    uri,
                    to_text_edits(&fix.edits, &lines, enc),
                    data.fixable,
                ));
            }
        }
        out.extend(whole_file_fixes(session, folder, path, uri, &text, params, &data).await);
    }
    if params.context.only.is_some()
        && wants(&fix_all_kind())
        && let Some(edits) = fix_all_edits(session, folder, path).await
        && !edits.is_empty()
    {
        out.push(action(
            caps,
            "qgates: fix all auto-fixable problems",
            fix_all_kind(),
            Vec::new(),
            uri,
            edits,
            false,
        ));
    }
    out
}

/// The whole-file fixers' actions, each offered on its gate's diagnostics, for a trusted,
/// configured folder.
async fn whole_file_fixes(
    session: &Session,
    folder: &Arc<Folder>,
    path: &Path,
    uri: &Uri,
    text: &str,
    params: &CodeActionParams,
    data: &[Option<DiagnosticData>],
) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    let (Some(config), true) = (
        folder.config(),
        trust::permits(&session.client, &session.docs, folder),
    ) else {
        return out;
    };
    let Some(rel) = relative_posix(&folder.root, path) else {
        return out;
    };
    for (gate, fix) in config
        .gates
        .iter()
        .filter_map(|g| Some((g, g.fix.as_ref()?)))
    {
        let on: Vec<Diagnostic> = params
            .context
            .diagnostics
            .iter()
            .zip(data)
            .filter(|(_, x)| x.as_ref().is_some_and(|x| x.gate == gate.id))
            .map(|(d, _)| d.clone())
            .collect();
        if on.is_empty() || !gate.applies_to(&rel) {
            continue;
        }
        let fixed = match fix_text(gate, &folder.root, &rel, text).await {
            Ok(fixed) => fixed,
            Err(e) => {
                tracing::warn!("{e}");
                continue;
            }
        };
        let edits = to_lsp_edits(text, &line_edits(text, &fixed), session.encoding());
        if edits.is_empty() {
            continue;
        }
        out.push(action(
            session.caps(),
            &fix.title,
            CodeActionKind::QUICKFIX,
            on,
            uri,
            edits,
            true,
        ));
    }
    out
}

/// Every safe fix the tools proposed for the current text, then every whole-file fixer, as
/// edits of the current text. `None` when the file is not in a trusted, configured folder.
pub async fn fix_all_edits(
    session: &Session,
    folder: &Arc<Folder>,
    path: &Path,
) -> Option<Vec<TextEdit>> {
    let config = folder.config()?;
    if !trust::permits(&session.client, &session.docs, folder) {
        return None;
    }
    let rel = relative_posix(&folder.root, path)?;
    let (text, version) = current_text(session, path)?;
    let mut fixed = text.to_string();
    if published_matches(folder, path, version) {
        let edits: Vec<_> = folder
            .diagnostics_of(path)
            .iter()
            .filter_map(data_of)
            .filter(|d| d.fixable)
            .filter_map(|d| d.fix)
            .flat_map(|f| f.edits)
            .collect();
        fixed = apply_edits(&fixed, &edits).0;
    }
    for gate in in_fix_order(
        config
            .gates
            .iter()
            .filter(|g| g.fix.is_some() && g.applies_to(&rel)),
    ) {
        match fix_text(gate, &folder.root, &rel, &fixed).await {
            Ok(t) => fixed = t,
            Err(e) => tracing::warn!("{e}"),
        }
    }
    Some(to_lsp_edits(
        &text,
        &line_edits(&text, &fixed),
        session.encoding(),
    ))
}

/// The document's text and version (the file on disk, version `None`, when it is not open).
fn current_text(session: &Session, path: &Path) -> Option<(std::sync::Arc<str>, Option<i32>)> {
    match session.docs.get(path) {
        Some(d) => Some((d.text, Some(d.version))),
        None => std::fs::read_to_string(path)
            .ok()
            .map(|t| (std::sync::Arc::from(t), None)),
    }
}

/// Whether the published diagnostics (and the tool edits they carry) describe this version.
fn published_matches(folder: &Folder, path: &Path, version: Option<i32>) -> bool {
    lock(&folder.published)
        .get(path)
        .is_some_and(|p| p.version == version)
}

fn data_of(d: &Diagnostic) -> Option<DiagnosticData> {
    serde_json::from_value(d.data.clone()?).ok()
}

/// The data of the published diagnostic the client's one is a copy of (same place, message and
/// source: the fields every client returns as it got them); else the client's own `data`, from
/// a client that moved the diagnostic with its edits.
fn published_data(folder: &Folder, path: &Path, d: &Diagnostic) -> Option<DiagnosticData> {
    lock(&folder.published)
        .get(path)
        .and_then(|p| {
            p.diagnostics
                .iter()
                .find(|p| p.range == d.range && p.message == d.message && p.source == d.source)
                .and_then(data_of)
        })
        .or_else(|| data_of(d))
}

/// A code action as the client takes it: a literal, or a command carrying the same edit.
fn action(
    caps: ClientCaps,
    title: &str,
    kind: CodeActionKind,
    diagnostics: Vec<Diagnostic>,
    uri: &Uri,
    edits: Vec<TextEdit>,
    preferred: bool,
) -> CodeActionOrCommand {
    let edit = WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..Default::default()
    };
    if !caps.code_action_literals {
        return CodeActionOrCommand::Command(Command {
            title: title.to_string(),
            command: APPLY_EDIT.into(),
            arguments: Some(vec![json!({ "edit": edit })]),
        });
    }
    CodeActionOrCommand::CodeAction(CodeAction {
        title: title.to_string(),
        kind: Some(kind),
        diagnostics: (!diagnostics.is_empty()).then_some(diagnostics),
        edit: Some(edit),
        is_preferred: (preferred && caps.is_preferred).then_some(true),
        ..Default::default()
    })
}

/// Line edits of `old` as LSP edits. An edit that reaches the end of a text without a final
/// newline ends at the end of its last line (there is no line after it to point at).
pub fn to_lsp_edits(old: &str, edits: &[LineEdit], enc: Encoding) -> Vec<TextEdit> {
    let line_count = old.split_inclusive('\n').count() as u32;
    let open_end = !old.is_empty() && !old.ends_with('\n');
    let lines = Lines::new(old);
    edits
        .iter()
        .map(|e| {
            let end = if open_end && e.end_line >= line_count {
                let last = line_count - 1;
                Position::new(last, lines.line_len(last, enc))
            } else {
                Position::new(e.end_line, 0)
            };
            TextEdit {
                range: Range::new(Position::new(e.start_line, 0), end),
                new_text: e.new_text.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies LSP edits the way an editor does (by UTF-16 positions).
    fn apply(text: &str, edits: &[TextEdit]) -> String {
        let lines = Lines::new(text);
        let offset = |p: Position| -> usize {
            let starts: Vec<usize> = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            let Some(&start) = starts.get(p.line as usize) else {
                return text.len();
            };
            let (line, col) = lines.to_engine(p, Encoding::Utf16);
            let _ = line;
            start
                + text[start..]
                    .char_indices()
                    .nth(col as usize - 1)
                    .map_or(text.len() - start, |(i, _)| i)
        };
        let mut out = text.to_string();
        for e in edits.iter().rev() {
            let (a, b) = (offset(e.range.start), offset(e.range.end));
            out.replace_range(a..b, &e.new_text);
        }
        out
    }

    #[test]
    fn edits_reproduce_the_fixed_text_with_and_without_a_final_newline() {
        for (old, new) in [
            ("x=1\ny = 'é'\n", "x = 1\ny = 'é'\n"),
            ("x=1", "x = 1\n"),
            ("a\nb=2", "a\nb = 2\n"),
            ("", "x = 1\n"),
        ] {
            let edits = to_lsp_edits(old, &line_edits(old, new), Encoding::Utf16);
            assert_eq!(apply(old, &edits), new, "{old:?} -> {new:?}");
        }
    }
}
