// The tests find the server where cargo puts it: CARGO_TARGET_DIR (and any cargo config) is
// honoured through `cargo metadata`, never assumed to be <repo>/target.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { cargoTargetDir, serverBinary } from './serverBinary';

test('the target directory is the one cargo reports, CARGO_TARGET_DIR included', (t) => {
  const saved = { target: process.env.CARGO_TARGET_DIR, bin: process.env.HLO_LSP_BIN };
  const elsewhere = path.join(os.tmpdir(), 'hlo-lsp-elsewhere-target');
  try {
    process.env.CARGO_TARGET_DIR = elsewhere;
    delete process.env.HLO_LSP_BIN;
    const dir = cargoTargetDir();
    if ('error' in dir) {
      if (process.env.HLO_EDITOR_TESTS_STRICT === '1') assert.fail(dir.error);
      return t.skip(dir.error);
    }
    assert.equal(dir.dir, elsewhere);
    assert.deepEqual(serverBinary(), { path: path.join(elsewhere, 'debug', process.platform === 'win32' ? 'hlo-lsp.exe' : 'hlo-lsp') });
    process.env.HLO_LSP_BIN = '/opt/hlo-lsp';
    assert.deepEqual(serverBinary(), { path: '/opt/hlo-lsp' });
  } finally {
    for (const [k, v] of [['CARGO_TARGET_DIR', saved.target], ['HLO_LSP_BIN', saved.bin]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});
