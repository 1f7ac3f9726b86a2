// The qgates VS Code extension: starts `qgates lsp`, adds palette commands and a status-bar
// summary. The server does the work (gates, diagnostics, quick fixes); this file only starts the
// binary that binary.ts picks, reports start-up problems once, and turns command results into
// things people see.

import * as cp from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  CloseAction,
  CloseHandlerResult,
  ErrorAction,
  ErrorHandlerResult,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { findBinary, ImportStrategy, probeBinary, probeProblem } from './binary';

const SERVER_COMMAND = {
  summary: 'qgates.summary',
  run: 'qgates.run',
  fixAll: 'qgates.fixAll',
  trust: 'qgates.trust',
} as const;

type Scope = 'auto' | 'branch' | 'project' | 'files';

/** What `qgates.summary` and `qgates.run` return. */
interface SummaryAnswer {
  summary_line: string;
  report?: Report;
}

interface Report {
  overall_pass?: boolean;
  summary?: { passed?: number; failed?: number; skipped?: number; errored?: number; total_violations?: number; auto_fixable?: number };
  scope?: { mode?: string; files_checked?: number; note?: string };
  gates?: Array<{
    id: string;
    name?: string;
    status?: string;
    skip_reason?: string;
    error?: string;
    fix_hint?: string;
    violations?: Array<{ file?: string; line?: number; column?: number; code?: string; message?: string; fixable?: boolean; new?: boolean }>;
  }>;
  /** The whole report, `report.json` in the run's log folder. */
  full_report?: string;
}

/** How long the server may take to answer `initialize` before we say so and stop it. */
const START_TIMEOUT_MS = 30_000;
/** Crashes after a good start that are restarted silently within RESTART_WINDOW_MS. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 3 * 60_000;
/** Publishes come in bursts (one per file); the status bar asks for the summary once after. */
const STATUS_DEBOUNCE_MS = 400;

class QgatesClient extends LanguageClient {
  // The library shows its own notifications for start failures and crashes ("couldn't create
  // connection", "Restarting server failed"), on top of ours. Keep them in the log only: the
  // extension shows one message that says what to do.
  override error(message: string, data?: unknown, _showNotification?: boolean | 'force'): void {
    super.error(message, data, false);
  }
}

let ext: Extension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  ext = new Extension(context);
  await ext.start();
}

export async function deactivate(): Promise<void> {
  await ext?.stop();
  ext = undefined;
}

class Extension {
  private client: QgatesClient | undefined;
  private child: cp.ChildProcess | undefined;
  /** Resolves with how the current server process ended ("exit code 101"). */
  private childEnd: Promise<string> | undefined;
  private lastWords = '';
  private readonly log: vscode.OutputChannel;
  private readonly summaryChannel: vscode.OutputChannel;
  private readonly status: vscode.StatusBarItem;
  /** Why the server is not running, for commands run meanwhile (null: it runs or is starting). */
  private failure: string | null = null;
  /** The setting that failure's "Open Settings" opens (null: none helps, the log does). */
  private failureSetting: string | null = null;
  /** The message shown about the server not running since the last good start or manual restart:
   * one is enough (no second message for the same failure seen from another side, no loop). */
  private shownFailure: string | null = null;
  private restarts: number[] = [];
  private startedOk = false;
  private statusTimer: NodeJS.Timeout | undefined;
  private generation = 0;

  /** Where the extension is installed (the bundled binary is under it). */
  private readonly extensionPath: string;

