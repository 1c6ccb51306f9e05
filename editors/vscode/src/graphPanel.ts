// The "Show Graph at Cursor" panel: the dataflow around the cursor (`hlo-lsp/graph`), drawn in
// a webview by Graphviz compiled to WebAssembly (@hpcc-js/wasm-graphviz, shipped in the .vsix:
// nothing is fetched), edges coloured by how the consumer reads the producer, with a legend.
// Clicking a node posts its id back; the extension moves the editor to that instruction.
// With a profile beside the dump, the boxes are coloured by their measured share of the
// step (the server's DOT) and a second legend says what each colour means.
// This file holds the pure parts (the page, the answer's types) so they are unit-tested.

/** An LSP range as the server sends it. */
export type LspRange = { start: { line: number; character: number }; end: { line: number; character: number } };

export type GraphNode = { id: string; name: string; opcode: string; shape: string; kind: string; range: LspRange };
export type LegendEntry = { class: string; colour: string; meaning: string };
/** A band of measured share of the step and its box colour. */
export type HeatEntry = { from_percent: number; colour: string; meaning: string };

/** `hlo-lsp/graph`'s answer (null off any computation). */
export type GraphResponse = {
  nodes: GraphNode[];
  edges: { from: string; to: string; class: string }[];
  focus: string | null;
  partial: boolean;
  legend: LegendEntry[];
  /** Present when a profile measured some node. */
  heat?: HeatEntry[];
  dot: string;
} | null;

export const GRAPH_REQUEST = 'hlo-lsp/graph';

/** What the page is told to draw. */
export type DrawMessage = { type: 'draw'; title: string; dot: string; legend: LegendEntry[]; heat: HeatEntry[]; note: string };

/** The message for an answer: the legend lists only the classes the graph has. */
export function drawMessage(title: string, g: GraphResponse): DrawMessage {
  if (!g) return { type: 'draw', title, dot: '', legend: [], heat: [], note: 'Nothing to draw here: put the cursor inside a computation.' };
  const used = new Set(g.edges.map((e) => e.class));
  const note = g.partial ? 'Partial: the analysis ran out of its time budget for some maps.' : '';
  return { type: 'draw', title, dot: g.dot, legend: g.legend.filter((l) => used.has(l.class)), heat: g.heat ?? [], note };
}

/** Where a clicked node's instruction is, if it is one. */
export function rangeOf(g: GraphResponse, id: string): LspRange | undefined {
  return g?.nodes.find((n) => n.id === id && n.kind !== 'more')?.range;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page: a legend and the drawing. `script` is the webview URI of Graphviz's module;
 * `csp` the webview's source for the content security policy. WebAssembly needs
 * 'wasm-unsafe-eval'; nothing else is allowed beyond the extension's own files.
 */
export function graphHtml(script: string, csp: string, nonce: string): string {
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${escape(csp)} data:; style-src 'unsafe-inline'; script-src 'nonce-${nonce}' ${escape(csp)} 'wasm-unsafe-eval';">
<style>
  body { font-family: var(--vscode-editor-font-family, monospace); color: var(--vscode-foreground); }
  #title { font-weight: bold; margin: 4px 0; }
  #legend span.key { display: inline-block; width: 22px; height: 3px; vertical-align: middle; margin: 0 4px 0 10px; }
  #legend, #heat { font-size: 11px; margin-bottom: 6px; }
  #heat span.swatch { display: inline-block; width: 14px; height: 10px; vertical-align: middle; margin: 0 4px 0 10px; border: 1px solid #34495e; }
  #note { font-style: italic; }
  #graph svg { background: #ffffff; border-radius: 4px; max-width: 100%; height: auto; }
  #graph g.node, #graph g.cluster { cursor: pointer; }
</style></head>
<body>
<div id="title"></div><div id="legend"></div><div id="heat"></div><div id="note"></div><div id="graph">Loading Graphviz…</div>
<script type="module" nonce="${nonce}">
import { Graphviz } from ${JSON.stringify(script)};
const vscode = acquireVsCodeApi();
const graphviz = Graphviz.load();
const el = (id) => document.getElementById(id);
window.addEventListener('message', async (event) => {
  const m = event.data;
  if (m.type !== 'draw') return;
  el('title').textContent = m.title;
  el('note').textContent = m.note;
  el('legend').innerHTML = '';
  for (const l of m.legend) {
    const key = document.createElement('span');
    key.className = 'key';
    key.style.background = l.colour;
    el('legend').append(key, l.class + ': ' + l.meaning);
  }
  el('heat').innerHTML = '';
  if (m.heat.length) el('heat').append('measured:');
  for (const h of m.heat) {
    const swatch = document.createElement('span');
    swatch.className = 'swatch';
    swatch.style.background = h.colour;
    el('heat').append(swatch, h.meaning);
  }
  if (!m.dot) { el('graph').textContent = ''; return; }
  try {
    el('graph').innerHTML = (await graphviz).dot(m.dot);
  } catch (e) {
    el('graph').textContent = 'Graphviz could not draw the graph: ' + e;
    return;
  }
  for (const g of el('graph').querySelectorAll('g.node, g.cluster')) {
    g.addEventListener('click', () => vscode.postMessage({ type: 'reveal', id: g.id.replace(/^a_/, '') }));
  }
  vscode.postMessage({ type: 'drawn', nodes: el('graph').querySelectorAll('g.node').length });
});
vscode.postMessage({ type: 'ready' });
</script>
</body></html>`;
}
