// End-to-end test of the qgates VS Code extension in real VS Code (code-server) driven through
// headless Chromium, the way a user works: open files, read the Problems panel, type, save, use
// quick fixes and palette commands. Then the bad inputs: an untrusted workspace, a missing
// binary, binaries that crash, a broken quality.yaml. Then the platform package, which carries its
// own qgates, on a machine without one.
//
// Environment:
//   QGATES_BIN       the qgates binary (default: target/debug/qgates of this checkout)
//   CODE_SERVER      code-server's launcher (default: $QGATES_EDITORS_CACHE/code-server/node_modules/.bin/code-server)
//   QGATES_VSIX      a packaged extension to test (default: package editors/vscode now)
//   QGATES_PLATFORM_VSIX  a platform package carrying its qgates (default: scripts/package-vsix.sh now)
//   QGATES_BUNDLE_BIN     the binary that package carries (default: QGATES_BIN)
//   CHROMIUM         the browser (default: /usr/bin/chromium)
//   QGATES_ARTIFACTS where screenshots go (default: target/editor-artifacts/vscode)
//   QGATES_UPDATE_SCREENSHOT=1  also copy the README screenshot into editors/vscode/images/
//
// Prints one line per check and ends with `N passed, N failed`; exits 1 when a check failed.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BASE_SETTINGS,
  CodeServer,
  WAIT_MS,
  Workbench,
  launchBrowser,
  sh,
  userDataDir,
  waitFor,
} from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../../..');
const CACHE = process.env.QGATES_EDITORS_CACHE || path.join(os.homedir(), '.cache', 'qgates-editors');
const QGATES_BIN = path.resolve(process.env.QGATES_BIN || path.join(REPO, 'target/debug/qgates'));
const CODE_SERVER = process.env.CODE_SERVER || path.join(CACHE, 'code-server/node_modules/.bin/code-server');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = path.resolve(process.env.QGATES_ARTIFACTS || path.join(REPO, 'target/editor-artifacts/vscode'));
const VENV = path.join(REPO, '.venv');
const FIXTURE = path.join(REPO, 'fixtures/python-basic');

// The 1-based column VS Code shows for a token on a 1-based line of the example (UTF-16 units, as
// JavaScript strings count), found in the text rather than taken from a tool.
const columnOf = (file, line, token) =>
  fs.readFileSync(path.join(FIXTURE, file), 'utf8').split('\n')[line - 1].indexOf(token) + 1;

// What `qgates check --scope project` finds in fixtures/python-basic with the pinned ruff and
// mypy: every default gate contributes. `file`, 1-based line and character, gate name, message.
const EXPECTED_PROJECT = [
  ['src/type_error.py', 5, 12, 'Mypy', 'Incompatible return value type (got "list[str]", expected "int")'],
  ['src/unformatted.py', 5, columnOf('src/unformatted.py', 5, '+'), 'Ruff Format', 'File requires formatting. Fix: ruff format src/unformatted.py'],
  ['src/unicode_line.py', 3, columnOf('src/unicode_line.py', 3, ';'), 'Ruff Format', 'File requires formatting. Fix: ruff format src/unicode_line.py'],
  ['src/unicode_line.py', 3, columnOf('src/unicode_line.py', 3, ';'), 'Ruff Lint', 'Multiple statements on one line (semicolon)'],
  ['src/unicode_line.py', 3, columnOf('src/unicode_line.py', 3, '"3"'), 'Mypy', 'Incompatible types in assignment (expression has type "str", variable has type "int")'],
  ['src/unused_import.py', 3, 8, 'Ruff Lint', '`os` imported but unused'],
  ['src/with space.py', 3, 8, 'Ruff Lint', '`sys` imported but unused'],
// The fixture is committed as it is: in the editor each of its findings is pre-existing (there at
// the commit the auto scope starts from), and its source says so.
].map(([file, line, ch, source, message]) => `${file}:${line}:${ch} [${source} (pre-existing)] ${message}`);
const EXPECTED_SUMMARY = '❌ 3/3 gates failed — 0 new violations (7 pre-existing; 4 auto-fixable): ruff_format, ruff_lint, mypy';
// The commit's own run (a clean checkout) has no reference to compare with.
const COMMIT_SUMMARY = '❌ 3/3 gates failed — 7 violations (4 auto-fixable): ruff_format, ruff_lint, mypy';

// ---- a tiny runner: checks run in order, a failure is recorded with a screenshot ------------

const results = [];
let current = null;

async function check(name, fn) {
  const started = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (e) {
    results.push({ name, ok: false, error: e });
    console.log(`FAIL ${name}\n     ${String(e?.stack ?? e).split('\n').join('\n     ')}`);
    if (current) {
      await current.wb.screenshot(`fail-${slug(name)}`).catch(() => {});
    }
  }
}

function slug(s) {
  return s.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').toLowerCase();
}

// A summary line without its cache part: which gates the cache answered depends on the process
// (the CLI's cache on disk, the server's in memory); the rest of the line must be the same.
function uncachedLine(s) {
  return s.trim().replace(/; (from the cache: .*|all from the cache)$/, '');
}

// A summary line as `qgates check --scope project` and the editor both give it: the verdict and
// the gates, without the counts, which the editor gives as new and pre-existing (it compares
// every run with the auto scope's base; the command line compares only auto and branch runs).
function verdictLine(s) {
  return uncachedLine(s).replace(/ — .*\): /, ' — …: ');
}

function assert(cond, message) {
  if (!cond) {
    throw new Error(message);
  }
}

// ---- setup ----------------------------------------------------------------------------------

