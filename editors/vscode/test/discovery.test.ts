// Server discovery: the setting (with variables expanded), then the bundled binary, then
// PATH; and a message naming every candidate when none works.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { discoverServer, DiscoveryInput, expandPath, fallbackWarning, isExecutableFile, notFoundMessage } from '../src/discovery';

function input(existing: string[], over: Partial<DiscoveryInput> = {}): DiscoveryInput {
  const set = new Set(existing);
  return {
    configuredPath: '',
    workspaceFolders: ['/ws/proj'],
    extensionPath: '/ext',
    envPath: '/usr/local/bin:/usr/bin',
    platform: 'linux',
    arch: 'x64',
    homeDir: '/home/u',
    isExecutable: (f) => set.has(f),
    ...over,
  };
}

test('the setting wins, with ${workspaceFolder} expanded', () => {
  const d = discoverServer(
    input(['/ws/proj/target/release/hlo-lsp', '/ext/server/linux-x64/hlo-lsp', '/usr/bin/hlo-lsp'], {
      configuredPath: '${workspaceFolder}/target/release/hlo-lsp',
    }),
  );
  assert.deepEqual(d.found && [d.source, d.command], ['setting', '/ws/proj/target/release/hlo-lsp']);
});

test('expansion: named folders, ~, ${userHome}, relative paths, and errors', () => {
  const folders = ['/ws/a', '/ws/b'];
  assert.deepEqual(expandPath('${workspaceFolder:b}/bin/x', folders, '/h'), { path: '/ws/b/bin/x' });
  assert.deepEqual(expandPath('~/bin/hlo-lsp', folders, '/h'), { path: '/h/bin/hlo-lsp' });
  assert.deepEqual(expandPath('${userHome}/x', folders, '/h'), { path: '/h/x' });
  assert.deepEqual(expandPath('target/release/hlo-lsp', folders, '/h'), { path: '/ws/a/target/release/hlo-lsp' });
  assert.match((expandPath('${workspaceFolder}/x', [], '/h') as { error: string }).error, /no workspace folder is open/);
  assert.match((expandPath('${workspaceFolder:zz}/x', folders, '/h') as { error: string }).error, /no workspace folder named "zz"/);
  assert.match((expandPath('rel/x', [], '/h') as { error: string }).error, /relative path/);
});

test('bundled binary (platform-specific folder first) before PATH', () => {
  let d = discoverServer(input(['/ext/server/linux-x64/hlo-lsp', '/ext/server/hlo-lsp', '/usr/bin/hlo-lsp']));
  assert.deepEqual(d.found && [d.source, d.command], ['bundled', '/ext/server/linux-x64/hlo-lsp']);
  d = discoverServer(input(['/ext/server/hlo-lsp', '/usr/bin/hlo-lsp']));
  assert.deepEqual(d.found && [d.source, d.command], ['bundled', '/ext/server/hlo-lsp']);
});

test('PATH is searched in order; Windows uses ; and .exe', () => {
  let d = discoverServer(input(['/usr/bin/hlo-lsp', '/usr/local/bin/hlo-lsp']));
  assert.deepEqual(d.found && [d.source, d.command], ['PATH', '/usr/local/bin/hlo-lsp']);
  d = discoverServer(input(['C:\\tools/hlo-lsp.exe'], { platform: 'win32', envPath: 'C:\\x;C:\\tools' }));
  assert.deepEqual(d.found && [d.source, d.command], ['PATH', path.join('C:\\tools', 'hlo-lsp.exe')]);
});

test('a broken setting falls back with a warning that names it', () => {
  const d = discoverServer(input(['/usr/bin/hlo-lsp'], { configuredPath: '/nope/hlo-lsp' }));
  assert.ok(d.found && d.source === 'PATH');
  assert.match(fallbackWarning(d) ?? '', /"hlo\.server\.path" = \/nope\/hlo-lsp is unusable.*using the hlo-lsp on PATH at \/usr\/bin\/hlo-lsp/);
  assert.equal(fallbackWarning(discoverServer(input(['/usr/bin/hlo-lsp']))), undefined);
});

test('nothing found: the message names every place tried, in order', () => {
  const d = discoverServer(input([], { configuredPath: '${workspaceFolder}/build/hlo-lsp' }));
  assert.equal(d.found, false);
  assert.deepEqual(
    d.tried.map((c) => [c.source, c.path]),
    [
      ['setting', '/ws/proj/build/hlo-lsp'],
      ['bundled', '/ext/server/linux-x64/hlo-lsp'],
      ['bundled', '/ext/server/hlo-lsp'],
      ['PATH', 'hlo-lsp'],
    ],
  );
  const msg = notFoundMessage(d.tried);
  for (const needle of ['/ws/proj/build/hlo-lsp', '/ext/server/linux-x64/hlo-lsp', 'not in any of the 2 PATH directories', 'hlo.server.path']) {
    assert.ok(msg.includes(needle), `message lacks ${needle}: ${msg}`);
  }
});

test('isExecutableFile checks the real file system: missing, directory, not executable, executable', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hlo-disc-'));
  try {
    const file = path.join(dir, 'hlo-lsp');
    assert.equal(isExecutableFile(file), false);
    assert.equal(isExecutableFile(dir), false);
    fs.writeFileSync(file, '#!/bin/sh\n', { mode: 0o644 });
    if (process.platform !== 'win32') assert.equal(isExecutableFile(file), false);
    fs.chmodSync(file, 0o755);
    assert.equal(isExecutableFile(file), true);
    // End to end through the default checker: found on a PATH made of the temp dir.
    const d = discoverServer({ ...input([]), envPath: dir, isExecutable: undefined });
    assert.deepEqual(d.found && [d.source, d.command], ['PATH', file]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
