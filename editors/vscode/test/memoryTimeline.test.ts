// The memory panel's pure parts: the page (the server's SVG put in, nothing loaded), the
// messages it is sent, the row a click names, and the memory lens made to open the panel.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  drawMessage,
  LensLike,
  lensTarget,
  rangeOfRow,
  SHOW_MEMORY_TIMELINE,
  timelineHtml,
  TimelineResponse,
  withTimelineCommand,
} from '../src/memoryTimeline';

const range = { start: { line: 7, character: 2 }, end: { line: 7, character: 9 } };
const timeline: TimelineResponse = {
  computation: 'main.6',
  source: 'buffer-assignment',
  source_note: "read from XLA's buffer assignment",
  steps: [0, 31],
  peak: { time: 20, bytes: 71688, instruction: 'copy.5', buffers: 8 },
  reported_peak: null,
  rows: [
    { instruction: 'xs.1', shape_index: '{}', shape: 'f32[12,8,64]', bytes: 24576, live: [0, 31], at_peak: true, source: null, range },
    { instruction: 'gone', shape_index: '{}', shape: null, bytes: 4, live: [1, 2], at_peak: false, source: null, range: null },
  ],
  more: 0,
  more_bytes: 0,
  svg: '<svg class="memory-timeline"></svg>',
};

test('a timeline is drawn with its computation in the title', () => {
  const m = drawMessage('scan.txt', timeline);
  assert.equal(m.svg, timeline!.svg);
  assert.equal(m.title, 'scan.txt · %main.6');
  assert.equal(m.note, '');
});

test('no timeline says what it needs', () => {
  const m = drawMessage('a.hlo', null);
  assert.equal(m.svg, '');
  assert.match(m.note, /compiled \(scheduled\) module/);
});

test('a click on a row finds its instruction; a row without one, or past the end, has none', () => {
  assert.deepEqual(rangeOfRow(timeline, 0), range);
  assert.equal(rangeOfRow(timeline, 1), undefined);
  assert.equal(rangeOfRow(timeline, 9), undefined);
  assert.equal(rangeOfRow(null, 0), undefined);
});

test('the memory lens opens the timeline at its place; other lenses are left alone', () => {
  const at = { start: { line: 40, character: 0 } };
  const memory = withTimelineCommand<LensLike>({ range: at, command: { title: 'peak 70.0 KiB at %copy.5 · 8 buffers live', command: '' } }, 'file:///d/scan.txt');
  assert.equal(memory.command?.command, SHOW_MEMORY_TIMELINE);
  assert.equal(memory.command?.title, 'peak 70.0 KiB at %copy.5 · 8 buffers live');
  assert.deepEqual(lensTarget(memory.command?.arguments ?? []), { uri: 'file:///d/scan.txt', line: 40, character: 0 });
  const cost = withTimelineCommand<LensLike>({ range: at, command: { title: '≈ 4.61 µs', command: '' } }, 'file:///d/scan.txt');
  assert.equal(cost.command?.command, '');
  const unresolved = withTimelineCommand<LensLike>({ range: at }, 'file:///d/scan.txt');
  assert.equal(unresolved.command, undefined);
  assert.equal(lensTarget([]), undefined, 'from the palette: the cursor');
});

test('the page loads nothing and runs only its own script', () => {
  const html = timelineHtml('vscode-webview://x', 'abc123');
  assert.match(html, /default-src 'none'/);
  assert.match(html, /script-src 'nonce-abc123';/);
  assert.doesNotMatch(html, /https?:/, 'nothing is fetched from the network');
  assert.match(html, /g\.buffer/, 'bars are clickable');
});
