// Finding the hlo-lsp binary. Kept free of the `vscode` module so the order of the
// search, and the message a user sees when nothing is found, are unit-tested in plain Node.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Where a candidate came from, in the order they are tried. */
export type Source = 'setting' | 'bundled' | 'PATH';

export interface Candidate {
  source: Source;
  path: string;
  /** Why this candidate cannot be used, when it cannot. */
  problem?: string;
}

export interface DiscoveryInput {
  /** The `hlo.server.path` setting, raw (may contain `${workspaceFolder}` or `~`). */
  configuredPath: string;
  /** Absolute paths of the open workspace folders, first one first. */
  workspaceFolders: string[];
  /** The extension's install folder (holds package.json and, when bundled, server/). */
  extensionPath: string;
  /** The PATH environment variable. */
  envPath: string;
  platform: NodeJS.Platform;
  arch: string;
  homeDir: string;
  /** True when the file exists and may be executed; injectable for tests. */
  isExecutable?: (file: string) => boolean;
}

export type Discovery =
  | { found: true; command: string; source: Source; tried: Candidate[] }
  | { found: false; tried: Candidate[] };

export const BINARY = 'hlo-lsp';

export function defaultInput(configuredPath: string, workspaceFolders: string[], extensionPath: string): DiscoveryInput {
  return {
    configuredPath,
    workspaceFolders,
    extensionPath,
    envPath: process.env.PATH ?? '',
    platform: process.platform,
    arch: process.arch,
    homeDir: os.homedir(),
  };
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (process.platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Expands `${workspaceFolder}`, `${workspaceFolder:NAME}`, `${userHome}` and a leading `~`;
 * a relative result is taken relative to the first workspace folder (as VS Code does for
 * tasks), since the extension host's own working directory means nothing to a user.
 * Returns an error string when a variable cannot be expanded.
 */
export function expandPath(raw: string, workspaceFolders: string[], homeDir: string): { path: string } | { error: string } {
  let missing: string | undefined;
  let p = raw.trim().replace(/\$\{(workspaceFolder|workspaceRoot)(?::([^}]+))?\}|\$\{userHome\}/g, (m, _v, name?: string) => {
    if (m === '${userHome}') return homeDir;
    const folder = name ? workspaceFolders.find((f) => path.basename(f) === name) : workspaceFolders[0];
    if (!folder) {
      missing = name ? `no workspace folder named "${name}" is open` : 'no workspace folder is open';
      return m;
    }
    return folder;
  });
  if (missing) return { error: `${raw}: ${missing}` };
  if (p === '~' || p.startsWith('~/') || p.startsWith('~\\')) p = path.join(homeDir, p.slice(1));
  if (!path.isAbsolute(p)) {
    if (workspaceFolders.length === 0) return { error: `${raw}: a relative path needs an open workspace folder` };
    p = path.join(workspaceFolders[0], p);
  }
  return { path: path.normalize(p) };
}

/** The places a binary shipped inside the .vsix is looked for, most specific first. */
export function bundledCandidates(extensionPath: string, platform: NodeJS.Platform, arch: string): string[] {
  const exe = platform === 'win32' ? `${BINARY}.exe` : BINARY;
  return [path.join(extensionPath, 'server', `${platform}-${arch}`, exe), path.join(extensionPath, 'server', exe)];
}

/** Tries the setting, then the bundled binary, then PATH; records every candidate tried. */
export function discoverServer(input: DiscoveryInput): Discovery {
  const isExec = input.isExecutable ?? isExecutableFile;
  const tried: Candidate[] = [];
  const attempt = (source: Source, file: string): Discovery | undefined => {
    if (isExec(file)) return { found: true, command: file, source, tried: [...tried, { source, path: file }] };
    tried.push({ source, path: file, problem: 'not found or not executable' });
    return undefined;
  };

  if (input.configuredPath.trim() !== '') {
    const expanded = expandPath(input.configuredPath, input.workspaceFolders, input.homeDir);
    if ('error' in expanded) {
      tried.push({ source: 'setting', path: input.configuredPath, problem: expanded.error });
    } else {
      const hit = attempt('setting', expanded.path);
      if (hit) return hit;
    }
  }
  for (const file of bundledCandidates(input.extensionPath, input.platform, input.arch)) {
    const hit = attempt('bundled', file);
    if (hit) return hit;
  }
  const exe = input.platform === 'win32' ? `${BINARY}.exe` : BINARY;
  const delimiter = input.platform === 'win32' ? ';' : ':';
  const dirs = input.envPath.split(delimiter).filter((d) => d !== '');
  for (const dir of dirs) {
    const file = path.join(dir, exe);
    if (isExec(file)) return { found: true, command: file, source: 'PATH', tried: [...tried, { source: 'PATH', path: file }] };
  }
  tried.push({ source: 'PATH', path: exe, problem: dirs.length ? `not in any of the ${dirs.length} PATH directories` : 'PATH is empty' });
  return { found: false, tried };
}

/** The message shown when no server binary is found: every candidate and why it failed. */
export function notFoundMessage(tried: Candidate[]): string {
  const lines = tried.map((c) => `${c.source}: ${c.path} (${c.problem ?? 'ok'})`);
  return (
    `HLO: the hlo-lsp language server was not found; highlighting still works. Tried: ${lines.join('; ')}. ` +
    'Build it with `cargo build --release` and set "hlo.server.path" (e.g. "${workspaceFolder}/target/release/hlo-lsp"), or put hlo-lsp on PATH.'
  );
}

/** A warning when the setting points nowhere but another binary was found. */
export function fallbackWarning(d: Discovery): string | undefined {
  if (!d.found || d.source === 'setting') return undefined;
  const setting = d.tried.find((c) => c.source === 'setting');
  if (!setting) return undefined;
  return `HLO: "hlo.server.path" = ${setting.path} is unusable (${setting.problem}); using the ${d.source === 'PATH' ? 'hlo-lsp on PATH' : 'bundled hlo-lsp'} at ${d.command}.`;
}
