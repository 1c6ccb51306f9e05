// "HLO: Show Hottest Instructions" and "HLO: Load Profile": the quick-pick rows built from
// an `hlo-lsp/hottest` answer and the message from an `hlo-lsp.loadProfile` answer (the
// commands' round trips through the stand-ins are in extension.test.ts).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { formatMeasured, formatPercent, hotPickItems, hotPickTitle, loadedMessage } from '../src/hottest';
import { HOTTEST, LOADED } from './hottestFixture';

test('one row per measured instruction in the server order: time, share, count, computation, estimate', () => {
  const items = hotPickItems(HOTTEST);
  assert.deepEqual(
    items.map(({ label, description, detail }) => ({ label, description, detail })),
    [
      {
        label: 'while.1  measured 6.57 µs',
        description: '86% of step · main.7',
        detail: '86% of the step with the rows above · 1.49 µs its own',
      },
      {
        label: 'add_fusion  measured 402 ns',
        description: '5.2% of step · ×5 · region_0.5',
        detail: '86% of the step with the rows above · est. 36.50 ns · measured/est. 11.0',
      },
    ],
  );
  assert.deepEqual(items[1].instruction.range, HOTTEST.modules[0].instructions[1].range);
  assert.equal(
    hotPickTitle(HOTTEST),
    '2 instructions of jit_fori_cumulative(6), the most measured time first, step 7.67 µs over 5 executions (vm.xplane.pb): pick one to go to it',
  );
});

test('no profile gives no rows', () => {
  assert.deepEqual(hotPickItems(null), []);
  assert.deepEqual(hotPickItems({ profile: null, message: 'no profile', modules: [] }), []);
});

test('times and shares are written as the server writes them', () => {
  assert.equal(formatMeasured(0.0042), '4.20 ns');
  assert.equal(formatMeasured(0.701), '701 ns');
  assert.equal(formatMeasured(2.381), '2.38 µs');
  assert.equal(formatMeasured(29300), '29.30 ms');
  assert.equal(formatMeasured(2_000_000), '2.00 s');
  assert.equal(formatPercent(71.4), '71%');
  assert.equal(formatPercent(7.68), '7.7%');
  assert.equal(formatPercent(0.01), '<0.1%');
  assert.equal(formatPercent(0), '0%');
});

test('a loaded profile says what it measured', () => {
  assert.equal(
    loadedMessage(LOADED),
    'HLO: vm.trace.json.gz (run 2026_11_28_07_58_36) measured 6 instructions of jit_attention, step 30.98 µs.',
  );
});
