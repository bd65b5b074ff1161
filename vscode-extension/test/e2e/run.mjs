#!/usr/bin/env node
// End-to-end tests of the packaged extension in a real VS Code (code-server 4.100.3 =
// VS Code 1.100.3) driven by Playwright in Debian's Chromium, as in
// ../shared/vscode-e2e.md. Each step saves a screenshot in the output folder and the
// run ends with the line `N passed, N failed`.
//
//   node run.mjs --vsix path/to/mlirtext.vsix [--python python3] [--out dir]
// Expects setup.sh to have installed code-server and playwright-core under $E2E.
import { execFileSync } from 'node:child_process';
import { copyFileSync, createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, installExtension, startCodeServer, stopCodeServer } from './codeServer.mjs';
import { checks, writeMarkdownFiles } from './checks.mjs';
import { writeBytecodeFiles } from './bytecodeChecks.mjs';
import { writeDialectFiles } from './dialectChecks.mjs';
import { writeEncodingFiles } from './encodingChecks.mjs';
import { writeGraphFiles } from './graphChecks.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../../..');
const { values: opts } = parseArgs({
  options: {
    vsix: { type: 'string', default: join(REPO, 'vscode-extension/mlirtext.vsix') },
    python: { type: 'string', default: process.env.MLIRTEXT_PYTHON || 'python3' },
    out: { type: 'string', default: join(REPO, '.e2e/out') },
    only: { type: 'string' }, // check numbers, comma-separated: 1,2,5
  },
});
const E2E = process.env.E2E || join(REPO, '.e2e');
const CS = join(E2E, 'cs/node_modules/.bin/code-server');
const { chromium } = createRequire(join(E2E, 'drv/'))('playwright-core');

const started = Date.now();
const out = resolve(opts.out);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// A fresh profile and a fresh copy of the bundled examples every run (the lowering step edits and saves a file).
const run = join(E2E, 'run');
rmSync(run, { recursive: true, force: true });
const dirs = {
  userData: join(run, 'user-data'),
  extensions: join(run, 'extensions'),
  env: { ...process.env, HOME: join(E2E, 'home'), TMPDIR: join(E2E, 'tmp') },
};
const workspace = join(run, 'workspace');
mkdirSync(workspace, { recursive: true });
mkdirSync(join(dirs.userData, 'User'), { recursive: true });
mkdirSync(dirs.env.HOME, { recursive: true });
mkdirSync(dirs.env.TMPDIR, { recursive: true });
const examples = join(REPO, 'examples');
for (const f of readdirSync(examples).filter((f) => f.endsWith('.mlir'))) {
  copyFileSync(join(examples, f), join(workspace, f));
}
// The interpreter by its real path: code-server runs with HOME moved into .e2e, where
// a pyenv shim (or anything else found through HOME) would pick another Python.
const python = execFileSync(opts.python, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
writeBytecodeFiles(python, REPO, workspace);
writeDialectFiles(REPO, workspace);
writeMarkdownFiles(workspace);
writeEncodingFiles(workspace);
writeGraphFiles(workspace);
const settingsFile = join(dirs.userData, 'User/settings.json');
const baseSettings = {
  'mlirtext.server.path': python,
  'workbench.colorTheme': 'Default Dark Modern',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.commandCenter.enabled': false,
  'security.workspace.trust.enabled': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'editor.minimap.enabled': false,
  'editor.hover.delay': 200,
  'editor.fontSize': 13,
  'files.autoSave': 'off',
  // The tests type settings.json in its editor: no brackets, quotes or indents added.
  'editor.autoClosingBrackets': 'never',
  'editor.autoClosingQuotes': 'never',
  'editor.autoIndent': 'none',
  'window.restoreWindows': 'none',
  // A failed test's peek (expected and actual side by side) opens at its line by itself.
  'testing.automaticallyOpenPeekView': 'failureInVisibleDocument',
};
writeFileSync(settingsFile, JSON.stringify(baseSettings, null, 2));

const results = [];
let child;
let browser;
const log = createWriteStream(join(out, 'code-server.log'));
try {
  execFileSync(python, ['-c', 'import mlirtext, pygls'], { stdio: 'inherit' });
  installExtension(CS, dirs, resolve(opts.vsix));
  const port = await freePort();
  child = await startCodeServer(CS, dirs, workspace, port, log);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    headless: true,
  });
  const context = await browser.newContext({ viewport: { width: 1600, height: 900 } });
  const page = await context.newPage();
  const consoleLog = createWriteStream(join(out, 'browser-console.log'));
  page.on('console', (m) => consoleLog.write(`[${m.type()}] ${m.text()}\n`));
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });

  const env = { page, workspace, out, python, settings: baseSettings, repo: REPO, run };
  let n = 0;
  for (const check of checks) {
    if (opts.only && !opts.only.split(',').includes(String(checks.indexOf(check) + 1))) continue;
    n++;
    const shot = join(out, `${String(n).padStart(2, '0')}-${check.name.replace(/[^\w]+/g, '-')}.png`);
    const t0 = Date.now();
    try {
      const detail = await check.run(env);
      results.push({ name: check.name, ok: true, detail, seconds: (Date.now() - t0) / 1000 });
      console.log(`ok   ${check.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)${detail ? `: ${detail}` : ''}`);
    } catch (e) {
      results.push({ name: check.name, ok: false, detail: String(e?.message ?? e) });
      console.log(`FAIL ${check.name}: ${String(e?.message ?? e)}`);
    }
    await page.screenshot({ path: shot }).catch(() => {});
    await page.keyboard.press('Escape').catch(() => {});
  }
} catch (e) {
  results.push({ name: 'setup', ok: false, detail: String(e?.stack ?? e) });
  console.log(`FAIL setup: ${String(e?.stack ?? e)}`);
} finally {
  await browser?.close().catch(() => {});
  await stopCodeServer(child);
  log.end();
}
const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
writeFileSync(join(out, 'results.json'), JSON.stringify({ results, seconds: (Date.now() - started) / 1000 }, null, 2));
console.log(`screenshots and logs: ${out} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
