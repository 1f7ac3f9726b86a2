//! Where a failed test is, and its id. A JUnit report rarely says where the assertion is: the
//! testcase's `file`/`line` attributes are optional (pytest's default report has neither), so
//! the failure's own text is searched for the frame nearest the assertion that lies in the
//! workspace, and else the test's file is found from its `classname`. Go prints only a file's
//! name (`tax_test.go:8:`): it is looked for in the package's folder too, which the classname
//! (the package's import path) and the module's `go.mod` give.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::ParseContext;
use crate::core::workspace::paths::lexical_clean;

/// A failure's place: an absolute file inside the workspace, and where in it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Place {
    pub file: Option<String>,
    pub line: Option<i64>,
    pub column: Option<i64>,
}

/// One frame of a traceback or stack.
struct Frame {
    file: PathBuf,
    line: i64,
    column: Option<i64>,
    /// Python lists frames outermost first, JavaScript innermost first.
    innermost_last: bool,
}

/// Frames of the traces test runners print: Python's `File "x", line N`, pytest's
/// `path:N: ErrorName` (Go's `t.Errorf` lines look the same) and `file path, line N` (a fixture
/// the test asks for that does not exist), JavaScript's `at fn
/// (path:line:col)`, vitest's `❯ [fn] path:line:col` and Rust's `panicked at path:line:col`.
static FRAME_PATTERN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?m)File "(?P<py>[^"\n]+)", line (?P<pyl>\d+)"#,
        r#"|^[ \t]*(?P<pt>[^\s:"'<>()]+):(?P<ptl>\d+):(?: |$)"#,
        r"|^file (?P<pf>[^\n]+?), line (?P<pfl>\d+)$",
        r#"|\bat (?:[^\n()]*\()?(?P<js>(?:file://)?[^\s()]+?):(?P<jsl>\d+):(?P<jsc>\d+)\)?"#,
        r"|❯ (?:\S+ )?(?P<vt>\S+?):(?P<vtl>\d+):(?P<vtc>\d+)",
        r"|panicked at (?P<rs>[^\s:]+):(?P<rsl>\d+):(?P<rsc>\d+)",
    ))
    .expect("the frame pattern is valid")
});

/// The place of a failed test: its `file`/`line` attributes when it has them (with the line of
/// a frame in that file, nearer the assertion, when the text has one); else the frame of its
/// failure text nearest the assertion; else the file its classname names; else none.
pub(super) fn place_of(
    file_attr: &Option<String>,
    line_attr: Option<i64>,
    text: &str,
    classname: &str,
    ctx: &ParseContext,
) -> Place {
    let package = go_package_dir(classname, ctx);
    let frame = nearest_frame(text, package.as_deref(), ctx);
    if let Some(file) = file_attr.as_deref().and_then(|f| in_workspace(f, ctx)) {
        let (line, column) = match &frame {
            Some(fr) if fr.file == file => (Some(fr.line), fr.column),
            _ => (line_attr, None),
        };
        return Place {
            file: Some(file.to_string_lossy().into_owned()),
            line,
            column,
        };
    }
    if let Some(fr) = frame {
        return Place {
            file: Some(fr.file.to_string_lossy().into_owned()),
            line: Some(fr.line),
            column: fr.column,
        };
    }
    Place {
        file: classname_file(classname, ctx).map(|(abs, _, _)| abs.to_string_lossy().into_owned()),
        ..Place::default()
    }
}

/// The test's id: pytest's node id (`tests/test_app.py::TestApp::test_x`) when the classname
/// names a test file, else `classname::name` (vitest's classname is the file already), or the
/// name alone when the classname is the name again (jest-junit's default templates).
pub(super) fn test_id(classname: &str, name: &str, ctx: &ParseContext) -> String {
    match classname_file(classname, ctx) {
        Some((_, shown, rest)) => {
            let mut parts = vec![shown];
            parts.extend(rest);
            parts.push(name.to_string());
            parts.join("::")
        }
        None if classname.is_empty() || classname == name => name.to_string(),
        None => format!("{classname}::{name}"),
    }
}

