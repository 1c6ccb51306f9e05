// Where the tests find the built hlo-lsp: $HLO_LSP_BIN (scripts/test sets it from
// scripts/server-bin), else <target dir>/debug/hlo-lsp with the target directory as cargo
// reports it (`cargo metadata`), so CARGO_TARGET_DIR and build.target-dir are honoured.
import * as cp from 'node:child_process';
import * as path from 'node:path';
import { extensionRoot } from './tokenize';

export const repoRoot = path.resolve(extensionRoot, '..', '..');
const EXE = process.platform === 'win32' ? 'hlo-lsp.exe' : 'hlo-lsp';

/** cargo's target directory for this workspace, or undefined (with the reason) when cargo cannot say. */
export function cargoTargetDir(): { dir: string } | { error: string } {
  try {
    const out = cp.execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { dir: (JSON.parse(out) as { target_directory: string }).target_directory };
  } catch (e) {
    return { error: `cargo metadata failed: ${(e as Error).message.split('\n')[0]}` };
  }
}

/** The server binary to test, or an explanation of why there is none to look for. */
export function serverBinary(): { path: string } | { error: string } {
  if (process.env.HLO_LSP_BIN) return { path: process.env.HLO_LSP_BIN };
  const target = cargoTargetDir();
  return 'error' in target ? target : { path: path.join(target.dir, 'debug', EXE) };
}
