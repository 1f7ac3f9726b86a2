//! Public repositories nobody here wrote — a TypeScript library and a Go library — checked as a
//! new user would: for each tool the repository runs, qgates' findings equal what the
//! repository's own invocation of that tool says (its npm script or CI step, run here directly),
//! file, line, column and code; and a cached answer equals a `--no-cache` one. Where a repository
//! is clean for a tool, a deliberate finding is added to one of its files and the comparison made
//! again, so no comparison is only of two empty lists. The repositories are kept under
//! `fixtures/real/` (see its README).

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::real::{Place, chars, check, clone_of_fixture, found, found_files, own};
use common::{gate, write};
use serde_json::Value;

/// `(file, line, column, code)`, columns in characters from 1 as qgates reports them.
/// `FILE:LINE:COLUMN: MESSAGE`, the place as the Go tools print it (a path from the folder they
/// ran in, columns in bytes from 1), and the message.
fn go_place(root: &Path, line: &str) -> Option<(String, u64, u64, String)> {
    let mut parts = line.splitn(4, ':');
    let file = parts.next()?.trim_start_matches("./");
    let number: u64 = parts.next()?.parse().ok()?;
    let column: u64 = parts.next()?.parse().ok()?;
    let message = parts.next()?.trim_start().to_string();
    if !file.ends_with(".go") {
        return None;
    }
    let column = chars(root, file, number, column, "byte", 1);
    Some((file.to_string(), number, column, message))
}

/// `go vet`'s stderr: a finding a line under a `# package` line, a type error prefixed with
/// `vet: `; the text names no analyzer (qgates' code is `vet`).
fn go_vet(root: &Path, err: &str) -> BTreeSet<Place> {
    err.lines()
        .filter_map(|l| go_place(root, l.strip_prefix("vet: ").unwrap_or(l)))
        .map(|(file, line, column, _)| (file, line, column, "vet".to_string()))
        .collect()
}

/// Staticcheck's text: `FILE:LINE:COLUMN: MESSAGE (CODE)`.
fn staticcheck(root: &Path, out: &str) -> BTreeSet<Place> {
    out.lines()
        .filter_map(|l| go_place(root, l))
        .map(|(file, line, column, message)| {
            let code = message
                .rsplit_once(" (")
                .map(|(_, c)| c.trim_end_matches(')').to_string())
                .unwrap_or_default();
            (file, line, column, code)
        })
        .collect()
}

/// The files a `gofmt -d` would change: its diffs' `+++ FILE` lines.
fn gofmt_diff_files(out: &str) -> BTreeSet<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("+++ "))
        .map(|f| f.trim_start_matches("./").to_string())
        .collect()
}

/// The files a `prettier --check` would change: `[warn] FILE` on stderr, before a closing
/// `[warn] Code style issues …` line.
fn prettier_check_files(err: &str) -> BTreeSet<String> {
    err.lines()
        .filter_map(|l| l.strip_prefix("[warn] "))
        .filter(|f| !f.starts_with("Code style issues"))
        .map(str::to_string)
        .collect()
}

/// `tsc`'s plain output: `FILE(LINE,COLUMN): error TSnnnn: MESSAGE`, columns in UTF-16 code
/// units from 1; an error about the configuration has no place (`error TSnnnn: …`).
pub(crate) fn tsc(root: &Path, out: &str) -> BTreeSet<Place> {
    out.lines()
        .filter_map(|l| {
            let code = |rest: &str| {
                rest.split_whitespace()
                    .nth(1)
                    .map(|c| c.trim_end_matches(':').to_string())
            };
            if l.starts_with("error TS") {
                return Some((String::new(), 0, 0, code(l)?));
            }
            let (place, rest) = l.split_once("): ")?;
            let (file, at) = place.rsplit_once('(')?;
            let (line, column) = at.split_once(',')?;
            let line: u64 = line.parse().ok()?;
            let column = chars(root, file, line, column.parse().ok()?, "utf16", 1);
            Some((file.to_string(), line, column, code(rest)?))
        })
        .collect()
}

/// The repository committed in a fresh git repository, as a clone has it.
/// `text` added at the end of a file of the clone (not committed: a change being worked on).
fn append(root: &Path, file: &str, text: &str) {
    let mut content = std::fs::read_to_string(root.join(file)).unwrap();
    content.push_str(text);
    write(root, file, &content);
}

/// Two runs with the cache, the second answered from it, equal `fresh` (a `--no-cache` run).
fn cached_equals(root: &Path, fresh: &Value, ids: &[&str]) {
    let first = check(root, &["--scope", "project"]);
    let cached = check(root, &["--scope", "project"]);
    for &id in ids {
        assert_eq!(found(&first, id), found(fresh, id), "{id}");
        assert_eq!(found(&cached, id), found(fresh, id), "{id}");
        assert!(
            gate(&cached, id)["cached_files"].as_u64().unwrap_or(0) > 0,
            "{id} was not answered from the cache: {}",
            gate(&cached, id)
        );
    }
}

