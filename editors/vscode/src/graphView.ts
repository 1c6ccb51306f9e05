// The graph panel's life: one webview beside the editor, redrawn when the cursor moves in an
// HLO editor (debounced), and a click on a node moves that editor to the instruction.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { hloEditorAndServer } from './commandGuard';
import { revealStart } from './reveal';
import { drawMessage, GRAPH_REQUEST, graphHtml, GraphResponse, rangeOf } from './graphPanel';

/** Hops around the cursor the panel draws. */
const RADIUS = 2;
/** Quiet time after the cursor moves before the graph is asked for again (ms). */
const FOLLOW_DELAY = 300;

let panel: vscode.WebviewPanel | undefined;
let shown: { editor: vscode.TextEditor; graph: GraphResponse } | undefined;
let ready = false;
let pending: ReturnType<typeof setTimeout> | undefined;

function nonce(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += Math.floor(Math.random() * 16).toString(16);
  return s;
}

/** Asks for the graph at `editor`'s cursor and draws it. */
async function redraw(client: LanguageClient, editor: vscode.TextEditor): Promise<void> {
  if (!panel || editor.document.languageId !== 'hlo' || !client.isRunning()) return;
  const pos = editor.selection.active;
  const params = {
    ...client.code2ProtocolConverter.asTextDocumentPositionParams(editor.document, pos),
    radius: RADIUS,
  };
  const graph = await client.sendRequest<GraphResponse>(GRAPH_REQUEST, params).catch(() => null);
  shown = { editor, graph };
  const title = `${vscode.workspace.asRelativePath(editor.document.uri)}:${pos.line + 1}:${pos.character + 1}`;
  if (ready) void panel.webview.postMessage(drawMessage(title, graph));
  else pendingMessage = drawMessage(title, graph);
}

let pendingMessage: ReturnType<typeof drawMessage> | undefined;

/** Opens (or reveals) the panel and draws the graph at the active editor's cursor. */
export async function showGraph(extension: vscode.ExtensionContext, maybeClient: LanguageClient | undefined): Promise<void> {
  const started = hloEditorAndServer(maybeClient, 'HLO: open an HLO file and put the cursor on an instruction.');
  if (!started) return;
  const { editor, client } = started;
  if (!panel) {
    // Graphviz as tools/bundle.mjs put it beside the bundled extension (the webview may read
    // only that folder).
    const dist = vscode.Uri.joinPath(extension.extensionUri, 'dist');
    panel = vscode.window.createWebviewPanel('hloGraph', 'HLO Graph', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [dist],
    });
    const script = panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'graphviz.js')).toString();
    ready = false;
    panel.webview.html = graphHtml(script, panel.webview.cspSource, nonce());
    const subscriptions: vscode.Disposable[] = [];
    subscriptions.push(
      panel.webview.onDidReceiveMessage(async (m: { type: string; id?: string }) => {
        if (m.type === 'ready') {
          ready = true;
          if (pendingMessage) void panel?.webview.postMessage(pendingMessage);
          pendingMessage = undefined;
        } else if (m.type === 'reveal' && m.id && shown) {
          const range = rangeOf(shown.graph, m.id);
          if (!range) return;
          await revealStart(client, shown.editor, range);
        }
      }),
      // Follow the cursor in HLO editors.
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (e.textEditor.document.languageId !== 'hlo') return;
        if (pending) clearTimeout(pending);
        pending = setTimeout(() => void redraw(client, e.textEditor), FOLLOW_DELAY);
      }),
    );
    panel.onDidDispose(() => {
      panel = undefined;
      shown = undefined;
      for (const s of subscriptions) s.dispose();
    });
  } else {
    panel.reveal(vscode.ViewColumn.Beside, true);
  }
  await redraw(client, editor);
}
