// Which qgates binary the VS Code extension starts (editors/vscode/src/binary.ts), on real files
// in a temporary folder: the order of qgates.path, the workspace .venv, PATH and the bundled
// binary, `useBundled`, and what the extension says about binaries that cannot start.
//
//   node --test tests/editors/vscode/lookup.test.mjs   (after npm ci in editors/vscode)

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EXT = path.resolve(HERE, '../../../editors/vscode');

let lookup;
let tmp;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'qgates-lookup-'));
  // The module as the extension bundles it (TypeScript, compiled by the extension's esbuild).
  const esbuild = createRequire(path.join(EXT, 'package.json'))('esbuild');
  const out = path.join(tmp, 'binary.mjs');
  await esbuild.build({
    entryPoints: [path.join(EXT, 'src/binary.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile: out,
    logLevel: 'warning',
  });
  lookup = await import(pathToFileURL(out).href);
});

after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A folder holding an executable `qgates` (or a plain file with `mode`). */
function binIn(dir, mode = 0o755) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'qgates');
  fs.writeFileSync(file, '#!/bin/sh\necho "qgates 0.0.0"\n', { mode });
  fs.chmodSync(file, mode);
  return file;
}

/** A workspace, an extension folder and a PATH dir, each with a qgates unless told not to. */
function setup(name, { venv = true, onPath = true, bundled = true } = {}) {
  const root = path.join(tmp, name);
  const ws = path.join(root, 'ws');
  const ext = path.join(root, 'ext');
  fs.mkdirSync(ws, { recursive: true });
  fs.mkdirSync(ext, { recursive: true });
  const emptyDir = path.join(root, 'empty');
  fs.mkdirSync(emptyDir);
  return {
    ws,
    ext,
    venvBin: venv ? binIn(path.join(ws, '.venv/bin')) : null,
    pathBin: onPath ? binIn(path.join(root, 'path-bin')) : null,
    bundledBin: bundled ? binIn(path.join(ext, 'bundled/bin')) : null,
    envPath: [emptyDir, ...(onPath ? [path.join(root, 'path-bin')] : [])].join(path.delimiter),
  };
}

function find(s, strategy, pathSetting = '') {
  return lookup.findBinary({
    strategy,
    pathSetting,
    workspaceFolder: s.ws,
    extensionPath: s.ext,
    envPath: s.envPath,
    platform: 'linux',
    home: os.homedir(),
  });
}

describe('fromEnvironment', () => {
  test('qgates.path wins over everything else', () => {
    const s = setup('setting');
    const own = binIn(path.join(tmp, 'setting/own'));
    assert.deepEqual(find(s, 'fromEnvironment', own), { bin: own, source: 'qgates.path' });
  });

  test('a qgates.path that is missing is an error about qgates.path, with no fallback', () => {
    const s = setup('setting-missing');
    const r = find(s, 'fromEnvironment', '/nonexistent/qgates');
    assert.equal(r.problem, 'qgates: cannot start `/nonexistent/qgates`: not found. Install qgates or fix the setting qgates.path.');
    assert.equal(r.setting, 'qgates.path');
  });

  test('${workspaceFolder} in qgates.path is the workspace', () => {
    const s = setup('setting-ws');
    assert.deepEqual(find(s, 'fromEnvironment', '${workspaceFolder}/.venv/bin/qgates'), { bin: s.venvBin, source: 'qgates.path' });
  });

  test('the workspace .venv comes before PATH and the bundled binary', () => {
    const s = setup('venv');
    assert.deepEqual(find(s, 'fromEnvironment'), { bin: s.venvBin, source: 'the workspace .venv' });
  });

  test('a .venv qgates that is not executable is passed over for PATH', () => {
    const s = setup('venv-noexec', { venv: false });
    binIn(path.join(s.ws, '.venv/bin'), 0o644);
    assert.deepEqual(find(s, 'fromEnvironment'), { bin: s.pathBin, source: 'PATH' });
  });

  test('PATH comes before the bundled binary', () => {
    const s = setup('path', { venv: false });
    assert.deepEqual(find(s, 'fromEnvironment'), { bin: s.pathBin, source: 'PATH' });
  });

  test('with no qgates anywhere, the bundled binary, and a note that says so', () => {
    const s = setup('fallback', { venv: false, onPath: false });
    const r = find(s, 'fromEnvironment');
    assert.equal(r.bin, s.bundledBin);
    assert.equal(r.source, 'the bundled binary');
    assert.equal(r.note, `qgates.path is not set and no qgates is in ${path.join(s.ws, '.venv/bin')} or on PATH: falling back to the bundled binary ${s.bundledBin}`);
  });

  test('with no qgates anywhere and none bundled: what to install, and qgates.path', () => {
    const s = setup('nothing', { venv: false, onPath: false, bundled: false });
    const r = find(s, 'fromEnvironment');
    assert.equal(r.problem, `qgates: cannot start \`qgates\`: not found in ${path.join(s.ws, '.venv/bin')} or on PATH. Install qgates (pip install qgates) or set qgates.path.`);
    assert.equal(r.setting, 'qgates.path');
  });
});