function preflight() {
  const missing = [];
  if (!fs.existsSync(QGATES_BIN)) missing.push(`the qgates binary ${QGATES_BIN} (build it, or set QGATES_BIN)`);
  if (!fs.existsSync(CODE_SERVER)) missing.push(`code-server at ${CODE_SERVER} (scripts/test-vscode.sh installs it, or set CODE_SERVER)`);
  if (!fs.existsSync(CHROMIUM)) missing.push(`Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`);
  for (const tool of ['ruff', 'mypy']) {
    if (!fs.existsSync(path.join(VENV, 'bin', tool))) missing.push(`${VENV}/bin/${tool} (run scripts/setup.sh)`);
  }
  if (missing.length) {
    console.error(`e2e: missing:\n  ${missing.join('\n  ')}`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
}

function packageExtension() {
  if (process.env.QGATES_VSIX) {
    return path.resolve(process.env.QGATES_VSIX);
  }
  const dir = path.join(REPO, 'editors/vscode');
  sh('npm', ['run', '--silent', 'package'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  return path.join(dir, 'qgates.vsix');
}

/** A copy of the fixture as its own git repository (the auto and branch scopes need one). */
function workspaceCopy(root, name, edit) {
  const ws = path.join(root, name);
  fs.cpSync(FIXTURE, ws, {
    recursive: true,
    // Whatever earlier runs left beside the fixture is not part of it.
    filter: (src) => !/(^|\/)(\.qgates|\.mypy_cache|\.ruff_cache|__pycache__)(\/|$)/.test(path.relative(FIXTURE, src)),
  });
  edit?.(ws);
  const git = (...args) => sh('git', ['-c', 'user.name=qgates-test', '-c', 'user.email=test@example.invalid', ...args], { cwd: ws });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'fixture');
  // The server finds ruff and mypy in the workspace's .venv/bin, as in a real project. (A clean
  // checkout has no .venv: there they come from PATH, see serverEnv.)
  fs.symlinkSync(VENV, path.join(ws, '.venv'));
  fs.appendFileSync(path.join(ws, '.git/info/exclude'), '.venv\n.qgates/\n.mypy_cache/\n.ruff_cache/\n');
  return ws;
}

// ---- what the user sees ---------------------------------------------------------------------

/** Problems panel rows as `file:line:char [source] message` (file rows give the file); with
 * `levels`, each starts with its severity (`Error`, `Warning`, `Info`). */
async function problemList(wb, wsName, { levels = false } = {}) {
  const out = [];
  let file = null;
  for (const label of await wb.problems()) {
    // "N problems in file NAME of folder DIR": DIR is relative to the workspace ("." at its root).
    const header = /^\d+ problems? in file (.+) of folder (.+)$/.exec(label);
    if (header) {
      file = header[2] === wsName || header[2] === '.' ? header[1] : `${header[2]}/${header[1]}`;
      continue;
    }
    const m = /^(Error|Warning|Info): ([\s\S]*) at line (\d+) and character (\d+)\. generated by (.+)$/.exec(label);
    if (m) {
      out.push(`${levels ? `${m[1]} ` : ''}${file}:${m[3]}:${m[4]} [${m[5]}] ${m[2]}`);
    } else {
      out.push(`${file}: ${label}`);
    }
  }
  return out.sort();
}

async function qgatesToasts(wb) {
  return (await wb.toasts()).filter((t) => /qgates/i.test(t));
}

function sameSet(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function editorLines(text) {
  // .view-lines renders spaces as no-break spaces.
  return text.replace(/\u00a0/g, ' ');
}

async function activeEditorText(wb) {
  // One read of all rendered lines, without waiting (they re-render while edits land); lines
  // are absolutely positioned, so their DOM order is not their order on screen.
  const rows = await wb.page.evaluate(() => {
    const view = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
    return [...(view?.querySelectorAll('.view-line') ?? [])]
      .map((l) => [parseFloat(l.style.top || '0'), l.innerText])
      .sort((x, y) => x[0] - y[0])
      .map((r) => r[1]);
  });
  return editorLines(rows.join('\n'));
}

// ---- the scenarios --------------------------------------------------------------------------

/**
 * Installs the extension into a fresh code-server with these user `settings`, opens a page on
 * it, and runs `body`; the page and the server are closed whatever happens. `trust` turns
 * VS Code's workspace trust on.
 */
async function withEditor(root, vsix, browser, { name, settings, ws, trust = false, env = serverEnv(root) }, body) {
  const extDir = path.join(root, `ext-${name}`);
  const userDir = userDataDir(root, settings);
  sh(CODE_SERVER, ['--user-data-dir', userDir, '--extensions-dir', extDir, '--install-extension', vsix], { env });
  const cs = await new CodeServer({
    bin: CODE_SERVER, userDir, extDir, workspace: ws, env, trust, logFile: path.join(ARTIFACTS, `code-server-${name}.log`),
  }).start();
  const page = await browser.newPage();
  const wb = new Workbench(page, ARTIFACTS);
  current = { wb, cs };
  try {
    await body({ page, wb, cs, userDir, extDir });
  } finally {
    await page.close().catch(() => {});
    await cs.stop();
    current = null;
  }
}

async function mainScenario(root, vsix, browser) {
  const settings = { ...BASE_SETTINGS, 'qgates.path': QGATES_BIN };
  const ws = workspaceCopy(root, 'python-basic');
  await withEditor(root, vsix, browser, { name: 'main', settings, ws }, async ({ page, wb, cs }) => {
    await check('the workbench opens the fixture project', async () => {
      await wb.open(cs.url, ws);
    });

    await check('opening a file shows its violation in the Problems panel', async () => {
      await wb.openFile('src/unformatted.py');
      await wb.focusProblems();
      const want = EXPECTED_PROJECT.find((p) => p.startsWith('src/unformatted.py:'));
      await waitFor(`"${want}" in the Problems panel`, async () => (await problemList(wb, path.basename(ws))).includes(want));
    });

    await check('"Run Quality Gates (whole project)" shows every gate\'s violations at their lines', async () => {
      await wb.clearNotifications();
      await wb.command('qgates: Run Quality Gates (whole project)');
      const toast = await waitFor('the summary notification', async () =>
        (await wb.toasts()).find((t) => t.includes('gates failed')),
      );
      assert(toast.includes(EXPECTED_SUMMARY), `summary notification:\n${toast}\nexpected it to hold:\n${EXPECTED_SUMMARY}`);
      let seen = [];
      await waitFor('the Problems panel to list exactly the project\'s violations', async () => {
        seen = await problemList(wb, path.basename(ws));
        return sameSet(seen, [...EXPECTED_PROJECT].sort());
      }).catch((e) => {
        throw new Error(`${e.message}\nseen:\n  ${seen.join('\n  ')}\nexpected:\n  ${EXPECTED_PROJECT.join('\n  ')}`);
      });
      // The status bar shows the same line (cut to fit).
      await waitFor('the summary line in the status bar', async () =>
        (await wb.statusTexts()).some((t) => t.trim().length > 20 && EXPECTED_SUMMARY.startsWith(t.trim().replace(/…$/, ''))),
      );
      await wb.openFile('src/unicode_line.py');
      // Squiggles are drawn for the three findings of this file: information squiggles, as they
      // are pre-existing.
      await waitFor('squiggles in unicode_line.py', async () =>
        (await page.locator('.editor-group-container.active .squiggly-info').count()) >= 2,
      );
      await wb.screenshot('project-run');
      fs.copyFileSync(path.join(ARTIFACTS, 'project-run.png'), path.join(ARTIFACTS, 'readme-screenshot.png'));
    });

    await check('a typed change is checked on save (Ctrl+S)', async () => {
      await wb.openFile('src/clean.py');
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
      // An import under the module docstring: line 2.
      await page.keyboard.press('Control+Home');
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await page.keyboard.type('import json');
      await page.keyboard.press('Control+S');
      const want = 'src/clean.py:2:8 [Ruff Lint] `json` imported but unused';
      await waitFor(`"${want}" in the Problems panel`, async () => (await problemList(wb, path.basename(ws))).includes(want));
      assert(fs.readFileSync(path.join(ws, 'src/clean.py'), 'utf8').split('\n')[1] === 'import json', 'the change was not saved');
      // The save's run (the changed files: clean.py) has another summary than the project's;
      // the status bar follows it without any command (it refreshes after diagnostics arrive).
      await waitFor('the status bar to show the summary of the save\'s run', async () =>
        (await wb.statusTexts()).some((t) => /\d+\/\d+ gates/.test(t) && !EXPECTED_SUMMARY.startsWith(t.trim().replace(/…$/, ''))),
      );
      await wb.screenshot('typed-change');
    });

    await check('a pre-existing finding is listed as information, the one the change made as an error', async () => {
      const rows = await problemList(wb, path.basename(ws), { levels: true });
      const old = 'Info src/unused_import.py:3:8 [Ruff Lint (pre-existing)] `os` imported but unused';
      const made = 'Error src/clean.py:2:8 [Ruff Lint] `json` imported but unused';
      assert(rows.includes(old) && rows.includes(made), `Problems panel:\n  ${rows.join('\n  ')}`);
      await wb.screenshot('new-and-pre-existing');
    });

    await check('a file written outside the editor is checked by a later save (VS Code\'s file watcher reports it)', async () => {
      // The server keeps the auto scope from saves and the watcher's events, without a status of
      // the repository: nothing but the watcher tells it about this file.
      const outside = path.join(ws, 'src/outside.py');
      const saved = path.join(ws, 'src/clean.py');
      const before = fs.readFileSync(saved, 'utf8');
      fs.writeFileSync(outside, 'import os\n');
      const want = 'src/outside.py:1:8 [Ruff Lint] `os` imported but unused';
      await wb.openFile('src/clean.py');
      // The watcher reports on its own schedule: save again until a save's scope has the file.
      await waitFor(`"${want}" in the Problems panel after a save`, async () => {
        await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
        await page.keyboard.press('Control+End');
        await page.keyboard.type('#');
        await page.keyboard.press('Control+S');
        return (await problemList(wb, path.basename(ws))).includes(want);
      });
      await wb.screenshot('outside-file');
      // The later checks expect the workspace as the typing check left it. The last save may
      // still be under way: a write to the file before it ends would be overwritten by it, or
      // leave the editor with its own text beside a newer file.
      await waitFor('the last save to reach the disk', async () =>
        !(await page.locator('.editor-group-container.active .tab.active.dirty').count())
        && (await activeEditorText(wb)).trimEnd() === fs.readFileSync(saved, 'utf8').trimEnd(),
      );
      fs.unlinkSync(outside);
      fs.writeFileSync(saved, before);
      // The editor reloads a saved file that changed on disk when its watcher reports it; a
      // revert reloads it now.
      await wb.command('File: Revert File');
      await waitFor('clean.py back in the editor as it was', async () =>
        (await activeEditorText(wb)).trimEnd() === before.trimEnd(),
      );
    });

    await check('the "Format with ruff" quick fix (Ctrl+.) formats the buffer as ruff format does', async () => {
      const file = path.join(ws, 'src/unformatted.py');
      const original = fs.readFileSync(file, 'utf8');
      const expected = sh(path.join(VENV, 'bin/ruff'), ['format', '--stdin-filename', 'src/unformatted.py', '-'], {
        cwd: ws, input: original,
      }).stdout;
      assert(expected !== original, 'ruff format would not change the fixture: the check would prove nothing');
      await wb.openFile('src/unformatted.py');
      // The formatter's finding starts at its first change, on line 5; put the cursor there and
      // ask for quick fixes.
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
      await page.keyboard.press('Control+Home');
      for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown');
      const item = page.locator('.action-widget .monaco-list-row', { hasText: 'Format with ruff' }).first();
      await waitFor('"Format with ruff" among the quick fixes', async () => {
        if (!(await item.isVisible())) {
          await page.keyboard.press('Escape');
          await page.keyboard.press('Control+.');
          await item.waitFor({ state: 'visible', timeout: 5000 });
        }
        return item.isVisible();
      });
      await wb.screenshot('quick-fix');
      // The menu is driven with the keyboard (a pointer guard lies over it while it opens).
      const focused = page.locator('.action-widget .monaco-list-row.focused');
      await waitFor('"Format with ruff" to be the chosen quick fix', async () => {
        if (((await focused.getAttribute('aria-label', { timeout: 1000 }).catch(() => '')) ?? '').includes('Format with ruff')) {
          return true;
        }
        await page.keyboard.press('ArrowDown');
        return false;
      });
      await page.keyboard.press('Enter');
      await waitFor('the editor to show the formatted text', async () =>
        (await activeEditorText(wb)).trimEnd() === expected.trimEnd(),
      );
      await page.keyboard.press('Control+S');
      await waitFor('the formatted file on disk', () => fs.readFileSync(file, 'utf8') === expected);
      await waitFor('the formatter\'s finding to leave the Problems panel', async () =>
        !(await problemList(wb, path.basename(ws))).some((p) => p.startsWith('src/unformatted.py:')),
      );
    });

    await check('"Fix All in Current File" applies the tools\' fixes and the formatter', async () => {
      // clean.py got an unused import above (checked on save): removing it (ruff's fix) gives
      // back the fixture's text, which the formatter accepts.
      const file = path.join(ws, 'src/clean.py');
      const original = fs.readFileSync(path.join(FIXTURE, 'src/clean.py'), 'utf8');
      assert(fs.readFileSync(file, 'utf8') !== original, 'clean.py is unchanged: the typing check did not run');
      await wb.openFile('src/clean.py');
      await wb.command('qgates: Fix All in Current File');
      await waitFor('the fixture\'s text back in the buffer', async () => (await activeEditorText(wb)).trimEnd() === original.trimEnd());
      await page.keyboard.press('Control+S');
      await waitFor('the fixed file on disk', () => fs.readFileSync(file, 'utf8') === original);
      await waitFor('clean.py\'s findings to leave the Problems panel', async () =>
        !(await problemList(wb, path.basename(ws))).some((p) => p.startsWith('src/clean.py:')),
      );
    });

    await check('"Show Summary" shows the summary line in a notification and the report in the output channel', async () => {
      // Every file of the project again, so the summary has a known content (the one `qgates check`
      // gives now that the checks above have changed files).
      const cli = sh(QGATES_BIN, ['check', '--root', ws, '--scope', 'project', '--format', 'summary'], {
        env: serverEnv(root), allowFail: true,
      }).stdout.split('\n')[0].trim();
      assert(/\d+\/\d+ gates failed/.test(cli), `qgates check printed: ${cli}`);
      await wb.command('qgates: Run Quality Gates (whole project)');
      await waitFor('the project run to finish', async () =>
        (await wb.toasts()).some((t) => t.split('\n').some((l) => /gates/.test(l) && verdictLine(l) === verdictLine(cli))));
      await wb.clearNotifications();
      await wb.command('qgates: Show Summary');
      const toast = await waitFor('the summary notification', async () =>
        (await wb.toasts()).find((t) => /\d+\/\d+ gates (failed|passed)/.test(t)),
      );
      const line = toast.split('\n').find((l) => /\d+\/\d+ gates/.test(l));
      assert(verdictLine(line) === verdictLine(cli) && line.includes('pre-existing'), `summary line: ${line}\nqgates check: ${cli}`);
      await wb.screenshot('summary-notification');
      await page.locator('.notifications-toasts .monaco-button', { hasText: 'Show Details' }).first().click();
      // The whole report on screen: the output view draws only the lines it shows.
      await wb.command('View: Toggle Maximized Panel');
      const output = page.locator('.panel .output-view, [id="workbench.panel.output"]').locator('.view-lines');
      await waitFor('the report in the qgates output channel', async () => {
        // A long line wraps in the view: compared with its spacing blurred.
        const blur = (t) => t.replace(/\s+/g, ' ');
        const text = blur(editorLines((await output.allInnerTexts()).join('\n')));
        return text.includes(blur(line.trim())) && text.includes('Ruff Lint: failed')
          && text.includes('src/type_error.py:5:12 return-value Incompatible return value type (got "list[str]", expected "int") (pre-existing)');
      });
      await wb.screenshot('summary-output');
      await wb.command('View: Toggle Maximized Panel');
    });

    await check('clicking the status-bar item shows the summary', async () => {
      await wb.clearNotifications();
      const item = page.locator('.statusbar-item', { hasText: 'gates failed' }).first();
      await item.click();
      await waitFor('the summary notification', async () => (await wb.toasts()).some((t) => /\d+\/\d+ gates failed/.test(t)));
    });

    await check('"Run All Gates in a Clean Checkout" checks the commit, not the working tree, and removes its worktree', async () => {
      // unformatted.py was formatted and saved above, not committed: the commit still has every
      // finding of the fixture, the working tree one fewer.
      const git = (...args) => sh('git', args, { cwd: ws }).stdout.trim();
      const changed = git('status', '--porcelain').split('\n');
      assert(changed.length === 1 && changed[0].endsWith('src/unformatted.py'), `uncommitted changes: ${changed}`);
      const commit = git('rev-parse', '--short=7', 'HEAD');
      const workingStatus = (await wb.statusTexts()).find((t) => /\d+\/\d+ gates/.test(t));
      assert(workingStatus && !COMMIT_SUMMARY.startsWith(workingStatus.trim().replace(/…$/, '')),
        `the status bar should show the working tree's run, not the commit's: ${workingStatus}`);
      await wb.clearNotifications();
      await wb.command('qgates: Run All Gates in a Clean Checkout');
      const toast = await waitFor('the clean-room notification', async () =>
        (await wb.toasts()).find((t) => t.includes('clean room at')),
      );
      const want = `${COMMIT_SUMMARY}; clean room at ${commit} (HEAD): 1 uncommitted change not included; worktree removed`;
      assert(toast.includes(want), `notification:\n${toast}\nexpected it to hold:\n${want}`);
      // The extension sets the status bar before it notifies: it still shows the working tree.
      const status = (await wb.statusTexts()).find((t) => /\d+\/\d+ gates/.test(t));
      assert(status === workingStatus, `status bar: ${status}\nbefore the clean room: ${workingStatus}`);
      const worktrees = git('worktree', 'list').split('\n');
      assert(worktrees.length === 1, `worktrees left: ${worktrees.join(' | ')}`);
      await wb.screenshot('clean-room');
      // The details name the finding the working tree fixed.
      await page.locator('.notifications-toasts .monaco-button', { hasText: 'Show Details' }).first().click();
      await wb.command('View: Toggle Maximized Panel');
      const output = page.locator('.panel .output-view, [id="workbench.panel.output"]').locator('.view-lines');
      await waitFor('the clean room\'s report in the qgates output channel', async () => {
        // The long summary line wraps: compare with the line breaks as spaces.
        const text = editorLines((await output.allInnerTexts()).join(' ')).replace(/\s+/g, ' ');
        return text.includes(want)
          && text.includes(`src/unformatted.py:5:${columnOf('src/unformatted.py', 5, '+')} FORMAT File requires formatting`);
      });
      await wb.screenshot('clean-room-output');
      await wb.command('View: Toggle Maximized Panel');
      // A later answer of the server comes after anything the clean room might have published:
      // then the Problems panel still shows the working tree.
      await wb.clearNotifications();
      await wb.command('qgates: Show Summary');
      await waitFor('the working tree\'s summary', async () => (await wb.toasts()).some((t) => /\d+\/\d+ gates/.test(t) && !t.includes('clean room')));
      await wb.focusProblems();
      const rows = await problemList(wb, path.basename(ws));
      assert(!rows.some((p) => p.startsWith('src/unformatted.py:')), `the commit's finding reached the Problems panel:\n  ${rows.join('\n  ')}`);
    });
  });
}

async function badInputScenario(root, vsix, browser) {
  const settings = { ...BASE_SETTINGS, 'qgates.path': '/nonexistent/qgates' };
  // A configuration with a mistake: the last step starts the real server on it.
  const ws = workspaceCopy(root, 'broken-config', (dir) => {
    const q = path.join(dir, 'quality.yaml');
    const text = fs.readFileSync(q, 'utf8');
    const broken = text.replace('active_gates: [ruff_format, ruff_lint, mypy]', 'active_gates: [ruff_format, ruff_lnt, mypy]');
    assert(broken !== text, 'the fixture\'s active_gates line changed; update the test');
    fs.writeFileSync(q, broken);
  });
  // Workspace trust on: VS Code asks before the extension may start.
  await withEditor(root, vsix, browser, { name: 'bad', settings, ws, trust: true }, async ({ page, wb, cs, userDir }) => {
    // The setting is changed in the Settings editor that "Open Settings" opened, as a user does
    // (VS Code does not notice a settings.json changed on disk behind its back here).
    const pathInput = page.locator('.settings-editor .setting-item-contents', { hasText: 'Path of the' }).locator('input').first();
    const setPath = async (p) => {
      await pathInput.fill(p);
      await pathInput.press('Tab');
    };
    await check('an untrusted workspace: the extension does not start until the folder is trusted', async () => {
      await page.goto(`${cs.url}/?folder=${encodeURIComponent(ws)}`);
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: WAIT_MS });
      await dialog.locator('.monaco-button', { hasText: "No, I don't trust the authors" }).click();
      await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).waitFor({ timeout: WAIT_MS });
      // In restricted mode the extension is not loaded: its commands are not in the palette.
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input.input');
      await input.fill('>qgates: Show Summary');
      // Contributed commands are listed even before an extension activates; a disabled
      // extension's are not. The list shows other (similar) commands or "No matching commands".
      const rows = page.locator('.quick-input-list .monaco-list-row');
      await waitFor('the palette to answer', async () =>
        (await rows.count()) > 0 || (await page.locator('.quick-input-widget', { hasText: 'No matching commands' }).count()) > 0,
      );
      const labels = await rows.allInnerTexts();
      assert(!labels.some((l) => l.includes('qgates:')), `qgates commands in restricted mode: ${labels}`);
      await page.keyboard.press('Escape');
      assert((await qgatesToasts(wb)).length === 0, `qgates spoke in restricted mode: ${await qgatesToasts(wb)}`);
      await wb.screenshot('untrusted');
      // Trusting the folder starts the extension (here straight into the next check's problem).
      await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).click();
      await page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first().click();
    });

    await check('no binary: one error that says what to do, with "Open Settings"', async () => {
      const toast = await waitFor('the "not found" notification', async () =>
        (await qgatesToasts(wb)).find((t) => t.includes('cannot start')),
      );
      assert(toast.includes('qgates: cannot start `/nonexistent/qgates`: not found. Install qgates or fix the setting qgates.path.'), toast);
      assert(toast.includes('Open Settings'), `no "Open Settings" button: ${toast}`);
      await waitFor('the error in the status bar', async () => (await wb.statusTexts()).some((t) => t.trim() === 'qgates'));
      await wb.screenshot('not-found');
      await page.locator('.notifications-toasts .monaco-button', { hasText: 'Open Settings' }).first().click();
      await pathInput.waitFor({ timeout: WAIT_MS });
      assert((await qgatesToasts(wb)).length === 0, `notifications left: ${await qgatesToasts(wb)}`);
    });

    const crasher = path.join(root, 'crashing-qgates');
    fs.writeFileSync(crasher, '#!/bin/sh\necho "qgates: corrupt installation" >&2\nexit 3\n', { mode: 0o755 });
    await check('a binary that fails at once: one error with its exit code and its words', async () => {
      await wb.clearNotifications();
      await setPath(crasher);
      const toast = await waitFor('the crash notification', async () =>
        (await qgatesToasts(wb)).find((t) => t.includes('crashing-qgates')),
      );
      assert(toast.includes('it exited with code 3: qgates: corrupt installation'), toast);
      assert((await qgatesToasts(wb)).length === 1, `more than one notification: ${await qgatesToasts(wb)}`);
    });

    const lspCrasher = path.join(root, 'lsp-crashing-qgates');
    fs.writeFileSync(
      lspCrasher,
      '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "qgates 0.0.0"; exit 0; fi\necho "panicked at startup" >&2\nexit 101\n',
      { mode: 0o755 },
    );
    await check('a server that dies while starting: one error, no restart loop', async () => {
      await wb.clearNotifications();
      await setPath(lspCrasher);
      const toast = await waitFor('the notification', async () =>
        (await qgatesToasts(wb)).find((t) => t.includes('lsp-crashing-qgates')),
      );
      assert(toast.includes('stopped while starting (exit code 101): panicked at startup'), toast);
      // The server log shows one start: the client did not restart it.
      const log = await waitFor('the server log', () => findOutputLog(userDir, 'qgates server'));
      const starts = (fs.readFileSync(log, 'utf8').match(/starting .*lsp-crashing-qgates lsp/g) ?? []).length;
      assert(starts === 1, `the crashing server was started ${starts} times`);
      assert((await qgatesToasts(wb)).length === 1, `notifications: ${JSON.stringify(await qgatesToasts(wb))}`);
      await wb.screenshot('server-crash');
    });

    // A server that answers `initialize` and then dies, every time: a fake in node (which runs
    // this test anyway) that speaks just enough LSP.
    const flaky = path.join(root, 'flaky-qgates');
    fs.writeFileSync(
      flaky,
      `#!${process.execPath}
if (process.argv[2] === '--version') { console.log('qgates 0.0.0'); process.exit(0); }
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  const m = /Content-Length: (\\d+)\\r\\n\\r\\n/.exec(buf);
  if (!m || buf.length < m.index + m[0].length + Number(m[1])) return;
  const msg = JSON.parse(buf.slice(m.index + m[0].length, m.index + m[0].length + Number(m[1])));
  const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { capabilities: {} } });
  process.stdout.write('Content-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body);
  setTimeout(() => { console.error('lost my mind'); process.exit(1); }, 300);
});
`,
      { mode: 0o755 },
    );
    await check('a server that keeps dying after starting: restarted 3 times, then one message', async () => {
      await wb.clearNotifications();
      await setPath(flaky);
      const toast = await waitFor('the notification', async () =>
        (await qgatesToasts(wb)).find((t) => t.includes('stopped 4 times')),
      );
      assert(toast.includes('is not restarted'), toast);
      const log = fs.readFileSync(findOutputLog(userDir, 'qgates server'), 'utf8');
      const exits = (log.match(/the server exited \(exit code 1\)/g) ?? []).length;
      assert(exits === 4, `the flaky server ran ${exits} times, expected 4 (the first start and 3 restarts)`);
      assert((await qgatesToasts(wb)).length === 1, `notifications: ${JSON.stringify(await qgatesToasts(wb))}`);
    });

    await check('a broken quality.yaml: one error naming the problem, shown in the file too', async () => {
      await wb.clearNotifications();
      await setPath(QGATES_BIN);
      const toast = await waitFor('the configuration error', async () =>
        (await qgatesToasts(wb)).find((t) => t.includes('configuration')),
      );
      assert(toast.includes('has errors') && toast.includes('ruff_lnt'), toast);
      await wb.focusProblems();
      let seen = [];
      await waitFor('the problem in quality.yaml in the Problems panel', async () => {
        seen = await problemList(wb, path.basename(ws));
        return seen.some((p) => p.startsWith('quality.yaml:4:29 [qgates]') && p.includes('ruff_lnt'));
      }).catch((e) => {
        throw new Error(`${e.message}\nseen: ${JSON.stringify(seen)}\nrows: ${JSON.stringify(wb.lastProblems)}`);
      });
      // Commands answer instead of hanging, and say why nothing runs.
      await wb.clearNotifications();
      await wb.command('qgates: Run Quality Gates (whole project)');
      const answer = await waitFor('the run command\'s answer', async () =>
        (await qgatesToasts(wb)).find((t) => t.includes('the run failed')),
      );
      assert(answer.includes('has errors'), answer);
      // All the bad inputs above together left exactly this one notification.
      assert((await qgatesToasts(wb)).length === 1, `notifications: ${JSON.stringify(await qgatesToasts(wb))}`);
      await wb.screenshot('broken-config');
    });
  });
}