  constructor(context: vscode.ExtensionContext) {
    this.extensionPath = context.extensionPath;
    this.log = vscode.window.createOutputChannel('qgates server');
    this.summaryChannel = vscode.window.createOutputChannel('qgates');
    this.status = vscode.window.createStatusBarItem('qgates.status', vscode.StatusBarAlignment.Left, 10);
    this.status.name = 'qgates';
    this.status.command = 'qgates.client.showSummary';
    this.setStatus('$(sync~spin) qgates', 'qgates: starting the server');
    this.status.show();
    context.subscriptions.push(this.log, this.summaryChannel, this.status);

    const register = (id: string, fn: () => Promise<unknown>) =>
      context.subscriptions.push(vscode.commands.registerCommand(id, () => fn()));
    register('qgates.client.runAuto', () => this.runCommand('auto'));
    register('qgates.client.runBranch', () => this.runCommand('branch'));
    register('qgates.client.runProject', () => this.runCommand('project'));
    register('qgates.client.runCleanRoom', () => this.runCommand('project', true));
    register('qgates.client.showSummary', () => this.showSummary());
    register('qgates.client.fixAll', () => this.fixAll());
    register('qgates.client.trust', () => this.trust());
    register('qgates.client.restart', () => this.restart());
    register('qgates.client.showLog', async () => this.log.show(true));

    context.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        // Path, log level and trigger go to the server at start: a change needs a new server.
        if (e.affectsConfiguration('qgates')) {
          void this.restart();
        }
      }),
    );
  }

  // ---- server life cycle ---------------------------------------------------------------

  async start(): Promise<void> {
    const generation = ++this.generation;
    this.failure = null;
    this.startedOk = false;
    this.setStatus('$(sync~spin) qgates', 'qgates: starting the server');
    const config = vscode.workspace.getConfiguration('qgates');
    const strategy = config.get<ImportStrategy>('importStrategy', 'fromEnvironment');
    const found = findBinary({
      strategy,
      pathSetting: config.get<string>('path', ''),
      workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      extensionPath: this.extensionPath,
      envPath: process.env.PATH,
      platform: process.platform,
      home: os.homedir(),
    });
    if ('problem' in found) {
      return this.fail(found.problem, found.setting);
    }
    const bin = found.bin;
    if (found.note) {
      this.log.appendLine(`[client] ${found.note}`);
    }
    // A binary that cannot even print its version (wrong file, wrong architecture, crashes at
    // once) is reported here, with its own words, instead of as a broken connection later.
    const probe = await probeBinary(bin);
    if (generation !== this.generation) {
      return;
    }
    if (probe.how !== undefined) {
      const broken = probeProblem(found, probe.how, strategy);
      return this.fail(broken.problem, broken.setting);
    }
    this.log.appendLine(`[client] starting ${bin} lsp (${probe.version}, from ${found.source})`);

    const trigger = config.get<string>('trigger', 'onSave');
    const serverOptions: ServerOptions = async () => {
      const child = cp.spawn(bin, ['lsp'], {
        cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir(),
        env: process.env,
        stdio: 'pipe',
      });
      this.child = child;
      this.childEnd = new Promise((resolve) => {
        child.on('exit', (code, signal) => {
          const how = signal ? `signal ${signal}` : `exit code ${code}`;
          this.log.appendLine(`[client] the server exited (${how})`);
          resolve(how);
        });
      });
      child.on('error', (e) => this.log.appendLine(`[client] ${bin}: ${e.message}`));
      // The last thing the server said, for the message if it dies while starting.
      this.lastWords = '';
      child.stderr?.on('data', (d: Buffer) => {
        const lines = d.toString().split('\n').map((l) => l.trim()).filter(Boolean);
        if (lines.length) {
          this.lastWords = lines[lines.length - 1].slice(0, 200);
        }
      });
      return child;
    };
    const clientOptions: LanguageClientOptions = {
      // Every file of the workspace: the configuration says which files each gate checks, and
      // quality.yaml itself gets its problems shown in place.
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: {
        trusted: vscode.workspace.isTrusted,
        logLevel: config.get<string>('logLevel', 'info'),
        pullDiagnostics: false,
        fileWatcher: config.get<string>('fileWatcher', 'auto'),
        existingFindings: config.get<string>('existingFindings', 'information'),
        trigger,
      },
      errorHandler: {
        error: (): ErrorHandlerResult => ({ action: ErrorAction.Continue, handled: true }),
        closed: (): CloseHandlerResult => this.onClosed(),
      },
      middleware: {
        // Until the server reads `trigger` itself, "manual" keeps saves from starting runs.
        // quality.yaml saves still go through: the server reloads its configuration on them.
        didSave: (doc, next) =>
          trigger === 'manual' && !isConfigFile(doc.uri) ? Promise.resolve() : next(doc),
        // The server sends nothing when a run ends, but every run publishes: refresh the
        // status bar after a burst of publishes.
        handleDiagnostics: (uri, diagnostics, next) => {
          next(uri, diagnostics);
          this.scheduleStatusRefresh();
        },
      },
    };
    const client = new QgatesClient('qgates', 'qgates', serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Running && this.client === client) {
        this.startedOk = true;
        this.failure = null;
        this.shownFailure = null;
        this.setStatus('$(check) qgates', 'qgates: the server runs; no result yet');
      }
    });

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), START_TIMEOUT_MS);
    });
    try {
      const outcome = await Promise.race([client.start().then(() => 'started' as const), timeout]);
      if (outcome === 'timeout') {
        await this.disposeClient();
        return this.fail(
          `qgates: the server \`${bin} lsp\` did not answer within ${START_TIMEOUT_MS / 1000} s, so it was stopped. See the server log.`,
          null,
        );
      }
    } catch (e) {
      if (generation === this.generation) {
        // Usually the process died: say how (its exit is reported a moment after the pipe broke).
        const how = await Promise.race([
          this.childEnd ?? Promise.resolve(undefined),
          new Promise<undefined>((r) => setTimeout(() => r(undefined), 3000)),
        ]);
        this.fail(
          how
            ? this.diedWhileStarting(bin, how)
            : `qgates: the server \`${bin} lsp\` could not start: ${errorText(e)}. See the server log.`,
          null,
        );
      }
      return;
    } finally {
      clearTimeout(timer);
    }
    // A first summary for the status bar; diagnostics of opened files refresh it later.
    this.scheduleStatusRefresh();
  }

  /** The connection closed: restart a server that ran well a few times, else stop and say so once. */
  private onClosed(): CloseHandlerResult {
    if (!this.startedOk) {
      // start() fails too and reports it, with the exit code once the process has ended.
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    this.restarts.push(now);
    if (this.restarts.length > MAX_RESTARTS) {
      this.fail(
        `qgates: the server stopped ${this.restarts.length} times in 3 minutes and is not restarted. See the server log, then run "qgates: Restart Server".`,
        null,
      );
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    this.log.appendLine('[client] the server stopped; restarting it');
    this.setStatus('$(sync~spin) qgates', 'qgates: restarting the server');
    return { action: CloseAction.Restart, handled: true };
  }

  private diedWhileStarting(bin: string, how: string): string {
    const said = this.lastWords ? `: ${this.lastWords}` : '';
    return `qgates: the server \`${bin} lsp\` stopped while starting (${how})${said}. See the server log; reinstall qgates or set qgates.path to a working binary.`;
  }

  /** Shows why the server is not running (once, see shownFailure) and keeps it for commands. */
  private fail(message: string, setting: string | null): void {
    this.failure = message;
    this.failureSetting = setting;
    const openSettings = setting ? { title: 'Open Settings', command: 'workbench.action.openSettings', arguments: [setting] } : null;
    this.setStatus('$(error) qgates', message, openSettings ?? 'qgates.client.showLog');
    this.log.appendLine(`[client] ${message}`);
    if (this.shownFailure !== null) {
      return;
    }
    this.shownFailure = message;
    void showFailure(message, setting, this.log);
  }

  async restart(): Promise<void> {
    this.shownFailure = null;
    this.restarts = [];
    await this.disposeClient();
    await this.start();
  }

  async stop(): Promise<void> {
    this.generation++;
    clearTimeout(this.statusTimer);
    await this.disposeClient();
  }

  private async disposeClient(): Promise<void> {
    const client = this.client;
    const child = this.child;
    this.client = undefined;
    this.child = undefined;
    if (client) {
      try {
        if (client.state === State.Running) {
          await client.stop(5000);
        } else {
          await client.dispose(1000);
        }
      } catch (e) {
        this.log.appendLine(`[client] stopping the server: ${errorText(e)}`);
      }
    }
    // The library does not own a process it did not spawn: end ours if it lingers.
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill();
    }
  }

  // ---- commands ------------------------------------------------------------------------

  /** The running client, or null after telling the user why there is none. */
  private ready(): QgatesClient | null {
    if (this.client && this.client.state === State.Running) {
      return this.client;
    }
    const why = this.failure ?? 'qgates: the server is still starting; try again in a moment.';
    void showFailure(why, this.failure ? this.failureSetting : null, this.log);
    return null;
  }

  private async execute<T>(command: string, args: object): Promise<T> {
    const client = this.client;
    if (!client) {
      throw new Error('the server is not running');
    }
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [args] })) as T;
  }

  /** `cleanRoom`: in a fresh git checkout of HEAD, leaving the uncommitted changes out. */
  private async runCommand(scope: Scope, cleanRoom = false): Promise<void> {
    if (!this.ready()) {
      return;
    }
    const label = cleanRoom ? 'clean checkout of HEAD' : { auto: 'changed files', branch: 'branch', project: 'whole project', files: 'files' }[scope];
    try {
      const answer = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `qgates: running the gates (${label})` },
        // The details list every finding, new ones first, pre-existing ones marked so.
        () => this.execute<SummaryAnswer>(SERVER_COMMAND.run, cleanRoom ? { clean_room: true } : { scope, include_existing: true }),
      );
      // A clean room's result is the commit's, not the working tree's: the status bar keeps
      // showing the working tree's last run (as the Problems panel does).
      this.showAnswer(answer, true, !cleanRoom);
    } catch (e) {
      void vscode.window.showErrorMessage(`qgates: the run failed: ${errorText(e)}`);
    }
  }

  private async showSummary(): Promise<void> {
    if (!this.ready()) {
      return;
    }
    try {
      const answer = await this.execute<SummaryAnswer>(SERVER_COMMAND.summary, { include_existing: true });
      this.showAnswer(answer, true);
    } catch (e) {
      void vscode.window.showErrorMessage(`qgates: no summary: ${errorText(e)}`);
    }
  }

  private async fixAll(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage('qgates: open the file to fix first.');
      return;
    }
    if (!this.ready()) {
      return;
    }
    try {
      const result = await this.execute<{ applied?: boolean; edits?: number }>(SERVER_COMMAND.fixAll, {
        uri: editor.document.uri.toString(),
      });
      const name = path.basename(editor.document.uri.fsPath);
      if (!result?.edits) {
        vscode.window.setStatusBarMessage(`qgates: nothing to fix in ${name}`, 5000);
      } else if (result.applied) {
        vscode.window.setStatusBarMessage(`qgates: ${result.edits} edit(s) applied to ${name}`, 5000);
      } else {
        void vscode.window.showWarningMessage(`qgates: the fixes for ${name} were not applied (the file changed meanwhile?).`);
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`qgates: fix all failed: ${errorText(e)}`);
    }
  }

  private async trust(): Promise<void> {
    if (!this.ready()) {
      return;
    }
    try {
      const result = await this.execute<{ trusted?: string[] }>(SERVER_COMMAND.trust, {});
      void vscode.window.showInformationMessage(`qgates: trusted ${(result?.trusted ?? []).join(', ') || 'nothing'}.`);
    } catch (e) {
      void vscode.window.showErrorMessage(`qgates: ${errorText(e)}`);
    }
  }

  // ---- summary and status bar ----------------------------------------------------------

  /** The summary line as a notification (with a way to the details) and the report in the
   * channel; `status`: also in the status bar (the working tree's result). */
  private showAnswer(answer: SummaryAnswer, notify: boolean, status = true): void {
    if (status) {
      this.updateStatus(answer);
    }
    this.summaryChannel.clear();
    this.summaryChannel.appendLine(answer.summary_line);
    for (const line of renderReport(answer.report)) {
      this.summaryChannel.appendLine(line);
    }
    if (notify) {
      const show = answer.report?.overall_pass === false ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      void show(answer.summary_line, 'Show Details').then((choice) => {
        if (choice) {
          this.summaryChannel.show(true);
        }
      });
    }
  }

  private scheduleStatusRefresh(): void {
    clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => void this.refreshStatus(), STATUS_DEBOUNCE_MS);
  }

  /** Asks for the last result (never a new run) and shows its line; errors only go to the tooltip. */
  private async refreshStatus(): Promise<void> {
    if (!this.client || this.client.state !== State.Running) {
      return;
    }
    try {
      const answer = await this.execute<SummaryAnswer>(SERVER_COMMAND.summary, {});
      this.updateStatus(answer);
    } catch (e) {
      // A broken configuration or missing trust: the server has already said so once.
      this.setStatus('$(warning) qgates', `qgates: ${errorText(e)}`);
    }
  }

  private updateStatus(answer: SummaryAnswer): void {
    const line = answer.summary_line;
    const short = line.length > 70 ? `${line.slice(0, 69)}…` : line;
    this.setStatus(short, `${line}\n\nClick for the details.`);
  }

  private setStatus(text: string, tooltip: string, command: string | vscode.Command = 'qgates.client.showSummary'): void {
    this.status.text = text;
    this.status.tooltip = tooltip;
    this.status.command = command;
  }
}

