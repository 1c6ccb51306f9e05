// The TextMate grammar, loaded as VS Code loads it, must give each HLO construct its scope
// in the shared XLA samples (tests/data/samples/xla) and stay fast on the largest one.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IGrammar } from 'vscode-textmate';
import { loadGrammar, samplesDir, tokenize, Token } from './tokenize';

const SAMPLES = fs.readdirSync(samplesDir).filter((f) => f.endsWith('.hlo')).sort();
const read = (name: string) => fs.readFileSync(path.join(samplesDir, name), 'utf8');
/** Real JAX dumps (after/before optimizations, with metadata) also go through the invariants. */
const jaxDir = path.join(samplesDir, '..', '..', 'jax');
const CORPUS = [
  ...SAMPLES.map((f) => path.join(samplesDir, f)),
  ...(fs.existsSync(jaxDir) ? fs.readdirSync(jaxDir).filter((f) => f.endsWith('.hlo')).sort().map((f) => path.join(jaxDir, f)) : []),
];
const readPath = (p: string) => fs.readFileSync(p, 'utf8');
const sample = (suffix: string) => {
  const name = SAMPLES.find((f) => f.endsWith(suffix));
  assert.ok(name, `sample *${suffix} is missing from ${samplesDir}`);
  return read(name);
};

let grammarPromise: Promise<IGrammar> | undefined;
const grammar = () => (grammarPromise ??= loadGrammar());

const has = (t: Token, scope: string) => t.scopes.some((s) => s === scope || s.startsWith(scope + '.'));

/** The tokens whose text is exactly `text` on the (0-based) line whose text contains `lineNeedle`. */
function tokensOn(tokens: Token[], source: string, lineNeedle: string, text: string): Token[] {
  const lineNo = source.split(/\r?\n/).findIndex((l) => l.includes(lineNeedle));
  assert.ok(lineNo >= 0, `no line contains ${JSON.stringify(lineNeedle)}`);
  const found = tokens.filter((t) => t.line === lineNo && t.text === text);
  assert.ok(found.length > 0, `no token ${JSON.stringify(text)} on line ${lineNo + 1}: ${JSON.stringify(tokens.filter((t) => t.line === lineNo).map((t) => t.text))}`);
  return found;
}

function expectScope(tokens: Token[], source: string, lineNeedle: string, text: string, scope: string, nth = 0) {
  const t = tokensOn(tokens, source, lineNeedle, text)[nth];
  assert.ok(t, `token ${JSON.stringify(text)} #${nth} missing on the line with ${JSON.stringify(lineNeedle)}`);
  assert.ok(has(t, scope), `${JSON.stringify(text)} on the line with ${JSON.stringify(lineNeedle)}: expected ${scope}, got [${t.scopes.join(', ')}]`);
}

test('print_indexing sample: computations, names, opcodes, shapes, attributes, comments', async () => {
  const src = sample('xla__tools__print_indexing_test.hlo');
  const toks = tokenize(await grammar(), src);
  expectScope(toks, src, '// RUN: print_indexing', ' RUN: print_indexing %s | FileCheck %s', 'comment.line.double-slash.hlo');
  expectScope(toks, src, '%fused_computation {', '%fused_computation', 'entity.name.function.computation.hlo');
  expectScope(toks, src, '%a = s32[1024] parameter(0)', '%a', 'variable.other.definition.hlo');
  expectScope(toks, src, '%a = s32[1024] parameter(0)', 's32', 'storage.type.primitive.hlo');
  expectScope(toks, src, '%a = s32[1024] parameter(0)', '1024', 'constant.numeric.dimension.hlo');
  expectScope(toks, src, '%a = s32[1024] parameter(0)', 'parameter', 'support.function.opcode.hlo');
  expectScope(toks, src, '%a = s32[1024] parameter(0)', '0', 'constant.numeric.integer.hlo');
  expectScope(toks, src, '%b = s32[] parameter(1)', 's32', 'meta.shape.hlo');
  expectScope(toks, src, '%d = s32[1024] broadcast(%b)', '%b', 'variable.other.hlo');
  expectScope(toks, src, '%mul = s32[1024] multiply(%a, %d)', 'multiply', 'support.function.opcode.hlo');
  expectScope(toks, src, 'ROOT %result', 'ROOT', 'keyword.other.root.hlo');
  expectScope(toks, src, 'ROOT %result', '%result', 'variable.other.definition.hlo');
  expectScope(toks, src, 'ROOT %result', 'tuple', 'support.function.opcode.hlo');
  expectScope(toks, src, 'ROOT %result', 's32', 'storage.type.primitive.hlo', 1);
  expectScope(toks, src, 'ENTRY main {', 'ENTRY', 'keyword.other.entry.hlo');
  expectScope(toks, src, 'ENTRY main {', 'main', 'entity.name.function.computation.hlo');
  expectScope(toks, src, 'ROOT %fusion', 'kind', 'entity.other.attribute-name.hlo');
  expectScope(toks, src, 'ROOT %fusion', 'kLoop', 'constant.language.enum.hlo');
  expectScope(toks, src, 'ROOT %fusion', 'calls', 'entity.other.attribute-name.hlo');
  expectScope(toks, src, 'ROOT %fusion', '%fused_computation', 'entity.name.function.hlo');
  expectScope(toks, src, 'ROOT %fusion', '%c', 'variable.other.hlo');
});

