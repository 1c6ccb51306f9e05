// The extension in VS Code itself: the packaged .vsix installed into code-server (VS Code
// in a browser, the same workbench and extension host), driven in headless Chromium by
// playwright-core the way a user works: quick open, the mouse on a token, Ctrl+., the
// command palette. Run by host/run.sh, which provides (environment):
//   HLO_CODE_SERVER_DIR  the folder host/install-code-server.sh printed
//   HLO_VSIX             the packaged extension (npm run package)
//   HLO_LSP_BIN          the server binary
//   HLO_CHROMIUM         the browser (default /usr/bin/chromium)
//   HLO_ARTIFACTS        where screenshots go (default: test-artifacts/ beside package.json)
// The checks run in order and share one workbench; each prints what it checked.
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, BrowserContext, Page, Frame } from 'playwright-core';

const extensionRoot = path.resolve(__dirname, '..', '..');
const repoRoot = path.resolve(extensionRoot, '..', '..');
const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run host/run.sh)`);
  return v;
};
const codeServerDir = env('HLO_CODE_SERVER_DIR');
const vsix = env('HLO_VSIX');
const serverBin = env('HLO_LSP_BIN');
const browserPath = process.env.HLO_CHROMIUM ?? '/usr/bin/chromium';
const artifacts = process.env.HLO_ARTIFACTS ?? path.join(extensionRoot, 'test-artifacts');
const TIMEOUT = Number(process.env.HLO_HOST_TIMEOUT_MS ?? 60_000);

const node = path.join(codeServerDir, 'node', 'bin', 'node');
const entry = path.join(codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hlo-code-server-'));
const dirs = {
  userData: path.join(root, 'user-data'),
  extensions: path.join(root, 'extensions'),
  config: path.join(root, 'config'),
  workspace: path.join(root, 'workspace'),
  browserProfile: path.join(root, 'chromium-profile'),
};

// The samples: the transposing fusion (hover, inlay hints, panel) and the reshape chains
// (quick fix; the expected result is the Rust tests' own fixed file).
const samples = {
  transpose: path.join(extensionRoot, '..', 'neovim', 'test', 'fixtures', 'transpose_fusion.hlo'),
  chains: path.join(repoRoot, 'tests', 'data', 'refactor', 'chains.hlo'),
  chainsFixed: path.join(repoRoot, 'tests', 'data', 'refactor', 'chains.identity-fixed.hlo'),
  // A GPU dump (cuBLAS custom calls and loop fusions): cost lenses and the kernels command.
  gpu: path.join(repoRoot, 'tests', 'data', 'samples', 'xla', 'xla__backends__gpu__tests__kernel_reuse.hlo'),
  // JAX's softmax lowered to StableHLO: hover and inlay hints on a .mlir file.
  stablehlo: path.join(repoRoot, 'examples', 'softmax.stablehlo.mlir'),
  // A JAX program partitioned by XLA over a 2x4 mesh of 8 CPU devices: the sharding hover.
  sharded: path.join(repoRoot, 'tests', 'data', 'jax', 'sharded_mlp.after.hlo'),
  // A pass-by-pass dump of an MLP training step (copied as a folder): the history lens.
  passDumps: path.join(repoRoot, 'tests', 'data', 'pass_dumps', 'mlp_train_step'),
  // A JAX training step compiled by XLA on CPU, with XLA's buffer assignment and live
  // ranges beside it (copied with it): the memory lens and the memory timeline.
  memory: path.join(
    repoRoot,
    'tests',
    'data',
    'memory',
    'transformer_train_step',
    'module_0030.jit_transformer_train_step.cpu_after_optimizations.txt',
  ),
};
const PASS_AFTER = 'module_0030.jit_mlp_train_step.cpu_after_optimizations.txt';
// A JAX attention step compiled for CPU with the XProf logdir jax.profiler.trace wrote
// beside it (profile/plugins/profile/<run>/, copied as a folder): the measured lenses and
// HLO: Show Hottest Instructions, with no setting.
const PROFILED = path.join(repoRoot, 'tests', 'data', 'profiles', 'attention');
const PROFILED_DUMP = 'module_0006.jit_attention.cpu_after_optimizations.txt';
// The fusion's output (d0, d1) in f32[20,30] reads %neg (f32[30,20]) transposed.
const TRANSPOSED = '(d0, d1) -> (d1, d0)';

let codeServer: cp.ChildProcess | undefined;
let codeServerLog = '';
let context: BrowserContext | undefined;
let page: Page;
let shot = 0;

/** Saves a screenshot of the window (or of the editor area alone) in the artifacts folder. */
async function screenshot(name: string, what: 'window' | 'editor' = 'window', maxHeight = 440): Promise<void> {
  fs.mkdirSync(artifacts, { recursive: true });
  shot += 1;
  const file = path.join(artifacts, `${String(shot).padStart(2, '0')}-${name}.png`);
  if (what === 'editor') {
    // The editor area, down to a little below the hover: what a reader of the README needs.
    const box = await page.locator('.part.editor').boundingBox();
    assert.ok(box, 'no editor area');
    await page.screenshot({ path: file, clip: { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, maxHeight) } });
  } else {
    await page.screenshot({ path: file });
  }
  console.log(`# screenshot: ${path.relative(process.cwd(), file)}`);
}