describe('useBundled', () => {
  test('always the bundled binary, even with qgates.path, a .venv and PATH', () => {
    const s = setup('bundled');
    const own = binIn(path.join(tmp, 'bundled/own'));
    const r = find(s, 'useBundled', own);
    assert.equal(r.bin, s.bundledBin);
    assert.equal(r.source, 'the bundled binary');
    assert.equal(r.note, `qgates.importStrategy is "useBundled": qgates.path (${own}) is not used`);
  });

  test('a package with no bundled binary: an error about qgates.importStrategy', () => {
    const s = setup('bundled-none', { bundled: false });
    const r = find(s, 'useBundled');
    assert.match(r.problem, /carries no qgates binary/);
    assert.equal(r.setting, 'qgates.importStrategy');
  });
});

describe('a binary that does not start', () => {
  test('a program for another machine is named as such, not as the shell\'s syntax error', async () => {
    const s = setup('foreign', { venv: false, onPath: false });
    // This machine's own node with its header's architecture changed: a program for another machine.
    const head = Buffer.from(fs.readFileSync(process.execPath).subarray(0, 4096));
    assert.equal(head.readUInt32BE(0), 0x7f454c46, 'this test needs an ELF node (Linux)');
    const other = process.arch === 'arm64' ? 0x3e : 0xb7;
    head.writeUInt16LE(other, 18);
    fs.writeFileSync(s.bundledBin, head, { mode: 0o755 });
    const found = find(s, 'fromEnvironment');
    const probe = await lookup.probeBinary(found.bin);
    assert.ok(probe.how, 'the patched program started');
    const want = `linux-${process.arch === 'arm64' ? 'x64' : 'arm64'}`;
    const r = lookup.probeProblem(found, probe.how, 'fromEnvironment', `linux-${process.arch}`);
    assert.equal(
      r.problem,
      `qgates: the bundled binary \`${s.bundledBin}\` cannot start: it is a program for ${want}, and this machine is linux-${process.arch}. Install qgates (pip install qgates) or set qgates.path to a working binary, or install the extension's package for linux-${process.arch}.`,
    );
    assert.equal(r.setting, 'qgates.path');
  });

  test('a bundled binary that is not executable, with useBundled: the setting is qgates.importStrategy', async () => {
    const s = setup('noexec', { bundled: false });
    const file = binIn(path.join(s.ext, 'bundled/bin'), 0o644);
    const found = find(s, 'useBundled');
    assert.equal(found.bin, file);
    const probe = await lookup.probeBinary(found.bin);
    assert.equal(probe.how, 'it is not executable (EACCES)');
    const r = lookup.probeProblem(found, probe.how, 'useBundled');
    assert.equal(
      r.problem,
      `qgates: the bundled binary \`${file}\` cannot start: it is not executable (EACCES). Install qgates (pip install qgates) and set qgates.importStrategy to "fromEnvironment".`,
    );
    assert.equal(r.setting, 'qgates.importStrategy');
  });

  test('a binary of the environment that fails keeps its own words and points at qgates.path', async () => {
    const s = setup('crash', { venv: false });
    fs.writeFileSync(s.pathBin, '#!/bin/sh\necho "qgates: corrupt installation" >&2\nexit 3\n');
    const found = find(s, 'fromEnvironment');
    const probe = await lookup.probeBinary(found.bin);
    const r = lookup.probeProblem(found, probe.how, 'fromEnvironment');
    assert.equal(r.problem, `qgates: cannot start \`${s.pathBin}\`: it exited with code 3: qgates: corrupt installation. Reinstall qgates or set qgates.path to a working binary.`);
  });
});