test('layouts, tiled layouts, signatures, attribute values, JSON backend_config', async () => {
  const g = await grammar();
  const bitcast = sample('bitcast_transpose_or_reshape.hlo');
  let toks = tokenize(g, bitcast);
  expectScope(toks, bitcast, 'ROOT bitcast = s8[1024,1]{0,1}', 'bitcast', 'variable.other.definition.hlo');
  expectScope(toks, bitcast, 'ROOT bitcast = s8[1024,1]{0,1}', 'bitcast', 'support.function.opcode.hlo', 1);
  expectScope(toks, bitcast, 'ROOT bitcast = s8[1024,1]{0,1}', '0', 'meta.layout.hlo');
  expectScope(toks, bitcast, 'ROOT bitcast = s8[1024,1]{0,1}', '0', 'constant.numeric.layout.hlo');
  expectScope(toks, bitcast, 'ROOT bitcast = s8[1024,1]{0,1}', '1', 'constant.numeric.dimension.hlo');
  expectScope(toks, bitcast, 'ROOT fusion =', 'fusion', 'entity.name.function.hlo', 2); // calls=fusion
  // A continuation line with `backend_config={` must not look like an instruction definition.
  expectScope(toks, bitcast, 'backend_config={', 'backend_config', 'entity.other.attribute-name.hlo');
  expectScope(toks, bitcast, '"kind":"__triton"', '"kind"', 'support.type.property-name.json.hlo');
  expectScope(toks, bitcast, '"kind":"__triton"', '__triton', 'string.quoted.double.hlo');

  const text = [
    'HloModule m, is_scheduled=true',
    '',
    '%fused_computation.1 (param_0: f32[128,256], p1: (s32[], pred[<=10,?])) -> f32[256,128]{0,1:T(8,128)S(1)} {',
    '  %param_0 = f32[128,256]{1,0} parameter(0), metadata={op_type="transpose" op_name="jit(f)/transpose" source_line=12}',
    '  %c = f32[] constant(-inf)',
    '  %h = u32[] constant(0x7F), sharding={replicated}',
    '  %k = f32[2,2] constant({ {1.5, -2}, {3e-06, 4} }) /* trailing */',
    '  ROOT %t = f32[256,128] transpose(f32[128,256] %param_0), dimensions={1,0}',
    '}',
    '%cv = f32[1,8,8,4] convolution(%a, %w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f',
    '%cond = pred[] conditional(%p, %x, %y), branch_computations={%b0, %b1}',
    '// -----',
  ].join('\n');
  toks = tokenize(g, text);
  expectScope(toks, text, 'HloModule m', 'HloModule', 'keyword.other.module.hlo');
  expectScope(toks, text, 'HloModule m', 'm', 'entity.name.namespace.module.hlo');
  expectScope(toks, text, 'HloModule m', 'true', 'constant.language.hlo');
  expectScope(toks, text, '%fused_computation.1 (', '%fused_computation.1', 'entity.name.function.computation.hlo');
  expectScope(toks, text, '%fused_computation.1 (', 'param_0', 'variable.parameter.hlo');
  expectScope(toks, text, '%fused_computation.1 (', 'pred', 'storage.type.primitive.hlo');
  expectScope(toks, text, '%fused_computation.1 (', '<=', 'keyword.operator.bounded.hlo');
  expectScope(toks, text, '%fused_computation.1 (', '?', 'constant.language.dynamic.hlo');
  expectScope(toks, text, '%fused_computation.1 (', 'T', 'storage.modifier.layout.hlo');
  expectScope(toks, text, '%fused_computation.1 (', '8', 'meta.layout.hlo');
  expectScope(toks, text, '%param_0 = f32', 'metadata', 'entity.other.attribute-name.hlo');
  expectScope(toks, text, '%param_0 = f32', 'op_name', 'meta.metadata.hlo');
  expectScope(toks, text, '%param_0 = f32', 'op_name', 'entity.other.attribute-name.hlo');
  expectScope(toks, text, '%param_0 = f32', 'jit(f)/transpose', 'string.quoted.double.hlo');
  expectScope(toks, text, '%param_0 = f32', '12', 'constant.numeric.integer.hlo');
  expectScope(toks, text, 'constant(-inf)', '-inf', 'constant.language.hlo');
  expectScope(toks, text, 'constant(0x7F)', '0x7F', 'constant.numeric.hex.hlo');
  expectScope(toks, text, 'constant({', '1.5', 'constant.numeric.float.hlo');
  expectScope(toks, text, 'constant({', '-2', 'constant.numeric.integer.hlo');
  expectScope(toks, text, 'constant({', '3e-06', 'constant.numeric.float.hlo');
  expectScope(toks, text, 'constant({', ' trailing ', 'comment.block.hlo');
  expectScope(toks, text, 'ROOT %t', 'transpose', 'support.function.opcode.hlo');
  expectScope(toks, text, 'ROOT %t', 'f32', 'storage.type.primitive.hlo', 1); // inline operand shape
  expectScope(toks, text, 'ROOT %t', '%param_0', 'variable.other.hlo');
  expectScope(toks, text, 'ROOT %t', 'dimensions', 'entity.other.attribute-name.hlo');
  expectScope(toks, text, '%cv = ', 'b01f_01io->b01f', 'constant.other.attribute-value.hlo');
  expectScope(toks, text, '%cv = ', '3x3', 'constant.other.attribute-value.hlo');
  expectScope(toks, text, '%cond = ', '%b1', 'entity.name.function.hlo');
  expectScope(toks, text, '// -----', '// -----', 'comment.line.double-slash.separator.hlo');
});

