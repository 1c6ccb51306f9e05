// Settings mapping: `hlo.*` settings become the server's initializationOptions /
// didChangeConfiguration object documented in editors/README.md.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULTS, extraArgs, serverSettings } from '../src/settings';
import { extensionRoot } from './tokenize';

const config = (values: Record<string, unknown>) => ({ get: <T>(k: string) => values[k] as T | undefined });

test('every setting maps to its wire field', () => {
  assert.deepEqual(
    serverSettings(
      config({
        'inlayHints.mode': 'full',
        'maps.divSpelling': 'slash',
        'utilization.budget': 2.5,
        'maps.physicalLayout': true,
        'coalescing.device': 'h100',
        'coalescing.severity': 'warning',
        'format.style': 'long',
      }),
    ),
    {
      inlayHints: { mode: 'full' },
      divSpelling: 'slash',
      utilizationBudget: 2.5,
      physicalLayout: true,
      coalescing: { device: 'h100', severity: 'warning' },
      format: { style: 'long' },
    },
  );
  // Custom device numbers pass through for the server to check.
  assert.deepEqual(serverSettings(config({ 'coalescing.device': { base: 'a100', smCount: 54 } })).coalescing.device, {
    base: 'a100',
    smCount: 54,
  });
});

test('unset or ill-typed settings fall back to the defaults', () => {
  assert.deepEqual(serverSettings(config({})), DEFAULTS);
  assert.deepEqual(
    serverSettings(
      config({
        'inlayHints.mode': 'loud',
        'maps.divSpelling': 7,
        'utilization.budget': 0,
        'maps.physicalLayout': 'yes',
        'coalescing.device': 'tpu',
        'coalescing.severity': 'error',
        'format.style': 'wide',
      }),
    ),
    DEFAULTS,
  );
  assert.deepEqual(extraArgs(config({ 'server.extraArgs': ['--log', 3, 'debug'] })), ['--log', 'debug']);
  assert.deepEqual(extraArgs(config({ 'server.extraArgs': 'oops' })), []);
});

test('coalescing.device is sent only when the user set it (a CPU dump is costed only on a chosen GPU)', () => {
  // VS Code's configuration: get() answers the default, inspect() says where a value comes from.
  const vscodeConfig = (user: Record<string, unknown>, workspace: Record<string, unknown> = {}) => ({
    get: <T>(k: string) => (workspace[k] ?? user[k] ?? (k === 'coalescing.device' ? 'a6000' : undefined)) as T | undefined,
    inspect: <T>(k: string) => ({
      key: 'hlo.' + k,
      defaultValue: (k === 'coalescing.device' ? 'a6000' : undefined) as T | undefined,
      globalValue: user[k] as T | undefined,
      workspaceValue: workspace[k] as T | undefined,
    }),
  });
  assert.deepEqual(serverSettings(vscodeConfig({})).coalescing, { severity: 'information' });
  assert.deepEqual(serverSettings(vscodeConfig({ 'coalescing.device': 'b200' })).coalescing, { device: 'b200', severity: 'information' });
  assert.deepEqual(serverSettings(vscodeConfig({}, { 'coalescing.device': 'a6000' })).coalescing, { device: 'a6000', severity: 'information' });
  assert.deepEqual(serverSettings(vscodeConfig({ 'coalescing.device': { base: 'h100', smCount: 100 } })).coalescing.device, {
    base: 'h100',
    smCount: 100,
  });
});

test('package.json declares each setting with the defaults the code uses', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(extensionRoot, 'package.json'), 'utf8'));
  const props = pkg.contributes.configuration.properties;
  assert.equal(props['hlo.inlayHints.mode'].default, DEFAULTS.inlayHints.mode);
  assert.deepEqual(props['hlo.inlayHints.mode'].enum, ['off', 'short', 'full']);
  assert.equal(props['hlo.maps.divSpelling'].default, DEFAULTS.divSpelling);
  assert.deepEqual(props['hlo.maps.divSpelling'].enum, ['floordiv', 'slash']);
  assert.equal(props['hlo.utilization.budget'].default, DEFAULTS.utilizationBudget);
  assert.equal(props['hlo.maps.physicalLayout'].default, DEFAULTS.physicalLayout);
  assert.equal(props['hlo.coalescing.device'].default, DEFAULTS.coalescing.device);
  assert.deepEqual(props['hlo.coalescing.device'].anyOf[0].enum, ['a6000', 'a100', 'h100', 'b200']);
  assert.equal(props['hlo.coalescing.severity'].default, DEFAULTS.coalescing.severity);
  assert.deepEqual(props['hlo.coalescing.severity'].enum, ['information', 'warning']);
  for (const k of ['hlo.server.path', 'hlo.server.extraArgs', 'hlo.trace.server']) assert.ok(props[k], k);
  // vsce refuses to package when @types/vscode is newer than engines.vscode.
  assert.equal(pkg.engines.vscode, '^' + pkg.devDependencies['@types/vscode']);
  const lang = pkg.contributes.languages[0];
  assert.deepEqual(lang.extensions, ['.hlo', '.hlo.txt']);
  assert.deepEqual(lang.filenamePatterns, ['*before_optimizations.txt', '*after_optimizations.txt', 'module_*.txt']);
});