/** A free TCP port on the loopback interface. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** code-server's own environment: no hlo-lsp on PATH, config and data in the temp root. */
function codeServerEnv(): NodeJS.ProcessEnv {
  return {
    HOME: root,
    PATH: [path.dirname(node), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    XDG_CONFIG_HOME: dirs.config,
    XDG_DATA_HOME: path.join(root, 'data'),
    XDG_CACHE_HOME: path.join(root, 'cache'),
    LANG: 'C.UTF-8',
  };
}

function writeJson(file: string, value: unknown) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

async function startCodeServer(): Promise<string> {
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  for (const f of [samples.transpose, samples.chains, samples.gpu, samples.stablehlo, samples.sharded]) fs.copyFileSync(f, path.join(dirs.workspace, path.basename(f)));
  // The memory dump with its siblings (XLA's files are found beside it by name).
  const memoryDir = path.dirname(samples.memory);
  for (const f of fs.readdirSync(memoryDir)) fs.copyFileSync(path.join(memoryDir, f), path.join(dirs.workspace, f));
  // A quiet workbench: no welcome page, no trust prompt, no telemetry, nothing fetched.
  writeJson(path.join(dirs.userData, 'User', 'settings.json'), {
    'workbench.startupEditor': 'none',
    'workbench.colorTheme': 'Default Dark Modern',
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'chat.disableAIFeatures': true,
    'editor.inlayHints.enabled': 'on',
    'editor.hover.delay': 200,
  });
  const common = ['--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];
  const install = cp.spawnSync(node, [entry, ...common, '--install-extension', vsix, '--force'], {
    env: codeServerEnv(),
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(install.status, 0, `code-server --install-extension ${vsix} failed:\n${install.stdout}\n${install.stderr}`);
  assert.match(install.stdout, /successfully installed/, install.stdout);

  const port = await freePort();
  const args = [
    entry,
    ...common,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    dirs.workspace,
  ];
  codeServer = cp.spawn(node, args, { env: codeServerEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const url = `http://127.0.0.1:${port}/`;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not listen within ${TIMEOUT} ms:\n${codeServerLog}`)), TIMEOUT);
    const onData = (d: Buffer) => {
      codeServerLog += d.toString();
      if (codeServerLog.includes('HTTP server listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    codeServer!.stdout!.on('data', onData);
    codeServer!.stderr!.on('data', onData);
    codeServer!.on('exit', (code) => reject(new Error(`code-server exited (${code}):\n${codeServerLog}`)));
  });
  return url;
}

async function stopCodeServer() {
  const p = codeServer;
  if (!p || p.exitCode !== null || p.pid === undefined) return;
  const exited = new Promise((r) => p.once('exit', r));
  process.kill(-p.pid, 'SIGTERM'); // its process group: the extension host and hlo-lsp too
  const timer = setTimeout(() => p.pid && process.kill(-p.pid, 'SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/**
 * Types `value` into the open quick input (Quick Open, the command palette, a picker) and
 * clicks the row labelled `label` (a string: the label contains it; a RegExp: matches it).
 * Typing again until the row shows covers a picker that replaces another one.
 */
async function quickPick(value: string, label: string | RegExp) {
  const input = page.locator('.quick-input-widget input');
  const row = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: label }) })
    .first();
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    await input.waitFor({ state: 'visible', timeout: TIMEOUT });
    await input.fill(value);
    if (await row.waitFor({ timeout: 2000 }).then(() => true, () => false)) break;
    const rows = await page.locator('.quick-input-list .monaco-list-row').allTextContents();
    if (Date.now() > deadline) throw new Error(`no "${label}" row for "${value}"; rows: ${JSON.stringify(rows)}`);
  }
  await row.click();
}

/** Opens a workspace file by name with Quick Open (Ctrl+P), as a user does. */
async function quickOpen(name: string) {
  await page.keyboard.press('Control+P');
  await quickPick(name, new RegExp(`^${name.replace(/\./g, '\\.')}$`));
  await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: TIMEOUT });
  await page.locator('.monaco-editor .view-line').first().waitFor({ timeout: TIMEOUT });
}

/** Runs a command from the command palette (F1) by its title. */
async function runCommand(title: string) {
  await page.keyboard.press('F1');
  await quickPick('>' + title, title);
}

/** Moves the cursor with Go to Line (Ctrl+G): 1-based line and column. */
async function goTo(line: number, column: number) {
  const widget = page.locator('.quick-input-widget');
  // An Enter that comes while the widget is still filtering is lost now and then (seen
  // once, after ten editor tests): the widget stays up; close it and go again.
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: TIMEOUT });
    await input.fill(`:${line}:${column}`); // the ':' prefix is what Ctrl+G puts there
    await page.keyboard.press('Enter');
    const closed = await widget
      .waitFor({ state: 'hidden', timeout: TIMEOUT / 3 })
      .then(() => true)
      .catch(() => false);
    if (closed) return;
    await page.keyboard.press('Escape');
  }
  await widget.waitFor({ state: 'hidden', timeout: TIMEOUT });
}

/** 1-based line of the first line containing `needle` in a file. */
function lineOf(file: string, needle: string): { line: number; column: number } {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(needle));
  assert.ok(i >= 0, `${needle} not in ${file}`);
  return { line: i + 1, column: lines[i].indexOf(needle) + 1 };
}

/** The rendered editor line whose text contains `needle`. */
function viewLine(needle: string) {
  return page.locator('.editor-instance .monaco-editor .view-line', { hasText: needle }).first();
}

/** The inspect-tokens widget's TextMate scopes for the token at the cursor. */
async function textMateScopeAtCursor(): Promise<string> {
  await runCommand('Developer: Inspect Editor Tokens and Scopes');
  const widget = page.locator('.token-inspect-widget');
  await widget.waitFor({ timeout: TIMEOUT });
  const text = (await widget.textContent()) ?? '';
  await screenshot('highlighting-token-scopes');
  await page.keyboard.press('Escape');
  return text;
}

before(async () => {
  const url = await startCodeServer();
  context = await chromium.launchPersistentContext(dirs.browserProfile, {
    executablePath: browserPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1400, height: 900 },
  });
  context.setDefaultTimeout(TIMEOUT);
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${url}?folder=${encodeURIComponent(dirs.workspace)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: TIMEOUT });
  const version = cp.spawnSync(node, [entry, '--version'], { env: codeServerEnv(), encoding: 'utf8' }).stdout.trim();
  console.log(`# code-server ${version}; Chromium ${context.browser()?.version() ?? '(persistent context)'}`);
});

after(async () => {
  await context?.close().catch(() => undefined);
  await stopCodeServer();
  fs.rmSync(root, { recursive: true, force: true });
});

test('TextMate highlighting: the HLO grammar colours the tokens (no server running yet)', async () => {
  await quickOpen('transpose_fusion.hlo');
  const line = viewLine('negate(');
  await line.waitFor();
  // Distinct token classes (colours) for the name, the shape and the opcode.
  const tokens = await line.locator('span > span').evaluateAll((spans) =>
    spans.map((s) => ({ text: s.textContent ?? '', cls: s.className, color: getComputedStyle(s).color })),
  );
  const colorOf = (text: string) => tokens.find((t) => t.text.trim() === text)?.color;
  const plain = tokens.find((t) => t.cls.split(' ').includes('mtk1'))?.color;
  for (const text of ['%neg', 'negate', 'f32']) {
    assert.ok(colorOf(text), `no token "${text}" in ${JSON.stringify(tokens)}`);
    assert.notEqual(colorOf(text), plain, `"${text}" has the plain text colour: ${JSON.stringify(tokens)}`);
  }
  assert.notEqual(colorOf('%neg'), colorOf('negate'), 'the instruction name and the opcode look the same');
  // And the scopes come from our grammar.
  const at = lineOf(samples.transpose, 'negate(');
  await goTo(at.line, at.column + 1);
  const scopes = await textMateScopeAtCursor();
  assert.match(scopes, /support\.function\.opcode\.hlo/, `inspect tokens at negate: ${scopes}`);
  assert.match(scopes, /source\.hlo/, scopes);
  console.log(`# negate: support.function.opcode.hlo, colours ${JSON.stringify([colorOf('%neg'), colorOf('negate'), colorOf('f32'), plain])}`);
});

test('server discovery: with no hlo-lsp anywhere, the warning names every place tried', async () => {
  // The notification center keeps the warning after its toast is gone.
  await runCommand('Notifications: Show Notifications');
  const item = page.locator('.notifications-center .notification-list-item', { hasText: 'hlo-lsp language server was not found' });
  await item.first().waitFor({ timeout: TIMEOUT });
  const text = (await item.first().textContent()) ?? '';
  for (const part of ['Tried:', 'bundled:', path.join('server', `${process.platform}-${process.arch}`, 'hlo-lsp'), 'PATH: hlo-lsp', 'hlo.server.path']) {
    assert.ok(text.includes(part), `the warning lacks "${part}": ${text}`);
  }
  console.log(`# warning: ${text.slice(0, 200)}...`);
  await screenshot('discovery-warning');
  await runCommand('Notifications: Clear All Notifications');
});

test('the server starts once hlo.server.path is set in the workspace settings', async () => {
  // What a user does after the warning: set the path; the extension restarts the client.
  writeJson(path.join(dirs.workspace, '.vscode', 'settings.json'), { 'hlo.server.path': serverBin });
  await runCommand('Output: Show Output Channels');
  await quickPick('HLO', /^HLO$/);
  const output = page.locator('.output-view, .panel .monaco-editor').first();
  const started = `HLO: starting ${serverBin} (found via setting)`;
  await page.waitForFunction(
    (want) => Array.from(document.querySelectorAll('.panel .view-line')).some((l) => (l.textContent ?? '').replace(/\u00a0/g, ' ').includes(want)),
    started,
    { timeout: TIMEOUT },
  );
  assert.ok(await output.isVisible());
  await screenshot('output-server-started');
  await page.keyboard.press('Control+J'); // close the panel again
});

test('hover inside the fusion shows the composed map', async () => {
  await quickOpen('transpose_fusion.hlo');
  const neg = viewLine('negate(').locator('span > span', { hasText: /^%neg$/ }).first();
  const hover = page.locator('.monaco-hover:visible', { hasText: TRANSPOSED });
  // The first hover can come before the server has read the file: move away and back.
  for (let attempt = 0; attempt < 10 && !(await hover.isVisible()); attempt++) {
    await page.mouse.move(5, 5);
    await neg.hover();
    await hover.waitFor({ timeout: 5000 }).catch(() => undefined);
  }
  const text = (await hover.textContent()) ?? '';
  assert.ok(text.includes(TRANSPOSED), `no ${TRANSPOSED} in the hover: ${text}`);
  console.log(`# hover: ${text.replace(/\s+/g, ' ').slice(0, 160)}...`);
  await screenshot('hover-in-fusion');
  await screenshot('hover-in-fusion-editor', 'editor'); // the one in editors/README.md
  await page.mouse.move(5, 5);
});

test('inlay hints: the composed map is drawn after the fused instruction', async () => {
  const line = viewLine('negate(');
  await page.waitForFunction(
    ([want]) =>
      Array.from(document.querySelectorAll('.editor-instance .view-line'))
        .filter((l) => (l.textContent ?? '').includes('negate('))
        .some((l) => (l.textContent ?? '').replace(/\u00a0/g, ' ').includes(want)),
    [TRANSPOSED],
    { timeout: TIMEOUT },
  );
  const text = ((await line.textContent()) ?? '').replace(/\u00a0/g, ' ');
  // The hint is injected text after the instruction, not part of the document.
  assert.ok(text.indexOf(TRANSPOSED) > text.indexOf('negate(%p0)'), text);
  console.log(`# line with hint: ${text.trim()}`);
  await screenshot('inlay-hints');
});

test('StableHLO: hover on a JAX-lowered op and the inlay hint after it', async () => {
  await quickOpen('softmax.stablehlo.mlir');
  const want = 'From the output of function';
  // No grammar splits `.mlir` lines into tokens: the cursor goes to `%5`, and the
  // hover is asked for as from the keyboard.
  const at = lineOf(samples.stablehlo, '%5 = stablehlo.subtract');
  const hover = page.locator('.monaco-hover:visible', { hasText: want });
  for (let attempt = 0; attempt < 10 && !(await hover.isVisible()); attempt++) {
    await page.keyboard.press('Escape');
    await goTo(at.line, at.column + 1);
    await runCommand('Show or Focus Hover');
    await hover.waitFor({ timeout: 5000 }).catch(() => undefined);
  }
  const text = (await hover.textContent()) ?? '';
  assert.ok(text.includes(want) && text.includes('subtract('), `the hover on %5: ${text}`);
  console.log(`# StableHLO hover: ${text.replace(/\s+/g, ' ').slice(0, 160)}...`);
  await page.keyboard.press('Escape');
  const hint = '(d0, d1, d2) -> (d0, d1, 0)';
  await page.waitForFunction(
    ([h]) =>
      Array.from(document.querySelectorAll('.editor-instance .view-line'))
        .filter((l) => (l.textContent ?? '').includes('%3 = stablehlo.broadcast_in_dim'))
        .some((l) => (l.textContent ?? '').replace(/\u00a0/g, ' ').includes(h)),
    [hint],
    { timeout: TIMEOUT },
  ).catch(() => undefined);
  const shown = ((await viewLine('%3 = stablehlo.broadcast_in_dim').textContent()) ?? '').replace(/\u00a0/g, ' ');
  await screenshot('stablehlo-hover-hints', 'editor');
  assert.ok(shown.includes(hint), `no ${hint} after %3: ${shown}`);
  console.log(`# StableHLO line with hint: ${shown.trim()}`);
});

test('sharding: the hover on a collective names its mesh axis, the bytes each device moves and the sharding that calls for it', async () => {
  await quickOpen('sharded_mlp.after.hlo');
  const want = 'over axis 1 of the 2x4 mesh';
  const at = lineOf(samples.sharded, '%all-reduce = ');
  const hover = page.locator('.monaco-hover:visible', { hasText: want });
  for (let attempt = 0; attempt < 10 && !(await hover.isVisible()); attempt++) {
    await page.keyboard.press('Escape');
    await goTo(at.line, at.column + 1);
    await runCommand('Show or Focus Hover');
    await hover.waitFor({ timeout: 5000 }).catch(() => undefined);
  }
  const text = ((await hover.textContent()) ?? '').replace(/\s+/g, ' ');
  assert.ok(text.includes(want), `no "${want}" in the hover: ${text}`);
  assert.ok(text.includes('each device sends 48 B and receives 48 B'), `no bytes per device: ${text}`);
  assert.ok(text.includes('%param.1 splits dim 1 4 ways'), `no cause: ${text}`);
  console.log(`# collective hover: ${text.slice(0, 200)}...`);
  await screenshot('sharding-collective-hover', 'editor');
  await page.keyboard.press('Escape');
});

test('quick fix: the reshape-chain fix applies and the saved file is the expected one', async () => {
  await quickOpen('chains.hlo');
  const at = lineOf(samples.chains, '%r1 = ');
  await goTo(at.line, at.column + 1);
  const title = 'Remove the 2 instructions';
  const item = page.locator('.action-widget .monaco-list-row', { hasText: title }).first();
  // Diagnostics and actions arrive asynchronously: ask again until the fix is offered.
  for (let attempt = 0; attempt < 10 && !(await item.isVisible()); attempt++) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+.');
    await item.waitFor({ timeout: 3000 }).catch(() => undefined);
  }
  const offered = await page.locator('.action-widget .monaco-list-row').allTextContents();
  assert.ok(await item.isVisible(), `no "${title}" action; offered: ${JSON.stringify(offered)}`);
  await screenshot('quick-fix-menu');
  await item.click();
  await page.keyboard.press('Control+S');
  const file = path.join(dirs.workspace, 'chains.hlo');
  const want = fs.readFileSync(samples.chainsFixed, 'utf8');
  const deadline = Date.now() + TIMEOUT;
  while (fs.readFileSync(file, 'utf8') !== want && Date.now() < deadline) await page.waitForTimeout(100);
  assert.equal(fs.readFileSync(file, 'utf8'), want, 'the file after the quick fix and save');
  console.log(`# applied "${offered.find((o) => o.includes(title))?.trim()}"; chains.hlo now equals chains.identity-fixed.hlo`);
});

test('completion: typing a new instruction, the suggest widget puts the opcode its name says first; after `%` the instructions above', async () => {
  await quickOpen('transpose_fusion.hlo');
  const at = lineOf(samples.transpose, 'ROOT %fusion');
  await goTo(at.line, 1);
  // insertText: no key events, so no auto-closed brackets in the shape.
  await page.keyboard.insertText('  %broadcast.1 = f32[20,30]{1,0} ');
  const rows = page.locator('.suggest-widget .monaco-list-row');
  const first = async () => ((await rows.first().textContent()) ?? '').trim();
  for (let attempt = 0; attempt < 10 && !(await first()).startsWith('broadcast'); attempt++) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Space');
    await rows.first().waitFor({ timeout: 3000 }).catch(() => undefined);
  }
  assert.ok((await first()).startsWith('broadcast'), `first suggestion: ${await first()}`);
  await screenshot('completion-opcode');
  await page.keyboard.press('Escape');
  await page.keyboard.insertText('broadcast(%');
  let labels: string[] = [];
  for (let attempt = 0; attempt < 10 && !labels.some((l) => l.startsWith('a')); attempt++) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Space');
    await rows.first().waitFor({ timeout: 3000 }).catch(() => undefined);
    labels = (await rows.allTextContents()).map((l) => l.trim());
  }
  assert.ok(labels.some((l) => l.startsWith('a')), `suggestions after %: ${JSON.stringify(labels)}`);
  await screenshot('completion-operand');
  await page.keyboard.press('Escape');
  // Leave the file as it was for the tests after this one.
  await runCommand('File: Revert File');
});

test('the fusion-maps panel opens beside the editor with the composed map', async () => {
  await quickOpen('transpose_fusion.hlo');
  const at = lineOf(samples.transpose, '%neg = ');
  await goTo(at.line, at.column + 1);
  await runCommand('HLO: Show Fusion Indexing Maps at Cursor');
  await page.locator('.tab', { hasText: 'maps.md' }).first().waitFor({ timeout: TIMEOUT });
  // The markdown preview is a webview: find the frame that renders the panel's text.
  let panel: Frame | undefined;
  const deadline = Date.now() + TIMEOUT;
  while (!panel && Date.now() < deadline) {
    for (const f of page.frames()) {
      const body = await f.evaluate(() => document.body?.innerText ?? '').catch(() => '');
      if (body.includes('Indexing maps at') && body.includes(TRANSPOSED)) panel = f;
    }
    if (!panel) await page.waitForTimeout(200);
  }
  assert.ok(panel, 'no webview shows the panel with the map');
  const text = await panel.evaluate(() => document.body.innerText);
  assert.ok(text.includes('transpose_fusion.hlo:' + at.line), text);
  console.log(`# panel: ${text.replace(/\s+/g, ' ').slice(0, 160)}...`);
  await screenshot('fusion-maps-panel');
});

test('cost: a code lens with the estimated time above each kernel of a GPU dump', async () => {
  // One editor group again (the maps panel opened beside), then the GPU dump at its entry.
  await runCommand('View: Close All Editors');
  await quickOpen(path.basename(samples.gpu));
  const entry = lineOf(samples.gpu, 'ENTRY main');
  await goTo(entry.line + 12, 1);
  await goTo(entry.line, 1);
  // Code lenses are view zones above the line; a title-only command is drawn as plain text.
  const lenses = page.locator('.editor-group-container.active .codelens-decoration');
  await lenses.filter({ hasText: /^\s*≈/ }).first().waitFor({ timeout: TIMEOUT });
  const titles = (await lenses.allTextContents()).map((t) => t.replace(/\u00a0/g, ' ').trim());
  assert.ok(titles.some((t) => t.startsWith('≈') && /\d (ns|µs|ms|s)\b/.test(t)), `lens titles: ${JSON.stringify(titles)}`);
  console.log(`# ${titles.length} lenses; first: ${titles[0]}`);
  await screenshot('code-lenses', 'editor', 900); // editors/images/vscode-code-lenses.png
});

test('HLO: Show Costliest Kernels lists the kernels; picking the first selects its name', async () => {
  await runCommand('HLO: Show Costliest Kernels');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  const first = rows.first();
  // A row's first .label-name is its label; the detail (the summary) is another one.
  await first.locator('.label-name').first().filter({ hasText: '≈' }).waitFor({ timeout: TIMEOUT });
  const labels = (await rows.evaluateAll((rs) => rs.map((r) => r.querySelector('.label-name')?.textContent ?? ''))).map((t) =>
    t.replace(/\u00a0/g, ' ').trim(),
  );
  assert.ok(labels.length >= 2, `rows: ${JSON.stringify(labels)}`);
  console.log(`# kernels: ${JSON.stringify(labels)}`);
  await page.waitForTimeout(300); // the quick pick fades in
  await screenshot('costliest-kernels');
  const name = labels[0].split(/\s+/)[0];
  await first.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: TIMEOUT });
  // The kernel's name is selected: the status bar shows where and how many characters.
  const at = lineOf(samples.gpu, `  ${name} = `);
  // The cursor (the selection's active end) is after the name.
  const want = `Ln ${at.line}, Col ${at.column + 2 + name.length} (${name.length} selected)`;
  const status = page.locator('.statusbar-item', { hasText: /^Ln \d+, Col \d+/ }).first();
  await page.waitForFunction(
    (w) => Array.from(document.querySelectorAll('.statusbar-item')).some((e) => (e.textContent ?? '').includes(w)),
    want,
    { timeout: TIMEOUT },
  );
  console.log(`# picked ${name}: ${(await status.textContent())?.trim()}`);
  await screenshot('costliest-kernels-picked', 'editor');
});

