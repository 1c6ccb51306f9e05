// "HLO: Show Costliest Kernels": the quick-pick rows built from an `hlo-lsp/kernels`
// response (the command's round trip through the stand-ins is in extension.test.ts).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { formatTime, kernelPickItems, kernelPickTitle } from '../src/kernels';
import { range, RESPONSE } from './kernelsFixture';

test('one row per kernel in the server order: name and time, kind and computation, the summary', () => {
  const items = kernelPickItems(RESPONSE);
  assert.deepEqual(
    items.map(({ label, description, detail }) => ({ label, description, detail })),
    [
      { label: 'fusion.2  ≈ 12.30 µs', description: 'loop fusion · main', detail: '≈ 12.30 µs · memory-bound · reads 3.1 MB (1 uncoalesced) (a6000)' },
      { label: 'custom-call  ≈ 1.53 ms', description: 'custom-call · main', detail: '≈ 1.53 ms · compute-bound (a6000)' },
      // A kernel named like its computation does not repeat the name.
      { label: 'main  ≈ 4.00 ns', description: 'kernel', detail: '≈ 4.00 ns (a6000)' },
    ],
  );
  // Each row keeps its kernel: picking it reveals that range.
  assert.deepEqual(items[0].kernel.range, range(36, 2, 10));
  assert.equal(kernelPickTitle(RESPONSE), '3 kernels, costliest first, estimated on a6000: pick one to go to it');
});

test('an empty or missing response gives no rows', () => {
  assert.deepEqual(kernelPickItems(null), []);
  assert.deepEqual(kernelPickItems({ device: 'h100', kernels: [] }), []);
  assert.equal(kernelPickTitle({ device: 'b200', kernels: [RESPONSE.kernels[0]] }), '1 kernel, costliest first, estimated on b200: pick one to go to it');
});

test('times: ns below a microsecond, then µs, ms and s (as the lenses print them)', () => {
  assert.equal(formatTime(0.08025), '80.25 ns');
  assert.equal(formatTime(1), '1.00 µs');
  assert.equal(formatTime(999.994), '999.99 µs');
  assert.equal(formatTime(2500), '2.50 ms');
  assert.equal(formatTime(3_200_000), '3.20 s');
  assert.equal(formatTime(Number.NaN), '? µs');
});
