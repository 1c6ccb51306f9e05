// Copies a built hlo-lsp into server/<platform>-<arch>/ so that `npm run package` ships it
// inside the .vsix (the extension looks there before PATH).
// Usage: node tools/bundle-server.mjs [path/to/hlo-lsp]
// (default: <cargo target dir>/release/hlo-lsp, the target dir as `cargo metadata` reports it,
// so CARGO_TARGET_DIR is honoured)
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const exe = process.platform === 'win32' ? 'hlo-lsp.exe' : 'hlo-lsp';
function releaseBinary() {
  const meta = execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], {
    cwd: join(root, '..', '..'),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return join(JSON.parse(meta).target_directory, 'release', exe);
}
const from = resolve(process.argv[2] ?? releaseBinary());
if (!existsSync(from)) {
  console.error(`bundle-server: ${from} does not exist; run \`cargo build --release\` at the repository root first`);
  process.exit(1);
}
const to = join(root, 'server', `${process.platform}-${process.arch}`, exe);
mkdirSync(dirname(to), { recursive: true });
copyFileSync(from, to);
chmodSync(to, 0o755);
console.log(`bundle-server: ${from} -> ${to}`);