/// unjs/ohash: `pnpm lint` is `eslint . && prettier -c src test`, `pnpm test:types` is
/// `tsc --noEmit` over the `src` and `test` its tsconfig.json includes. ESLint is left out: its
/// `eslint.config.mjs` imports `eslint-config-unjs`, which only the repository's own install has.
/// `pnpm install` is stood in for by a `node_modules` link to the catalog's npm tools, which hold
/// the types its tsconfig.json names (`@types/node`) and `vitest`, but not `esbuild` nor the
/// `dist` that `pnpm build` makes before CI runs `tsc` — so `tsc` has findings of its own here.
#[test]
fn ohash_findings_equal_its_own_tools() {
    let tmp = clone_of_fixture("ohash");
    let root = tmp.path();
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/node_modules");
    assert!(
        modules.join("@types/node").is_dir(),
        "{} has no @types/node: run scripts/setup.sh first",
        modules.display()
    );
    std::os::unix::fs::symlink(&modules, root.join("node_modules")).unwrap();
    write(
        root,
        ".qgates/quality.yaml",
        "version: 1\ngates:\n  prettier: { preset: prettier, scope: { include_globs: [\"src/**\", \"test/**\"] } }\n  tsc: { preset: tsc }\n",
    );
    let ids = ["prettier", "tsc"];
    let compare = |report: &Value| {
        let (_, err) = own(root, &["prettier", "-c", "src", "test"]);
        assert_eq!(found_files(report, "prettier"), prettier_check_files(&err));
        let (out, _) = own(root, &["tsc", "--noEmit"]);
        let want = tsc(root, &out);
        assert!(!want.is_empty(), "{out}");
        assert_eq!(found(report, "tsc"), want);
        want
    };
    let report = check(root, &["--scope", "project", "--no-cache"]);
    let want = compare(&report);
    assert!(found_files(&report, "prettier").is_empty());
    assert!(want.iter().all(|p| p.3 == "TS2307"), "{want:?}");
    cached_equals(root, &report, &ids);

    // Prettier finds nothing in the repository: one line that it would split, and that `tsc`
    // finds a type error in after an emoji (two UTF-16 code units, one character).
    append(
        root,
        "src/utils/is-equal.ts",
        "export const mark = \"😀\"; export const marks: number = mark;\n",
    );
    let report = check(root, &["--scope", "project", "--no-cache"]);
    let want = compare(&report);
    assert_eq!(
        found_files(&report, "prettier"),
        BTreeSet::from(["src/utils/is-equal.ts".to_string()])
    );
    assert!(
        want.iter()
            .any(|p| p.0 == "src/utils/is-equal.ts" && p.3 == "TS2322"),
        "{want:?}"
    );
    cached_equals(root, &report, &ids);
}

/// oklog/run: its CI runs `gofmt -d .` (a diff fails it), `go vet ./...` and `staticcheck ./...`
/// (gofumpt and revive too, which have no preset). The repository is clean for all three, so a
/// function with a finding for each is added to one of its files.
#[test]
fn oklog_run_findings_equal_its_own_tools() {
    let tmp = clone_of_fixture("oklog-run");
    let root = tmp.path();
    write(
        root,
        ".qgates/quality.yaml",
        "version: 1\ngates:\n  gofmt: { preset: gofmt }\n  go_vet: { preset: go-vet }\n  staticcheck: { preset: staticcheck }\n",
    );
    let ids = ["gofmt", "go_vet", "staticcheck"];
    let compare = |report: &Value| {
        let (out, _) = own(root, &["gofmt", "-d", "."]);
        assert_eq!(found_files(report, "gofmt"), gofmt_diff_files(&out));
        let (_, err) = own(root, &["go", "vet", "./..."]);
        let vet = go_vet(root, &err);
        assert_eq!(found(report, "go_vet"), vet);
        let (out, _) = own(root, &["staticcheck", "./..."]);
        let lint = staticcheck(root, &out);
        assert_eq!(found(report, "staticcheck"), lint);
        (vet, lint)
    };
    let report = check(root, &["--scope", "project", "--no-cache"]);
    let (vet, lint) = compare(&report);
    assert!(found_files(&report, "gofmt").is_empty());
    assert!(vet.is_empty() && lint.is_empty(), "{vet:?} {lint:?}");
    cached_equals(root, &report, &ids);

    // A misformatted line; a self-assignment (vet and Staticcheck); a verb of the wrong type after
    // two-byte characters (vet's column counts bytes); an unused function (Staticcheck).
    append(
        root,
        "actors.go",
        "\n// label names an actor for a log line.\nfunc label(name string) string {\n\tname = name\n\treturn  fmt.Sprintf(\"«%s» %d\", name, name)\n}\n",
    );
    let report = check(root, &["--scope", "project", "--no-cache"]);
    let (vet, lint) = compare(&report);
    assert_eq!(
        found_files(&report, "gofmt"),
        BTreeSet::from(["actors.go".to_string()])
    );
    assert_eq!(vet.len(), 2, "{vet:?}");
    let codes: BTreeSet<&str> = lint.iter().map(|p| p.3.as_str()).collect();
    assert!(
        ["U1000", "SA4018", "SA5009"]
            .iter()
            .all(|c| codes.contains(c)),
        "{lint:?}"
    );
    cached_equals(root, &report, &ids);
}
