// Which qgates binary the extension starts, and whether it runs. No VS Code API here: the lookup
// is a plain function of the settings, the workspace folder and PATH, so it is tested on its own
// (tests/editors/vscode/lookup.test.mjs).
//
// The order follows the tools people already use (ruff's extension does the same): a binary the
// user chose (`qgates.path`), then the project's own (its `.venv`), then the user's (PATH), and
// the one this extension carries only when there is no other; `useBundled` always takes that one.

import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export type ImportStrategy = 'fromEnvironment' | 'useBundled';

/** Where the binary came from, as the log says it. */
export type Source = 'qgates.path' | 'the workspace .venv' | 'PATH' | 'the bundled binary';

export interface LookupInput {
  strategy: ImportStrategy;
  /** The `qgates.path` setting as written (empty: unset). */
  pathSetting: string;
  workspaceFolder: string | undefined;
  /** This extension's folder (the bundled binary is under bundled/bin). */
  extensionPath: string;
  envPath: string | undefined;
  platform: NodeJS.Platform;
  home: string;
}

export interface Found {
  bin: string;
  source: Source;
  /** A line for the log about how the choice was made (a fallback, an ignored setting). */
  note?: string;
}

export interface NotFound {
  problem: string;
  /** The setting the error's "Open Settings" button opens. */
  setting: string;
}

const exe = (platform: NodeJS.Platform, name: string) => (platform === 'win32' ? `${name}.exe` : name);

export function bundledBinary(extensionPath: string, platform: NodeJS.Platform = process.platform): string {
  return path.join(extensionPath, 'bundled', 'bin', exe(platform, 'qgates'));
}

/** This machine in the names VS Code gives platform packages (`linux-x64`, `darwin-arm64`). */
export function hostPlatform(): string {
  return `${process.platform}-${process.arch}`;
}

// ELF e_machine values, named as Node names architectures.
const ELF_MACHINES: Record<number, string> = { 0x03: 'ia32', 0x28: 'arm', 0x3e: 'x64', 0xb7: 'arm64', 0xf3: 'riscv64' };

/**
 * The platform a program file is for, from its header (`linux-arm64`, `darwin`, `win32`), or null
 * for anything else (a script). Needed because a program for another machine does not fail with
 * a clear error: the system hands it to /bin/sh, which reports a syntax error.
 */
export function programPlatform(file: string): string | null {
  const head = Buffer.alloc(20);
  try {
    const fd = fs.openSync(file, 'r');
    try {
      if (fs.readSync(fd, head, 0, head.length, 0) < head.length) {
        return null;
      }
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  if (head.readUInt32BE(0) === 0x7f454c46) {
    const machine = head[5] === 2 ? head.readUInt16BE(18) : head.readUInt16LE(18);
    return `linux-${ELF_MACHINES[machine] ?? `machine-${machine}`}`;
  }
  const magic = head.readUInt32LE(0);
  if (magic === 0xfeedfacf || magic === 0xfeedface || head.readUInt32BE(0) === 0xcafebabe) {
    return 'darwin';
  }
  if (head[0] === 0x4d && head[1] === 0x5a) {
    return 'win32';
  }
  return null;
}

export function findBinary(input: LookupInput): Found | NotFound {
  const bundled = bundledBinary(input.extensionPath, input.platform);
  const configured = input.pathSetting.trim();
  if (input.strategy === 'useBundled') {
    if (!fs.existsSync(bundled)) {
      return {
        problem:
          'qgates: qgates.importStrategy is "useBundled", but this package of the extension carries no qgates binary. Install the package for your platform, or set qgates.importStrategy to "fromEnvironment".',
        setting: 'qgates.importStrategy',
      };
    }
    const note = configured ? `qgates.importStrategy is "useBundled": qgates.path (${configured}) is not used` : undefined;
    return { bin: bundled, source: 'the bundled binary', note };
  }

  if (configured) {
    const folder = input.workspaceFolder ?? '';
    const expanded = configured
      .replace(/^~(?=$|[\\/])/, input.home)
      .replace(/\$\{workspaceFolder\}/g, folder);
    const bin = path.isAbsolute(expanded) || !folder ? expanded : path.resolve(folder, expanded);
    const problem = executableProblem(bin);
    // No fallback from a binary the user named: starting another one would hide the mistake.
    return problem
      ? { problem: `qgates: cannot start \`${configured}\`: ${problem}. Install qgates or fix the setting qgates.path.`, setting: 'qgates.path' }
      : { bin, source: 'qgates.path' };
  }

  const venvBin = input.workspaceFolder
    ? path.join(input.workspaceFolder, '.venv', input.platform === 'win32' ? 'Scripts' : 'bin', exe(input.platform, 'qgates'))
    : null;
  if (venvBin && executableProblem(venvBin) === null) {
    return { bin: venvBin, source: 'the workspace .venv' };
  }
  const onPath = findOnPath('qgates', input.envPath, input.platform);
  if (onPath) {
    return { bin: onPath, source: 'PATH' };
  }
  const looked = venvBin ? `in ${path.dirname(venvBin)} or on PATH` : 'on PATH';
  if (fs.existsSync(bundled)) {
    return {
      bin: bundled,
      source: 'the bundled binary',
      note: `qgates.path is not set and no qgates is ${looked}: falling back to the bundled binary ${bundled}`,
    };
  }
  return {
    problem: `qgates: cannot start \`qgates\`: not found ${looked}. Install qgates (pip install qgates) or set qgates.path.`,
    setting: 'qgates.path',
  };
}

export function executableProblem(file: string): string | null {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) {
      return 'not a file';
    }
    fs.accessSync(file, fs.constants.X_OK);
    return null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'not found' : code === 'EACCES' ? 'not executable' : String((e as Error).message ?? e);
  }
}

