// A minimal JSON-RPC client over a child process's stdio (Content-Length framing), so the
// tests can talk to the real hlo-lsp binary with full control over failures: a server that
// dies turns pending requests into rejected promises, never into stray write errors.
import * as cp from 'node:child_process';

export class LspProcess {
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly stderr: string[] = [];
  /** Server-to-client notifications, in arrival order. */
  readonly notifications: { method: string; params: unknown }[] = [];

  constructor(private proc: cp.ChildProcess) {
    proc.stdin!.on('error', () => undefined); // EPIPE when the server is gone: surfaced via `exited`
    proc.stderr!.on('data', (d) => this.stderr.push(String(d)));
    proc.stdout!.on('data', (d: Buffer) => this.onData(d));
    this.exited = new Promise((resolve) =>
      proc.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        for (const p of this.pending.values()) p.reject(new Error(`server exited (code ${code}, signal ${signal})`));
        this.pending.clear();
        resolve(this.exitInfo);
      }),
    );
  }

  static spawn(binary: string, args: string[] = []): LspProcess {
    return new LspProcess(cp.spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  private onData(chunk: Buffer) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const m = /Content-Length: *(\d+)/i.exec(this.buffer.subarray(0, headerEnd).toString('ascii'));
      if (!m) throw new Error('bad header from server: ' + this.buffer.subarray(0, headerEnd).toString());
      const len = Number(m[1]);
      if (this.buffer.length < headerEnd + 4 + len) return;
      const msg = JSON.parse(this.buffer.subarray(headerEnd + 4, headerEnd + 4 + len).toString('utf8'));
      this.buffer = this.buffer.subarray(headerEnd + 4 + len);
      this.dispatch(msg);
    }
  }

  private dispatch(msg: { id?: number; method?: string; params?: unknown; result?: unknown; error?: { message: string } }) {
    if (msg.method !== undefined && msg.id !== undefined) {
      // A request from the server (workspace/configuration, window/workDoneProgress/create, ...).
      this.write({ jsonrpc: '2.0', id: msg.id, result: msg.method === 'workspace/configuration' ? [] : null });
    } else if (msg.method !== undefined) {
      this.notifications.push({ method: msg.method, params: msg.params });
    } else if (msg.id !== undefined) {
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(`${msg.error.message}`));
      else p?.resolve(msg.result);
    }
  }

  private write(msg: unknown) {
    if (this.exitInfo) return;
    const body = Buffer.from(JSON.stringify(msg), 'utf8');
    this.proc.stdin!.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  request(method: string, params?: unknown, timeoutMs = 20_000): Promise<unknown> {
    if (this.exitInfo) return Promise.reject(new Error(`server exited (code ${this.exitInfo.code})`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.write({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params?: unknown) {
    this.write({ jsonrpc: '2.0', method, params });
  }

  /** shutdown + exit; kills the process if it lingers. */
  async close(): Promise<void> {
    if (!this.exitInfo) {
      await this.request('shutdown', undefined, 5000).catch(() => undefined);
      this.notify('exit');
    }
    const timer = setTimeout(() => this.proc.kill(), 3000);
    await this.exited;
    clearTimeout(timer);
  }
}
