// The settings contract against the REAL server: the object this extension builds from the
// `hlo.*` settings is sent to the built hlo-lsp binary as initializationOptions and in
// workspace/didChangeConfiguration, and the server's answers must change accordingly.
// Binary: $HLO_LSP_BIN, else <cargo target dir>/debug/hlo-lsp (built by `cargo test`).
// A missing binary, or one that does not serve LSP, skips with a message unless
// HLO_EDITOR_TESTS_STRICT=1; a feature the server does not advertise likewise.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { LspProcess } from './lspClient';
import { serverSettings } from '../src/settings';
import { contentsToMarkdown, HoverContents } from '../src/fusionMaps';
import { serverBinary } from './serverBinary';

const STRICT = process.env.HLO_EDITOR_TESTS_STRICT === '1';
const binary = serverBinary();

// The fusion's output f32[32] reads its f32[4,8] parameter at (d0 floordiv 8, d0 mod 8).
const TEXT = `HloModule reshape_fusion

%fused_reshape (p0: f32[4,8]) -> f32[32] {
  %p0 = f32[4,8]{1,0} parameter(0)
  ROOT %r = f32[32]{0} reshape(%p0)
}

ENTRY %main (a: f32[4,8]) -> f32[32] {
  %a = f32[4,8]{1,0} parameter(0)
  ROOT %fusion = f32[32]{0} fusion(%a), kind=kLoop, calls=%fused_reshape
}
`;
const URI = 'file:///editors-test/reshape_fusion.hlo';
const config = (values: Record<string, unknown>) => ({ get: <T>(k: string) => values[k] as T | undefined });

interface Session {
  server: LspProcess;
  capabilities: Record<string, unknown>;
}

async function start(initializationOptions: unknown): Promise<Session | string> {
  if ('error' in binary) return `no server binary: ${binary.error} (set HLO_LSP_BIN)`;
  if (!fs.existsSync(binary.path)) return `no server binary at ${binary.path} (run cargo build, or set HLO_LSP_BIN)`;
  const server = LspProcess.spawn(binary.path);
  let result: { capabilities: Record<string, unknown> };
  try {
    result = (await server.request('initialize', {
      processId: process.pid,
      rootUri: null,
      capabilities: { textDocument: { hover: { contentFormat: ['markdown', 'plaintext'] }, inlayHint: {} } },
      initializationOptions,
    })) as typeof result;
  } catch (e) {
    await server.close();
    const exit = server.exitInfo;
    return exit && exit.code !== 0
      ? `hlo-lsp exited at startup (code ${exit.code}, signal ${exit.signal}): it does not serve LSP yet`
      : `initialize failed: ${(e as Error).message}`;
  }
  server.notify('initialized', {});
  server.notify('textDocument/didOpen', { textDocument: { uri: URI, languageId: 'hlo', version: 1, text: TEXT } });
  return { server, capabilities: result.capabilities };
}

const stop = (s: Session) => s.server.close();

function position(needle: string) {
  const lines = TEXT.split('\n');
  const line = lines.findIndex((l) => l.includes(needle));
  return { line, character: lines[line].indexOf(needle) + 1 };
}

async function hoverText(s: Session, needle: string): Promise<string> {
  const r = (await s.server.request('textDocument/hover', { textDocument: { uri: URI }, position: position(needle) })) as {
    contents: HoverContents;
  } | null;
  assert.ok(r, `no hover at ${needle}`);
  return contentsToMarkdown(r.contents);
}

function skipOrFail(t: { skip(msg: string): void }, why: string) {
  if (STRICT) assert.fail(why);
  t.skip(why);
}

test('divSpelling from the settings reaches the server, at startup and on change', async (t) => {
  const s = await start(serverSettings(config({ 'maps.divSpelling': 'slash' })));
  if (typeof s === 'string') return skipOrFail(t, s);
  try {
    if (!s.capabilities.hoverProvider) return skipOrFail(t, 'the server does not advertise hoverProvider');
    let text = await hoverText(s, '%r = ');
    // An early server whose hover shows no indexing map at all lacks the feature: skip.
    if (!text.includes('d0')) return skipOrFail(t, `the server's hover shows no indexing map yet: ${text.replace(/\n/g, ' ')}`);
    assert.ok(!text.includes('floordiv') && /\/ ?8/.test(text), `the server ignored "divSpelling": "slash" in initializationOptions (contract: docs/contracts.md, Server settings); hover:\n${text}`);
    s.server.notify('workspace/didChangeConfiguration', {
      settings: serverSettings(config({ 'maps.divSpelling': 'floordiv' })),
    });
    // The notification is asynchronous; the server applies it before later requests.
    text = await hoverText(s, '%r = ');
    assert.ok(text.includes('d0 floordiv 8'), `the server ignored "divSpelling": "floordiv" sent by workspace/didChangeConfiguration (contract: docs/contracts.md, Server settings); hover:\n${text}`);
  } finally {
    await stop(s);
  }
});

test('inlayHints.mode from the settings: full shows hints in the fusion, off shows none', async (t) => {
  const s = await start(serverSettings(config({ 'inlayHints.mode': 'full' })));
  if (typeof s === 'string') return skipOrFail(t, s);
  try {
    if (!s.capabilities.inlayHintProvider) return skipOrFail(t, 'the server does not advertise inlayHintProvider');
    const range = { start: { line: 0, character: 0 }, end: { line: TEXT.split('\n').length, character: 0 } };
    const hints = async () =>
      ((await s.server.request('textDocument/inlayHint', { textDocument: { uri: URI }, range })) as unknown[] | null) ?? [];
    const full = await hints();
    assert.ok(full.length > 0, 'no inlay hints with "inlayHints": {"mode": "full"} (contract: docs/contracts.md, Server settings)');
    assert.ok(JSON.stringify(full).includes('floordiv'), `the reshape's map should appear in full: ${JSON.stringify(full)}`);
    s.server.notify('workspace/didChangeConfiguration', { settings: serverSettings(config({ 'inlayHints.mode': 'off' })) });
    assert.deepEqual(await hints(), [], 'hints remain after "inlayHints": {"mode": "off"} via didChangeConfiguration (contract: docs/contracts.md)');
  } finally {
    await stop(s);
  }
});