test('HLO: Show Graph at Cursor draws the dataflow beside the editor; a click on a node moves the editor', async () => {
  await runCommand('View: Close All Editors');
  await quickOpen(path.basename(samples.gpu));
  const at = lineOf(samples.gpu, '  fusion.1 = ');
  await goTo(at.line, at.column + 3);
  await runCommand('HLO: Show Graph at Cursor');
  await page.locator('.tab', { hasText: 'HLO Graph' }).first().waitFor({ timeout: TIMEOUT });
  // The panel is a webview: find the frame where Graphviz drew the nodes.
  let panel: Frame | undefined;
  const deadline = Date.now() + TIMEOUT;
  while (!panel && Date.now() < deadline) {
    for (const f of page.frames()) {
      const nodes = await f.evaluate(() => document.querySelectorAll('#graph g.node').length).catch(() => 0);
      if (nodes > 0) panel = f;
    }
    if (!panel) await page.waitForTimeout(200);
  }
  assert.ok(panel, 'no webview shows the drawn graph');
  const text = await panel.evaluate(() => document.body.innerText);
  assert.ok(text.includes('fusion.1') && text.includes('custom-call.1'), text);
  assert.ok(/element for element|read by many outputs|dimensions permuted/.test(text), `the legend: ${text}`);
  console.log(`# graph panel: ${text.replace(/\s+/g, ' ').slice(0, 160)}...`);
  await page.waitForTimeout(300);
  await screenshot('graph-panel'); // editors/images/vscode-graph-panel.png
  // A click on the producer's node puts the cursor on its name.
  await panel.locator('#graph g.node', { hasText: 'custom-call.1' }).first().click();
  const target = lineOf(samples.gpu, '  custom-call.1 = ');
  await page.waitForFunction(
    (w) => Array.from(document.querySelectorAll('.statusbar-item')).some((e) => (e.textContent ?? '').includes(w)),
    `Ln ${target.line}, Col ${target.column + 2}`,
    { timeout: TIMEOUT },
  );
  console.log(`# clicked custom-call.1: the cursor is at line ${target.line}`);
});

