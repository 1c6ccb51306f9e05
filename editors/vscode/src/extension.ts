// VS Code entry point: registers the commands, finds and starts hlo-lsp over stdio, and
// keeps the server's settings in sync. Highlighting needs none of this (package.json
// contributes the TextMate grammar), so a missing server degrades to a warning.
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  HoverRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import { hloEditorAndServer } from './commandGuard';
import * as os from 'node:os';
import { defaultInput, discoverServer, expandPath, fallbackWarning, notFoundMessage } from './discovery';
import { panelMarkdown, HoverContents } from './fusionMaps';
import { showGraph } from './graphView';
import { SHOW_MEMORY_TIMELINE, withTimelineCommand } from './memoryTimeline';
import { showMemoryTimeline } from './memoryView';
import { KERNELS_REQUEST, KernelsResponse, kernelPickItems, kernelPickTitle } from './kernels';
import {
  HOTTEST_REQUEST,
  HottestResponse,
  hotPickItems,
  hotPickTitle,
  LOAD_PROFILE_COMMAND,
  LoadProfileResponse,
  loadedMessage,
} from './hottest';
import { extraArgs, RESTART_SETTINGS, serverSettings } from './settings';
import { showHistory } from './showHistory';

const MAPS_SCHEME = 'hlo-maps';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;

/** Text of the fusion-map panels, by panel URI. */
const panels = new Map<string, string>();
const panelChanged = new vscode.EventEmitter<vscode.Uri>();

function workspaceFolderPaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

/** The server's settings object, `hlo.profile`'s variables expanded (left as written when they cannot be). */
function settingsForServer(config: vscode.WorkspaceConfiguration) {
  return serverSettings(config, (raw) => {
    const expanded = expandPath(raw, workspaceFolderPaths(), os.homedir());
    return 'path' in expanded ? expanded.path : raw;
  });
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration('hlo');
  const discovery = discoverServer(
    defaultInput(config.get<string>('server.path') ?? '', workspaceFolderPaths(), context.extensionPath),
  );
  if (!discovery.found) {
    const message = notFoundMessage(discovery.tried);
    output?.appendLine(message);
    void vscode.window.showWarningMessage(message, 'Open Settings').then((choice) => {
      if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'hlo.server.path');
    });
    return;
  }
  const warning = fallbackWarning(discovery);
  if (warning) {
    output?.appendLine(warning);
    void vscode.window.showWarningMessage(warning);
  }
  output?.appendLine(`HLO: starting ${discovery.command} (found via ${discovery.source})`);

  const args = extraArgs(config);
  // No `transport`: the client then talks over the process's stdio as it is. With
  // `TransportKind.stdio` vscode-languageclient appends `--stdio` to the arguments, which
  // hlo-lsp (serving LSP when run with no arguments) rejects.
  const serverOptions: ServerOptions = {
    run: { command: discovery.command, args },
    debug: { command: discovery.command, args },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'hlo' },
      { scheme: 'untitled', language: 'hlo' },
      // The server also shows the index maps of MLIR files (affine_map, linalg, tiling).
      { scheme: 'file', language: 'mlir' },
      { scheme: 'untitled', language: 'mlir' },
    ],
    initializationOptions: settingsForServer(config),
    outputChannel: output,
    // The memory lens on ENTRY opens the memory timeline when clicked.
    middleware: {
      provideCodeLenses: async (document, token, next) =>
        (await next(document, token))?.map((lens) => withTimelineCommand(lens, document.uri.toString())),
    },
  };
  // The id `hlo` makes vscode-languageclient honour the `hlo.trace.server` setting.
  client = new LanguageClient('hlo', 'HLO language server', serverOptions, clientOptions);
  await client.start();
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) await c.stop().catch(() => undefined);
}

