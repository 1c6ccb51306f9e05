// Small stand-ins for the `vscode` module and `vscode-languageclient/node`, enough to run
// the extension's activate() in plain Node and observe what it does: which commands it
// registers, how it starts the server, what it sends on settings changes.
import Module = require('node:module');

export interface Recorded {
  commands: Map<string, (...args: unknown[]) => unknown>;
  executed: { id: string; args: unknown[] }[];
  warnings: string[];
  infos: string[];
  errors: string[];
  /** Each quick pick shown: its items and options. */
  quickPicks: { items: unknown[]; options: unknown }[];
  /** What showTextDocument opened, with the editor it returned. */
  shown: { document: unknown; editor: ShownEditor }[];
  clients: FakeClient[];
  providers: Map<string, { provideTextDocumentContent(uri: unknown): string }>;
  configListeners: ((e: { affectsConfiguration(s: string): boolean }) => unknown)[];
}

export interface ShownEditor {
  selection: unknown;
  revealed: unknown[];
  revealRange(range: unknown, how: unknown): void;
}

export const settings: Record<string, unknown> = {};
export const state = {
  workspaceFolders: [] as string[],
  activeEditor: undefined as unknown,
  hoverResult: null as unknown,
  /** The server answers `hlo-lsp/fusionMaps` with an error (an older server). */
  fusionMapsUnsupported: false,
  /** The answer to `hlo-lsp/kernels`. */
  kernelsResult: null as unknown,
  /** The answer to `hlo-lsp/hottest`. */
  hottestResult: null as unknown,
  /** The answer to `workspace/executeCommand`, or the error it throws. */
  commandResult: null as unknown,
  commandError: undefined as string | undefined,
  /** What the open dialog returns (paths). */
  openDialog: undefined as string[] | undefined,
  /** Chooses from a quick pick's items (default: dismissed). */
  pick: (_items: unknown[]): unknown => undefined,
};
export const rec: Recorded = {
  commands: new Map(),
  executed: [],
  warnings: [],
  infos: [],
  errors: [],
  quickPicks: [],
  shown: [],
  clients: [],
  providers: new Map(),
  configListeners: [],
};

export function reset() {
  for (const k of Object.keys(settings)) delete settings[k];
  rec.commands.clear();
  rec.executed.length = 0;
  rec.warnings.length = 0;
  rec.infos.length = 0;
  rec.errors.length = 0;
  rec.quickPicks.length = 0;
  rec.shown.length = 0;
  rec.clients.length = 0;
  rec.providers.clear();
  rec.configListeners.length = 0;
  state.workspaceFolders = [];
  state.activeEditor = undefined;
  state.hoverResult = null;
  state.fusionMapsUnsupported = false;
  state.kernelsResult = null;
  state.hottestResult = null;
  state.commandResult = null;
  state.commandError = undefined;
  state.openDialog = undefined;
  state.pick = () => undefined;
}

class EventEmitter<T> {
  private listeners: ((v: T) => void)[] = [];
  event = (l: (v: T) => void) => {
    this.listeners.push(l);
    return { dispose() {} };
  };
  fire(v: T) {
    for (const l of this.listeners) l(v);
  }
  dispose() {}
}

const fakeUri = (scheme: string, p: string) => ({ scheme, path: p, fsPath: p, toString: () => `${scheme}://${p}` });

class Selection {
  constructor(
    public anchor: unknown,
    public active: unknown,
  ) {}
}