/** Opens the after-optimizations snapshot of the copied dump by its absolute path in Quick
 * Open (its file search does not see a folder copied after start). */
async function openPassDump() {
  await page.keyboard.press('Control+P');
  await quickPick(path.join(dirs.workspace, 'pass_dumps', PASS_AFTER), PASS_AFTER);
  await page.locator('.tab.active', { hasText: PASS_AFTER }).waitFor({ timeout: TIMEOUT });
  await page.locator('.monaco-editor .view-line').first().waitFor({ timeout: TIMEOUT });
}

test('pass history: the lens on an instruction of a pass dump; clicking it offers its passes, then the two snapshots side by side', async () => {
  // Copied only now: with the dump folder there from the start, the maps-panel check above
  // could not find transpose_fusion.hlo's tab in time.
  fs.cpSync(samples.passDumps, path.join(dirs.workspace, 'pass_dumps'), { recursive: true });
  await runCommand('View: Close All Editors');
  await openPassDump();
  const file = path.join(samples.passDumps, PASS_AFTER);
  const at = lineOf(file, '  %dot.1 = ');
  await goTo(at.line, at.column + 3);
  // The history is built in the background; the server asks for the lenses again.
  const lens = page
    .locator('.editor-group-container.active .codelens-decoration a', { hasText: 'introduced by algsimp (step 7)' })
    .first();
  await lens.waitFor({ timeout: TIMEOUT });
  const title = ((await lens.textContent()) ?? '').replace(/\u00a0/g, ' ').trim();
  assert.equal(title, 'introduced by algsimp (step 7) · changed by 2 passes');
  await screenshot('history-lens', 'editor');
  await lens.click();
  const rows = page.locator('.quick-input-list .monaco-list-row');
  await rows.first().locator('.label-name').first().filter({ hasText: 'introduced by' }).waitFor({ timeout: TIMEOUT });
  const labels = (await rows.evaluateAll((rs) => rs.map((r) => r.querySelector('.label-name')?.textContent ?? ''))).map((t) =>
    t.replace(/\u00a0/g, ' ').trim(),
  );
  assert.equal(labels.length, 3, JSON.stringify(labels));
  assert.equal(labels[0], 'introduced by algsimp (step 7)');
  assert.ok(labels.slice(1).every((l) => l.startsWith('changed by ')), JSON.stringify(labels));
  console.log(`# passes of %dot.1: ${JSON.stringify(labels)}`);
  await page.waitForTimeout(300); // the quick pick fades in
  await screenshot('history-passes');
  await rows.nth(1).click();
  // Then what to do with that pass: the two snapshots side by side first.
  await quickPick('', 'Compare the snapshots before and after the pass');
  await page.locator('.monaco-diff-editor').first().waitFor({ timeout: TIMEOUT });
  const tab = ((await page.locator('.tab.active').first().textContent()) ?? '').replace(/\u00a0/g, ' ');
  assert.ok(tab.includes('%dot.1: ' + labels[1]), `tab: ${tab}`);
  // The diff editor shows %dot.1's line on the right (after the pass).
  await page.locator('.monaco-diff-editor .editor.modified .view-line', { hasText: '%dot.1 = ' }).first().waitFor({ timeout: TIMEOUT });
  console.log(`# diff editor: ${tab.trim()}`);
  await screenshot('history-diff');
});

