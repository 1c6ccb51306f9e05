// Prints the TextMate scopes of every token of an HLO file: `node tools/dump-tokens.mjs FILE [FIRST_LINE [LAST_LINE]]`.
// A development aid for the grammar (the tests in test/ check the same scopes automatically).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { loadGrammar } = require('../out/test/tokenize.js');

const [file, first = '1', last = '1000000'] = process.argv.slice(2);
const grammar = await loadGrammar();
const lines = readFileSync(file, 'utf8').split(/\r?\n/);
let ruleStack = null;
const { INITIAL } = require('vscode-textmate');
ruleStack = INITIAL;
lines.forEach((line, i) => {
  const r = grammar.tokenizeLine(line, ruleStack);
  ruleStack = r.ruleStack;
  if (i + 1 < +first || i + 1 > +last) return;
  console.log(`${i + 1}: ${line}`);
  for (const t of r.tokens) {
    const text = line.slice(t.startIndex, t.endIndex);
    if (text.trim() === '') continue;
    console.log(`    ${JSON.stringify(text).padEnd(30)} ${t.scopes.slice(1).join(' ')}`);
  }
});