async function manualTriggerScenario(root, vsix, browser) {
  // The trace logs every message to the server, so the test can tell that no save was sent.
  const settings = {
    ...BASE_SETTINGS,
    'qgates.path': QGATES_BIN,
    'qgates.trigger': 'manual',
    'qgates.trace.server': 'messages',
  };
  const ws = workspaceCopy(root, 'manual-trigger');
  await withEditor(root, vsix, browser, { name: 'manual', settings, ws }, async ({ page, wb, cs, userDir }) => {
    await check('qgates.trigger "manual": saving runs nothing, the run command does', async () => {
      await wb.open(cs.url, ws);
      await wb.openFile('src/clean.py');
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
      await page.keyboard.press('Control+Home');
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await page.keyboard.type('import json');
      await page.keyboard.press('Control+S');
      await waitFor('the change on disk', () => fs.readFileSync(path.join(ws, 'src/clean.py'), 'utf8').includes('import json'));
      await wb.command('qgates: Run Quality Gates (changed files)');
      await wb.focusProblems();
      const want = 'src/clean.py:2:8 [Ruff Lint] `json` imported but unused';
      await waitFor(`"${want}" in the Problems panel`, async () => (await problemList(wb, path.basename(ws))).includes(want));
      // The trace shows the run's request and, before it, no save notification.
      const log = await waitFor('the traced run request', () => {
        const f = findOutputLog(userDir, 'qgates server');
        const text = f ? fs.readFileSync(f, 'utf8') : '';
        return text.includes("Sending request 'workspace/executeCommand") && text;
      });
      assert(log.includes("Sending notification 'textDocument/didOpen'"), 'the trace has no didOpen: it does not show the messages');
      assert(!log.includes("'textDocument/didSave'"), 'a save was sent to the server although qgates.trigger is "manual"');
    });
  });
}