// ---- helpers ---------------------------------------------------------------------------

function isConfigFile(uri: vscode.Uri): boolean {
  return /(^|[\\/])(\.qgates[\\/])?quality\.ya?ml$/.test(uri.fsPath);
}

function errorText(e: unknown): string {
  if (e instanceof Error) {
    return e.message;
  }
  if (e && typeof e === 'object' && 'message' in e) {
    return String((e as { message: unknown }).message);
  }
  return String(e);
}

async function showFailure(message: string, setting: string | null, log: vscode.OutputChannel): Promise<void> {
  const actions = setting ? ['Open Settings', 'Show Log'] : ['Show Log'];
  const choice = await vscode.window.showErrorMessage(message, ...actions);
  if (choice === 'Open Settings' && setting) {
    await vscode.commands.executeCommand('workbench.action.openSettings', setting);
  } else if (choice === 'Show Log') {
    log.show(true);
  }
}

/** The report as lines for the output channel: per gate, its status and its violations. */
export function renderReport(report: Report | undefined): string[] {
  if (!report) {
    return [];
  }
  const out: string[] = [];
  const scope = report.scope;
  if (scope) {
    out.push(`scope: ${scope.mode ?? '?'}, ${scope.files_checked ?? 0} file(s) checked${scope.note ? ` (${scope.note})` : ''}`);
  }
  for (const gate of report.gates ?? []) {
    const n = gate.violations?.length ?? 0;
    const extra = gate.skip_reason ?? gate.error ?? (n ? `${n} violation(s)` : '');
    out.push('');
    out.push(`${gate.name ?? gate.id}: ${gate.status ?? '?'}${extra ? ` — ${extra}` : ''}`);
    for (const v of gate.violations ?? []) {
      const where = [v.file ?? '', v.line ?? '', v.column ?? ''].filter((x) => x !== '').join(':');
      const existing = v.new === false ? ' (pre-existing)' : '';
      out.push(`  ${where} ${v.code ?? ''} ${v.message ?? ''}${v.fixable ? ' [fixable]' : ''}${existing}`.trimEnd());
    }
    if (gate.fix_hint && n) {
      out.push(`  ${gate.fix_hint}`);
    }
  }
  // The answer names the whole report; the run's logs are in its folder.
  if (report.full_report) {
    out.push('', `report and logs: ${report.full_report}`);
  }
  return out;
}
