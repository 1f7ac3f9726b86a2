// Starting code-server with the extension and driving its workbench with Playwright.
// Every wait polls for a condition and ends as soon as it holds; the timeouts are generous
// because CI machines are small and shared, and no assertion depends on how long anything took.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const WAIT_MS = 60_000;

export function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.error) {
    throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  }
  if (r.status !== 0 && !opts.allowFail) {
    throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}:\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `fn` until it returns a truthy value; throws `what` with the last value seen on timeout. */
// A poll that touches an element that is re-rendering gets a short timeout from the caller
// (Playwright's default of 30 s would stall the poll instead of letting it try again).
export async function waitFor(what, fn, timeout = WAIT_MS) {
  const end = Date.now() + timeout;
  let last;
  let lastErr;
  for (;;) {
    try {
      last = await fn();
      if (last) {
        return last;
      }
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > end) {
      const seen = lastErr ? `error: ${lastErr.message}` : `last seen: ${JSON.stringify(last)}`;
      throw new Error(`timed out after ${timeout / 1000} s waiting for ${what} (${seen})`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A fresh user-data dir whose User/settings.json holds `settings`. */
export function userDataDir(root, settings) {
  const dir = fs.mkdtempSync(path.join(root, 'user-'));
  writeSettings(dir, settings);
  return dir;
}

export function writeSettings(userDir, settings) {
  fs.mkdirSync(path.join(userDir, 'User'), { recursive: true });
  fs.writeFileSync(path.join(userDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
}

/** Settings that keep the workbench quiet and the editor from changing what the test types. */
export const BASE_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.ignoreRecommendations': true,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'update.mode': 'none',
  'editor.minimap.enabled': false,
  'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
  'editor.suggestOnTriggerCharacters': false,
  'editor.acceptSuggestionOnEnter': 'off',
  'editor.wordBasedSuggestions': 'off',
  'editor.parameterHints.enabled': false,
  'editor.autoClosingBrackets': 'never',
  'editor.autoClosingQuotes': 'never',
  'editor.formatOnSave': false,
  'editor.codeActionsOnSave': {},
  'files.autoSave': 'off',
  'git.enabled': false,
  'chat.commandCenter.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

/** Running code-servers, stopped if the test is interrupted. */
const running = new Set();
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    for (const cs of running) {
      try {
        process.kill(-cs.proc.pid, 'SIGKILL');
      } catch {}
    }
    process.exit(130);
  });
}

export class CodeServer {
  constructor({ bin, userDir, extDir, workspace, env, logFile, trust = false }) {
    Object.assign(this, { bin, userDir, extDir, workspace, env, logFile, trust });
  }

  async start() {
    this.port = await freePort();
    const args = [
      '--bind-addr', `127.0.0.1:${this.port}`,
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-getting-started-override',
      '--user-data-dir', this.userDir,
      '--extensions-dir', this.extDir,
      '--ignore-last-opened',
    ];
    // Without the flag VS Code asks whether to trust the folder (the untrusted-workspace check).
    if (!this.trust) {
      args.push('--disable-workspace-trust');
    }
    args.push(this.workspace);
    const out = fs.openSync(this.logFile, 'a');
    // Its own process group, so stopping it also stops the extension host and the server.
    this.proc = spawn(this.bin, args, { env: this.env, stdio: ['ignore', out, out], detached: true });
    this.exited = false;
    running.add(this);
    this.proc.on('exit', () => {
      this.exited = true;
      running.delete(this);
    });
    this.url = `http://127.0.0.1:${this.port}`;
    await waitFor(`code-server to answer on ${this.url}/healthz (log: ${this.logFile})`, async () => {
      if (this.exited) {
        throw new Error(`code-server exited; see ${this.logFile}`);
      }
      const r = await fetch(`${this.url}/healthz`).catch(() => null);
      return r?.ok;
    });
    return this;
  }

  async stop() {
    if (!this.proc || this.exited) {
      return;
    }
    try {
      process.kill(-this.proc.pid, 'SIGTERM');
    } catch {
      return;
    }
    await waitFor('code-server to exit', () => this.exited, 15_000).catch(() => {
      try {
        process.kill(-this.proc.pid, 'SIGKILL');
      } catch {}
    });
  }

  /** The extension host's log (extension activation errors end up there). */
  exthostLog() {
    const logs = path.join(this.userDir, 'logs');
    const found = [];
    const walk = (d) => {
      for (const e of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (/exthost/i.test(p) && p.endsWith('.log')) found.push(p);
      }
    };
    walk(logs);
    return found.map((f) => `== ${f}\n${fs.readFileSync(f, 'utf8')}`).join('\n');
  }
}

export async function launchBrowser(chromiumPath) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'qgates-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // Clipboard access lets the test read editor text the way a user copies it.
  await browser.grantPermissions(['clipboard-read', 'clipboard-write']).catch(() => {});
  return { browser, profile };
}

/** The workbench of one code-server, with the actions a user takes. */
export class Workbench {
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
  }

  async open(url, folder) {
    await this.page.goto(`${url}/?folder=${encodeURIComponent(folder)}`);
    await this.page.locator('.monaco-workbench').waitFor({ timeout: WAIT_MS });
    // The explorer lists the folder once the workbench has loaded it.
    await this.page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: WAIT_MS });
  }

  async screenshot(name) {
    const file = path.join(this.artifacts, `${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /** Runs a command from the palette by its label, as a user does with F1. */
  async command(label) {
    const page = this.page;
    const input = page.locator('.quick-input-widget input.input');
    const first = page.locator('.quick-input-list .monaco-list-row').first();
    let tries = 0;
    // Each step has a short timeout and the whole is tried again: the palette sometimes misses
    // a key while the workbench is busy, and a long wait on one step would only stall.
    await waitFor(`"${label}" to be the first entry in the command palette`, async () => {
      if (!(await input.isVisible())) {
        // Escape only when F1 did not work: it also clears, say, the Settings editor's search.
        if (tries++ > 0) {
          await page.keyboard.press('Escape');
        }
        await page.keyboard.press('F1');
        await input.waitFor({ state: 'visible', timeout: 5000 });
      }
      if ((await input.inputValue({ timeout: 1000 })) !== `>${label}`) {
        await input.fill(`>${label}`, { timeout: 5000 });
      }
      return ((await first.getAttribute('aria-label', { timeout: 1000 })) ?? '').includes(label);
    });
    await page.keyboard.press('Enter');
    await input.waitFor({ state: 'hidden', timeout: WAIT_MS });
  }

  /** Opens a file of the workspace with Quick Open and waits for its editor to be active. */
  async openFile(rel) {
    const page = this.page;
    const base = path.basename(rel);
    const input = page.locator('.quick-input-widget input.input');
    const first = page.locator('.quick-input-list .monaco-list-row').first();
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+P');
    await input.waitFor({ state: 'visible', timeout: WAIT_MS });
    await input.fill(rel);
    // The list updates after the typing: Enter on a stale first row would open another file.
    await waitFor(`Quick Open to offer ${rel} first`, async () =>
      ((await first.getAttribute('aria-label', { timeout: 1000 })) ?? '').startsWith(base),
    );
    await page.keyboard.press('Enter');
    await page.locator('.tabs-container .tab.active', { hasText: base }).waitFor({ timeout: WAIT_MS });
    await page.locator('.editor-group-container.active .monaco-editor .view-lines').waitFor({ timeout: WAIT_MS });
  }

  /** The rows of the Problems panel (aria-label: severity, message, position, source). */
  async problems() {
    // One read of all rows: the list re-renders as diagnostics arrive, and a handle to a row
    // that went away would wait for it (Playwright's 30 s) instead of failing this poll.
    const out = await this.page
      .locator('.markers-panel .monaco-list-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label') ?? ''));
    this.lastProblems = out;
    return out;
  }

  async focusProblems() {
    const panel = this.page.locator('.markers-panel');
    // Asked again if the panel does not show (a notification's hover can swallow the first try).
    await waitFor('the Problems panel', async () => {
      if (!(await panel.isVisible())) {
        await this.command('View: Focus Problems (Errors, Warnings, Infos)');
        await panel.waitFor({ state: 'visible', timeout: 10_000 });
      }
      return true;
    });
  }

  /** Visible notification toasts' text. */
  async toasts() {
    return this.page.locator('.notifications-toasts .notification-toast').allInnerTexts();
  }

  async statusTexts() {
    return this.page.locator('.statusbar-item').allInnerTexts();
  }

  async clearNotifications() {
    await this.command('Notifications: Clear All Notifications');
  }
}
