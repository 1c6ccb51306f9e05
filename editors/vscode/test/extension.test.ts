// The extension's wiring, run against stand-ins for VS Code and the language client:
// how the server is started, what it receives, what the commands do.
import { test, beforeEach } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as stubs from './stubs';
import { RESPONSE } from './kernelsFixture';
import { HOTTEST, LOADED } from './hottestFixture';
import { extensionRoot } from './tokenize';

stubs.install();
// eslint-disable-next-line @typescript-eslint/no-var-requires
const ext = require('../src/extension') as typeof import('../src/extension');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hlo-ext-'));
const fakeServer = path.join(tmp, 'target', 'release', 'hlo-lsp');
fs.mkdirSync(path.dirname(fakeServer), { recursive: true });
fs.writeFileSync(fakeServer, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

const context = () => ({ subscriptions: [] as unknown[], extensionPath: path.join(tmp, 'no-bundled-server') });
const change = (...keys: string[]) => ({
  affectsConfiguration: (s: string) => keys.some((k) => k === s || k.startsWith(s + '.')),
});
const flush = () => new Promise((r) => setImmediate(r));

beforeEach(async () => {
  await ext.deactivate();
  stubs.reset();
  stubs.state.workspaceFolders = [tmp];
  stubs.settings['hlo.server.path'] = '${workspaceFolder}/target/release/hlo-lsp';
});

test('activate starts hlo-lsp over stdio with the settings as initializationOptions', async () => {
  stubs.settings['hlo.server.extraArgs'] = ['--log-level', 'debug'];
  stubs.settings['hlo.inlayHints.mode'] = 'full';
  stubs.settings['hlo.maps.divSpelling'] = 'slash';
  await ext.activate(context() as never);
  assert.equal(stubs.rec.clients.length, 1);
  const c = stubs.rec.clients[0];
  assert.equal(c.id, 'hlo'); // makes the client honour hlo.trace.server
  // Exactly the user's arguments: a `transport` would make the client append `--stdio`.
  assert.deepEqual(c.serverOptions.run, { command: fakeServer, args: ['--log-level', 'debug'] });
  assert.ok(c.running);
  assert.deepEqual(c.clientOptions.documentSelector.map((s) => s.language), ['hlo', 'hlo', 'mlir', 'mlir']);
  assert.deepEqual(c.clientOptions.initializationOptions, {
    inlayHints: { mode: 'full' },
    divSpelling: 'slash',
    utilizationBudget: 1,
    physicalLayout: false,
    coalescing: { device: 'a6000', severity: 'information' },
    format: { style: 'auto' },
  });
  // Every command package.json contributes is registered.
  const pkg = JSON.parse(fs.readFileSync(path.join(extensionRoot, 'package.json'), 'utf8'));
  for (const cmd of pkg.contributes.commands) assert.ok(stubs.rec.commands.has(cmd.command), cmd.command);
});

test('a settings change is sent as workspace/didChangeConfiguration in the same shape', async () => {
  await ext.activate(context() as never);
  stubs.settings['hlo.inlayHints.mode'] = 'off';
  stubs.settings['hlo.utilization.budget'] = 4;
  stubs.settings['hlo.maps.physicalLayout'] = true;
  stubs.settings['hlo.coalescing.severity'] = 'warning';
  for (const l of stubs.rec.configListeners) await l(change('hlo.inlayHints.mode'));
  const c = stubs.rec.clients[0];
  assert.deepEqual(c.notifications, [
    {
      method: 'workspace/didChangeConfiguration',
      params: {
        settings: {
          inlayHints: { mode: 'off' },
          divSpelling: 'floordiv',
          utilizationBudget: 4,
          physicalLayout: true,
          coalescing: { device: 'a6000', severity: 'warning' },
          format: { style: 'auto' },
        },
      },
    },
  ]);
  // Changes to other extensions' settings are ignored.
  for (const l of stubs.rec.configListeners) await l(change('editor.fontSize'));
  assert.equal(c.notifications.length, 1);
});

test('changing the server path or arguments restarts the server; so does the command', async () => {
  await ext.activate(context() as never);
  for (const l of stubs.rec.configListeners) await l(change('hlo.server.extraArgs'));
  assert.equal(stubs.rec.clients.length, 2);
  assert.ok(stubs.rec.clients[0].stopped && stubs.rec.clients[1].running);
  await stubs.rec.commands.get('hlo.restartServer')!();
  assert.equal(stubs.rec.clients.length, 3);
  assert.ok(stubs.rec.clients[1].stopped && stubs.rec.clients[2].running);
});

test('no server anywhere: a warning names what was tried, and no client starts', async () => {
  const savedPath = process.env.PATH;
  process.env.PATH = path.join(tmp, 'empty-bin');
  try {
    stubs.settings['hlo.server.path'] = '${workspaceFolder}/nowhere/hlo-lsp';
    await ext.activate(context() as never);
    assert.equal(stubs.rec.clients.length, 0);
    assert.equal(stubs.rec.warnings.length, 1);
    const w = stubs.rec.warnings[0];
    for (const needle of [path.join(tmp, 'nowhere', 'hlo-lsp'), path.join(tmp, 'no-bundled-server', 'server', 'hlo-lsp'), 'PATH']) {
      assert.ok(w.includes(needle), `warning lacks ${needle}: ${w}`);
    }
  } finally {
    process.env.PATH = savedPath;
  }
});

test('show fusion maps: the whole hover at the cursor rendered in a markdown panel beside', async () => {
  await ext.activate(context() as never);
  const docUri = { scheme: 'file', path: '/ws/fusion.hlo', fsPath: '/ws/fusion.hlo', toString: () => 'file:///ws/fusion.hlo' };
  stubs.state.activeEditor = { document: { languageId: 'hlo', uri: docUri }, selection: { active: { line: 4, character: 7 } } };
  stubs.state.hoverResult = { contents: { kind: 'markdown', value: '**transpose**\n```\n(d0, d1) -> (d1, d0)\n```' } };
  await stubs.rec.commands.get('hlo.showFusionMaps')!();
  const c = stubs.rec.clients[0];
  const at = { textDocument: { uri: 'file:///ws/fusion.hlo' }, position: { line: 4, character: 7 } };
  // The server's unsummarized text (`hlo-lsp/fusionMaps`), not the summarized hover.
  assert.deepEqual(c.requests, [{ method: 'hlo-lsp/fusionMaps', params: at }]);
  const shown = stubs.rec.executed.find((e) => e.id === 'markdown.showPreviewToSide');
  assert.ok(shown, 'no preview opened');
  const text = stubs.rec.providers.get('hlo-maps')!.provideTextDocumentContent(shown.args[0]);
  assert.match(text, /^# Indexing maps at `fusion\.hlo:5:8`/);
  assert.ok(text.includes('(d0, d1) -> (d1, d0)'));
  // A server without the request: the hover instead.
  stubs.state.fusionMapsUnsupported = true;
  c.requests.length = 0;
  await stubs.rec.commands.get('hlo.showFusionMaps')!();
  assert.deepEqual(c.requests, [
    { method: 'hlo-lsp/fusionMaps', params: at },
    { method: 'textDocument/hover', params: at },
  ]);
  // Outside an HLO editor the command explains itself instead of failing.
  stubs.state.activeEditor = undefined;
  await stubs.rec.commands.get('hlo.showFusionMaps')!();
  assert.match(stubs.rec.infos.at(-1) ?? '', /open an HLO file/);
  await flush();
});

test('show costliest kernels: hlo-lsp/kernels in a quick pick; the picked kernel name is selected', async () => {
  await ext.activate(context() as never);
  const docUri = { scheme: 'file', path: '/ws/gpu.hlo', fsPath: '/ws/gpu.hlo', toString: () => 'file:///ws/gpu.hlo' };
  const document = { languageId: 'hlo', uri: docUri };
  stubs.state.activeEditor = { document, selection: { active: { line: 0, character: 0 } }, viewColumn: 1 };
  stubs.state.kernelsResult = RESPONSE;
  stubs.state.pick = (items) => items[1];
  await stubs.rec.commands.get('hlo.showKernels')!();
  const c = stubs.rec.clients[0];
  assert.deepEqual(c.requests, [{ method: 'hlo-lsp/kernels', params: { textDocument: { uri: 'file:///ws/gpu.hlo' } } }]);
  const [pick] = stubs.rec.quickPicks;
  assert.deepEqual(
    (pick.items as { label: string }[]).map((i) => i.label),
    ['fusion.2  ≈ 12.30 µs', 'custom-call  ≈ 1.53 ms', 'main  ≈ 4.00 ns'],
  );
  assert.match((pick.options as { placeHolder: string }).placeHolder, /^3 kernels, costliest first, estimated on a6000/);
  // The second kernel was picked: its name is selected and revealed in the document.
  assert.equal(stubs.rec.shown.length, 1);
  assert.equal(stubs.rec.shown[0].document, document);
  const want = RESPONSE.kernels[1].range;
  assert.deepEqual({ ...(stubs.rec.shown[0].editor.selection as object) }, { anchor: want.start, active: want.end });
  assert.deepEqual(stubs.rec.shown[0].editor.revealed, [{ start: want.start, end: want.end }]);
  // Dismissed: nothing moves. No kernels (a CPU dump with no GPU chosen): a message instead.
  stubs.state.pick = () => undefined;
  await stubs.rec.commands.get('hlo.showKernels')!();
  assert.equal(stubs.rec.shown.length, 1);
  stubs.state.kernelsResult = { device: 'a6000', kernels: [] };
  await stubs.rec.commands.get('hlo.showKernels')!();
  assert.equal(stubs.rec.quickPicks.length, 2);
  assert.match(stubs.rec.infos.at(-1) ?? '', /no kernels/);
  // Outside an HLO editor the command explains itself.
  stubs.state.activeEditor = undefined;
  await stubs.rec.commands.get('hlo.showKernels')!();
  assert.match(stubs.rec.infos.at(-1) ?? '', /open an HLO file/);
});

test('show hottest instructions: hlo-lsp/hottest in a quick pick; the picked name is selected; no profile says why', async () => {
  await ext.activate(context() as never);
  const docUri = { scheme: 'file', path: '/ws/fori.txt', fsPath: '/ws/fori.txt', toString: () => 'file:///ws/fori.txt' };
  const document = { languageId: 'hlo', uri: docUri };
  stubs.state.activeEditor = { document, selection: { active: { line: 0, character: 0 } }, viewColumn: 1 };
  stubs.state.hottestResult = HOTTEST;
  stubs.state.pick = (items) => items[1];
  await stubs.rec.commands.get('hlo.showHottest')!();
  const c = stubs.rec.clients[0];
  assert.deepEqual(c.requests, [{ method: 'hlo-lsp/hottest', params: { textDocument: { uri: 'file:///ws/fori.txt' } } }]);
  const [pick] = stubs.rec.quickPicks;
  assert.deepEqual(
    (pick.items as { label: string }[]).map((i) => i.label),
    ['while.1  measured 6.57 µs', 'add_fusion  measured 402 ns'],
  );
  const want = HOTTEST.modules[0].instructions[1].range;
  assert.deepEqual({ ...(stubs.rec.shown[0].editor.selection as object) }, { anchor: want.start, active: want.end });
  stubs.state.hottestResult = { profile: null, message: 'no XProf profile (plugins/profile/<run>/) near the dump', modules: [] };
  await stubs.rec.commands.get('hlo.showHottest')!();
  assert.match(stubs.rec.infos.at(-1) ?? '', /no measured time for this file \(no XProf profile .*HLO: Load Profile/);
});

test('load profile: the picked path goes to hlo-lsp.loadProfile; what it measured, or its error, is shown', async () => {
  await ext.activate(context() as never);
  const c = stubs.rec.clients[0];
  stubs.state.openDialog = ['/ws/attention/profile'];
  stubs.state.commandResult = LOADED;
  await stubs.rec.commands.get('hlo.loadProfile')!();
  assert.deepEqual(c.requests.at(-1), {
    method: 'workspace/executeCommand',
    params: { command: 'hlo-lsp.loadProfile', arguments: [{ path: '/ws/attention/profile' }] },
  });
  assert.match(stubs.rec.infos.at(-1) ?? '', /^HLO: vm\.trace\.json\.gz \(run 2026_11_28_07_58_36\) measured 6 instructions of jit_attention/);
  // A path given (from another extension or a keybinding) skips the dialog.
  stubs.state.openDialog = undefined;
  stubs.state.commandError = 'x.trace.json.gz: not a readable gzipped Chrome trace (.trace.json.gz): the gzip stream ends early (truncated?)';
  await stubs.rec.commands.get('hlo.loadProfile')!('/ws/x.trace.json.gz');
  assert.equal(stubs.rec.errors.at(-1), `HLO: ${stubs.state.commandError}`);
  // The dialog dismissed: nothing is sent.
  const sent = c.requests.length;
  await stubs.rec.commands.get('hlo.loadProfile')!();
  assert.equal(c.requests.length, sent);
  // With an HLO dump in view, its uri goes along: the server answers that document's reason.
  const docUri = { scheme: 'file', path: '/ws/attention/dump.txt', fsPath: '/ws/attention/dump.txt', toString: () => 'file:///ws/attention/dump.txt' };
  stubs.state.activeEditor = { document: { languageId: 'hlo', uri: docUri }, selection: { active: { line: 0, character: 0 } } };
  stubs.state.commandError = undefined;
  await stubs.rec.commands.get('hlo.loadProfile')!('/ws/attention/profile');
  assert.deepEqual(c.requests.at(-1), {
    method: 'workspace/executeCommand',
    params: { command: 'hlo-lsp.loadProfile', arguments: [{ path: '/ws/attention/profile', uri: 'file:///ws/attention/dump.txt' }] },
  });
  stubs.state.activeEditor = undefined;
});

test('hlo.profile is sent expanded when set, and as cleared when removed', async () => {
  stubs.settings['hlo.profile'] = '${workspaceFolder}/runs/logdir';
  await ext.activate(context() as never);
  const c = stubs.rec.clients[0];
  assert.equal((c.clientOptions.initializationOptions as { profile?: string }).profile, path.join(tmp, 'runs', 'logdir'));
  delete stubs.settings['hlo.profile'];
  for (const l of stubs.rec.configListeners) await l(change('hlo.profile'));
  assert.equal((c.notifications.at(-1)!.params as { settings: { profile?: string } }).settings.profile, '');
});

test('the memory lens from the server opens the memory timeline when clicked', async () => {
  await ext.activate(context() as never);
  const c = stubs.rec.clients[0];
  type Lens = { range: { start: { line: number; character: number } }; command?: { title: string; command: string; arguments?: unknown[] } };
  const options = c.clientOptions as unknown as {
    middleware: { provideCodeLenses: (d: unknown, t: unknown, next: () => Promise<Lens[]>) => Promise<Lens[]> };
  };
  const at = { start: { line: 12, character: 0 } };
  const served: Lens[] = [
    { range: at, command: { title: "peak 26.0 MiB at %ynn_fusion.1 · 5 buffers live (from XLA's buffer assignment)", command: '' } },
    { range: at, command: { title: '≈ 4.61 µs', command: '' } },
  ];
  const doc = { uri: { toString: () => 'file:///w/dump.txt' } };
  const lenses = await options.middleware.provideCodeLenses(doc, {}, async () => served);
  assert.equal(lenses[0].command?.command, 'hlo.showMemoryTimeline');
  assert.deepEqual(lenses[0].command?.arguments, ['file:///w/dump.txt', 12, 0]);
  assert.ok(stubs.rec.commands.has(lenses[0].command!.command), 'the command it runs is registered');
  assert.equal(lenses[1].command?.command, '', 'a kernel lens is left as served');
});
