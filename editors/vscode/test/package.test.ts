// What `npm run package` puts in the .vsix (`vsce ls` lists exactly those files): the
// compiled extension, grammar, language configuration and runtime dependencies, and none of
// the sources or tests.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { extensionRoot } from './tokenize';

test('vsce ls: the .vsix holds the runtime files and no sources or tests', () => {
  const vsce = path.join(extensionRoot, 'node_modules', '.bin', process.platform === 'win32' ? 'vsce.cmd' : 'vsce');
  const listing = cp.execFileSync(vsce, ['ls'], { cwd: extensionRoot, encoding: 'utf8', timeout: 120_000 });
  const files = new Set(listing.split('\n').map((l) => l.trim()).filter((l) => l !== ''));
  const pkg = JSON.parse(fs.readFileSync(path.join(extensionRoot, 'package.json'), 'utf8'));
  const main = path.posix.normalize(pkg.main.replace(/^\.\//, '')) + (pkg.main.endsWith('.js') ? '' : '.js');
  for (const needed of [
    'package.json',
    'README.md',
    'language-configuration.json',
    'syntaxes/hlo.tmLanguage.json',
    main,
    'out/src/discovery.js',
    'node_modules/vscode-languageclient/node.js',
    'node_modules/vscode-languageserver-protocol/package.json',
  ]) {
    assert.ok(files.has(needed), `${needed} missing from the package:\n${[...files].slice(0, 20).join('\n')}`);
  }
  for (const f of files) {
    assert.ok(!/^(src|test|out\/test|out\/host|host|tools|test-artifacts)\//.test(f) && !f.endsWith('.ts') && !f.endsWith('.map'), `${f} should not be packaged`);
  }
  // Paths named in package.json exist in the package.
  for (const c of pkg.contributes.grammars) assert.ok(files.has(c.path.replace(/^\.\//, '')), c.path);
  for (const l of pkg.contributes.languages) assert.ok(files.has(l.configuration.replace(/^\.\//, '')), l.configuration);
});