/// The frame nearest the assertion among those in the workspace: Python's last, JavaScript's
/// first (frames under `node_modules` or a virtual environment are the libraries', not the
/// project's). A relative path is looked for in `package` first, when there is one.
fn nearest_frame(text: &str, package: Option<&Path>, ctx: &ParseContext) -> Option<Frame> {
    let mut python: Option<Frame> = None;
    for c in FRAME_PATTERN.captures_iter(text) {
        let (file, line, column, innermost_last) = if let Some(f) = c.name("py") {
            (f.as_str(), &c["pyl"], None, true)
        } else if let Some(f) = c.name("pt") {
            (f.as_str(), &c["ptl"], None, true)
        } else if let Some(f) = c.name("pf") {
            (f.as_str(), &c["pfl"], None, true)
        } else if let Some(f) = c.name("js") {
            (f.as_str(), &c["jsl"], Some(&c["jsc"]), false)
        } else if let Some(f) = c.name("vt") {
            (f.as_str(), &c["vtl"], Some(&c["vtc"]), false)
        } else if let Some(f) = c.name("rs") {
            (f.as_str(), &c["rsl"], Some(&c["rsc"]), false)
        } else {
            continue;
        };
        // The package's folder first: Go names a file the same in every package.
        let in_package = package
            .filter(|_| Path::new(file).is_relative())
            .and_then(|dir| in_workspace(&dir.join(file).to_string_lossy(), ctx));
        let Some(file) = in_package.or_else(|| in_workspace(file, ctx)) else {
            continue;
        };
        let Ok(line) = line.parse() else {
            continue;
        };
        let frame = Frame {
            file,
            line,
            column: column.and_then(|c| c.parse().ok()),
            innermost_last,
        };
        if !frame.innermost_last {
            return python.or(Some(frame));
        }
        python = Some(frame);
    }
    python
}

/// The absolute path of a file a report names, when it is a file of the project: inside the
/// workspace, not a library's. Relative paths start at the tool's cwd, else at the root (pytest
/// prints them from its rootdir).
fn in_workspace(printed: &str, ctx: &ParseContext) -> Option<PathBuf> {
    let printed = printed.strip_prefix("file://").unwrap_or(printed);
    let path = Path::new(printed);
    let candidates: Vec<PathBuf> = if path.is_absolute() {
        vec![lexical_clean(path)]
    } else {
        vec![
            lexical_clean(&ctx.cwd.join(path)),
            lexical_clean(&ctx.root.join(path)),
        ]
    };
    candidates.into_iter().find(|abs| {
        abs.strip_prefix(ctx.root).is_ok_and(|rel| {
            !rel.components().any(|c| {
                let c = c.as_os_str();
                c == "node_modules" || c == "site-packages" || c == ".venv"
            })
        }) && abs.is_file()
    })
}

/// The folder of the Go package a classname names: go-junit-report and gotestsum write the
/// package's import path (`example.com/shop/internal/tax`), which is the module's path (the
/// `module` line of the `go.mod` in the gate's cwd or the root) and the folder below it.
fn go_package_dir(classname: &str, ctx: &ParseContext) -> Option<PathBuf> {
    if classname.is_empty() || classname.contains(char::is_whitespace) {
        return None;
    }
    [ctx.cwd, ctx.root].into_iter().find_map(|dir| {
        let go_mod = std::fs::read_to_string(dir.join("go.mod")).ok()?;
        let module = go_mod.lines().find_map(|l| {
            let rest = l.trim().strip_prefix("module")?;
            rest.starts_with(char::is_whitespace)
                .then(|| rest.trim().trim_matches('"').to_string())
        })?;
        if classname == module {
            return Some(dir.to_path_buf());
        }
        let below = classname.strip_prefix(&module)?.strip_prefix('/')?;
        Some(lexical_clean(&dir.join(below)))
    })
}

/// The test file a classname names, with the file as the tool shows it and the rest of the
/// classname (a class inside the file): `tests.test_app.TestApp` → `tests/test_app.py` and
/// `[TestApp]`; a classname that is a path already (vitest) is that file.
fn classname_file(classname: &str, ctx: &ParseContext) -> Option<(PathBuf, String, Vec<String>)> {
    if classname.is_empty() {
        return None;
    }
    if (classname.contains('/') || classname.contains('\\'))
        && let Some(abs) = in_workspace(classname, ctx)
    {
        return Some((abs, classname.to_string(), Vec::new()));
    }
    let parts: Vec<&str> = classname.split('.').collect();
    (1..=parts.len()).rev().find_map(|k| {
        let shown = format!("{}.py", parts[..k].join("/"));
        let abs = in_workspace(&shown, ctx)?;
        Some((
            abs,
            shown,
            parts[k..].iter().map(|p| p.to_string()).collect(),
        ))
    })
}
