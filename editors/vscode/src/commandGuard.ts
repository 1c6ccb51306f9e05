// Where each "HLO:" command starts: an HLO editor and a running server, or a message that
// says which of the two is missing (one wording for every command).
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';

/** The active HLO editor and the running client; `undefined` after telling the user why not. */
export function hloEditorAndServer(
  client: LanguageClient | undefined,
  noEditor: string,
): { editor: vscode.TextEditor; client: LanguageClient } | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'hlo') {
    void vscode.window.showInformationMessage(noEditor);
    return undefined;
  }
  if (!client?.isRunning()) {
    void vscode.window.showWarningMessage('HLO: the language server is not running (see the "HLO" output).');
    return undefined;
  }
  return { editor, client };
}
