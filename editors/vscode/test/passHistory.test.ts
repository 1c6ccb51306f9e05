// The pass history's quick picks: one row per pass of an `hlo-lsp.history` answer, then
// the actions on the picked pass (the command's round trip is in the host suite).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { actionPickItems, HistoryResponse, passPickItems, passPickTitle, placeWords } from '../src/passHistory';

const dir = '/d/module_0030.jit_step';
const place = (step: string, line: number, found: 'instruction' | 'instead' | 'computation' = 'instruction', instead?: string) => ({
  uri: `file://${dir}.${step}.txt`,
  file: `${dir}.${step}.txt`,
  range: { start: { line, character: 2 }, end: { line, character: 8 } },
  found,
  instead,
});

const RESPONSE: HistoryResponse = {
  instruction: 'dot.1',
  computation: 'main.2',
  opcode: 'dot',
  summary: 'introduced by algsimp (step 7) · changed by layout-assignment (step 13)',
  passes: [
    { event: 'introduced', pass: 'algsimp', step: 7, label: 'introduced by algsimp (step 7)', before: place('0006', 3, 'computation'), after: place('0007', 9) },
    { event: 'changed', pass: 'layout-assignment', step: 13, label: 'changed by layout-assignment (step 13)', before: place('0012', 9), after: place('0013', 10) },
  ],
};

test('one row per pass, in order: its label, what it did, the files before → after', () => {
  const items = passPickItems(RESPONSE);
  assert.deepEqual(
    items.map(({ label, description, detail }) => ({ label, description, detail })),
    [
      { label: 'introduced by algsimp (step 7)', description: 'introduced', detail: 'module_0030.jit_step.0006.txt → module_0030.jit_step.0007.txt' },
      { label: 'changed by layout-assignment (step 13)', description: 'changed', detail: 'module_0030.jit_step.0012.txt → module_0030.jit_step.0013.txt' },
    ],
  );
  assert.equal(items[1].pass.after.range.start.line, 10);
  assert.equal(passPickTitle(RESPONSE), '%dot.1 (dot): introduced by algsimp (step 7) · changed by layout-assignment (step 13). Pick a pass');
  assert.deepEqual(passPickItems(null), []);
});

test('the actions on a pass: compare first, then the computation diff, then each side', () => {
  const actions = actionPickItems(RESPONSE.passes[0], 'dot.1', 'main.2');
  assert.deepEqual(
    actions.map((a) => a.action),
    ['compare', 'changes', 'before', 'after'],
  );
  assert.equal(actions[1].label, 'Show what the pass did to %main.2');
  assert.equal(actions[2].detail, 'module_0030.jit_step.0006.txt at its computation (it is not there)');
  // A pass that made the first snapshot has nothing before it.
  const first = { ...RESPONSE.passes[0], before: null };
  assert.deepEqual(actionPickItems(first, 'dot.1', 'main.2').map((a) => a.action), ['after']);
  assert.equal(placeWords(place('0020', 4, 'instead', 'fusion.3'), 'dot.1'), 'at %fusion.3, in its place');
});