const vscode = {
  EventEmitter,
  Selection,
  TextEditorRevealType: { Default: 0, InCenter: 1, InCenterIfOutsideViewport: 2, AtTop: 3 },
  ViewColumn: { Beside: -2 },
  Uri: { from: (c: { scheme: string; path: string }) => fakeUri(c.scheme, c.path), file: (p: string) => fakeUri('file', p) },
  workspace: {
    get workspaceFolders() {
      return state.workspaceFolders.map((p) => ({ uri: fakeUri('file', p) }));
    },
    getConfiguration: (section: string) => ({
      get: (key: string) => settings[`${section}.${key}`],
    }),
    onDidChangeConfiguration: (l: Recorded['configListeners'][number]) => {
      rec.configListeners.push(l);
      return { dispose() {} };
    },
    registerTextDocumentContentProvider: (scheme: string, p: Recorded['providers'] extends Map<string, infer P> ? P : never) => {
      rec.providers.set(scheme, p);
      return { dispose() {} };
    },
    asRelativePath: (uri: { path: string }) => uri.path.replace(/^\/ws\//, ''),
    openTextDocument: async (uri: unknown) => ({ uri }),
  },
  window: {
    createOutputChannel: () => ({ appendLine() {}, dispose() {} }),
    showWarningMessage: async (m: string) => {
      rec.warnings.push(m);
      return undefined;
    },
    showInformationMessage: async (m: string) => {
      rec.infos.push(m);
      return undefined;
    },
    showErrorMessage: async (m: string) => {
      rec.errors.push(m);
      return undefined;
    },
    showOpenDialog: async () => state.openDialog?.map((p) => fakeUri('file', p)),
    get activeTextEditor() {
      return state.activeEditor;
    },
    showQuickPick: async (items: unknown[], options: unknown) => {
      rec.quickPicks.push({ items, options });
      return state.pick(items);
    },
    showTextDocument: async (document: unknown) => {
      const editor: ShownEditor = {
        selection: undefined,
        revealed: [],
        revealRange(range: unknown) {
          this.revealed.push(range);
        },
      };
      rec.shown.push({ document, editor });
      return editor;
    },
  },
  commands: {
    registerCommand: (id: string, fn: (...a: unknown[]) => unknown) => {
      rec.commands.set(id, fn);
      return { dispose() {} };
    },
    executeCommand: async (id: string, ...args: unknown[]) => {
      rec.executed.push({ id, args });
    },
  },
};

export class FakeClient {
  running = false;
  stopped = false;
  notifications: { method: string; params: unknown }[] = [];
  requests: { method: string; params: unknown }[] = [];
  constructor(
    public id: string,
    public name: string,
    public serverOptions: { run: { command: string; args: string[]; transport?: number } },
    public clientOptions: { documentSelector: { language: string }[]; initializationOptions: unknown },
  ) {
    rec.clients.push(this);
  }
  async start() {
    this.running = true;
  }
  async stop() {
    this.running = false;
    this.stopped = true;
  }
  isRunning() {
    return this.running;
  }
  async sendNotification(type: { method: string }, params: unknown) {
    this.notifications.push({ method: type.method, params });
  }
  async sendRequest(type: { method: string } | string, params: unknown) {
    const method = typeof type === 'string' ? type : type.method;
    this.requests.push({ method, params });
    if (method === 'hlo-lsp/fusionMaps' && state.fusionMapsUnsupported) throw new Error('MethodNotFound');
    if (method === 'hlo-lsp/kernels') return state.kernelsResult;
    if (method === 'hlo-lsp/hottest') return state.hottestResult;
    if (method === 'workspace/executeCommand') {
      if (state.commandError !== undefined) throw new Error(state.commandError);
      return state.commandResult;
    }
    return state.hoverResult;
  }
  code2ProtocolConverter = {
    asUri: (uri: { toString(): string }) => uri.toString(),
    asTextDocumentPositionParams: (doc: { uri: { toString(): string } }, pos: { line: number; character: number }) => ({
      textDocument: { uri: doc.uri.toString() },
      position: { line: pos.line, character: pos.character },
    }),
  };
  protocol2CodeConverter = {
    asRange: (r: { start: unknown; end: unknown }) => ({ start: r.start, end: r.end }),
  };
}

const languageclient = {
  LanguageClient: FakeClient,
  TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 },
  DidChangeConfigurationNotification: { type: { method: 'workspace/didChangeConfiguration' } },
  HoverRequest: { type: { method: 'textDocument/hover' } },
};

/** Makes `require('vscode')` and `require('vscode-languageclient/node')` return the stand-ins. */
export function install() {
  const M = Module as unknown as { _load: (req: string, parent: unknown, isMain: boolean) => unknown };
  const original = M._load;
  M._load = function (request: string, parent: unknown, isMain: boolean) {
    if (request === 'vscode') return vscode;
    if (request === 'vscode-languageclient/node') return languageclient;
    return original.call(this, request, parent, isMain);
  };
}
