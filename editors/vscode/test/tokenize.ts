// Loads the extension's TextMate grammar the way VS Code does (vscode-textmate + the
// oniguruma WebAssembly regex engine), so tests check what users actually see.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vsctm from 'vscode-textmate';
import * as oniguruma from 'vscode-oniguruma';

/** The extension's root folder (holds package.json), from out/test/. */
export const extensionRoot = path.resolve(__dirname, '..', '..');
/** The repository's shared test vectors. */
export const samplesDir = path.resolve(extensionRoot, '..', '..', 'tests', 'data', 'samples', 'xla');

let registry: vsctm.Registry | undefined;

function makeRegistry(): vsctm.Registry {
  const wasmPath = require.resolve('vscode-oniguruma/release/onig.wasm');
  const wasm = fs.readFileSync(wasmPath);
  const onigLib = oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength)).then(() => ({
    createOnigScanner: (sources: string[]) => new oniguruma.OnigScanner(sources),
    createOnigString: (s: string) => new oniguruma.OnigString(s),
  }));
  return new vsctm.Registry({
    onigLib,
    loadGrammar: async (scopeName: string) => {
      if (scopeName !== 'source.hlo') return null;
      const file = path.join(extensionRoot, 'syntaxes', 'hlo.tmLanguage.json');
      return vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
}

export async function loadGrammar(): Promise<vsctm.IGrammar> {
  registry ??= makeRegistry();
  const grammar = await registry.loadGrammar('source.hlo');
  if (!grammar) throw new Error('source.hlo grammar did not load');
  return grammar;
}

/** One token: its text, 0-based line, and the scopes below the root `source.hlo`. */
export interface Token {
  text: string;
  line: number;
  scopes: string[];
}

/** Tokenizes a whole document line by line, carrying the rule stack across lines. */
export function tokenize(grammar: vsctm.IGrammar, text: string): Token[] {
  const out: Token[] = [];
  let stack = vsctm.INITIAL;
  text.split(/\r?\n/).forEach((line, lineNo) => {
    const r = grammar.tokenizeLine(line, stack);
    stack = r.ruleStack;
    for (const t of r.tokens) {
      out.push({ text: line.slice(t.startIndex, t.endIndex), line: lineNo, scopes: t.scopes.slice(1) });
    }
  });
  return out;
}