test('pass history: "Show what the pass did" opens the pass\'s diff of the computation beside', async () => {
  await runCommand('View: Close All Editors');
  await openPassDump();
  const at = lineOf(path.join(samples.passDumps, PASS_AFTER), '  %dot.1 = ');
  await goTo(at.line, at.column + 3);
  // From the palette: the instruction under the cursor.
  await runCommand('HLO: Show Pass History of Instruction at Cursor');
  await quickPick('', 'introduced by algsimp (step 7)');
  await quickPick('', 'Show what the pass did to %main.2');
  const line = page.locator('.editor-instance .monaco-editor .view-line', { hasText: '~ computation %main.2' }).first();
  await line.waitFor({ timeout: TIMEOUT });
  const added = page.locator('.editor-instance .monaco-editor .view-line', { hasText: '+ %dot.1 = ' }).first();
  await added.waitFor({ timeout: TIMEOUT });
  console.log(`# pass diff: ${((await line.textContent()) ?? '').replace(/\u00a0/g, ' ').trim()}`);
  await screenshot('history-pass-diff');
});

test('memory: the lens on ENTRY of a compiled dump names the peak; clicked, it opens the timeline, whose bars jump to their instruction', async () => {
  await runCommand('View: Close All Editors');
  const name = path.basename(samples.memory);
  await quickOpen(name);
  const entry = lineOf(samples.memory, 'ENTRY %main');
  await goTo(entry.line, 1);
  const lenses = page.locator('.editor-group-container.active .codelens-decoration');
  const lens = lenses.filter({ hasText: /^\s*peak / }).first();
  await lens.waitFor({ timeout: TIMEOUT });
  const title = (await lens.textContent())?.replace(/\u00a0/g, ' ').trim() ?? '';
  assert.match(title, /^peak [\d.]+ KiB at %[\w.-]+ · \d+ buffers live \(from XLA's buffer assignment\)$/, title);
  console.log(`# memory lens: ${title}`);
  await screenshot('memory-lens', 'editor', 900);
  // The lens is a link: a click runs HLO: Show Memory Timeline for its computation.
  await lens.locator('a').first().click();
  await page.locator('.tab', { hasText: 'HLO Memory' }).first().waitFor({ timeout: TIMEOUT });
  let panel: Frame | undefined;
  const deadline = Date.now() + TIMEOUT;
  while (!panel && Date.now() < deadline) {
    for (const f of page.frames()) {
      const bars = await f.evaluate(() => document.querySelectorAll('svg.memory-timeline g.buffer').length).catch(() => 0);
      if (bars > 0) panel = f;
    }
    if (!panel) await page.waitForTimeout(200);
  }
  assert.ok(panel, 'no webview shows the memory timeline');
  const text = await panel.evaluate(() => document.body.innerText);
  assert.ok(text.includes(name) && text.includes('%main.23'), text.slice(0, 400));
  const heading = await panel.evaluate(() => document.querySelector('svg.memory-timeline text.title')?.textContent ?? '');
  assert.match(heading, /^Memory of %main\.23 over steps 0 to \d+ \(read from XLA's buffer assignment\)$/, heading);
  const marked = await panel.evaluate(() => document.querySelector('svg.memory-timeline g.peak text')?.textContent ?? '');
  assert.match(marked, /^peak [\d.]+ KiB at %/, marked);
  const bars = await panel.evaluate(() => document.querySelectorAll('svg.memory-timeline g.buffer').length);
  console.log(`# memory timeline: ${heading}; ${marked}; ${bars} bars`);
  // Room for the picture: the side bar closed, the editor and the panel side by side.
  await runCommand('View: Close Primary Side Bar');
  await page.waitForTimeout(500);
  await screenshot('memory-timeline-panel'); // editors/images/vscode-memory-timeline.png
  // A click on the first bar puts the cursor on its instruction's name.
  const first = await panel.evaluate(() => document.querySelector('svg.memory-timeline g.buffer')?.getAttribute('data-instruction') ?? '');
  await panel.locator('svg.memory-timeline g.buffer rect').first().click();
  const target = lineOf(samples.memory, `%${first} = `);
  await page.waitForFunction(
    (w) => Array.from(document.querySelectorAll('.statusbar-item')).some((e) => (e.textContent ?? '').includes(w)),
    `Ln ${target.line}, Col ${target.column}`,
    { timeout: TIMEOUT },
  );
  console.log(`# clicked the bar of %${first}: the cursor is at line ${target.line}`);
});

test('measured time: with an XProf logdir beside the dump, the lenses say what ran; HLO: Show Hottest Instructions ranks it', async () => {
  // Copied only now, as the pass dumps: the dump and its logdir in a folder of the workspace.
  const folder = path.join(dirs.workspace, 'attention');
  fs.cpSync(PROFILED, folder, { recursive: true });
  const dump = path.join(folder, PROFILED_DUMP);
  await runCommand('View: Close All Editors');
  await page.keyboard.press('Control+P');
  await quickPick(dump, PROFILED_DUMP);
  await page.locator('.tab.active', { hasText: PROFILED_DUMP }).waitFor({ timeout: TIMEOUT });
  const at = lineOf(dump, '%subtract_exponential_fusion = ');
  await goTo(at.line + 10, 1);
  await goTo(at.line, 1);
  // The profile is found and read in the background; the server asks for the lenses again.
  const lenses = page.locator('.editor-group-container.active .codelens-decoration');
  await lenses.filter({ hasText: /measured\s2\.38\sµs\s·\s7\.7%\sof\sstep/ }).first().waitFor({ timeout: TIMEOUT });
  const titles = (await lenses.allTextContents()).map((t) => t.replace(/\u00a0/g, ' ').trim());
  assert.ok(titles.includes('measured 2.38 µs · 7.7% of step'), `lens titles: ${JSON.stringify(titles)}`);
  console.log(`# measured lenses: ${JSON.stringify(titles.filter((t) => t.startsWith('measured ')))}`);
  await screenshot('measured-lenses', 'editor', 900);
  await runCommand('HLO: Show Hottest Instructions');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  await rows.first().locator('.label-name').first().filter({ hasText: 'measured' }).waitFor({ timeout: TIMEOUT });
  const labels = (await rows.evaluateAll((rs) => rs.map((r) => r.querySelector('.label-name')?.textContent ?? ''))).map((t) =>
    t.replace(/\u00a0/g, ' ').trim(),
  );
  assert.equal(labels[0], 'ynn_fusion.1  measured 22.12 µs', JSON.stringify(labels));
  console.log(`# hottest: ${JSON.stringify(labels.slice(0, 3))}`);
  await page.waitForTimeout(300); // the quick pick fades in
  await screenshot('hottest-instructions'); // editors/images/vscode-measured-time.png
  // Picking the first (focused) selects its name; Enter, as the row's hover tooltip may
  // lie over it.
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: TIMEOUT });
  const target = lineOf(dump, '%ynn_fusion.1 = ');
  const name = '%ynn_fusion.1'.length;
  await page.waitForFunction(
    (w) => Array.from(document.querySelectorAll('.statusbar-item')).some((e) => (e.textContent ?? '').includes(w)),
    `Ln ${target.line}, Col ${target.column + name} (${name} selected)`,
    { timeout: TIMEOUT },
  );
  console.log(`# picked ynn_fusion.1: line ${target.line} selected`);
});