/** Every element type of a result shape is scoped as a type inside a shape. */
function checkShapeTypes(where: string, shapeText: string, lineToks: Token[]) {
  for (const m of shapeText.matchAll(/\b([a-z][a-z0-9]*)\[/g)) {
    const typeTok = lineToks.find((t) => t.text === m[1] && has(t, 'storage.type.primitive.hlo') && has(t, 'meta.shape.hlo'));
    assert.ok(typeTok, `${where}: element type ${m[1]} not scoped`);
  }
}

// Invariants checked on every instruction of every sample, so the grammar is tested on
// thousands of real lines rather than on hand-picked ones.
test('every sample: each instruction has its name, shape types and opcode scoped', async () => {
  const g = await grammar();
  let instructions = 0;
  for (const file of CORPUS) {
    const name = path.basename(file);
    const src = readPath(file);
    const toks = tokenize(g, src);
    const byLine = new Map<number, Token[]>();
    for (const t of toks) byLine.set(t.line, [...(byLine.get(t.line) ?? []), t]);
    const lines = src.split(/\r?\n/);
    lines.forEach((line, i) => {
      const lineToks = byLine.get(i) ?? [];
      if (/^\s*\/\//.test(line)) {
        for (const t of lineToks) if (t.text.trim()) assert.ok(has(t, 'comment'), `${name}:${i + 1}: ${JSON.stringify(t.text)} not a comment`);
        return;
      }
      const def = /^\s*(?:ROOT\s+)?(%?[A-Za-z_][\w.\-]*)\s*=\s*(?=\(|[a-z0-9]+\[|$)/.exec(line);
      if (!def) return;
      instructions++;
      const where = `${name}:${i + 1}`;
      const nameTok = lineToks.find((t) => t.text === def[1]);
      assert.ok(nameTok && has(nameTok, 'variable.other.definition.hlo'), `${where}: name ${def[1]} -> ${nameTok?.scopes}`);
      // The opcode is the first lower-case word directly followed by `(` after the `=`;
      // XLA wraps long instructions, so it may be on one of the next lines.
      let opLine = i;
      let from = def[0].length;
      let op: RegExpExecArray | null = null;
      for (; opLine < Math.min(i + 60, lines.length); opLine++, from = 0) {
        op = /(?<=\s|^|\))([a-z][a-z0-9_\-]*)\(/.exec(lines[opLine].slice(from));
        if (op) break;
        checkShapeTypes(where, lines[opLine].slice(from), byLine.get(opLine) ?? []);
      }
      assert.ok(op, `${where}: no opcode found by the test's own regex`);
      const opStart = from + op.index;
      let col = 0;
      const opTok = (byLine.get(opLine) ?? []).find((t) => { const s = col; col += t.text.length; return s === opStart; });
      assert.ok(opTok && opTok.text === op[1] && has(opTok, 'support.function.opcode.hlo'),
        `${where}: opcode ${op[1]} -> ${opTok?.text} [${opTok?.scopes}]`);
      checkShapeTypes(where, lines[opLine].slice(from, opStart), byLine.get(opLine) ?? []);
    });
  }
  assert.ok(instructions > 2000, `only ${instructions} instructions seen`);
});

test('every %name outside comments and strings is a definition, reference or computation name', async () => {
  const g = await grammar();
  let names = 0;
  for (const file of CORPUS) {
    const name = path.basename(file);
    for (const t of tokenize(g, readPath(file))) {
      if (!t.text.startsWith('%') || t.text.length < 2) continue;
      if (has(t, 'comment') || has(t, 'string')) continue;
      names++;
      assert.ok(
        ['variable.other', 'variable.parameter', 'entity.name.function'].some((s) => has(t, s)),
        `${name}:${t.line + 1}: ${t.text} has [${t.scopes.join(', ')}]`,
      );
    }
  }
  assert.ok(names > 4000, `only ${names} %names seen`);
});

// Speed is measured by `npm run bench` (test/tokenize.bench.ts), not asserted here: a
// timed test fails on a loaded machine for reasons unrelated to the grammar.
test('the largest sample (165 KB) tokenizes completely: tokens cover every line exactly', async () => {
  const g = await grammar();
  const largest = SAMPLES.map((f) => ({ f, size: fs.statSync(path.join(samplesDir, f)).size })).sort((a, b) => b.size - a.size)[0];
  assert.ok(largest.size > 150_000, `largest sample is only ${largest.size} bytes`);
  const src = read(largest.f);
  const lines = src.split(/\r?\n/);
  const rebuilt: string[] = lines.map(() => '');
  for (const t of tokenize(g, src)) rebuilt[t.line] += t.text;
  lines.forEach((line, i) => assert.equal(rebuilt[i], line, `line ${i + 1} of ${largest.f}`));
});

test('every metadata={...} block in the corpus is scoped as metadata, its keys as attribute names', async () => {
  const g = await grammar();
  let blocks = 0;
  for (const file of CORPUS) {
    const toks = tokenize(g, readPath(file));
    toks.forEach((t, i) => {
      if (t.text !== 'metadata' || has(t, 'comment') || has(t, 'string') || toks[i + 1]?.text !== '=') return;
      blocks++;
      const where = `${path.basename(file)}:${t.line + 1}`;
      assert.ok(has(t, 'meta.metadata.hlo') && has(t, 'entity.other.attribute-name.hlo'), `${where}: [${t.scopes}]`);
      const key = toks.slice(i + 2, i + 12).find((k) => k.text === 'op_name');
      if (key) assert.ok(has(key, 'meta.metadata.hlo') && has(key, 'entity.other.attribute-name.hlo'), `${where}: op_name [${key.scopes}]`);
    });
  }
  assert.ok(blocks > 50, `only ${blocks} metadata blocks seen`);
});
