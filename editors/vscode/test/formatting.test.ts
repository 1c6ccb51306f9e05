// Formatting against the REAL server, as VS Code's "Format Document" / "Format Selection"
// ask for it: both providers are announced, the edits of textDocument/formatting applied
// to tests/data/format/hand_written.hlo give what XLA (jaxlib 0.10.2) prints for it
// (hand_written.short.hlo), rangeFormatting changes only the instruction under the
// selection, and a comment stays above the instruction it was written above.
// Binary: $HLO_LSP_BIN, else <cargo target dir>/debug/hlo-lsp. A missing binary skips
// with a message unless HLO_EDITOR_TESTS_STRICT=1.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LspProcess } from './lspClient';
import { serverBinary } from './serverBinary';

const STRICT = process.env.HLO_EDITOR_TESTS_STRICT === '1';
const binary = serverBinary();
const DATA = path.resolve(__dirname, '../../../../tests/data/format');

interface Position { line: number; character: number }
interface Edit { range: { start: Position; end: Position }; newText: string }

/** Byte offset of an LSP position (the fixtures are ASCII: UTF-16 units are bytes). */
function offset(text: string, p: Position): number {
  const lines = text.split('\n');
  let at = 0;
  for (let i = 0; i < p.line && i < lines.length; i++) at += lines[i].length + 1;
  return Math.min(at + p.character, text.length);
}

/** `text` after `edits`, applied from the last as VS Code applies them. */
function apply(text: string, edits: Edit[]): string {
  const spans = edits.map((e) => [offset(text, e.range.start), offset(text, e.range.end), e.newText] as const);
  spans.sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [start, end, newText] of spans) out = out.slice(0, start) + newText + out.slice(end);
  return out;
}

async function session(t: { skip(msg: string): void }, uri: string, text: string): Promise<LspProcess | undefined> {
  const why = 'error' in binary ? `no server binary: ${binary.error}` : !fs.existsSync(binary.path) ? `no server binary at ${binary.path}` : '';
  if (why || 'error' in binary) {
    if (STRICT) assert.fail(why);
    t.skip(why);
    return undefined;
  }
  const server = LspProcess.spawn(binary.path);
  const init = (await server.request('initialize', { processId: process.pid, rootUri: null, capabilities: {} })) as {
    capabilities: Record<string, unknown>;
  };
  assert.equal(init.capabilities.documentFormattingProvider, true, 'formatting not announced');
  assert.equal(init.capabilities.documentRangeFormattingProvider, true, 'range formatting not announced');
  server.notify('initialized', {});
  server.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'hlo', version: 1, text } });
  return server;
}

const OPTIONS = { tabSize: 2, insertSpaces: true };

test('Format Document prints a hand-written module as XLA does', async (t) => {
  const text = fs.readFileSync(path.join(DATA, 'hand_written.hlo'), 'utf8');
  const uri = 'file:///editors-test/hand_written.hlo';
  const server = await session(t, uri, text);
  if (!server) return;
  try {
    const edits = (await server.request('textDocument/formatting', { textDocument: { uri }, options: OPTIONS })) as Edit[];
    const want = fs.readFileSync(path.join(DATA, 'hand_written.short.hlo'), 'utf8');
    assert.equal(apply(text, edits), want);
  } finally {
    await server.close();
  }
});

test('Format Selection formats only the instruction under it', async (t) => {
  const text = fs.readFileSync(path.join(DATA, 'hand_written.hlo'), 'utf8');
  const uri = 'file:///editors-test/range.hlo';
  const server = await session(t, uri, text);
  if (!server) return;
  try {
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('broadcast('));
    const at = { line, character: 4 };
    const edits = (await server.request('textDocument/rangeFormatting', {
      textDocument: { uri },
      range: { start: at, end: at },
      options: OPTIONS,
    })) as Edit[];
    const want = text.replace('  b = f32[8,128] broadcast(s), dimensions={0}', '  %b = f32[8,128]{1,0} broadcast(%s), dimensions={0}');
    assert.equal(apply(text, edits), want);
  } finally {
    await server.close();
  }
});

test('a comment is not formatted away: it stays above its instruction', async (t) => {
  const text = 'HloModule m\n\nENTRY e {\n  // keep\n  ROOT p = f32[] parameter(0)\n}\n';
  const uri = 'file:///editors-test/comment.hlo';
  const server = await session(t, uri, text);
  if (!server) return;
  try {
    const edits = (await server.request('textDocument/formatting', { textDocument: { uri }, options: OPTIONS })) as Edit[];
    const lines = apply(text, edits).split('\n');
    const comment = lines.indexOf('  // keep');
    assert.ok(comment >= 0, lines.join('\n'));
    assert.ok(lines[comment + 1].startsWith('  ROOT %p = f32[] parameter(0)'), lines.join('\n'));
  } finally {
    await server.close();
  }
});
