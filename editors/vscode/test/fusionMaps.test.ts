import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { contentsToMarkdown, panelMarkdown } from '../src/fusionMaps';

test('all three LSP hover content shapes render to markdown', () => {
  assert.equal(contentsToMarkdown({ kind: 'markdown', value: '**x**' }), '**x**');
  assert.equal(contentsToMarkdown({ kind: 'plaintext', value: '(d0) -> (d0)\n' }), '```text\n(d0) -> (d0)\n```');
  assert.equal(contentsToMarkdown('plain'), 'plain');
  assert.equal(contentsToMarkdown({ language: 'hlo', value: 'f32[2] add' }), '```hlo\nf32[2] add\n```');
  assert.equal(contentsToMarkdown(['a', { language: 'text', value: 'b' }]), 'a\n\n```text\nb\n```');
});

test('an empty answer explains where to put the cursor', () => {
  assert.match(panelMarkdown('a.hlo', 0, 0, null), /Put the cursor on an instruction name or opcode/);
  assert.match(panelMarkdown('a.hlo', 0, 0, { kind: 'markdown', value: '  ' }), /Put the cursor/);
  assert.match(panelMarkdown('a.hlo', 9, 2, 'm'), /^# Indexing maps at `a\.hlo:10:3`\n\nm\n$/);
});
