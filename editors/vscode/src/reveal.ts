// Where a panel's click lands: the cursor at the start of a server range, in the editor the
// panel was drawn for (shown again if it was hidden meanwhile).
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { LspRange } from './kernels';

/** Shows `editor`'s document in its column and puts the cursor at the start of `range` (LSP). */
export async function revealStart(
  client: LanguageClient,
  editor: vscode.TextEditor,
  range: LspRange,
): Promise<void> {
  const r = client.protocol2CodeConverter.asRange(range);
  const target = await vscode.window.showTextDocument(editor.document, editor.viewColumn);
  target.selection = new vscode.Selection(r.start, r.start);
  target.revealRange(r, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}
