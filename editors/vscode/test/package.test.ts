// What `npm run package` ships: the .vsix is built (`vsce package --no-dependencies`, whose
// `vscode:prepublish` runs tools/bundle.mjs) and its zip directory read back. It must hold the
// bundle (dist/extension.js with vscode-languageclient inside, dist/graphviz.js for the graph
// panel), the grammar and language configuration, and nothing else: no node_modules (before
// the bundle it shipped 213 files, 170 of them JavaScript), no sources, tests or source maps.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { builtinModules } from 'node:module';
import { extensionRoot } from './tokenize';

/** The names of a zip archive's entries, from its central directory. */
function zipEntries(zip: Buffer): string[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(end >= 0, 'no end of central directory: not a zip');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50, `entry ${i}: not a central directory header`);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30);
    const comment = zip.readUInt16LE(at + 32);
    names.push(zip.toString('utf8', at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extra + comment;
  }
  return names;
}

test('the .vsix holds the bundle, the grammar and the language configuration, and no node_modules', () => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hlo-vsix-')), 'hlo-lsp.vsix');
  const vsce = path.join(extensionRoot, 'node_modules', '.bin', process.platform === 'win32' ? 'vsce.cmd' : 'vsce');
  cp.execFileSync(vsce, ['package', '--no-dependencies', '--skip-license', '--out', out], {
    cwd: extensionRoot,
    encoding: 'utf8',
    timeout: 180_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entries = zipEntries(fs.readFileSync(out));
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  // A server binary copied in by `npm run bundle-server` is shipped on purpose.
  const files = entries.filter((e) => e.startsWith('extension/') && !e.startsWith('extension/server/')).map((e) => e.slice('extension/'.length));
  const pkg = JSON.parse(fs.readFileSync(path.join(extensionRoot, 'package.json'), 'utf8'));
  const main = path.posix.normalize(pkg.main.replace(/^\.\//, ''));
  const expected = [
    'package.json',
    'readme.md', // vsce writes the readme's name in lower case
    'language-configuration.json',
    'language-configuration-mlir.json',
    'syntaxes/hlo.tmLanguage.json',
    main,
    'dist/graphviz.js',
  ];
  assert.deepEqual([...files].sort(), [...expected].sort(), `the .vsix holds:\n${entries.join('\n')}`);
  assert.ok(entries.length <= expected.length + 3, `${entries.length} entries`);
  assert.ok(!entries.some((e) => e.includes('node_modules/')), 'node_modules shipped');
  assert.equal(files.filter((f) => f.endsWith('.js')).length, 2, 'two JavaScript files: the extension and Graphviz');
  // Paths named in package.json are in the package.
  for (const c of pkg.contributes.grammars) assert.ok(files.includes(c.path.replace(/^\.\//, '')), c.path);
  for (const l of pkg.contributes.languages) assert.ok(files.includes(l.configuration.replace(/^\.\//, '')), l.configuration);
});

test('the bundled extension needs nothing but vscode and Node', () => {
  // tools/bundle.mjs ran in the test above (vscode:prepublish); run it again when alone.
  const bundle = path.join(extensionRoot, 'dist', 'extension.js');
  if (!fs.existsSync(bundle)) cp.execFileSync(process.execPath, [path.join(extensionRoot, 'tools', 'bundle.mjs')], { cwd: extensionRoot });
  const text = fs.readFileSync(bundle, 'utf8');
  const required = new Set([...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
  assert.ok(required.has('vscode'), 'the bundle does not load vscode: not the extension?');
  for (const name of required) {
    const bare = name.replace(/^node:/, '');
    assert.ok(name === 'vscode' || builtinModules.includes(bare), `the bundle requires ${name}, which the .vsix does not ship`);
  }
  assert.match(text, /vscode-languageclient|LanguageClient/, 'vscode-languageclient is not inside the bundle');
  // The graph panel's Graphviz is an ES module with its WebAssembly inside (no fetch).
  const graphviz = fs.readFileSync(path.join(extensionRoot, 'dist', 'graphviz.js'), 'utf8');
  assert.match(graphviz, /export\s*\{[^}]*Graphviz/, 'dist/graphviz.js does not export Graphviz');
  assert.ok(!/\.wasm["']/.test(graphviz), 'dist/graphviz.js loads a .wasm file the .vsix does not ship');
});