// ---- the platform package: the extension with its own qgates ------------------------------

/** The platform package for this machine, carrying QGATES_BUNDLE_BIN (or QGATES_BIN). */
function packagePlatform(root) {
  if (process.env.QGATES_PLATFORM_VSIX) {
    return path.resolve(process.env.QGATES_PLATFORM_VSIX);
  }
  const out = path.join(root, 'qgates-linux-x64.vsix');
  const bin = path.resolve(process.env.QGATES_BUNDLE_BIN || QGATES_BIN);
  sh(path.join(REPO, 'scripts/package-vsix.sh'), [`QGATES_BIN=${bin}`, 'TARGET=linux-x64', `OUT=${out}`], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return out;
}

/**
 * The environment of a machine with no qgates: PATH without any folder that holds one, and
 * VSCODE_CLI=1 so that code-server keeps this PATH instead of taking the login shell's (which
 * may hold a `cargo install`ed qgates).
 */
function envWithoutQgates(root) {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d && !fs.existsSync(path.join(d, 'qgates')));
  return { ...serverEnv(root), PATH: dirs.join(path.delimiter), VSCODE_CLI: '1' };
}

/** The fixture as a project whose .venv has the gate tools (ruff, mypy) and no qgates. */
function workspaceWithoutQgates(root, name) {
  const ws = workspaceCopy(root, name);
  fs.unlinkSync(path.join(ws, '.venv'));
  fs.mkdirSync(path.join(ws, '.venv/bin'), { recursive: true });
  for (const tool of ['ruff', 'mypy']) {
    fs.symlinkSync(path.join(VENV, 'bin', tool), path.join(ws, '.venv/bin', tool));
  }
  return ws;
}

