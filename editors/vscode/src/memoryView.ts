// The memory panel's life: one webview beside the editor showing the timeline of the
// computation at the cursor (ENTRY unless the cursor is in a while body), redrawn when the
// cursor moves into another computation or the document changes (debounced); a click on a
// bar moves that editor to the buffer's instruction. Opened by "HLO: Show Memory Timeline"
// and by a click on the memory code lens, which passes the lens's place.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { hloEditorAndServer } from './commandGuard';
import { revealStart } from './reveal';
import {
  drawMessage,
  lensTarget,
  MEMORY_TIMELINE_REQUEST,
  rangeOfRow,
  timelineHtml,
  TimelineResponse,
} from './memoryTimeline';

/** Quiet time after the cursor moves before the timeline is asked for again (ms). */
const FOLLOW_DELAY = 300;

let panel: vscode.WebviewPanel | undefined;
let shown: { editor: vscode.TextEditor; timeline: TimelineResponse; key: string } | undefined;
let ready = false;
let pendingMessage: ReturnType<typeof drawMessage> | undefined;
let pending: ReturnType<typeof setTimeout> | undefined;

function nonce(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += Math.floor(Math.random() * 16).toString(16);
  return s;
}

/** Asks for the timeline at `pos` of `editor` and draws it, unless it is the one shown. */
async function redraw(client: LanguageClient, editor: vscode.TextEditor, pos: vscode.Position): Promise<void> {
  if (!panel || editor.document.languageId !== 'hlo' || !client.isRunning()) return;
  const params = client.code2ProtocolConverter.asTextDocumentPositionParams(editor.document, pos);
  const timeline = await client.sendRequest<TimelineResponse>(MEMORY_TIMELINE_REQUEST, params).catch(() => null);
  const key = `${editor.document.uri.toString()}#${editor.document.version}#${timeline?.computation ?? ''}`;
  if (shown?.key === key) return;
  shown = { editor, timeline, key };
  const message = drawMessage(vscode.workspace.asRelativePath(editor.document.uri), timeline);
  if (ready) void panel.webview.postMessage(message);
  else pendingMessage = message;
}

/** The editor and position the command is for: the lens's, else the active cursor. */
function target(args: unknown[]): { editor: vscode.TextEditor; pos: vscode.Position } | undefined {
  const lens = lensTarget(args);
  const editor = lens
    ? vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === lens.uri)
    : vscode.window.activeTextEditor;
  if (!editor) return undefined;
  return { editor, pos: lens ? new vscode.Position(lens.line, lens.character) : editor.selection.active };
}

/** Opens (or reveals) the panel and draws the timeline at the cursor or the clicked lens. */
export async function showMemoryTimeline(
  maybeClient: LanguageClient | undefined,
  ...args: unknown[]
): Promise<void> {
  const started = hloEditorAndServer(maybeClient, 'HLO: open a compiled HLO module (an after-optimizations dump) to see its memory.');
  if (!started) return;
  const { client } = started;
  const at = target(args) ?? { editor: started.editor, pos: started.editor.selection.active };
  if (!panel) {
    panel = vscode.window.createWebviewPanel(
      'hloMemoryTimeline',
      'HLO Memory',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [] },
    );
    ready = false;
    panel.webview.html = timelineHtml(panel.webview.cspSource, nonce());
    const subscriptions: vscode.Disposable[] = [];
    subscriptions.push(
      panel.webview.onDidReceiveMessage(async (m: { type: string; row?: number }) => {
        if (m.type === 'ready') {
          ready = true;
          if (pendingMessage) void panel?.webview.postMessage(pendingMessage);
          pendingMessage = undefined;
        } else if (m.type === 'reveal' && typeof m.row === 'number' && shown) {
          const range = rangeOfRow(shown.timeline, m.row);
          if (!range) return;
          await revealStart(client, shown.editor, range);
        }
      }),
      // Follow the cursor into other computations, and edits, in HLO editors.
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.textEditor.document.languageId !== 'hlo') return;
        if (pending) clearTimeout(pending);
        pending = setTimeout(() => void redraw(client, e.textEditor, e.textEditor.selection.active), FOLLOW_DELAY);
      }),
    );
    panel.onDidDispose(() => {
      panel = undefined;
      shown = undefined;
      if (pending) clearTimeout(pending);
      for (const s of subscriptions) s.dispose();
    });
  } else {
    panel.reveal(vscode.ViewColumn.Beside, true);
    shown = undefined; // asked again: draw even the same timeline
  }
  await redraw(client, at.editor, at.pos);
}
