// The "Show Memory Timeline" panel: the live ranges of a computation's buffers over the
// schedule with the peak marked (`hlo-lsp/memoryTimeline`), an SVG laid out by the server,
// shown in a webview. A bar's tooltip is its SVG <title>; clicking a bar posts its row, and
// the extension moves the editor to that buffer's instruction. The memory code lens on
// ENTRY ("peak … at …") is made to open the panel. This file holds the pure parts (the
// page, the answer's types, the lens's command) so they are unit-tested.

import type { LspRange } from './kernels';

export type TimelinePeak = { time: number; bytes: number; instruction: string | null; buffers: number };

export type TimelineRow = {
  instruction: string;
  shape_index: string;
  shape: string | null;
  bytes: number;
  live: [number, number];
  at_peak: boolean;
  source: string | null;
  range: LspRange | null;
};

/** `hlo-lsp/memoryTimeline`'s answer (null for a module without a schedule). */
export type TimelineResponse = {
  computation: string;
  source: 'buffer-assignment' | 'estimate';
  source_note: string;
  steps: [number, number];
  peak: TimelinePeak | null;
  reported_peak: TimelinePeak | null;
  rows: TimelineRow[];
  more: number;
  more_bytes: number;
  svg: string;
} | null;

export const MEMORY_TIMELINE_REQUEST = 'hlo-lsp/memoryTimeline';
export const SHOW_MEMORY_TIMELINE = 'hlo.showMemoryTimeline';

/** What the page is told to draw. */
export type DrawMessage = { type: 'draw'; title: string; svg: string; note: string };

/** The message for an answer. */
export function drawMessage(title: string, t: TimelineResponse): DrawMessage {
  if (!t) {
    return {
      type: 'draw',
      title,
      svg: '',
      note: 'No memory timeline here: it needs a compiled (scheduled) module, such as an after-optimizations dump.',
    };
  }
  return { type: 'draw', title: `${title} · %${t.computation}`, svg: t.svg, note: '' };
}

/** Where a clicked row's instruction is. */
export function rangeOfRow(t: TimelineResponse, row: number): LspRange | undefined {
  return t?.rows[row]?.range ?? undefined;
}

/** The part of a code lens the rewriting needs (a vscode.CodeLens fits). */
export type LensLike = {
  range: { start: { line: number; character: number } };
  command?: { title: string; command: string; arguments?: unknown[] };
};

/**
 * A memory lens ("peak 1.5 MiB at %fusion.3 · …") comes from the server with a title and
 * no command (other editors show it as text); in VS Code a click opens the timeline of
 * its computation. Other lenses are returned as they are.
 */
export function withTimelineCommand<L extends LensLike>(lens: L, uri: string): L {
  const c = lens.command;
  if (!c || c.command || !c.title.startsWith('peak ')) return lens;
  const at = lens.range.start;
  lens.command = { ...c, command: SHOW_MEMORY_TIMELINE, arguments: [uri, at.line, at.character] };
  return lens;
}

/** The lens's arguments back: the document and the position it stands at, if given. */
export function lensTarget(args: unknown[]): { uri: string; line: number; character: number } | undefined {
  const [uri, line, character] = args;
  if (typeof uri !== 'string' || typeof line !== 'number' || typeof character !== 'number') return undefined;
  return { uri, line, character };
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page: a title, a note and the SVG the server drew, put in as markup. Nothing is
 * loaded: the policy allows the page's own script (by nonce) and inline styles only.
 */
export function timelineHtml(csp: string, nonce: string): string {
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${escape(csp)} data:; style-src 'unsafe-inline'; script-src 'nonce-${nonce}';">
<style>
  body { font-family: var(--vscode-editor-font-family, monospace); color: var(--vscode-foreground); }
  #title { font-weight: bold; margin: 4px 0; }
  #note { font-style: italic; }
  #timeline svg { border-radius: 4px; max-width: 100%; height: auto; }
  #timeline g.buffer { cursor: pointer; }
  #timeline g.buffer:hover rect { stroke: #000000; stroke-width: 1; }
</style></head>
<body>
<div id="title"></div><div id="note"></div><div id="timeline"></div>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const el = (id) => document.getElementById(id);
window.addEventListener('message', (event) => {
  const m = event.data;
  if (m.type !== 'draw') return;
  el('title').textContent = m.title;
  el('note').textContent = m.note;
  el('timeline').innerHTML = m.svg;
  const bars = el('timeline').querySelectorAll('g.buffer');
  for (const g of bars) {
    g.addEventListener('click', () => vscode.postMessage({ type: 'reveal', row: Number(g.dataset.row) }));
  }
  vscode.postMessage({ type: 'drawn', bars: bars.length });
});
vscode.postMessage({ type: 'ready' });
</script>
</body></html>`;
}
