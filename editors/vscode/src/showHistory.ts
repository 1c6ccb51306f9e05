// "HLO: Show Pass History": the passes of an instruction of a pass-by-pass dump (the
// history code lens runs it with its instruction; from the palette, the one under the
// cursor) in a quick pick, then for the picked pass: the snapshots before and after it
// side by side (VS Code's diff editor, at the instruction), what the pass did to the
// instruction's computation (`hlo-lsp.diff`), or either snapshot at the instruction.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  actionPickItems,
  DIFF_COMMAND,
  HISTORY_COMMAND,
  HistoryPass,
  HistoryPlace,
  HistoryResponse,
  passPickItems,
  passPickTitle,
} from './passHistory';

/** The lens's argument, or the instruction under the cursor. */
type Target = { uri: string; computation: string; instruction: string } | { uri: string; position: { line: number; character: number } };

function execute<T>(client: LanguageClient, command: string, argument: unknown): Promise<T> {
  return client.sendRequest<T>('workspace/executeCommand', { command, arguments: [argument] });
}

function cursorTarget(client: LanguageClient): Target | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'hlo') return undefined;
  const uri = client.code2ProtocolConverter.asUri(editor.document.uri);
  const { line, character } = editor.selection.active;
  return { uri, position: { line, character } };
}

function rangeOf(place: HistoryPlace): vscode.Range {
  const { start, end } = place.range;
  return new vscode.Range(start.line, start.character, end.line, end.character);
}

async function open(place: HistoryPlace): Promise<void> {
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(place.file));
  const range = rangeOf(place);
  await vscode.window.showTextDocument(document, { selection: range, preview: true });
}

async function compare(pass: HistoryPass, instruction: string): Promise<void> {
  if (!pass.before) return open(pass.after);
  const title = `%${instruction}: ${pass.label}`;
  await vscode.commands.executeCommand('vscode.diff', vscode.Uri.file(pass.before.file), vscode.Uri.file(pass.after.file), title, {
    selection: rangeOf(pass.after),
    preview: true,
  });
}

async function changes(client: LanguageClient, pass: HistoryPass, computation: string): Promise<void> {
  if (!pass.before) return;
  const diff = await execute<{ text: string }>(client, DIFF_COMMAND, { before: pass.before.uri, after: pass.after.uri, computation });
  const content = `${pass.label}\n${diff.text}`;
  await vscode.window.showTextDocument(readOnly(`%${computation} ${pass.label}`, content), {
    viewColumn: vscode.ViewColumn.Beside,
    preview: true,
  });
}

/** The pass diffs shown, by URI: read-only documents (nothing to save on close). */
const PASS_DIFF_SCHEME = 'hlo-pass-diff';
const passDiffs = new Map<string, string>();
let passDiffProvider: vscode.Disposable | undefined;
let shown = 0;

function readOnly(title: string, content: string): vscode.Uri {
  passDiffProvider ??= vscode.workspace.registerTextDocumentContentProvider(PASS_DIFF_SCHEME, {
    provideTextDocumentContent: (uri) => passDiffs.get(uri.toString()) ?? '',
  });
  shown += 1; // a new URI each time: the files may have changed since
  const uri = vscode.Uri.from({ scheme: PASS_DIFF_SCHEME, path: `/${shown}/${title.replace(/[\\/]/g, '_')}` });
  passDiffs.set(uri.toString(), content);
  return uri;
}

export async function showHistory(client: LanguageClient | undefined, target?: Target): Promise<void> {
  if (!client?.isRunning()) {
    void vscode.window.showWarningMessage('HLO: the language server is not running (see the "HLO" output).');
    return;
  }
  const asked = target ?? cursorTarget(client);
  if (!asked) {
    void vscode.window.showInformationMessage('HLO: put the cursor on an instruction of a pass-by-pass dump (--xla_dump_hlo_pass_re=.*).');
    return;
  }
  let response: HistoryResponse;
  try {
    response = await execute<HistoryResponse>(client, HISTORY_COMMAND, asked);
  } catch (e) {
    void vscode.window.showWarningMessage(`HLO: no pass history here: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  const picked = await vscode.window.showQuickPick(passPickItems(response), { placeHolder: passPickTitle(response), matchOnDetail: true });
  if (!picked) return;
  const actions = actionPickItems(picked.pass, response.instruction, response.computation);
  const action = actions.length === 1 ? actions[0] : await vscode.window.showQuickPick(actions, { placeHolder: picked.pass.label });
  if (!action) return;
  switch (action.action) {
    case 'compare':
      return compare(picked.pass, response.instruction);
    case 'changes':
      return changes(client, picked.pass, response.computation);
    case 'before':
      return picked.pass.before ? open(picked.pass.before) : undefined;
    case 'after':
      return open(picked.pass.after);
  }
}
