// Bundles the extension into dist/ with esbuild, so the .vsix ships a handful of files
// instead of node_modules as is (213 files, 170 of them JavaScript, before):
//   dist/extension.js  the extension host's code with vscode-languageclient inside (CommonJS;
//                      `vscode` is the host's own module, left out);
//   dist/graphviz.js   Graphviz compiled to WebAssembly (@hpcc-js/wasm-graphviz, the wasm
//                      inlined), the ES module the graph panel's webview imports.
// Usage: node tools/bundle.mjs [--minify]  (npm run bundle; `npm run package` minifies)
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const minify = process.argv.includes('--minify');
rmSync(join(root, 'dist'), { recursive: true, force: true });
const common = { bundle: true, minify, sourcemap: !minify, logLevel: 'warning', absWorkingDir: root };
await build({
  ...common,
  entryPoints: ['src/extension.ts'],
  outfile: 'dist/extension.js',
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  external: ['vscode'],
});
await build({
  ...common,
  entryPoints: ['node_modules/@hpcc-js/wasm-graphviz/dist/index.js'],
  outfile: 'dist/graphviz.js',
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
});