async function onConfigurationChanged(context: vscode.ExtensionContext, e: vscode.ConfigurationChangeEvent) {
  if (!e.affectsConfiguration('hlo')) return;
  if (RESTART_SETTINGS.some((s) => e.affectsConfiguration(s))) {
    await stopClient();
    await startClient(context);
    return;
  }
  if (client?.isRunning()) {
    const settings = settingsForServer(vscode.workspace.getConfiguration('hlo'));
    // A profile setting removed is sent as cleared (a missing field keeps the old one).
    if (e.affectsConfiguration('hlo.profile') && settings.profile === undefined) settings.profile = '';
    await client.sendNotification(DidChangeConfigurationNotification.type, { settings });
  }
}

/** hlo-lsp's request for the whole, unsummarized hover at a position. */
const FUSION_MAPS = 'hlo-lsp/fusionMaps';

async function showFusionMaps(): Promise<void> {
  const ready = hloEditorAndServer(client, 'HLO: open an HLO file and put the cursor on an instruction.');
  if (!ready) return;
  const { editor, client: c } = ready;
  const pos = editor.selection.active;
  const params = c.code2ProtocolConverter.asTextDocumentPositionParams(editor.document, pos);
  // The server's whole text (a hover summarizes large fusions); a server without the
  // request answers an error, then the hover is the next best thing.
  const hover =
    (await c.sendRequest<{ contents: HoverContents } | null>(FUSION_MAPS, params).catch(() => undefined)) ??
    (await c.sendRequest(HoverRequest.type, params));
  const text = panelMarkdown(
    vscode.workspace.asRelativePath(editor.document.uri),
    pos.line,
    pos.character,
    (hover?.contents ?? null) as HoverContents | null,
  );
  // One panel per source document, refreshed in place on each invocation.
  const uri = vscode.Uri.from({ scheme: MAPS_SCHEME, path: editor.document.uri.path + '.maps.md' });
  panels.set(uri.toString(), text);
  panelChanged.fire(uri);
  try {
    await vscode.commands.executeCommand('markdown.showPreviewToSide', uri);
  } catch {
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }
}

/**
 * The module's kernels, costliest first (`hlo-lsp/kernels`), in a quick pick; the picked
 * kernel's name is revealed and selected. (The code lens above each kernel needs nothing
 * here: the language client registers the server's code-lens provider.)
 */
