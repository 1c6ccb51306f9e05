// The graph panel's pure parts: the page it loads (Graphviz from the extension's own files,
// WebAssembly allowed, nothing else) and the messages it is sent and answers.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { drawMessage, graphHtml, GraphResponse, rangeOf } from '../src/graphPanel';

const range = { start: { line: 3, character: 2 }, end: { line: 3, character: 9 } };
const graph: GraphResponse = {
  nodes: [
    { id: 'c0i1', name: 'fusion.1', opcode: 'fusion', shape: 'f32[5,5]', kind: 'fusion', range },
    { id: 'c0i1+in', name: '1 more operand', opcode: '', shape: '', kind: 'more', range },
  ],
  edges: [{ from: 'c0i0', to: 'c0i1', class: 'transpose' }],
  focus: 'c0i1',
  partial: false,
  legend: [
    { class: 'identity', colour: '#7f8c8d', meaning: 'element for element' },
    { class: 'transpose', colour: '#8e44ad', meaning: 'dimensions permuted' },
  ],
  dot: 'digraph hlo {}',
};

test('the legend lists only the classes the graph draws', () => {
  const m = drawMessage('a.hlo:4:3', graph);
  assert.deepEqual(m.legend.map((l) => l.class), ['transpose']);
  assert.equal(m.dot, 'digraph hlo {}');
  assert.equal(m.note, '');
});

test('a measured graph brings the colours of its boxes; another none', () => {
  assert.deepEqual(drawMessage('a.hlo:4:3', graph).heat, []);
  const heat = [
    { from_percent: 0, colour: '#fef0d9', meaning: 'under 1% of the step' },
    { from_percent: 40, colour: '#b30000', meaning: '40% of the step and more' },
  ];
  assert.deepEqual(drawMessage('a.hlo:4:3', { ...graph!, heat }).heat, heat);
  assert.match(graphHtml('x', 'y', 'z'), /id="heat"/);
});

test('nothing to draw says where to put the cursor', () => {
  const m = drawMessage('a.hlo:1:1', null);
  assert.equal(m.dot, '');
  assert.match(m.note, /inside a computation/);
});

test('a click on an instruction finds its range; a stub has none', () => {
  assert.deepEqual(rangeOf(graph, 'c0i1'), range);
  assert.equal(rangeOf(graph, 'c0i1+in'), undefined);
  assert.equal(rangeOf(null, 'c0i1'), undefined);
});

test('the page loads Graphviz from the given URI under a strict policy', () => {
  const html = graphHtml('vscode-resource://ext/index.js', 'vscode-webview://x', 'abc123');
  assert.match(html, /import \{ Graphviz \} from "vscode-resource:\/\/ext\/index.js"/);
  assert.match(html, /script-src 'nonce-abc123' vscode-webview:\/\/x 'wasm-unsafe-eval'/);
  assert.match(html, /default-src 'none'/);
  assert.doesNotMatch(html, /https?:/, 'nothing is fetched from the network');
});