async function bundledScenario(root, browser) {
  await check('the binary lookup order (tests/editors/vscode/lookup.test.mjs)', async () => {
    const r = sh(process.execPath, ['--test', path.join(HERE, 'lookup.test.mjs')], { allowFail: true });
    assert(r.status === 0, `${r.stdout}\n${r.stderr}`);
  });

  let vsix;
  await check('the linux-x64 package (scripts/package-vsix.sh) carries an executable qgates', async () => {
    const out = packagePlatform(root);
    const listing = sh('unzip', ['-Z', out]).stdout;
    assert(/^-rwxr-xr-x .* extension\/bundled\/bin\/qgates$/m.test(listing), `no executable bundled/bin/qgates in ${out}:\n${listing}`);
    const manifest = sh('unzip', ['-p', out, 'extension.vsixmanifest']).stdout;
    assert(manifest.includes('TargetPlatform="linux-x64"'), `the package is not for linux-x64:\n${manifest}`);
    vsix = out;
  });
  if (!vsix) {
    return;
  }

  const env = envWithoutQgates(root);
  const ws = workspaceWithoutQgates(root, 'bundled');
  // Nothing set: qgates.importStrategy is "fromEnvironment", qgates.path is empty.
  const settings = { ...BASE_SETTINGS };
  await withEditor(root, vsix, browser, { name: 'bundled', settings, ws, env }, async ({ wb, cs, userDir, extDir }) => {
    const installed = fs.readdirSync(extDir).find((d) => d.startsWith('qgates.qgates-'));
    const bundled = installed && path.join(extDir, installed, 'bundled/bin/qgates');

    await check('no qgates on PATH or in .venv: the extension falls back to its bundled binary and says so', async () => {
      assert(bundled && fs.existsSync(bundled), `no bundled binary in the installed extension (${extDir}: ${fs.readdirSync(extDir)})`);
      fs.accessSync(bundled, fs.constants.X_OK);
      await wb.open(cs.url, ws);
      const log = await waitFor('the server log to name the started binary', () => {
        const f = findOutputLog(userDir, 'qgates server');
        const text = f ? fs.readFileSync(f, 'utf8') : '';
        return /\[client\] starting /.test(text) && text;
      });
      const version = sh(bundled, ['--version']).stdout.trim();
      assert(
        log.includes(`qgates.path is not set and no qgates is in ${path.join(ws, '.venv/bin')} or on PATH: falling back to the bundled binary ${bundled}`),
        `no fallback line in the log:\n${log}`,
      );
      assert(log.includes(`starting ${bundled} lsp (${version}, from the bundled binary)`), `the log does not name the bundled binary:\n${log}`);
    });

    await check('the bundled server shows the example\'s diagnostics in the Problems panel', async () => {
      // An opened file's finding first: the server runs (a command sent while it starts is refused).
      await wb.openFile('src/unformatted.py');
      await wb.focusProblems();
      const first = EXPECTED_PROJECT.find((p) => p.startsWith('src/unformatted.py:'));
      await waitFor(`"${first}" in the Problems panel`, async () => (await problemList(wb, path.basename(ws))).includes(first));
      await wb.command('qgates: Run Quality Gates (whole project)');
      let seen = [];
      await waitFor('the Problems panel to list exactly the project\'s violations', async () => {
        seen = await problemList(wb, path.basename(ws));
        return sameSet(seen, [...EXPECTED_PROJECT].sort());
      }).catch((e) => {
        throw new Error(`${e.message}\nseen:\n  ${seen.join('\n  ')}\nexpected:\n  ${EXPECTED_PROJECT.join('\n  ')}`);
      });
      await wb.screenshot('bundled-binary');
    });

    await check('a bundled binary for another machine: one error naming it and the setting to change', async () => {
      // The installed binary's header says aarch64 (as a package for another platform would): the
      // running server keeps its own copy of the file, the restart finds the new one.
      const head = fs.readFileSync(bundled);
      head.writeUInt16LE(0xb7, 18);
      fs.writeFileSync(`${bundled}.new`, head, { mode: 0o755 });
      fs.renameSync(`${bundled}.new`, bundled);
      await wb.clearNotifications();
      await wb.command('qgates: Restart Server');
      const toast = await waitFor('the error notification', async () =>
        (await qgatesToasts(wb)).find((t) => t.includes('the bundled binary')),
      );
      assert(
        toast.includes(`qgates: the bundled binary \`${bundled}\` cannot start: it is a program for linux-arm64, and this machine is linux-x64. Install qgates (pip install qgates) or set qgates.path to a working binary, or install the extension's package for linux-x64.`),
        toast,
      );
      assert(toast.includes('Open Settings'), `no "Open Settings" button: ${toast}`);
      assert((await qgatesToasts(wb)).length === 1, `notifications: ${JSON.stringify(await qgatesToasts(wb))}`);
      await wb.screenshot('bundled-wrong-platform');
    });
  });
}