function findOnPath(name: string, envPath: string | undefined, platform: NodeJS.Platform): string | null {
  const exts = platform === 'win32' ? (process.env.PATHEXT ?? '.EXE').split(';') : [''];
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (dir && executableProblem(candidate) === null) {
        return candidate;
      }
    }
  }
  return null;
}

/** Runs `BIN --version`; `how` says why a binary that cannot is broken, with what it printed. */
export function probeBinary(bin: string): Promise<{ version: string; how?: string }> {
  return new Promise((resolve) => {
    cp.execFile(bin, ['--version'], { timeout: 15_000 }, (err, stdout, stderr) => {
      if (!err) {
        resolve({ version: stdout.trim() });
        return;
      }
      const e = err as cp.ExecFileException;
      const said = (stderr || stdout || '').trim().split('\n').slice(-3).join(' ').slice(0, 300);
      const how = e.killed
        ? 'it did not answer `--version` within 15 s'
        : e.signal
          ? `it crashed (${e.signal})`
          : typeof e.code === 'number'
            ? `it exited with code ${e.code}`
            : spawnProblem(e);
      resolve({ version: '', how: `${how}${said ? `: ${said}` : ''}` });
    });
  });
}

/** What to say about a binary that does not start, and which setting changes it. */
export function probeProblem(found: Found, how: string, strategy: ImportStrategy, host = hostPlatform()): NotFound {
  const builtFor = programPlatform(found.bin);
  const foreign = builtFor !== null && !host.startsWith(builtFor);
  const why = foreign ? `it is a program for ${builtFor}, and this machine is ${host}` : how;
  if (found.source !== 'the bundled binary') {
    return {
      problem: `qgates: cannot start \`${found.bin}\`: ${why}. Reinstall qgates or set qgates.path to a working binary.`,
      setting: 'qgates.path',
    };
  }
  const fix =
    strategy === 'useBundled'
      ? `Install qgates (pip install qgates) and set qgates.importStrategy to "fromEnvironment"${foreign ? `, or install the extension's package for ${host}` : ''}.`
      : `Install qgates (pip install qgates) or set qgates.path to a working binary${foreign ? `, or install the extension's package for ${host}` : ''}.`;
  return {
    problem: `qgates: the bundled binary \`${found.bin}\` cannot start: ${why}. ${fix}`,
    setting: strategy === 'useBundled' ? 'qgates.importStrategy' : 'qgates.path',
  };
}

/** Why the system refused to start a program, in words (Node gives the errno name). */
function spawnProblem(e: cp.ExecFileException): string {
  switch (e.code as unknown as string) {
    case 'EACCES':
      return 'it is not executable (EACCES)';
    case 'ENOEXEC':
      return 'it is not a program this machine can run (ENOEXEC: exec format error)';
    case 'ENOENT':
      return 'it is not there (ENOENT)';
    default:
      return e.message;
  }
}