async function showKernels(): Promise<void> {
  const ready = hloEditorAndServer(client, 'HLO: open an HLO file to list its kernels.');
  if (!ready) return;
  const { editor, client: c } = ready;
  const document = editor.document;
  let response: KernelsResponse | null;
  try {
    response = await c.sendRequest<KernelsResponse | null>(KERNELS_REQUEST, {
      textDocument: { uri: c.code2ProtocolConverter.asUri(document.uri) },
    });
  } catch (e) {
    void vscode.window.showWarningMessage(`HLO: the server could not list the kernels: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  const items = kernelPickItems(response);
  if (!response || items.length === 0) {
    void vscode.window.showInformationMessage(
      'HLO: no kernels to rank in this file (a CPU dump is ranked only when hlo.coalescing.device names a GPU).',
    );
    return;
  }
  const picked = await vscode.window.showQuickPick(items, {
    placeHolder: kernelPickTitle(response),
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) return;
  const range = c.protocol2CodeConverter.asRange(picked.kernel.range);
  // The editor may have been closed or hidden while the pick was open: show the document.
  const target = await vscode.window.showTextDocument(document, { viewColumn: editor.viewColumn, preserveFocus: false });
  target.selection = new vscode.Selection(range.start, range.end);
  target.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/**
 * The instructions of the file ranked by the time the profile beside it measured
 * (`hlo-lsp/hottest`), in a quick pick; the picked instruction's name is selected.
 */
async function showHottest(): Promise<void> {
  const ready = hloEditorAndServer(client, 'HLO: open an HLO dump to rank its instructions by measured time.');
  if (!ready) return;
  const { editor, client: c } = ready;
  const document = editor.document;
  let response: HottestResponse | null;
  try {
    response = await c.sendRequest<HottestResponse | null>(HOTTEST_REQUEST, {
      textDocument: { uri: c.code2ProtocolConverter.asUri(document.uri) },
    });
  } catch (e) {
    void vscode.window.showWarningMessage(`HLO: the server could not rank the instructions: ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  const items = hotPickItems(response);
  if (!response || items.length === 0) {
    void vscode.window.showInformationMessage(
      `HLO: no measured time for this file (${response?.message ?? 'no profile'}). HLO: Load Profile reads an XProf logdir or profile file.`,
    );
    return;
  }
  const picked = await vscode.window.showQuickPick(items, { placeHolder: hotPickTitle(response), matchOnDescription: true, matchOnDetail: true });
  if (!picked) return;
  const range = c.protocol2CodeConverter.asRange(picked.instruction.range);
  const target = await vscode.window.showTextDocument(document, { viewColumn: editor.viewColumn, preserveFocus: false });
  target.selection = new vscode.Selection(range.start, range.end);
  target.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/**
 * Reads an XProf profile the server did not find by itself (a logdir, a run folder, a
 * `.xplane.pb` or `.trace.json.gz`: `path`, else picked in a dialog) and shows it beside
 * the open dumps it measured (`hlo-lsp.loadProfile`); says what it measured, or why not
 * (for the dump in view, when there is one).
 */
async function loadProfile(path?: unknown): Promise<void> {
  if (!client?.isRunning()) {
    void vscode.window.showWarningMessage('HLO: the language server is not running (see the "HLO" output).');
    return;
  }
  const c = client;
  let chosen = typeof path === 'string' ? path : undefined;
  if (!chosen) {
    const picked = await vscode.window.showOpenDialog({
      canSelectFiles: true,
      canSelectFolders: true,
      canSelectMany: false,
      openLabel: 'Load Profile',
      title: 'An XProf logdir, a run folder, a .xplane.pb or a .trace.json.gz',
    });
    chosen = picked?.[0]?.fsPath;
  }
  if (!chosen) return;
  // The dump in view: the server answers its reason when the profile did not measure it.
  const editor = vscode.window.activeTextEditor;
  const uri = editor?.document.languageId === 'hlo' ? c.code2ProtocolConverter.asUri(editor.document.uri) : undefined;
  try {
    const loaded = await c.sendRequest<LoadProfileResponse>('workspace/executeCommand', {
      command: LOAD_PROFILE_COMMAND,
      arguments: [uri ? { path: chosen, uri } : { path: chosen }],
    });
    void vscode.window.showInformationMessage(loadedMessage(loaded));
  } catch (e) {
    void vscode.window.showErrorMessage(`HLO: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('HLO');
  context.subscriptions.push(
    output,
    panelChanged,
    vscode.workspace.registerTextDocumentContentProvider(MAPS_SCHEME, {
      onDidChange: panelChanged.event,
      provideTextDocumentContent: (uri) => panels.get(uri.toString()) ?? '',
    }),
    vscode.commands.registerCommand('hlo.restartServer', async () => {
      await stopClient();
      await startClient(context);
    }),
    vscode.commands.registerCommand('hlo.showFusionMaps', showFusionMaps),
    vscode.commands.registerCommand('hlo.showKernels', showKernels),
    vscode.commands.registerCommand('hlo.showHottest', showHottest),
    vscode.commands.registerCommand('hlo.loadProfile', loadProfile),
    vscode.commands.registerCommand('hlo.showGraph', () => showGraph(context, client)),
    // Also the pass-history code lens's command, with its instruction.
    vscode.commands.registerCommand('hlo.showHistory', (target) => showHistory(client, target)),
    vscode.commands.registerCommand(SHOW_MEMORY_TIMELINE, (...args: unknown[]) => showMemoryTimeline(client, ...args)),
    vscode.workspace.onDidChangeConfiguration((e) => onConfigurationChanged(context, e)),
  );
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