/** The file behind an output channel (VS Code keeps each channel in its log folder). */
function findOutputLog(userDir, channel) {
  const logs = path.join(userDir, 'logs');
  const stack = [logs];
  while (stack.length) {
    const d = stack.pop();
    for (const e of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.name.endsWith(`-${channel}.log`)) return p;
    }
  }
  return null;
}

function serverEnv(root) {
  return {
    ...process.env,
    PATH: `${path.join(VENV, 'bin')}${path.delimiter}${process.env.PATH}`,
    // code-server builds the extension host's environment from a login shell, whose profile
    // resets PATH; VSCODE_CLI=1 makes it keep this one (as when VS Code starts from a terminal).
    VSCODE_CLI: '1',
    // code-server's own config and the server's trust store go to the test's folder, not $HOME.
    XDG_CONFIG_HOME: path.join(root, 'config'),
    XDG_DATA_HOME: path.join(root, 'data'),
  };
}

// ---- main -----------------------------------------------------------------------------------

async function main() {
  preflight();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  for (const f of fs.readdirSync(ARTIFACTS)) {
    if (f.endsWith('.png') || f.endsWith('.log')) fs.rmSync(path.join(ARTIFACTS, f));
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'qgates-vscode-e2e-'));
  const t0 = Date.now();
  let vsix;
  await check('the extension packages into a .vsix', async () => {
    vsix = packageExtension();
    assert(fs.existsSync(vsix), `no ${vsix}`);
  });
  if (!vsix) {
    return finish(root, t0);
  }
  const { browser, profile } = await launchBrowser(CHROMIUM);
  try {
    // QGATES_E2E_ONLY=main, =manual, =bad or =bundled runs one scenario (to look into a failure).
    const only = process.env.QGATES_E2E_ONLY;
    if (!only || only === 'main') await mainScenario(root, vsix, browser);
    if (!only || only === 'manual') await manualTriggerScenario(root, vsix, browser);
    if (!only || only === 'bad') await badInputScenario(root, vsix, browser);
    if (!only || only === 'bundled') await bundledScenario(root, browser);
  } finally {
    await browser.close().catch(() => {});
    fs.rmSync(profile, { recursive: true, force: true });
  }
  const shot = path.join(ARTIFACTS, 'readme-screenshot.png');
  if (process.env.QGATES_UPDATE_SCREENSHOT === '1' && fs.existsSync(shot)) {
    fs.mkdirSync(path.join(REPO, 'editors/vscode/images'), { recursive: true });
    fs.copyFileSync(shot, path.join(REPO, 'editors/vscode/images/screenshot.png'));
  }
  finish(root, t0);
}

function finish(root, t0) {
  const failed = results.filter((r) => !r.ok);
  console.log(`screenshots and logs: ${ARTIFACTS}`);
  console.log(`test time: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  if (failed.length === 0) {
    fs.rmSync(root, { recursive: true, force: true });
  } else {
    console.log(`kept for inspection: ${root}`);
    for (const f of failed) console.log(`failed: ${f.name}`);
  }
  console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
  process.exitCode = failed.length ? 1 : 0;
}

main().catch((e) => {
  console.error(e);
  console.log(`${results.filter((r) => r.ok).length} passed, ${results.filter((r) => !r.ok).length + 1} failed`);
  process.exit(1);
});
